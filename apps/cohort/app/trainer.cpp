// The training loop over a run that start_run set up (training_run.cpp): backward_micro_batch,
// optimizer_step, train_epoch, end_epoch.
//
// Note [Exact resume]
// Everything that decides the next step's numbers lives in the checkpoint — weights, optimizer and
// schedule state, the moving average of the weights, the default generator, the loader's position
// (its order depends only on its seed and the epoch) and the epoch's running sums — so a resumed run
// repeats the same computations as one that never stopped.
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
//
// Note [Uneven shards]
// When W processes share n training samples and W does not divide n, DistributedSampler pads the
// epoch's order with its first samples again so that every rank has the same number of batches
// (DistributedDataParallel needs that). The repeats sit in the epoch's last batch, whose real samples
// then do not split evenly among the ranks either. That batch alone is weighted: a padded slot by 0,
// each real sample by W / S (S real samples in the whole batch), so the averaged gradient and the
// summed metrics are those of the S samples, as in one process. Batch norm still sees the repeated
// samples in that batch's statistics. The evaluation needs none of this: every rank evaluates the
// whole test set.
//
// Note [Interrupted training]
// The first SIGINT or SIGTERM (interrupt.h) lets the step in progress finish; then the run checkpoints
// and stops with exit code 128 + the signal, naming the step and the --resume to continue. Ranks must
// stop after the same step (each waits for the others' gradients), so in several processes each
// step's sums carry a vote, 1 from a rank that has seen a signal, summed with the gradients: every
// rank sees the same total after backward and stops together. A signal that arrives during the last
// step of an epoch stops the run after that epoch's evaluation and checkpoint.
//
// Note [Carried state]
// The char-lstm trains with truncated backpropagation through time, as PyTorch's word_language_model
// example: the training text is --batch-size contiguous streams (data::CharStreams) read in order,
// so row i of a batch continues row i of the batch before, and the LSTM starts each batch from the
// final state of the one before, detached (gradients stop at the batch's first step). The state is
// zeros at the start of every epoch. It goes through the model call with its rows: DataParallel
// hands each replica the states of its rows and gathers them back in order; with W processes rank r
// holds the rows of streams r, r + W, ... (an in-order DistributedSampler). It is part of the
// progress, so a checkpoint taken mid-epoch holds it (every stream's row, gathered from the
// processes) and a resumed run continues from the same state. The validation text is read the same
// way, as kValidationStreams streams with the state carried (evaluate). The char-transformer keeps
// independent windows.
//
// Note [Mixed precision]
// --precision bf16 or f16 runs each step's forward pass and loss, and the evaluation, inside an
// autocast region (cohort/ops/autocast.h): matrix products and convolutions compute in the narrow
// type, losses in float32, and the weights, their gradients and the optimizer state stay float32, so
// checkpoints are float32 whatever the precision. The backward pass runs outside the region, as
// PyTorch recommends (its nodes compute in the dtypes of their forward). DataParallel's replicas
// inherit the region. float16's narrow exponent range underflows small gradients, so f16 also scales
// the loss (optim::GradScaler: PyTorch's dynamic scaling; a step whose gradients overflow is skipped
// and the scale halves), and the scaler's state is checkpointed with the progress. The precision is
// part of the run's configuration: --resume refuses another.
//
// Note [Gradient accumulation]
// --accumulate K makes each optimizer step out of K micro-batches of --batch-size: the epoch's batches
// in windows of K (the last one shorter when K does not divide them). The gradients of a window add
// up in .grad, each micro-batch's mean loss weighted by its share of the window's samples (over all
// processes), so a step's gradient is the mean over the window's samples, as one batch of K x
// --batch-size would give, up to rounding (batch norm excepted: it normalises each micro-batch).
// Under DistributedDataParallel the first K - 1 backward passes keep their gradients local (no_sync)
// and the last one all-reduces the window's sum; the window's loss and accuracy sums, and the stop
// vote, ride with it. The loss check, clipping, the update, the schedule, the moving average, the
// step's records and checkpoints all happen once per window, so a checkpoint always sits at a
// window's end and a resumed run starts the next window.
#include "app/trainer.h"
#include "app/carried_state.h"

#include <algorithm>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/data/dataloader.h"
#include "cohort/io/image.h"
#include "cohort/nn/functional/loss.h"
#include "cohort/nn/utils.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/profiler/profiler.h"

