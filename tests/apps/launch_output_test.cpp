// LinePrefixer on its own (the launcher's tests see it through real ranks): whole lines with the
// prefix, '\r' segments, the length limit, and the last partial line.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "app/launch_output.h"

using cohort::app::launch_detail::LinePrefixer;

namespace {

std::string relay(const std::string& bytes, std::size_t max_line = 1 << 20, std::size_t chunk = 1) {
  std::ostringstream sink;
  LinePrefixer lines("[rank 1] ", sink, max_line);
  for (std::size_t i = 0; i < bytes.size(); i += chunk) lines.feed(bytes.data() + i, std::min(chunk, bytes.size() - i));
  lines.finish();
  return sink.str();
}

}  // namespace

TEST(LinePrefixer, PrefixesEveryLineWhateverTheChunking) {
  const std::string in = "epoch 1\nepoch 2\n\nlast";
  const std::string want = "[rank 1] epoch 1\n[rank 1] epoch 2\n[rank 1] \n[rank 1] last\n";
  EXPECT_EQ(relay(in, 1 << 20, 1), want);
  EXPECT_EQ(relay(in, 1 << 20, 5), want);
  EXPECT_EQ(relay(in, 1 << 20, in.size()), want);
}

TEST(LinePrefixer, CarriageReturnSegmentsKeepTheirReturnAndGetAPrefixEach) {
  EXPECT_EQ(relay("10%\r50%\r100%\n"), "[rank 1] 10%\r[rank 1] 50%\r[rank 1] 100%\n");
  EXPECT_EQ(relay("done\r\n"), "[rank 1] done\r\n");  // a Windows line end is one line
  EXPECT_EQ(relay("\r\rx\n"), "[rank 1] x\n");        // bare returns are no segments
}

TEST(LinePrefixer, LongLinesAreSplitIntoPrefixedLines) {
  EXPECT_EQ(relay("abcdefg\n", 3), "[rank 1] abc\n[rank 1] def\n[rank 1] g\n");
  EXPECT_EQ(relay("", 3), "");
}
