// Setting up a training run (training_run.h). start_run calls the steps below in an order that
// matters: the seed is set before the weights are drawn, and a resumed run restores its checkpoint
// over everything built before it.
#include "app/training_run.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "cohort/core/device.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/core/threads.h"
#include "cohort/data/sampler.h"
#include "cohort/distributed/ddp.h"
#include "cohort/models/char_lstm.h"
#include "cohort/ops/creation.h"

#include "app/activation_checkpointing.h"
#include "app/fine_tune.h"

namespace cohort::app {

namespace fs = std::filesystem;

namespace {

// With W processes, rank r's row m of the carried state is stream r + W m (the DistributedSampler
// deals the in-order streams so): the checkpoint holds every stream's row, in stream order.
std::vector<Tensor> all_streams(const std::vector<Tensor>& mine, const Ranks& ranks) {
  const int64_t world = ranks.world_size(), rank = ranks.rank();
  if (world == 1 || mine.empty()) return mine;
  std::vector<Tensor> all;
  for (const Tensor& t : mine) {
    Shape shape = t.sizes().vec();
    shape[0] *= world;
    Tensor full = zeros(shape, t.options());
    for (int64_t m = 0; m < t.size(0); ++m) full.select(0, rank + world * m).copy_(t.select(0, m));
    all.push_back(full);
  }
  ranks.group()->all_reduce(all);  // the other ranks' rows are zeros here: the sum is exact
  return all;
}

// This process's rows of a checkpoint's carried state (the inverse of all_streams).
std::vector<Tensor> my_streams(const std::vector<Tensor>& all, const Ranks& ranks) {
  const int64_t world = ranks.world_size(), rank = ranks.rank();
  if (world == 1 || all.empty()) return all;
  std::vector<Tensor> mine;
  for (const Tensor& t : all) {
    COHORT_CHECK(t.size(0) % world == 0, "cohort train: the checkpoint's carried state has ", t.size(0),
                 " rows, which do not divide among ", world, " processes");
    Shape shape = t.sizes().vec();
    shape[0] /= world;
    Tensor part = empty(shape, t.options());
    for (int64_t m = 0; m < shape[0]; ++m) part.select(0, m).copy_(t.select(0, rank + world * m));
    mine.push_back(part);
  }
  return mine;
}

// On rank 0 (Note [Run directories] in run_dir.h): the lock, then a new run's directory check and
// identity, or a resumed run's clean-up. Returns the lock and the run's id.
std::pair<std::shared_ptr<RunDirLock>, std::string> open_run_dir(const TrainConfig& config, bool talk) {
  const fs::path out = config.out;
  auto lock = std::make_shared<RunDirLock>(out);
  const int removed = remove_dead_temp_files(out);
  if (removed > 0 && talk)
    std::cerr << "cohort: removed " << removed << " temp file" << (removed > 1 ? "s" : "")
              << " that killed runs left in " << out.string() << "\n";
  if (config.resume.empty()) {
    prepare_new_run_dir(out, config.overwrite);
    const RunIdentity identity{new_run_id(), job_id()};
    write_run_identity(out, identity);
    return {lock, identity.run_id};
  }
  const Checkpoint c = read_checkpoint(config.resume, /*talk=*/false);
  // A run written before runs had an identity gets one: its checkpoints' id (empty for those).
  if (!read_run_identity(out)) write_run_identity(out, RunIdentity{c.run_id, job_id()});
  set_aside_checkpoints_after(out, c.progress.step, talk);
  prune_checkpoints(out, config.keep_checkpoints);
  return {lock, c.run_id};
}

// The run's processes (Note [Trainer processes] in trainer.cpp): --batch-size is the batch of the
// whole run, so it must divide among them.
Ranks join_processes(const TrainConfig& config) {
  Ranks ranks = Ranks::from_environment();
  const int world = ranks.world_size();
  COHORT_CHECK(config.batch_size % world == 0, "cohort train: --batch-size ", config.batch_size,
               " is the batch of the whole run and must divide among its ", world, " processes; hint: use a multiple of ",
               world);
  return ranks;
}

// With several devices DataParallel splits each batch; with several processes
// DistributedDataParallel wraps that (or the model) and averages the gradients over the processes.
// A char-lstm on streams is also called with its state (forward_carry) through the same wrappers:
// DataParallel splits x, h and c by rows, so each replica gets the states of its rows, and gathers
// the final states in row order.
template <class M>
ModelCall wrap(const std::shared_ptr<M>& model, const std::vector<Device>& devices, const Ranks& ranks) {
  ModelCall call;
  auto expose = [&call](const auto& module) {
    call.forward = [module](const Tensor& x) { return module->forward(x); };
    if constexpr (std::is_same_v<M, models::CharLSTM>)
      call.forward_carry = [module](const Tensor& x, const Tensor& h, const Tensor& c) {
        return module->forward(x, h, c);
      };
  };
  auto distribute = [&](const auto& module) {
    using Wrapped = typename std::decay_t<decltype(module)>::element_type;
    auto ddp = std::make_shared<distributed::DistributedDataParallel<Wrapped>>(module, ranks.group());
    expose(ddp);
    call.distributed = ddp;
    call.reducer = &ddp->reducer();
  };
  if (devices.size() > 1) {
    auto parallel = std::make_shared<nn::DataParallel<M>>(model, devices);
    ranks.group() ? distribute(parallel) : expose(parallel);
    if (!ranks.group())
      call.forward_backward = [parallel](const Tensor& x, const Tensor& target, const ModelCall::StepLoss& loss) {
        auto [objective, mean_loss, logits] = parallel->forward_backward(
            [&loss](M& replica, const Tensor& xs, const Tensor& ts) {
              Tensor out = replica.forward(xs);
              auto [differentiated, value] = loss(out, ts);
              return std::make_tuple(differentiated, value.detach(), out.detach());
            },
            x, target);
        return std::make_tuple(mean_loss, logits);
      };
  } else {
    ranks.group() ? distribute(model) : expose(model);
  }
  return call;
}

ModelCall wrap_model(const std::shared_ptr<models::Model>& model, const std::string& devices_spec,
                     const Ranks& ranks, bool carry_state) {
  const std::vector<Device> devices = parse_devices(devices_spec);
  if (!carry_state) return wrap(model, devices, ranks);
  auto lm = std::dynamic_pointer_cast<models::CharLSTM>(model);
  COHORT_CHECK(lm != nullptr, "cohort train: carrying the state between batches needs the char-lstm model, got ",
               model->arch());
  return wrap(lm, devices, ranks);
}

// This process's share of each batch of the training set. With several processes, a
// DistributedSampler deals out the order that one process's RandomSampler has with this seed.
data::DataLoader make_train_loader(const TrainConfig& config, const DataSetup& data, const Ranks& ranks) {
  const int world = ranks.world_size();
  data::DataLoaderOptions options = data::DataLoaderOptions()
                                        .batch_size(config.batch_size / world)
                                        .shuffle(!data.carry_state)  // streams are read in order
                                        .num_workers(config.workers)
                                        .seed(config.seed + 1)
                                        .transform(data.train_transform);
  if (world > 1)
    options.sampler(std::make_shared<data::DistributedSampler>(data.train->size(), ranks.rank(), world,
                                                               /*shuffle=*/!data.carry_state, config.seed + 1));
  return data::DataLoader(data.train, options);
}

data::DataLoader make_test_loader(const TrainConfig& config, const DataSetup& data) {
  return data::DataLoader(data.test, data::DataLoaderOptions()
                                         .batch_size(data.test_batch > 0 ? data.test_batch
                                                                         : std::max<int64_t>(config.batch_size, 256))
                                         .num_workers(config.workers)
                                         .seed(config.seed + 2)
                                         .transform(inference_transform(data.spec)));
}

// Whether <out>/metrics.jsonl records a failure at `step` (read before a resume cuts the file there).
bool failed_at(const std::filesystem::path& out, int64_t step) {
  std::ifstream in(out / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.value("kind", "") == "failure" && record.value("step", int64_t{-1}) == step)
      return true;
  }
  return false;
}

// Restores the newest checkpoint of config.resume: weights, optimizer, scheduler, the default
// generator, the progress and the loader's position.
void resume(TrainingRun& run) {
  Checkpoint chosen = read_checkpoint(run.config.resume, /*talk=*/false);
  // The run's own newest checkpoint (resolve_resume chose it): an older one of the run may stand in.
  std::error_code ec;
  chosen.from_run_directory = std::filesystem::equivalent(chosen.path.parent_path(), run.out / "checkpoints", ec);
  const Checkpoint c = restore_checkpoint(chosen, *run.model, run.optimizer.get(), &run.schedule, run.ema.get());
  run.progress = c.progress;
  run.progress.carried = my_streams(c.progress.carried, run.ranks);
  if (!run.progress.grad_scaler.empty()) run.scaler.load_state_dict(run.progress.grad_scaler);
  run.resumed_from = c.path;
  run.resumed_from_step = c.progress.step;
  run.failed_there_before = failed_at(run.out, c.progress.step);
  try {
    run.loader.load_state(run.progress.loader);
  } catch (const Error& e) {
    throw Error(cohort::detail::str(
        "cohort train: --resume ", escape_text(c.path.string()), ": the checkpoint stopped at batch ",
        run.progress.loader.batch, " of epoch ", run.progress.loader.epoch + 1, ", but an epoch of the data in ",
        escape_text(run.data.source), " has ", run.loader.num_batches(), " batches now (", e.what(),
        "); hint: the data changed since the checkpoint: resume with the data it was trained on (--data-dir), or "
        "start a new run"));
  }
  if (run.talk)
    std::cerr << "cohort: resumed " << c.path.string() << " at epoch " << run.progress.loader.epoch + 1 << ", step "
              << run.progress.step << "\n";
}

// metrics.jsonl, on rank 0: a new run starts it with its config line; a resumed run keeps the lines
// up to its checkpoint's step.
void open_metrics(TrainingRun& run) {
  if (!run.ranks.leader()) return;
  const bool resumed = !run.config.resume.empty();
  run.metrics.emplace(run.out, resumed ? run.progress.step : -1);
  if (!run.config.tensorboard.empty()) run.metrics->mirror_to_tensorboard(run.config.tensorboard);
  if (!run.config.profile.empty())
    run.profiler.emplace(parse_profile_steps(run.config.profile), run.out, run.talk);
  if (resumed) return;
  nlohmann::json head = to_json(run.config);
  head["kind"] = "config";
  head["threads"] = get_num_threads();
  head["processes"] = run.ranks.world_size();
  head["version"] = COHORT_VERSION;
  head["train_size"] = run.data.train->size();
  head["test_size"] = run.data.test->size();
  head["data"] = run.data.source;
  run.metrics->write(head);
}

// "1 thread", "2 threads", or "up to 2 threads" where fewer run while other processes keep cores busy.
std::string thread_count_phrase() {
  const int n = get_num_threads();
  if (n == 1) return "1 thread";
  return (adaptive_threads() ? "up to " : "") + std::to_string(n) + " threads";
}

void announce(const TrainingRun& run) {
  if (!run.talk) return;
  const TrainConfig& config = run.config;
  const int world = run.ranks.world_size();
  const DataKind kind = run.data.spec.kind;
  std::cerr << "cohort: training " << config.model << " on " << config.dataset << " (" << run.data.train->size()
            << " train, " << run.data.test->size()
            << (kind == DataKind::kText     ? " test windows of " + std::to_string(config.seq_len) + " characters from "
                : kind == DataKind::kImages ? " test images from "
                                            : " test rows from ")
            << run.data.source << "), "
            << thread_count_phrase() << " on " << config.devices
            << (world > 1 ? " in each of " + std::to_string(world) + " processes" : std::string())
            << precision_of(config).summary
            << ", output in "
            << run.out.string() << "\n";
  for (const std::string& warning : run.data.warnings) std::cerr << "cohort train: warning: " << warning << "\n";
  // Fine-tuning says what it started from and what stays fixed, so a mistyped pattern shows at once.
  const bool initialised = !config.init_from.empty() && config.resume.empty();
  if (!initialised && config.freeze.empty()) return;
  std::cerr << "cohort:";
  if (initialised) std::cerr << " initial weights from " << escape_text(config.init_from) << ";";
  if (!config.freeze.empty()) {
    const auto params = run.model->parameters();
    const auto frozen = std::count_if(params.begin(), params.end(), [](const Tensor& p) { return !p.requires_grad(); });
    std::cerr << " " << frozen << " of " << params.size() << " parameter tensors frozen (--freeze '"
              << escape_text(config.freeze) << "')";
  } else {
    std::cerr << " every parameter trains";
  }
  std::cerr << "\n";
}

}  // namespace

