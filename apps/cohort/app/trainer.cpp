// The training loop over a run that start_run set up (training_run.cpp): train_step, train_epoch,
// end_epoch.
//
// Note [Exact resume]
// Everything that decides the next step's numbers lives in the checkpoint — weights, optimizer and
// scheduler state, the default generator, the loader's position (its order depends only on its seed
// and the epoch) and the epoch's running sums — so a resumed run repeats the same computations as one
// that never stopped.
//
// Note [Trainer processes]
// Started by `cohort launch` (WORLD_SIZE > 1), every process runs this loop on its share of each
// batch: --batch-size stays the batch of the whole run, each of the W processes takes batch/W
// samples through a DistributedSampler (rank r gets positions r, r + W, ... of the epoch's shuffled
// order, so the W shares of batch k are exactly the samples one process would put in batch k), and
// DistributedDataParallel averages the gradients. The loss, accuracy counts and sample counts are
// summed over the processes at every step, inside the gradients' all-reduce (a collective of their
// own cost as much as the gradients' for a small model), so every rank sees the loss of the whole
// batch after backward (and a NaN stops all of them at the same step, before any update) and the
// metrics equal one process's. Rank 0 alone writes metrics, checkpoints (the others wait at a
// barrier), samples and the report; every rank evaluates the whole test set, so all of them hold
// the same numbers.
#include "app/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/data/dataloader.h"
#include "cohort/nn/functional/loss.h"

#include "app/evaluate.h"
#include "app/progress.h"
#include "app/report.h"
#include "app/samples.h"
#include "app/training_run.h"

