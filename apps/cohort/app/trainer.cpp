// The training loop. Note [Exact resume]: everything that decides the next step's numbers lives
// in the checkpoint — weights, optimizer and scheduler state, the default generator, the loader's
// position (its order depends only on its seed and the epoch) and the epoch's running sums — so a
// resumed run repeats the same computations as one that never stopped.
//
// Note [Trainer processes]
// Started by `cohort launch` (WORLD_SIZE > 1), every process runs this loop on its share of each
// batch: --batch-size stays the batch of the whole run, each of the W processes takes batch/W
// samples through a DistributedSampler (rank r gets positions r, r + W, ... of the epoch's shuffled
// order, so the W shares of batch k are exactly the samples one process would put in batch k), and
// DistributedDataParallel averages the gradients. The loss, accuracy counts and sample counts are
// summed over the processes at every step, so every rank sees the loss of the whole batch (and a NaN
// stops all of them at the same step, before any update) and the metrics equal one process's. Rank 0
// alone writes metrics, checkpoints (the others wait at a barrier), samples and the report; every
// rank evaluates the whole test set, so all of them hold the same numbers.
#include "app/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/device.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/core/threads.h"
#include "cohort/data/dataloader.h"
#include "cohort/data/sampler.h"
#include "cohort/distributed/ddp.h"
#include "cohort/data/transforms.h"
#include "cohort/io/file.h"
#include "cohort/models/model.h"
#include "cohort/nn/functional/loss.h"
#include "cohort/ops/shape.h"
#include "cohort/parallel/data_parallel.h"

#include "app/data_setup.h"
#include "app/evaluate.h"
#include "app/metrics_log.h"
#include "app/optim_setup.h"
#include "app/progress.h"
#include "app/ranks.h"
#include "app/report.h"
#include "app/run_checkpoint.h"
#include "app/samples.h"

namespace cohort::app {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The first 32 test images with their predictions, as samples.png.
void write_samples(const fs::path& out, models::Model& model, const DataSetup& data) {
  const int64_t n = std::min<int64_t>(32, data.test->size());
  std::vector<Tensor> shown, inputs;
  std::vector<int64_t> truth;
  Generator unused(0);
  const data::Transform to_tensor = data::transforms::ToTensor();
  for (int64_t i = 0; i < n; ++i) {
    data::Example e = data.test->get(i);
    shown.push_back(to_tensor(e.input, unused));
    inputs.push_back(data.test_transform(e.input, unused));
    truth.push_back(e.target.item<int64_t>());
  }
  NoGradGuard no_grad;
  model.eval();
  Tensor predicted = model.forward(stack(inputs)).argmax(1).contiguous();
  model.train();
  std::vector<int64_t> pred(predicted.data_ptr<int64_t>(), predicted.data_ptr<int64_t>() + n);
  write_samples_png((out / "samples.png").string(), stack(shown), truth, pred, data.classes);
}

// Rank 0 writes; the others wait until the file is complete (Note [Trainer processes]).
void save_checkpoint(const Ranks& ranks, const fs::path& out, const TrainConfig& config, const TrainProgress& p,
                     models::Model& model, optim::Optimizer& optimizer, optim::LRScheduler* scheduler) {
  if (ranks.leader()) save_run_checkpoint(out, config, p, model, optimizer, scheduler);
  ranks.barrier();
}

}  // namespace

