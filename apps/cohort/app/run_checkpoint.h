// The trainer's checkpoints: one file per checkpoint in <run>/checkpoints/step-<N>.safetensors,
// holding the model, the optimizer and, as JSON metadata, everything else a resumed run needs to
// continue bit for bit: the run's config, the scheduler, the RNG, the loader's position and the
// epoch's running sums. Written atomically; the last few are kept.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cohort/data/dataloader.h"
#include "cohort/nn/module.h"
#include "cohort/optim/lr_scheduler.h"
#include "cohort/optim/optimizer.h"

#include "app/config.h"

namespace cohort::app {

// Where training is: the next batch to run and the sums of the epoch so far.
struct TrainProgress {
  int64_t step = 0;                  // optimizer steps done
  data::DataLoader::State loader;    // epoch and the next batch within it
  double loss_sum = 0;               // over the epoch's samples so far
  int64_t correct = 0, seen = 0;
  double epoch_seconds = 0;          // training time of the epoch so far (for images/s)
  double elapsed_seconds = 0;        // of the whole run
};

struct Checkpoint {
  std::filesystem::path path;
  TrainConfig config;
  TrainProgress progress;
};

// Writes <run_dir>/checkpoints/step-<step>.safetensors and deletes all but the newest `keep`.
std::filesystem::path save_run_checkpoint(const std::filesystem::path& run_dir, const TrainConfig& config,
                                          const TrainProgress& progress, const nn::Module& model,
                                          const optim::Optimizer& optimizer, const optim::LRScheduler* scheduler);

// The checkpoints of a run, oldest first (by step).
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& run_dir);

// Reads a checkpoint's config and progress without touching any model. `path` is a checkpoint file
// or a run directory (then its newest checkpoint). Throws naming the path when there is none or it
// is not a cohort checkpoint.
Checkpoint read_checkpoint(const std::filesystem::path& path);

// Restores model, optimizer, scheduler and the default generator from `checkpoint`.
void restore_checkpoint(const Checkpoint& checkpoint, nn::Module& model, optim::Optimizer* optimizer,
                        optim::LRScheduler* scheduler);

}  // namespace cohort::app