#include "app/evaluate.h"
#include "app/generate.h"
#include "app/interrupt.h"
#include "app/progress.h"
#include "app/report.h"
#include "app/samples.h"
#include "app/training_run.h"

namespace cohort::app {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The real samples (over all processes, padding not counted) of the epoch's batches [from, to).
int64_t samples_in_batches(const TrainingRun& run, int64_t from, int64_t to) {
  const int64_t b = run.config.batch_size, n = run.data.train->size();
  return std::min(to * b, n) - from * b;
}

// Per-sample weights of this process's share of the current batch when the batch does not split
// evenly among the processes (Note [Uneven shards]), else an undefined tensor (always in one process).
Tensor uneven_weights(const TrainingRun& run, const data::Batch& batch) {
  const int64_t world = run.ranks.world_size(), n = run.data.train->size();
  const int64_t k = run.loader.state().batch - 1;  // the batch being trained, counted from 0
  if (world == 1 || n % world == 0 || k != run.loader.num_batches() - 1) return {};
  const int64_t per_rank = run.config.batch_size / world;
  const int64_t real = samples_in_batches(run, k, k + 1);  // S
  Tensor weights = zeros({batch.size()}, kFloat32);
  float* w = weights.data_ptr<float>();
  for (int64_t j = 0; j < batch.size(); ++j) {
    const int64_t position = run.ranks.rank() + (k * per_rank + j) * world;  // in the padded epoch order
    w[j] = position < n ? static_cast<float>(world) / static_cast<float>(real) : 0.f;
  }
  return weights;
}

// The test set's evaluation in the run's precision.
EvalResult evaluate_in_precision(TrainingRun& run) {
  const Precision precision = precision_of(run.config);
  std::optional<autocast::AutocastGuard> mixed;
  if (precision.autocast) mixed.emplace(precision.dtype);
  EvalResult result = evaluate(run.evaluated_model(), run.test_loader, run.num_classes(), run.data.carry_state);
  result.unit = sample_unit(run.data.spec.kind);
  return result;
}

// Adds the sums of a batch whose samples all count to `sums`: its loss (the mean over its
// predictions) times its predictions, its correct predictions and its predictions.
void add_batch_sums(std::vector<double>& sums, const Tensor& loss, const Tensor& logits, const Tensor& target) {
  sums[0] += loss.item<double>() * static_cast<double>(target.numel());
  sums[1] += static_cast<double>(logits.argmax(1).eq(target).sum().item<int64_t>());
  sums[2] += static_cast<double>(target.numel());
}

// The micro-batches of the step that the epoch's batch `k` (from 0) belongs to (Note [Gradient
// accumulation]): the window's first batch and its length.
struct Window {
  int64_t first, count;
  bool ends_at(int64_t k) const { return k == first + count - 1; }
};

Window window_of(const TrainingRun& run, int64_t k) {
  const int64_t first = k / run.config.accumulate * run.config.accumulate;
  return {first, std::min(run.config.accumulate, run.loader.num_batches() - first)};
}

// Batch k's share of its window's samples, counted over all processes: the weight of its mean loss.
double share_of_window(const TrainingRun& run, int64_t k, const Window& window) {
  return static_cast<double>(samples_in_batches(run, k, k + 1)) /
         static_cast<double>(samples_in_batches(run, window.first, window.first + window.count));
}

// The forward, loss and backward of one micro-batch through the model call, its loss weighted by
// `weight`, ending the autocast region `mixed` before backward; `sums` (the window's so far) gains
// the batch's. With DistributedDataParallel only the window's last batch reduces the gradients, and
// with them the window's sums.
void forward_then_backward(TrainingRun& run, const data::Batch& batch, double weight, bool last,
                           std::vector<double>& sums, std::optional<autocast::AutocastGuard>& mixed) {
  std::optional<profiler::RecordFunction> phase(std::in_place, "forward");
  if (run.call.reducer) run.call.reducer->set_sync(last);
  Tensor logits = run.call.forward_carry ? forward_carrying(run.progress.carried, batch.data, run.call.forward_carry)
                                         : run.forward(batch.data);
  const Tensor target = batch.target.reshape({-1});
  const int64_t per_sample = target.numel() / std::max<int64_t>(batch.size(), 1);
  Tensor loss;
  if (Tensor weights = uneven_weights(run, batch); weights.defined()) {
    Tensor losses = nn::functional::cross_entropy(logits, target,
                                                  nn::functional::CrossEntropyOptions().reduction(kNone));
    // A sample's weight is shared by its predictions.
    weights = (weights / static_cast<double>(per_sample)).unsqueeze(1).expand({batch.size(), per_sample}).reshape({-1});
    loss = (losses * weights).sum();
    // The metrics count the real samples only.
    const Tensor each = losses.detach().contiguous(), predicted = logits.argmax(1).contiguous(),
                 truth = target.contiguous(), w = weights.contiguous();
    for (int64_t j = 0; j < target.numel(); ++j) {
      if (w.data_ptr<float>()[j] == 0) continue;
      sums[0] += each.data_ptr<float>()[j];
      sums[1] += predicted.data_ptr<int64_t>()[j] == truth.data_ptr<int64_t>()[j];
      sums[2] += 1;
    }
  } else {
    loss = nn::functional::cross_entropy(logits, target);
    add_batch_sums(sums, loss, logits, target);
  }
  mixed.reset();  // backward outside the region (Note [Mixed precision])
  phase.emplace("backward");
  if (run.call.reducer && last) run.call.reducer->reduce_with_gradients(sums);
  run.scaler.scale(weight == 1 ? loss : loss * weight).backward();
  if (run.call.reducer && last) sums = run.call.reducer->reduced_values();
}

// One micro-batch of the window (Note [Gradient accumulation]): its forward, loss and backward,
// adding its sums to the window's `sums` (Note [Trainer processes]): its loss times its predictions,
// its correct predictions and its predictions. A prediction is a sample's class, or for a language
// model each position of a window (logits [N * T, V], target [N, T]). On the window's last batch the
// stop vote (Note [Interrupted training]) joins the sums, which are then the window's over all
// processes.
void backward_micro_batch(TrainingRun& run, const data::Batch& batch, double weight, bool last,
                          std::vector<double>& sums) {
  std::optional<autocast::AutocastGuard> mixed;
  if (const Precision precision = precision_of(run.config); precision.autocast) mixed.emplace(precision.dtype);
  if (last) sums[3] = interrupt_requested() ? 1 : 0;
  if (run.call.forward_backward && !run.call.forward_carry) {
    // Several devices in one process: each replica's forward, loss and backward in one job.
    profiler::RecordFunction phase("forward_backward");
    auto [loss, logits] = run.call.forward_backward(batch.data, batch.target, [&](const Tensor& out, const Tensor& t) {
      Tensor l = nn::functional::cross_entropy(out, t.reshape({-1}));
      return std::make_tuple(run.scaler.scale(weight == 1 ? l : l * weight), l);
    });
    mixed.reset();
    add_batch_sums(sums, loss, logits, batch.target.reshape({-1}));
  } else {
    forward_then_backward(run, batch, weight, last, sums, mixed);
  }
}

// The optimizer step after a window's backward passes, whose summed `sums` it gets. A loss that is
// not finite throws before the update, so no NaN reaches the weights or a checkpoint.
void optimizer_step(TrainingRun& run, const std::vector<double>& sums, int64_t epoch) {
  const double loss_value = sums[0] / sums[2];
  if (!std::isfinite(loss_value))
    throw NotFiniteError(cohort::detail::str("cohort train: the loss is ", loss_value, " at step ",
                                             run.progress.step + 1, " (epoch ", epoch + 1, ", batch ",
                                             run.loader.state().batch, "); training stopped"));
  // With f16's loss scaling, a step whose gradients overflowed is skipped and the scale backs off.
  profiler::RecordFunction phase("optimizer.step");
  if (run.config.clip_grad_norm > 0) {
    // The true gradients' norm, as PyTorch's recipe: unscale first (the identity without f16's scaler);
    // with an inf/NaN gradient the norm is not finite, and scaler.step skips the update anyway.
    run.scaler.unscale_(*run.optimizer);
    run.grad_norm = nn::utils::clip_grad_norm_(run.optimizer->parameters(), run.config.clip_grad_norm);
  }
  run.scaler.step(*run.optimizer);
  if (run.scaler.is_enabled()) {
    run.scaler.update();
    run.progress.grad_scaler = run.scaler.state_dict();
  }
  if (run.ema) run.ema->update_parameters(*run.model);
}

// The signal that stops the run after this step, 0 to go on (Note [Interrupted training]).
int stop_signal(const TrainingRun& run, const std::vector<double>& sums) {
  if (run.ranks.world_size() == 1) return interrupt_requested();  // no one to agree with: this very step
  if (sums[3] == 0) return 0;
  const int mine = interrupt_requested();
  return mine ? mine : SIGTERM;  // another rank's signal: the launcher sends all of them the same
}

// The message of a run stopped by a signal, after its checkpoint.
Interrupted interrupted(const TrainingRun& run, int signal) {
  const std::string message =
      run.talk ? cohort::detail::str("cohort train: interrupted at step ", run.progress.step,
                                     " (", signal == SIGINT ? "SIGINT" : "SIGTERM", "); resume with --resume ",
                                     escape_text(run.out.string()))
               : "";
  return Interrupted(message, signal);
}

// The rest of the current epoch's batches, with the progress bar, a "step" record every --log-every
// steps and a checkpoint every --checkpoint-every steps (the epoch's end has its own, end_epoch's).
// Stopped by a signal (Note [Interrupted training]) before the epoch's last batch, it checkpoints and
// throws Interrupted; during the last batch, it sets run.stop_signal for train() to act on after
// end_epoch.
void train_epoch(TrainingRun& run, int64_t epoch) {
  const TrainConfig& config = run.config;
  TrainProgress& p = run.progress;
  ProgressBar bar("epoch " + std::to_string(epoch + 1) + "/" + std::to_string(config.epochs),
                  run.loader.num_batches(), run.loader.state().batch, config.progress && run.talk);
  const Clock::time_point epoch_start = Clock::now();
  const double epoch_seconds_before = p.epoch_seconds;
  if (run.loader.state().batch == 0) p.carried.clear();  // every epoch starts from zero states
  run.model->train();
  if (run.profiler) run.profiler->after_step(p.step);
  std::vector<double> sums(4);
  std::optional<profiler::RecordFunction> step_range;
  for (const data::Batch& batch : run.loader) {
    const int64_t k = run.loader.state().batch - 1;  // the batch being trained, counted from 0
    const Window window = window_of(run, k);
    if (k == window.first) {
      step_range.emplace("train_step");
      run.optimizer->zero_grad();
      std::fill(sums.begin(), sums.end(), 0.0);
    }
    backward_micro_batch(run, batch, share_of_window(run, k, window), window.ends_at(k), sums);
    if (!window.ends_at(k)) continue;
    optimizer_step(run, sums, epoch);
    step_range.reset();
    ++p.step;
    run.schedule.after_step(p.step);
    if (run.profiler) run.profiler->after_step(p.step);
    p.loss_sum += sums[0];
    p.correct += static_cast<int64_t>(sums[1]);
    p.seen += static_cast<int64_t>(sums[2]);
    p.loader = run.loader.state();
    p.epoch_seconds = epoch_seconds_before + seconds_since(epoch_start);
    p.elapsed_seconds = run.elapsed_before + seconds_since(run.started);
    bar.update(p.loader.batch, "loss=" + fixed(p.loss_sum / static_cast<double>(p.seen), 4));

    if (p.step % config.log_every == 0 && run.metrics) {
      nlohmann::json record = {{"kind", "step"}, {"epoch", epoch}, {"step", p.step}, {"loss", sums[0] / sums[2]},
                               {"lr", run.optimizer->get_lr()},
                               {"images_per_s", static_cast<double>(p.seen) / p.epoch_seconds},
                               {"elapsed_s", p.elapsed_seconds}};
      if (config.clip_grad_norm > 0) record["grad_norm"] = run.grad_norm;
      run.metrics->write(record);
    }
    const bool mid_epoch = p.loader.batch < run.loader.num_batches();
    if (config.checkpoint_every > 0 && p.step % config.checkpoint_every == 0 && mid_epoch) run.save_checkpoint();
    if (const int signal = stop_signal(run, sums)) {
      run.stop_signal = signal;
      if (!mid_epoch) continue;  // the loop ends here; end_epoch checkpoints
      bar.close();
      if (!(config.checkpoint_every > 0 && p.step % config.checkpoint_every == 0)) run.save_checkpoint();
      if (run.ranks.leader() && p.loader.epoch > 0) write_report(run.out.string());  // no longer reloading
      throw interrupted(run, signal);
    }
  }
  bar.close();
  if (run.profiler) run.profiler->end_epoch();
}

// The epoch's "epoch" record in metrics.jsonl and its line on stdout; for a language model also
// the validation loss in bits per character and its perplexity, and a sample of generated text.
void report_epoch(TrainingRun& run, int64_t epoch, const EvalResult& test) {
  const TrainProgress& p = run.progress;
  const double train_loss = p.loss_sum / static_cast<double>(std::max<int64_t>(p.seen, 1));
  const double train_acc = static_cast<double>(p.correct) / static_cast<double>(std::max<int64_t>(p.seen, 1));
  const double images_per_s = static_cast<double>(p.seen) / std::max(p.epoch_seconds, 1e-9);
  nlohmann::json record = {{"kind", "epoch"}, {"epoch", epoch}, {"step", p.step}, {"train_loss", train_loss},
                           {"train_acc", train_acc}, {"test_loss", test.loss}, {"test_acc", test.accuracy},
                           {"lr", run.optimizer->get_lr()}, {"seconds", p.epoch_seconds},
                           {"images_per_s", images_per_s}};
  const DataKind kind = run.data.spec.kind;
  std::string text_line;
  if (kind == DataKind::kText && run.talk) {
    const double bpc = test.loss / std::log(2.0);
    const std::string sample =
        generate_text(run.evaluated_model(), data::CharVocab(run.data.spec.classes), run.data.prompt, 200, 0.8,
                      run.config.seed + static_cast<uint64_t>(epoch), run.config.seq_len);
    record["test_bpc"] = bpc;
    record["test_perplexity"] = std::exp(test.loss);
    record["sample"] = sample;
    text_line = " | test " + fixed(bpc, 3) + " bits/char, perplexity " + fixed(std::exp(test.loss), 2) +
                "\nsample: " + escape_text(sample);
  }
  if (run.metrics) run.metrics->write(record);
  const std::string unit = std::string(" ") + sample_unit(kind) + "/s";
  if (run.talk)
    std::cout << "epoch " << epoch + 1 << "/" << run.config.epochs << ": train loss " << fixed(train_loss, 4)
              << " acc " << fixed(100 * train_acc, 2) << "% | test loss " << fixed(test.loss, 4) << " acc "
              << fixed(100 * test.accuracy, 2) << "% | " << fixed(p.epoch_seconds, 1) << " s, "
              << fixed(images_per_s, 0) << unit << text_line << std::endl;
}

// What a finished run leaves beside its report: samples.png (for images) and eval.json.
void write_final_outputs(TrainingRun& run, const EvalResult& test) {
  if (run.data.spec.kind == DataKind::kImages) {
    write_prediction_samples((run.out / "samples.png").string(), run.evaluated_model(), run.data);
    if (run.metrics) run.metrics->image("samples", io::read_png((run.out / "samples.png").string()), run.progress.step);
  }
  write_eval_json(run.out / "eval.json", test, run.data.spec.classes);
}

// After the epoch's last batch: the test set's evaluation and the epoch's report, the per-epoch
// scheduler step, the epoch's checkpoint and, on rank 0, the report (rewritten every epoch, so it
// can be opened while training goes on) with the final outputs after the last epoch. Returns the
// test accuracy.
double end_epoch(TrainingRun& run, int64_t epoch) {
  TrainProgress& p = run.progress;
  const EvalResult test = evaluate_in_precision(run);
  report_epoch(run, epoch, test);

  run.schedule.after_epoch(test.loss);
  p.loader = run.loader.state();
  p.loss_sum = 0;
  p.correct = p.seen = 0;
  p.epoch_seconds = 0;
  p.elapsed_seconds = run.elapsed_before + seconds_since(run.started);
  p.carried.clear();  // the next epoch starts from zero states
  run.save_checkpoint();
  if (run.ranks.leader()) {
    if (epoch + 1 == run.config.epochs) write_final_outputs(run, test);
    write_report(run.out.string(), /*in_progress=*/epoch + 1 < run.config.epochs && !run.stop_signal);
  }
  return test.accuracy;
}

// What to do after training produced a NaN or an infinity at the step after `run.progress.step`:
// whether a checkpoint is left, and a way forward that the program accepts (--resume keeps the run's
// --lr, so a lower rate means a new run).
std::string advice_after_divergence(const TrainingRun& run) {
  const std::vector<fs::path> checkpoints = list_checkpoints(run.out);
  const std::string out = escape_text(run.out.string());
  const bool at_once = run.resumed_from_step >= 0 && run.progress.step == run.resumed_from_step;
  if (at_once && run.failed_there_before)
    return ". The run failed at this same step before it was resumed from " + escape_text(run.resumed_from.string()) +
           ", and a resume repeats the steps exactly, so the training itself diverges there, not the checkpoint; "
           "hint: a lower learning rate usually helps, and --resume keeps the run's --lr: start the run again with "
           "your command plus --overwrite and a lower --lr (e.g. --lr " + cohort::detail::str(run.config.lr / 10) +
           "), or give it another --out";
  if (at_once) {
    // The very first step after the resume: the loaded state, not the learning rate, is the suspect.
    std::string earlier;
    for (const fs::path& c : checkpoints)
      if (c != run.resumed_from) earlier = escape_text(c.string());
    return ". The run fails at once from the checkpoint it resumed, " + escape_text(run.resumed_from.string()) +
           "; hint: " + (earlier.empty() ? "" : "resume an earlier one with --resume " + earlier + ", or ") +
           "start the run again with --overwrite --out " + out;
  }
  std::string s = checkpoints.empty() ? ". No checkpoint was written, so there is nothing to resume"
                                      : ". The last good checkpoint is " + escape_text(checkpoints.back().string()) +
                                            " (resuming it would repeat the same steps: a resume is exact)";
  return s + "; hint: a lower learning rate usually helps, and --resume keeps the run's --lr: start the run "
             "again with your command plus --overwrite and a lower --lr (e.g. --lr " +
         cohort::detail::str(run.config.lr / 10) + "), or give it another --out";
}

// Records why training stopped: a "failure" line in metrics.jsonl and the report, on rank 0. Errors
// doing so are reported on stderr but do not hide the failure itself.
void record_failure(TrainingRun& run, const std::string& message) {
  if (!run.metrics) return;
  try {
    run.metrics->write({{"kind", "failure"}, {"epoch", run.progress.loader.epoch}, {"step", run.progress.step},
                        {"error", message}});
    write_report(run.out.string());
  } catch (const Error& e) {
    std::cerr << "cohort: could not record the failure in " << escape_text(run.out.string()) << ": "
              << escape_text(e.what()) << "\n";
  }
}

// The epochs left; after the last one, the final outputs. Returns the test accuracy.
double run_epochs(TrainingRun& run) {
  const TrainConfig& config = run.config;
  double test_accuracy = 0;
  const bool nothing_to_train = run.loader.epoch() >= config.epochs;
  while (run.loader.epoch() < config.epochs) {
    const int64_t epoch = run.loader.epoch();
    train_epoch(run, epoch);
    test_accuracy = end_epoch(run, epoch);
    if (run.stop_signal && run.loader.epoch() < config.epochs) throw interrupted(run, run.stop_signal);
  }
  if (nothing_to_train && run.talk)
    std::cerr << "cohort: the run in " << escape_text(run.out.string()) << " finished at epoch " << run.loader.epoch()
              << " (step " << run.progress.step << "), so there is nothing left to train with --epochs "
              << config.epochs << "; hint: to train it longer, --resume " << escape_text(run.out.string())
              << " --epochs " << run.loader.epoch() + 1 << " (or more)\n";
  // A run killed after its last checkpoint but before the outputs above: resumed, it has no epoch
  // left to train, so it evaluates the restored model and writes them now.
  if (nothing_to_train && run.ranks.leader()) {
    const EvalResult test = evaluate_in_precision(run);
    test_accuracy = test.accuracy;
    write_final_outputs(run, test);
    write_report(run.out.string());
  }
  if (run.ranks.leader()) std::cerr << "cohort: report in " << (run.out / "report.html").string() << "\n";
  return test_accuracy;
}

}  // namespace

double train(const TrainConfig& config) {
  InterruptHandlers handlers;  // Note [Interrupted training]
  TrainingRun run = start_run(config);
  try {
    const double test_accuracy = run_epochs(run);
    if (run.profiler) run.profiler->finish(run.progress.step);
    return test_accuracy;
  } catch (const NotFiniteError& e) {
    const std::string message = e.what() + advice_after_divergence(run);
    record_failure(run, message);
    throw Error(message);
  } catch (const Error& e) {
    record_failure(run, e.what());
    throw;
  }
}

}  // namespace cohort::app
