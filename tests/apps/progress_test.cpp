// The progress bar's line and durations.
#include "app/progress.h"

#include <gtest/gtest.h>

using cohort::app::format_duration;
using cohort::app::ProgressBar;

TEST(ProgressBar, FormatsLikeTqdm) {
  EXPECT_EQ(ProgressBar::format("epoch 1/3", 50, 100, 50, 10.0, "loss=0.5000", 10),
            "epoch 1/3  50%|█████     | 50/100 [00:10<00:10, 5.0 it/s, loss=0.5000]");
  EXPECT_EQ(ProgressBar::format("e", 0, 8, 0, 0.0, "", 4), "e   0%|    | 0/8 [00:00<?, ? it/s]");
  EXPECT_EQ(ProgressBar::format("e", 8, 8, 8, 2.0, "", 4), "e 100%|████| 8/8 [00:02<00:00, 4.0 it/s]");
}

TEST(ProgressBar, PartialCellsUseEighths) {
  // 3/16 of a 2-cell bar is 3 eighths of the first cell.
  const std::string line = ProgressBar::format("e", 3, 16, 3, 1.0, "", 2);
  EXPECT_NE(line.find(" 18%|▍ | 3/16 "), std::string::npos) << line;
}

TEST(ProgressBar, ResumedEpochRateCountsOnlyThisProcess) {
  // 60 of 100 done, 10 of them in 2 s here: 5 it/s, 40 left → 8 s.
  EXPECT_EQ(ProgressBar::format("e", 60, 100, 10, 2.0, "", 10),
            "e  60%|██████    | 60/100 [00:02<00:08, 5.0 it/s]");
}

TEST(ProgressBar, Durations) {
  EXPECT_EQ(format_duration(0), "00:00");
  EXPECT_EQ(format_duration(65.2), "01:05");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "?");
}
