// The records of a training run's metrics.jsonl, for tests that compare runs.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

namespace cohort::testing {

// metrics.jsonl of `run` without the config line and the timing fields, which differ run to run.
std::vector<nlohmann::json> metrics_of(const std::filesystem::path& run);

// Two runs' records agree: the same steps, losses within 1e-4 (relative), accuracies within
// `accuracy_tolerance`.
void expect_same_metrics(const std::filesystem::path& a, const std::filesystem::path& b, double accuracy_tolerance);

}  // namespace cohort::testing