models::Model& TrainingRun::evaluated_model() const {
  if (!ema) return *model;
  return dynamic_cast<models::Model&>(ema->module());  // a clone of the master: the same class
}

void TrainingRun::save_checkpoint() const {
  check_finite(*model, progress, out);  // on every rank: they hold the same weights and stop together
  TrainProgress saved = progress;
  saved.carried = all_streams(progress.carried, ranks);  // collective: every rank takes part
  if (ranks.leader()) {
    if (lock) lock->check_still_held();
    save_run_checkpoint(out, run_id, config, data.spec, saved, *model, *optimizer, &schedule, ema.get());
  }
  ranks.barrier();
}

namespace {

TrainingRun set_up(const TrainConfig& config, std::shared_ptr<RunDirLock> lock, std::string run_id) {
  fs::path out = config.out;
  Ranks ranks = join_processes(config);
  set_num_threads(threads_per_process(config.threads));
  manual_seed(config.seed);  // before anything random is drawn: the weights, the synthetic data
  DataSetup data = load_data(config);
  std::shared_ptr<models::Model> model = create_model(config.model, data.spec);
  if (config.checkpoint_activations) enable_checkpoint_activations(*model);
  // A resumed run's checkpoint holds its weights; --init-from seeds only a new run.
  std::vector<std::string> not_loaded;
  std::ostringstream quiet;  // the other ranks load the same weights without a word
  if (!config.init_from.empty() && config.resume.empty())
    not_loaded = init_from(*model, config.init_from, ranks.leader() ? static_cast<std::ostream&>(std::cerr) : quiet,
                           config.model);
  std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(config, freeze(*model, config.freeze, not_loaded));
  ModelCall call = wrap_model(model, config.devices, ranks, data.carry_state);
  data::DataLoader loader = make_train_loader(config, data, ranks);
  data::DataLoader test_loader = make_test_loader(config, data);
  const int64_t steps_per_epoch = (loader.num_batches() + config.accumulate - 1) / config.accumulate;
  Schedule schedule(config, *optimizer, steps_per_epoch);
  // The average starts from the weights of the first step (PyTorch's first update copies).
  std::unique_ptr<optim::AveragedModel> ema;
  if (config.ema > 0)
    ema = std::make_unique<optim::AveragedModel>(
        *model, optim::AveragedModelOptions().ema_decay(config.ema).use_buffers(true));
  const bool talk = ranks.leader() || config.log_all_ranks;
  TrainingRun run{.config = config,
                  .out = std::move(out),
                  .lock = std::move(lock),
                  .run_id = std::move(run_id),
                  .ranks = std::move(ranks),
                  .talk = talk,
                  .data = std::move(data),
                  .model = std::move(model),
                  .optimizer = std::move(optimizer),
                  .scaler = optim::GradScaler(optim::GradScalerOptions().enabled(precision_of(config).loss_scaling)),
                  .call = std::move(call),
                  .loader = std::move(loader),
                  .test_loader = std::move(test_loader),
                  .schedule = std::move(schedule),
                  .ema = std::move(ema)};
  if (!config.resume.empty()) resume(run);
  open_metrics(run);
  announce(run);
  run.started = std::chrono::steady_clock::now();
  run.elapsed_before = run.progress.elapsed_seconds;
  return run;
}

}  // namespace

TrainingRun start_run(const TrainConfig& config) {
  config.validate();
  const bool new_run_here = leader_by_environment() && config.resume.empty();
  const fs::path created = new_run_here ? first_missing_directory(config.out) : fs::path();
  std::shared_ptr<RunDirLock> lock;
  std::string run_id;
  if (leader_by_environment()) std::tie(lock, run_id) = open_run_dir(config, true);
  try {
    return set_up(config, lock, run_id);
  } catch (...) {
    // A new run that cannot start leaves nothing behind: not even an empty --out.
    if (new_run_here) remove_failed_new_run(config.out, created, lock);
    throw;
  }
}

}  // namespace cohort::app
