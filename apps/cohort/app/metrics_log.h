// metrics.jsonl: one JSON object per line, appended and flushed as training goes, so a crashed
// or running job can be read at any time. Kinds: "config" (first line), "step", "epoch". With
// --tensorboard, the numbers of the "step" and "epoch" records also go to TensorBoard as scalars
// ("step/loss", "epoch/test_acc", ...) at their step, and images (the samples grid) as images.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cohort/io/tensorboard.h"

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

  // From now on, also writes TensorBoard event files into `dir` (a new file in it).
  void mirror_to_tensorboard(const std::filesystem::path& dir);
  // An image for TensorBoard (nothing without a mirror): uint8 [H, W, C] or float [C, H, W].
  void image(const std::string& tag, const Tensor& image, int64_t step);

 private:
  std::filesystem::path path_;
  std::ofstream out_;
  std::unique_ptr<io::SummaryWriter> tensorboard_;
};

}  // namespace cohort::app
