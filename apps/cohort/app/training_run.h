// A `cohort train` run, set up: its output directory, processes, data, model (wrapped for several
// devices or processes), optimizer, schedule, loaders, progress and metrics log. start_run builds it
// in the order that decides the run's numbers (Note [Exact resume] in trainer.cpp); trainer.cpp
// runs its epochs.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "cohort/data/dataloader.h"
#include "cohort/distributed/reducer.h"
#include "cohort/models/model.h"
#include "cohort/nn/module.h"
#include "cohort/optim/averaged_model.h"
#include "cohort/optim/grad_scaler.h"
#include "cohort/optim/optimizer.h"
#include "cohort/parallel/data_parallel.h"

#include "app/config.h"
#include "app/data_setup.h"
#include "app/metrics_log.h"
#include "app/optim_setup.h"
#include "app/schedule.h"
#include "app/ranks.h"
#include "app/run_dir.h"
#include "app/run_checkpoint.h"
#include "app/step_profiler.h"
#include "app/carried_state.h"

namespace cohort::app {

// How a training step calls the model: the model itself on one device, nn::DataParallel over
// several (--devices), and DistributedDataParallel around either when there are several processes.
struct ModelCall {
  std::function<Tensor(const Tensor&)> forward;
  std::shared_ptr<nn::Module> distributed;  // null in one process
  distributed::Reducer* reducer = nullptr;  // distributed's, null in one process
  // char-lstm on streams (DataSetup::carry_state): the same wrappers called with the state, each
  // row's state going to the replica of its row; null otherwise.
  CarryingForward forward_carry;
  // Several devices in one process: forward, loss and backward in one call, each replica running
  // its whole step on its own thread (DataParallel::forward_backward), which leaves the batch's
  // gradients in the model's .grad and returns the batch's loss and logits, detached. `loss` maps
  // a replica's logits and targets to (what to differentiate, the loss). Null otherwise.
  using StepLoss = std::function<std::tuple<Tensor, Tensor>(const Tensor& logits, const Tensor& target)>;
  std::function<std::tuple<Tensor, Tensor>(const Tensor& x, const Tensor& target, const StepLoss& loss)>
      forward_backward;
};

struct TrainingRun {
  TrainConfig config;
  std::filesystem::path out;  // config.out, created by rank 0
  std::shared_ptr<RunDirLock> lock;  // rank 0's, held for the run's life (Note [Run directories])
  std::string run_id;                // tags every checkpoint
  Ranks ranks;
  bool talk = true;  // this process prints: rank 0, or every rank with --log-all-ranks
  DataSetup data;
  // The master copy: what the optimizer, the checkpoints and the evaluation see.
  std::shared_ptr<models::Model> model;
  std::unique_ptr<optim::Optimizer> optimizer;
  // Dynamic loss scaling for --precision f16 (Note [Mixed precision] in trainer.cpp); disabled, the
  // identity, otherwise.
  optim::GradScaler scaler{optim::GradScalerOptions().enabled(false)};
  ModelCall call;
  data::DataLoader loader;       // the training set: this process's share of each batch
  data::DataLoader test_loader;  // the whole test set, in every process
  Schedule schedule;
  // --ema: the moving average of the master's weights, updated after every optimizer step; null
  // otherwise.
  std::unique_ptr<optim::AveragedModel> ema{};
  TrainProgress progress{};             // restored on resume
  std::optional<MetricsLog> metrics{};  // rank 0 only
  std::optional<StepProfiler> profiler{};  // rank 0 with --profile
  std::chrono::steady_clock::time_point started{};  // when this process started training
  double elapsed_before = 0;  // training seconds of the run before it was resumed
  std::filesystem::path resumed_from{};  // the checkpoint resumed, empty for a new run
  int64_t resumed_from_step = -1;      // its step, -1 for a new run
  // The run failed right after that step before this resume (a "failure" record of metrics.jsonl at
  // it): a resume repeats the steps exactly, so the same failure then says nothing of the checkpoint.
  bool failed_there_before = false;
  int stop_signal = 0;                 // set when a signal asked to stop (Note [Interrupted training])
  double grad_norm = 0;                // the gradients' norm before the last step's --clip-grad-norm

  Tensor forward(const Tensor& x) const { return call.forward(x); }
  // The model the evaluation, the samples and the generated text use: the moving average with --ema,
  // else the master.
  models::Model& evaluated_model() const;
  int64_t num_classes() const { return static_cast<int64_t>(data.spec.classes.size()); }
  // Checkpoints `progress`: rank 0 writes, the others wait until the file is complete
  // (Note [Trainer processes]).
  void save_checkpoint() const;
};

// Validates `config`; on rank 0 locks config.out and readies it (a new run: refused when not empty
// unless config.overwrite, Note [Run directories]; a resumed one: temp files of dead processes,
// checkpoints newer than the resumed one and past --keep-checkpoints go); joins the run's processes,
// seeds, loads the data, builds the model, optimizer, schedule and loaders, restores config.resume
// (a checkpoint file or a run directory's newest intact checkpoint) when set, opens metrics.jsonl
// (rank 0) and prints what it is about to train. Throws a cohort::Error for bad settings, missing
// data, an output directory that is in use, not empty or unwritable, or a --batch-size the processes
// cannot share; a new run that fails after readying its directory first removes what it wrote there
// (remove_failed_new_run in run_dir.h), so a retry is not refused and no empty --out is left.
TrainingRun start_run(const TrainConfig& config);

}  // namespace cohort::app
