// `cohort export`: a trained run's model as an ONNX file (io::export_onnx).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace cohort::app {

struct ExportOptions {
  std::string checkpoint;  // a checkpoint file, or a run directory (its newest intact checkpoint)
  std::string onnx;        // the file to write
  std::string data_dir;    // overrides the dataset directory stored in the checkpoint ("" keeps it)
  int64_t opset = 13;
};

// Rebuilds the run's model from the checkpoint's config (shaped by its dataset's test split, as
// `cohort eval` does), loads the weights, puts it in evaluation mode and writes the trace of one
// forward pass on two test images as an ONNX model, atomically (temp file, fsync, rename). Prints
// what it wrote to `out`. Throws a cohort::Error naming the checkpoint or the ONNX file.
void run_export(const ExportOptions& options, std::ostream& out);

}  // namespace cohort::app