namespace cohort::app {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// One optimizer step on `batch`, the `epoch`'s. Returns the batch's sums over the processes (Note
// [Trainer processes]): its loss times its size, its correct predictions and its size. A loss that
// is not finite throws before the update, so no NaN reaches the weights or a checkpoint.
std::vector<double> train_step(TrainingRun& run, const data::Batch& batch, int64_t epoch) {
  Tensor logits = run.forward(batch.data);
  Tensor loss = nn::functional::cross_entropy(logits, batch.target);
  std::vector<double> sums{loss.item<double>() * static_cast<double>(batch.size()),
                           static_cast<double>(logits.argmax(1).eq(batch.target).sum().item<int64_t>()),
                           static_cast<double>(batch.size())};
  if (run.call.reducer) run.call.reducer->reduce_with_gradients(sums);
  run.optimizer->zero_grad();
  loss.backward();
  if (run.call.reducer) sums = run.call.reducer->reduced_values();
  const double loss_value = sums[0] / sums[2];
  COHORT_CHECK(std::isfinite(loss_value), "cohort train: the loss is ", loss_value, " at step ", run.progress.step + 1,
               " (epoch ", epoch + 1, ", batch ", run.loader.state().batch, "); training stopped. The last good "
               "checkpoint is in ", (run.out / "checkpoints").string(), "; hint: lower --lr");
  run.optimizer->step();
  if (run.schedule.per_step) run.schedule.scheduler->step();
  return sums;
}

// The rest of the current epoch's batches, with the progress bar, a "step" record every --log-every
// steps and a checkpoint every --checkpoint-every steps (the epoch's end has its own, end_epoch's).
void train_epoch(TrainingRun& run, int64_t epoch) {
  const TrainConfig& config = run.config;
  TrainProgress& p = run.progress;
  ProgressBar bar("epoch " + std::to_string(epoch + 1) + "/" + std::to_string(config.epochs),
                  run.loader.num_batches(), run.loader.state().batch, config.progress && run.talk);
  const Clock::time_point epoch_start = Clock::now();
  const double epoch_seconds_before = p.epoch_seconds;
  run.model->train();
  for (const data::Batch& batch : run.loader) {
    const std::vector<double> sums = train_step(run, batch, epoch);
    ++p.step;
    p.loss_sum += sums[0];
    p.correct += static_cast<int64_t>(sums[1]);
    p.seen += static_cast<int64_t>(sums[2]);
    p.loader = run.loader.state();
    p.epoch_seconds = epoch_seconds_before + seconds_since(epoch_start);
    p.elapsed_seconds = run.elapsed_before + seconds_since(run.started);
    bar.update(p.loader.batch, "loss=" + fixed(p.loss_sum / static_cast<double>(p.seen), 4));

    if (p.step % config.log_every == 0 && run.metrics) {
      run.metrics->write({{"kind", "step"}, {"epoch", epoch}, {"step", p.step}, {"loss", sums[0] / sums[2]},
                          {"lr", run.optimizer->get_lr()},
                          {"images_per_s", static_cast<double>(p.seen) / p.epoch_seconds},
                          {"elapsed_s", p.elapsed_seconds}});
    }
    if (config.checkpoint_every > 0 && p.step % config.checkpoint_every == 0 &&
        p.loader.batch < run.loader.num_batches()) {
      run.save_checkpoint();
    }
  }
  bar.close();
}

// The epoch's "epoch" record in metrics.jsonl and its line on stdout.
void report_epoch(TrainingRun& run, int64_t epoch, const EvalResult& test) {
  const TrainProgress& p = run.progress;
  const double train_loss = p.loss_sum / static_cast<double>(std::max<int64_t>(p.seen, 1));
  const double train_acc = static_cast<double>(p.correct) / static_cast<double>(std::max<int64_t>(p.seen, 1));
  const double images_per_s = static_cast<double>(p.seen) / std::max(p.epoch_seconds, 1e-9);
  if (run.metrics)
    run.metrics->write({{"kind", "epoch"}, {"epoch", epoch}, {"step", p.step}, {"train_loss", train_loss},
                        {"train_acc", train_acc}, {"test_loss", test.loss}, {"test_acc", test.accuracy},
                        {"lr", run.optimizer->get_lr()}, {"seconds", p.epoch_seconds},
                        {"images_per_s", images_per_s}});
  if (run.talk)
    std::cout << "epoch " << epoch + 1 << "/" << run.config.epochs << ": train loss " << fixed(train_loss, 4)
              << " acc " << fixed(100 * train_acc, 2) << "% | test loss " << fixed(test.loss, 4) << " acc "
              << fixed(100 * test.accuracy, 2) << "% | " << fixed(p.epoch_seconds, 1) << " s, "
              << fixed(images_per_s, 0) << " images/s" << std::endl;
}

// What a finished run leaves beside its report: samples.png and eval.json.
void write_final_outputs(TrainingRun& run, const EvalResult& test) {
  write_prediction_samples((run.out / "samples.png").string(), *run.model, run.data);
  write_eval_json(run.out / "eval.json", test, run.data.classes);
}

// After the epoch's last batch: the test set's evaluation and the epoch's report, the per-epoch
// scheduler step, the epoch's checkpoint and, on rank 0, the report (rewritten every epoch, so it
// can be opened while training goes on) with the final outputs after the last epoch. Returns the
// test accuracy.
double end_epoch(TrainingRun& run, int64_t epoch) {
  TrainProgress& p = run.progress;
  const EvalResult test = evaluate(*run.model, run.test_loader, run.num_classes());
  report_epoch(run, epoch, test);

  if (!run.schedule.per_step && run.schedule.scheduler) run.schedule.scheduler->step();
  p.loader = run.loader.state();
  p.loss_sum = 0;
  p.correct = p.seen = 0;
  p.epoch_seconds = 0;
  p.elapsed_seconds = run.elapsed_before + seconds_since(run.started);
  run.save_checkpoint();
  if (run.ranks.leader()) {
    if (epoch + 1 == run.config.epochs) write_final_outputs(run, test);
    write_report(run.out.string());
  }
  return test.accuracy;
}

}  // namespace

double train(const TrainConfig& config) {
  TrainingRun run = start_run(config);
  double test_accuracy = 0;
  const bool nothing_to_train = run.loader.epoch() >= config.epochs;
  while (run.loader.epoch() < config.epochs) {
    const int64_t epoch = run.loader.epoch();
    train_epoch(run, epoch);
    test_accuracy = end_epoch(run, epoch);
  }
  // A run killed after its last checkpoint but before the outputs above: resumed, it has no epoch
  // left to train, so it evaluates the restored model and writes them now.
  if (nothing_to_train && run.ranks.leader()) {
    const EvalResult test = evaluate(*run.model, run.test_loader, run.num_classes());
    test_accuracy = test.accuracy;
    write_final_outputs(run, test);
    write_report(run.out.string());
  }
  if (run.ranks.leader()) std::cerr << "cohort: report in " << (run.out / "report.html").string() << "\n";
  return test_accuracy;
}

}  // namespace cohort::app