double train(const TrainConfig& config) {
  config.validate();
  const fs::path out = config.out;
  std::error_code ec;
  fs::create_directories(out, ec);
  COHORT_CHECK(!ec, "cohort train: cannot create the output directory ", out.string(), ": ", ec.message());

  const Ranks ranks = Ranks::from_environment();
  const int world = ranks.world_size();
  COHORT_CHECK(config.batch_size % world == 0, "cohort train: --batch-size ", config.batch_size,
               " is the batch of the whole run and must divide among its ", world, " processes; hint: use a multiple of ",
               world);
  const bool talk = ranks.leader() || config.log_all_ranks;  // Note [Trainer processes]

  set_num_threads(threads_per_process(config.threads));
  manual_seed(config.seed);
  const DataSetup data = load_data(config);
  const auto num_classes = static_cast<int64_t>(data.classes.size());
  auto model = create_model(config.model, data);
  auto optimizer = make_optimizer(config, model->parameters());
  // With several devices the wrapper splits each batch; the model (its master copy) is what the
  // optimizer, the checkpoints and the evaluation see.
  const std::vector<Device> devices = parse_devices(config.devices);
  std::shared_ptr<nn::DataParallel<models::Model>> parallel;
  if (devices.size() > 1) parallel = std::make_shared<nn::DataParallel<models::Model>>(model, devices);
  std::function<Tensor(const Tensor&)> forward = [&](const Tensor& x) {
    return parallel ? parallel->forward(x) : model->forward(x);
  };
  std::shared_ptr<nn::Module> distributed_model;  // several processes: DistributedDataParallel around the above
  if (ranks.group()) {
    if (parallel) {
      auto ddp = std::make_shared<distributed::DistributedDataParallel<nn::DataParallel<models::Model>>>(parallel, ranks.group());
      forward = [ddp](const Tensor& x) { return ddp->forward(x); };
      distributed_model = ddp;
    } else {
      auto ddp = std::make_shared<distributed::DistributedDataParallel<models::Model>>(model, ranks.group());
      forward = [ddp](const Tensor& x) { return ddp->forward(x); };
      distributed_model = ddp;
    }
  }

  data::DataLoaderOptions train_options = data::DataLoaderOptions()
                                              .batch_size(config.batch_size / world)
                                              .shuffle(true)
                                              .num_workers(config.workers)
                                              .seed(config.seed + 1)
                                              .transform(data.train_transform);
  if (world > 1)  // the same order as one process's RandomSampler with this seed, dealt out to the ranks
    train_options.sampler(std::make_shared<data::DistributedSampler>(data.train->size(), ranks.rank(), world,
                                                                     /*shuffle=*/true, config.seed + 1));
  data::DataLoader loader(data.train, train_options);
  data::DataLoader test_loader(data.test, data::DataLoaderOptions()
                                              .batch_size(std::max<int64_t>(config.batch_size, 256))
                                              .num_workers(config.workers)
                                              .seed(config.seed + 2)
                                              .transform(data.test_transform));
  Schedule schedule = make_schedule(config, *optimizer, loader.num_batches());

  TrainProgress p;
  if (!config.resume.empty()) {
    Checkpoint c = read_checkpoint(config.resume);
    restore_checkpoint(c, *model, optimizer.get(), schedule.scheduler.get());
    p = c.progress;
    loader.load_state(p.loader);
    if (talk) std::cerr << "cohort: resumed " << c.path.string() << " at epoch " << p.loader.epoch + 1 << ", step " << p.step
              << "\n";
  }
  std::optional<MetricsLog> metrics;
  if (ranks.leader()) metrics.emplace(out, config.resume.empty() ? -1 : p.step);
  if (config.resume.empty() && metrics) {
    nlohmann::json head = to_json(config);
    head["kind"] = "config";
    head["threads"] = get_num_threads();
    head["processes"] = world;
    head["version"] = COHORT_VERSION;
    head["train_size"] = data.train->size();
    head["test_size"] = data.test->size();
    head["data"] = data.source;
    metrics->write(head);
  }
  if (talk) std::cerr << "cohort: training " << config.model << " on " << config.dataset << " (" << data.train->size()
            << " train, " << data.test->size() << " test images from " << data.source << "), "
            << get_num_threads() << " threads on " << config.devices
            << (world > 1 ? " in each of " + std::to_string(world) + " processes" : std::string()) << ", output in "
            << out.string() << "\n";

  const Clock::time_point run_start = Clock::now();
  const double elapsed_before = p.elapsed_seconds;
  double test_accuracy = 0;
  const bool nothing_to_train = loader.epoch() >= config.epochs;
  while (loader.epoch() < config.epochs) {
    const int64_t epoch = loader.epoch();
    ProgressBar bar("epoch " + std::to_string(epoch + 1) + "/" + std::to_string(config.epochs), loader.num_batches(),
                    loader.state().batch, config.progress && talk);
    const Clock::time_point epoch_start = Clock::now();
    const double epoch_seconds_before = p.epoch_seconds;
    model->train();
    for (const data::Batch& batch : loader) {
      Tensor logits = forward(batch.input);
      Tensor loss = nn::functional::cross_entropy(logits, batch.target);
      // Sums over the processes (Note [Trainer processes]): the loss of the whole batch, its correct
      // predictions and its size.
      std::vector<double> sums{loss.item<double>() * static_cast<double>(batch.size()),
                               static_cast<double>(logits.argmax(1).eq(batch.target).sum().item<int64_t>()),
                               static_cast<double>(batch.size())};
      ranks.sum(sums);
      // Checked before the update, so no NaN reaches the weights or a checkpoint.
      const double loss_value = sums[0] / sums[2];
      COHORT_CHECK(std::isfinite(loss_value), "cohort train: the loss is ", loss_value, " at step ", p.step + 1,
                   " (epoch ", epoch + 1, ", batch ", loader.state().batch, "); training stopped. The last good "
                   "checkpoint is in ", (out / "checkpoints").string(), "; hint: lower --lr");
      optimizer->zero_grad();
      loss.backward();
      optimizer->step();
      if (schedule.per_step) schedule.scheduler->step();
      ++p.step;
      p.loss_sum += sums[0];
      p.correct += static_cast<int64_t>(sums[1]);
      p.seen += static_cast<int64_t>(sums[2]);
      p.loader = loader.state();
      p.epoch_seconds = epoch_seconds_before + seconds_since(epoch_start);
      p.elapsed_seconds = elapsed_before + seconds_since(run_start);
      bar.update(p.loader.batch, "loss=" + fixed(p.loss_sum / static_cast<double>(p.seen), 4));

      if (p.step % config.log_every == 0 && metrics) {
        metrics->write({{"kind", "step"}, {"epoch", epoch}, {"step", p.step}, {"loss", loss_value},
                       {"lr", optimizer->get_lr()}, {"images_per_s", static_cast<double>(p.seen) / p.epoch_seconds},
                       {"elapsed_s", p.elapsed_seconds}});
      }
      if (config.checkpoint_every > 0 && p.step % config.checkpoint_every == 0 &&
          p.loader.batch < loader.num_batches()) {
        save_checkpoint(ranks, out, config, p, *model, *optimizer, schedule.scheduler.get());
      }
    }
    bar.close();

    const EvalResult test = evaluate(*model, test_loader, num_classes);
    test_accuracy = test.accuracy;
    const double train_loss = p.loss_sum / static_cast<double>(std::max<int64_t>(p.seen, 1));
    const double train_acc = static_cast<double>(p.correct) / static_cast<double>(std::max<int64_t>(p.seen, 1));
    const double images_per_s = static_cast<double>(p.seen) / std::max(p.epoch_seconds, 1e-9);
    if (metrics) metrics->write({{"kind", "epoch"}, {"epoch", epoch}, {"step", p.step}, {"train_loss", train_loss},
                   {"train_acc", train_acc}, {"test_loss", test.loss}, {"test_acc", test.accuracy},
                   {"lr", optimizer->get_lr()}, {"seconds", p.epoch_seconds}, {"images_per_s", images_per_s}});
    if (talk) std::cout << "epoch " << epoch + 1 << "/" << config.epochs << ": train loss " << fixed(train_loss, 4) << " acc "
              << fixed(100 * train_acc, 2) << "% | test loss " << fixed(test.loss, 4) << " acc "
              << fixed(100 * test.accuracy, 2) << "% | " << fixed(p.epoch_seconds, 1) << " s, "
              << fixed(images_per_s, 0) << " images/s" << std::endl;

    if (!schedule.per_step && schedule.scheduler) schedule.scheduler->step();
    p.loader = loader.state();
    p.loss_sum = 0;
    p.correct = p.seen = 0;
    p.epoch_seconds = 0;
    p.elapsed_seconds = elapsed_before + seconds_since(run_start);
    save_checkpoint(ranks, out, config, p, *model, *optimizer, schedule.scheduler.get());
    if (!ranks.leader()) continue;

    // The report is rewritten every epoch, so it can be opened while training goes on.
    if (epoch + 1 == config.epochs) {
      write_samples(out, *model, data);
      io::write_file(out / "eval.json", to_json(test, data.classes).dump(2) + "\n");
    }
    write_report(out.string());
  }
  // A run killed after its last checkpoint but before the outputs above: resumed, it has no epoch
  // left to train, so it evaluates the restored model and writes them now.
  if (nothing_to_train && ranks.leader()) {
    const EvalResult test = evaluate(*model, test_loader, num_classes);
    test_accuracy = test.accuracy;
    write_samples(out, *model, data);
    io::write_file(out / "eval.json", to_json(test, data.classes).dump(2) + "\n");
    write_report(out.string());
  }
  if (ranks.leader()) std::cerr << "cohort: report in " << (out / "report.html").string() << "\n";
  return test_accuracy;
}

}  // namespace cohort::app
