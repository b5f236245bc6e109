// TensorBoard event files, as PyTorch's torch.utils.tensorboard.SummaryWriter writes them:
//   io::SummaryWriter tb("runs/exp1");
//   tb.add_scalar("loss/train", loss, step);
//   tb.add_image("samples", data::make_grid(batch), step);   // float [C, H, W] in [0, 1], or uint8 [H, W, C]
//   tb.flush();                                              // also on destruction
// `tensorboard --logdir runs` then shows them. Each writer makes one new file in log_dir (created if
// missing): events.out.tfevents.<seconds>.<host>.<pid>.<n>, so writers never share a file. Its
// first event is the file version "brain.Event:2"; each add_* appends one event, a TFRecord holding
// a protobuf Event (wall time, step, a Summary value: a float, or a PNG image). Writes reach the
// file at flush(), at most every 10 events, and on destruction.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::io {

class SummaryWriter {
 public:
  // Throws a cohort::Error naming log_dir when it cannot be created or the file cannot be opened.
  explicit SummaryWriter(const std::filesystem::path& log_dir);
  ~SummaryWriter();
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // walltime: seconds since the epoch (now when not given). A tag is a non-empty string; '/' groups.
  void add_scalar(const std::string& tag, double value, int64_t step, std::optional<double> walltime = std::nullopt);
  void add_image(const std::string& tag, const Tensor& image, int64_t step,
                 std::optional<double> walltime = std::nullopt);
  void flush();
  // Flushes and closes; later add_* calls throw.
  void close();
  const std::filesystem::path& path() const { return path_; }

 private:
  void append(const std::string& event);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  int pending_ = 0;
};

// One event of a file, as read back (for tests and tools).
struct SummaryEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;  // the first event's; empty on the others
  std::string tag;           // the summary value's, when the event holds one
  std::optional<float> scalar;
  std::string image_png;     // an image's PNG bytes
  int64_t image_height = 0, image_width = 0, image_channels = 0;
};

// Every event of an event file; throws a cohort::Error naming the file and the record for a bad CRC
// or a malformed event.
std::vector<SummaryEvent> read_summary_events(const std::filesystem::path& path);

}  // namespace cohort::io
