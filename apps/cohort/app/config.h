// The settings of a training run: what `cohort train` parses from its flags, writes as the first
// line of metrics.jsonl and stores in every checkpoint (so --resume knows the run it continues).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cohort/core/device.h"
#include "cohort/core/dtype.h"
#include "cohort/core/error.h"

namespace cohort::app {

// A command line the program cannot run: a bad flag value, flags that contradict each other. The
// program exits 2 for these (as for CLI11's parse errors) and 1 for failures while it runs.
class UsageError : public Error {
 public:
  using Error::Error;
};

struct TrainConfig {
  std::string model = "lenet";             // lenet, blitz-cnn, resnet18, mlp
  std::string dataset = "fashion-mnist";   // fashion-mnist, mnist, cifar10, synthetic, folder, csv, text
  std::string data_dir;                    // empty: the dataset's default location (folder, csv, text: the path)
  std::string val_dir;                     // folder: the validation ImageFolder (or val_split)
  double val_split = 0;                    // folder, csv: this fraction of the data is held out (csv: 0 = 0.2)
  int64_t image_size = 0;                  // folder: images are resized to image_size^2 (0: 64)
  std::string target;                      // csv: the column to predict (the others are the features)
  int64_t seq_len = 64;                    // text: characters per training window
  int64_t epochs = 3;
  int64_t batch_size = 64;
  double lr = 0.01;
  std::string optimizer = "sgd";           // sgd, adam, adamw, rmsprop
  double momentum = 0.9;
  double weight_decay = 0;
  double clip_grad_norm = 0;               // > 0: the gradients' total 2-norm is clipped to it before each update
  int64_t accumulate = 1;                  // micro-batches of --batch-size per optimizer step
  std::string scheduler = "none";          // none, step, cosine, onecycle, plateau, cosine-restarts
  int64_t warmup_steps = 0;                // the first N steps' lr rises linearly to the schedule's
  double ema = 0;                          // > 0: the decay of an exponential moving average of the weights,
                                           // which the evaluation, predict and export use
  std::string precision = "f32";           // f32; bf16, f16: forward pass and loss under autocast
  bool checkpoint_activations = false;     // recompute activations in backward (ResNets, char-transformer)
  uint64_t seed = 0;
  int threads = 0;                         // 0: all cores
  std::string devices = "cpu:0";           // "cpu:0,cpu:1" or a count "2": DataParallel over them
  int workers = 2;                         // DataLoader threads
  int64_t limit = 0;                       // > 0: only the first `limit` train and test examples
  std::string out = "runs/latest";
  std::string resume;                      // a run directory or checkpoint file to continue
  std::string init_from;                   // initial weights: a PyTorch state dict, a cohort run or checkpoint
  std::string freeze;                      // parameters not trained: comma-separated globs ("conv*,fc1.*")
  bool overwrite = false;                  // a new run may replace the run files in a non-empty --out
  int64_t checkpoint_every = 0;            // steps; 0: at the end of each epoch
  int64_t keep_checkpoints = 3;
  int64_t log_every = 50;                  // steps between "step" records in metrics.jsonl
  std::string tensorboard;                 // also write TensorBoard event files here ("": not)
  bool progress = true;                    // the progress bar on stderr
  bool log_all_ranks = false;              // several processes: every rank prints, not only rank 0
                                           // (how it runs, not what: not in the JSON form)
  std::string profile;                     // "FIRST:LAST": profile those steps into the run directory
                                           // (step_profiler.h; not in the JSON form either)

  // Throws a UsageError naming the flag when a value is out of range, not finite or unknown. With
  // `stored_in` (a checkpoint file), the values came from that file, not from flags: the error is a
  // cohort::Error naming the file and the field, and the devices are not checked (they may be given
  // again on resume).
  void validate(const std::filesystem::path& stored_in = {}) const;
};

// The devices of `spec` ("cpu:0,cpu:1", or "2" for the first two). Throws a UsageError naming
// --devices when a device does not exist or appears twice, or when the list does not start with cpu:0
// (the model is built there, and DataParallel gathers on the first device).
std::vector<Device> parse_devices(const std::string& spec);

// The fields that define the run's results (everything but where and how fast it runs).
nlohmann::json to_json(const TrainConfig& config);
TrainConfig train_config_from_json(const nlohmann::json& j);

// j[key] as an integer (the JSON of checkpoints). Throws a cohort::Error starting with `where` when the
// key is missing, is not an integer or does not fit int64 (nlohmann alone would convert 1e300 to an
// integer with undefined behaviour).
int64_t integer_at(const nlohmann::json& j, const char* key, const std::string& where);

// The choices of --dataset, --optimizer, --scheduler and --precision (--model's are models::names()).
extern const std::vector<std::string> kDatasets, kOptimizers, kSchedulers, kPrecisions;

// What --precision means for a run: the autocast region's dtype around each step's forward pass and
// loss and around the evaluation (Note [Mixed precision] in trainer.cpp), whether the loss is scaled,
// and the words the start line uses.
struct Precision {
  bool autocast;        // false for f32: no region at all
  DType dtype;          // the region's dtype (float32 without one)
  bool loss_scaling;    // f16: optim::GradScaler's dynamic loss scaling
  std::string summary;  // "" for f32, else ", bfloat16 autocast" and the like
};
Precision precision_of(const TrainConfig& c);

// "a, b, c", for help texts and error messages.
std::string join_names(const std::vector<std::string>& names);

// How two lists of class names differ, for an error: "'cat', 'dog' only in <a_side>; 'bird' only in
// <b_side>" (names escaped, at most five per side), or that they hold the same names in another order.
std::string class_difference(const std::vector<std::string>& a, const std::string& a_side,
                             const std::vector<std::string>& b, const std::string& b_side);

// A flag naming a file the command replaces atomically (eval --json, export --onnx): a target that is
// not a regular file (/dev/null, a FIFO, a directory) is a UsageError "cohort export: --onnx /dev/null
// is a character device, not a regular file; ...", thrown before any work is done.
void check_output_flag(const std::string& path, const std::string& command_and_flag);

}  // namespace cohort::app
