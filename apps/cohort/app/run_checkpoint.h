// The trainer's checkpoints: one file per checkpoint in <run>/checkpoints/step-<N>.safetensors,
// holding the model, the optimizer and, as JSON metadata, everything else a resumed run needs to
// continue bit for bit: the run's config, the scheduler, the RNG, the loader's position and the
// epoch's running sums. Written atomically; the last few are kept.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/data/dataloader.h"
#include "cohort/nn/module.h"
#include "cohort/optim/averaged_model.h"
#include "cohort/optim/optimizer.h"

#include "app/config.h"
#include "app/data_spec.h"

namespace cohort::app {

class Schedule;

// Where training is: the next batch to run and the sums of the epoch so far.
struct TrainProgress {
  int64_t step = 0;                  // optimizer steps done
  data::DataLoader::State loader;    // epoch and the next batch within it
  double loss_sum = 0;               // over the epoch's samples so far
  int64_t correct = 0, seen = 0;
  double epoch_seconds = 0;          // training time of the epoch so far (for images/s)
  double elapsed_seconds = 0;        // of the whole run
  // char-lstm on streams: the LSTM state {h, c} [rows, layers, hidden] the next batch starts from
  // (Note [Carried state] in trainer.cpp); empty at an epoch's start and for other models. In a
  // checkpoint, all processes' rows in stream order.
  std::vector<Tensor> carried;
  // --precision f16: the loss scaler's state (optim::GradScaler::state_dict), so a resumed run scales
  // as the uninterrupted one would; empty otherwise.
  std::map<std::string, double> grad_scaler;
};

struct Checkpoint {
  std::filesystem::path path;
  std::string run_id;  // the run that wrote it (Note [Run directories] in run_dir.h); "" from older cohorts
  TrainConfig config;
  std::optional<DataSpec> data;  // absent in checkpoints of older cohorts: the dataset is read for it
  TrainProgress progress;
  bool from_run_directory = false;  // chosen by read_checkpoint as its run directory's newest intact one
};

// Training produced a NaN or an infinity (a loss, a weight): the run cannot go on from this step.
class NotFiniteError : public Error {
 public:
  using Error::Error;
};

// Writes <run_dir>/checkpoints/step-<step>.safetensors, tagged with `run_id`, then deletes all but
// the newest config.keep_checkpoints and the temp files of dead processes. The schedule and the
// moving average of the weights (--ema) are saved when given. A parameter or buffer that is not
// finite is an error (check_finite) and nothing is written.
std::filesystem::path save_run_checkpoint(const std::filesystem::path& run_dir, const std::string& run_id,
                                          const TrainConfig& config, const DataSpec& data,
                                          const TrainProgress& progress,
                                          const nn::Module& model, const optim::Optimizer& optimizer,
                                          const Schedule* schedule, const optim::AveragedModel* ema = nullptr);

// The first element of `t` (a contiguous CPU tensor) that is a NaN or an infinity: its index and
// value, or nullopt. Only float32 and float64 tensors are looked at.
std::optional<std::pair<int64_t, double>> first_non_finite(const Tensor& t);

// Throws a NotFiniteError naming the first parameter or buffer of `model` that holds a NaN or an
// infinity, the step, and that no checkpoint was written.
void check_finite(const nn::Module& model, const TrainProgress& progress, const std::filesystem::path& run_dir);

// The checkpoints of a run, oldest first (by step).
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& run_dir);

// Deletes all but the newest `keep` checkpoints of the run.
void prune_checkpoints(const std::filesystem::path& run_dir, int64_t keep);

// Renames the run's checkpoints newer than `step` to "<name>.skipped" (a run resumed from an older
// one continues from there; left in place, they would be taken for its newest), saying so on stderr
// when `talk`.
void set_aside_checkpoints_after(const std::filesystem::path& run_dir, int64_t step, bool talk);

// Reads a checkpoint's config and progress without touching any model, after verifying the whole
// file: it parses, its checksum matches and every floating-point tensor is finite. `path` is a
// checkpoint file or a run directory; for a directory, its newest intact checkpoint: a newer one that
// fails the check is skipped, named with the reason on stderr when `talk`. A checkpoint whose run id
// differs from its run directory's (run.json) is an error naming it. Throws naming the path when
// there is no usable checkpoint or it is not a cohort checkpoint.
Checkpoint read_checkpoint(const std::filesystem::path& path, bool talk = true);

// Restores model, optimizer, schedule, moving average and the default generator from `checkpoint`
// (each one given), and returns the checkpoint restored: when `checkpoint` was chosen as its run
// directory's newest and its tensors do not fit the model (a damaged file whose checksum still
// holds), the newest older checkpoint of the run that is intact and fits, said on stderr. Throws
// naming the file when none fits.
Checkpoint restore_checkpoint(const Checkpoint& checkpoint, nn::Module& model, optim::Optimizer* optimizer,
                              Schedule* schedule, optim::AveragedModel* ema = nullptr);

// The weights that eval, predict, generate and export use, restored into `model`: the moving
// average's when the run kept one (--ema), else the trained ones. The checkpoint is chosen as
// restore_checkpoint does; returns it.
Checkpoint restore_weights(const Checkpoint& checkpoint, nn::Module& model);

}  // namespace cohort::app
