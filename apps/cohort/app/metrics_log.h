// metrics.jsonl: one JSON object per line, appended and flushed as training goes, so a crashed
// or running job can be read at any time. Kinds: "config" (first line), "step", "epoch".
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <nlohmann/json_fwd.hpp>

namespace cohort::app {

class MetricsLog {
 public:
  // Opens <dir>/metrics.jsonl. With resume_step >= 0, keeps the lines of a previous run up to and
  // including that step (dropping what was logged after the checkpoint being resumed, and a torn
  // last line); otherwise starts a new file.
  MetricsLog(const std::filesystem::path& dir, int64_t resume_step = -1);
  void write(const nlohmann::json& record);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace cohort::app
