// `cohort export`: a trained run's model as an ONNX file (io::export_onnx), as a PyTorch state dict
// file (torch.save's format), or both.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "app/data_spec.h"

namespace cohort::app {

struct ExportOptions {
  std::string checkpoint;  // a checkpoint file, or a run directory (its newest intact checkpoint)
  std::string onnx;        // the ONNX file to write ("" for none)
  std::string pytorch;     // the PyTorch state dict file to write ("" for none); at least one of the two
  std::string data_dir;    // overrides the dataset directory stored in the checkpoint ("" keeps it)
  int64_t opset = 13;
};

// What the exported file expects of its input, in words: for its metadata and for the user.
struct ExportContract {
  std::string layout;        // the input tensor: its shape, dtype, channels or columns, value range
  std::string resize;        // images: how to bring one to the model's size; "" for a table
  std::string instructions;  // what the consumer must still do before feeding the file, in one line
};
ExportContract export_contract(const DataSpec& data);

// Rebuilds the run's model from the checkpoint's config (shaped by its dataset's test split, as
// `cohort eval` does), loads the weights and puts it in evaluation mode. Then, for `onnx`, writes the
// trace of one forward pass as an ONNX model, atomically (temp file, fsync, rename). The graph takes what
// `cohort predict` has after decoding an input, and agrees with it: an image's pixels in [0, 1] as
// float32 NCHW of the model's size, or a table's raw rows [N, F] in the training columns' order; the
// data's normalisation (per channel, per column) is its first nodes. The metadata_props hold the class
// names, the input's layout, the feature columns, the normalisation, the resize rule, the model and
// cohort's version. Prints what it wrote and what the consumer must still do to `out`.
// For `pytorch`, writes the model's state dict as Python's torch.save(model.state_dict(), file) would
// (an OrderedDict of PyTorch's key names -> tensors, atomically) and prints, last, the Python that
// builds the matching torch.nn module and loads the file (pytorch_snippet.h); that module takes the
// data's normalised input, which the lines say how to make.
// Throws a UsageError when neither file is given, both name one file or one is not a regular file
// (before reading the checkpoint), and a cohort::Error naming the checkpoint or the file otherwise.
void run_export(const ExportOptions& options, std::ostream& out);

}  // namespace cohort::app
