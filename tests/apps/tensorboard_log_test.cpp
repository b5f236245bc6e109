// `cohort train --tensorboard DIR`: the numbers of metrics.jsonl's step and epoch records, and the
// samples grid, as TensorBoard events (read back with io::read_summary_events); the flag kept in the
// run's config, so a resumed run goes on writing there (in a file of its own).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <string>
#include <vector>

#include "apps/run_cohort.h"
#include "cohort/io/image.h"
#include "cohort/io/tensorboard.h"
#include "support/run_metrics.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;

namespace {

std::vector<std::string> flags(const fs::path& out, const std::vector<std::string>& more) {
  std::vector<std::string> f{"train", "--dataset", "synthetic", "--limit", "256", "--batch-size", "32", "--model",
                             "lenet", "--workers", "1", "--threads", "1", "--log-every", "2", "--no-progress",
                             "--out", out.string()};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

std::vector<fs::path> event_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST(TensorBoardLog, MirrorsTheMetricsAndTheSamples) {
  const fs::path out = cohort::testing::fresh_test_dir("tensorboard_log", "mirror"), tb = out / "tb";
  auto [code, err] = run_cohort(flags(out, {"--epochs", "2", "--tensorboard", tb.string()}));
  ASSERT_EQ(code, 0) << err;
  const auto files = event_files(tb);
  ASSERT_EQ(files.size(), 1u);
  std::map<std::string, std::vector<std::pair<int64_t, float>>> scalars;
  int images = 0;
  for (const auto& e : cohort::io::read_summary_events(files[0])) {
    if (e.scalar) scalars[e.tag].emplace_back(e.step, *e.scalar);
    if (!e.image_png.empty()) {
      ++images;
      const cohort::Tensor samples = cohort::io::read_png((out / "samples.png").string());
      EXPECT_EQ(e.image_height, samples.size(0));
      EXPECT_EQ(e.image_width, samples.size(1));
    }
  }
  EXPECT_EQ(images, 1);
  // Each record's numbers, at its step, as metrics.jsonl has them (timings included).
  std::map<std::string, std::vector<std::pair<int64_t, float>>> expected;
  std::ifstream metrics(out / "metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    const auto r = nlohmann::json::parse(line);
    const std::string kind = r["kind"];
    if (kind != "step" && kind != "epoch") continue;
    for (const auto& [name, value] : r.items())
      if (value.is_number() && name != "step" && name != "epoch")
        expected[kind + "/" + name].emplace_back(r["step"].get<int64_t>(), value.get<float>());
  }
  EXPECT_EQ(scalars, expected);
  EXPECT_EQ(scalars["step/loss"].size(), 8u);  // 8 steps per epoch, logged every 2
  EXPECT_EQ(scalars["epoch/test_acc"].size(), 2u);
}

TEST(TensorBoardLog, AResumedRunWritesAFileOfItsOwn) {
  const fs::path out = cohort::testing::fresh_test_dir("tensorboard_log", "resume"), tb = out / "tb";
  ASSERT_EQ(run_cohort(flags(out, {"--epochs", "1", "--tensorboard", tb.string()})).first, 0);
  auto [code, err] = run_cohort({"train", "--resume", out.string(), "--epochs", "2", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  const auto files = event_files(tb);
  ASSERT_EQ(files.size(), 2u);
  int64_t last_step = 0;
  for (const auto& e : cohort::io::read_summary_events(files[1]))
    if (e.tag == "epoch/test_acc") last_step = e.step;
  EXPECT_EQ(last_step, 16);
}
