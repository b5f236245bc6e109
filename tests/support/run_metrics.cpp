// metrics.jsonl for tests: reading and comparing runs.
#include "support/run_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace cohort::testing {

std::vector<nlohmann::json> metrics_of(const std::filesystem::path& run) {
  std::vector<nlohmann::json> records;
  std::ifstream in(run / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto r = nlohmann::json::parse(line);
    if (r["kind"] == "config") continue;
    for (const char* key : {"images_per_s", "elapsed_s", "seconds"}) r.erase(key);
    records.push_back(r);
  }
  return records;
}

void expect_same_metrics(const std::filesystem::path& a_run, const std::filesystem::path& b_run,
                         double accuracy_tolerance) {
  const auto a = metrics_of(a_run), b = metrics_of(b_run);
  ASSERT_EQ(a.size(), b.size()) << a_run << " and " << b_run;
  ASSERT_GT(a.size(), 0u) << a_run;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["step"], b[i]["step"]) << "record " << i;
    for (const char* key : {"loss", "train_loss", "test_loss"}) {
      if (!a[i].contains(key)) continue;
      const double x = a[i][key], y = b[i][key];
      EXPECT_NEAR(x, y, 1e-4 * std::max(1.0, std::abs(x))) << key << " in record " << i;
    }
    for (const char* key : {"train_acc", "test_acc"})
      if (a[i].contains(key))
        EXPECT_NEAR(a[i][key].get<double>(), b[i][key].get<double>(), accuracy_tolerance) << key << " in record " << i;
  }
}

}  // namespace cohort::testing
