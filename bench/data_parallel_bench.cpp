// Training throughput (images/s of forward, cross-entropy, backward and an SGD step) of a zoo model
// on random images (1x28x28 for lenet, as Fashion-MNIST's; 3x32x32 otherwise), in one of these setups:
//   dp2   nn::DataParallel over cpu:0 and cpu:1, one intra-op thread per device
//   dp2-first  the same with PyTorch's buffer rule (BufferRule::kFirstReplica): shows what the exact
//              batch-norm running statistics (the default) cost
//   dp2-step   the same devices through DataParallel::forward_backward (each replica's forward, loss
//              and backward as one job on its own thread), as cohort train --devices steps
//   1x2   one device, 2 intra-op threads
//   1x1   one device, 1 intra-op thread
// Prints the median step time of `reps` steps after `warmup` steps, and images/s from it; with
// "phases", also the median time of each phase (forward, loss, backward, step) for the profile;
// dp2-step's forward phase is its whole forward_backward.
// bench/compare_data_parallel.sh runs every setup next to PyTorch (bench/data_parallel_torch.py).
//   data_parallel_bench <blitz-cnn|resnet18|lenet> <batch> <dp2|dp2-first|dp2-step|1x2|1x1> [reps=10] [warmup=2] [phases]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cohort/cohort.h>
#include <cohort/models/model.h>
#include <cohort/parallel/data_parallel.h>

using namespace cohort;
namespace F = cohort::nn::functional;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: data_parallel_bench <blitz-cnn|resnet18|lenet> <batch> <dp2|dp2-first|dp2-step|1x2|1x1> [reps=10] [warmup=2] [phases]\n");
    return 2;
  }
  const std::string arch = argv[1], setup = argv[3];
  const int64_t batch = std::atoll(argv[2]);
  const int reps = argc > 4 ? std::atoi(argv[4]) : 10;
  const int warmup = argc > 5 ? std::atoi(argv[5]) : 2;
  const bool phases = argc > 6 && std::strcmp(argv[6], "phases") == 0;
  const bool step_api = setup == "dp2-step";
  const bool data_parallel = setup == "dp2" || setup == "dp2-first" || step_api;
  if (!data_parallel && setup != "1x2" && setup != "1x1") {
    std::fprintf(stderr, "data_parallel_bench: unknown setup \"%s\" (dp2, dp2-first, dp2-step, 1x2 or 1x1)\n",
                 setup.c_str());
    return 2;
  }

  // dp2: the devices' threads come from Note [Threads per device] (2 cores / 2 devices = 1 each);
  // the calling thread (gather, loss, SGD step) gets the machine's 2, as cohort train --devices
  // --threads 2 gives it: between forward_backward calls no replica is running.
  set_device_count(2);
  set_num_threads(setup == "1x1" ? 1 : 2);
  manual_seed(0);
  const bool mnist = arch == "lenet";
  std::shared_ptr<models::Model> net =
      models::create(arch, mnist ? models::ModelOptions().in_channels(1).image_size(28) : models::ModelOptions());
  net->train();
  auto dp = std::make_shared<nn::DataParallel<models::Model>>(
      net, std::vector<Device>{"cpu:0", "cpu:1"},
      parallel::DataParallelOptions().buffers(setup == "dp2-first" ? parallel::BufferRule::kFirstReplica
                                                                   : parallel::BufferRule::kExact));
  optim::SGD optimizer(net->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  Tensor images = mnist ? randn({batch, 1, 28, 28}) : randn({batch, 3, 32, 32});
  Tensor labels = randint(0, 10, {batch});

  std::vector<double> steps, forward_ms, loss_ms, backward_ms, step_ms;
  auto step = [&](bool record) {
    auto t0 = Clock::now();
    optimizer.zero_grad();
    Clock::time_point t1, t2, t3;
    if (step_api) {
      dp->forward_backward([](models::Model& m, const Tensor& x, const Tensor& y) {
        return F::cross_entropy(m.forward(x), y);
      }, images, labels);
      t1 = t2 = t3 = Clock::now();
    } else {
      Tensor logits = data_parallel ? (*dp)(images) : net->forward(images);
      t1 = Clock::now();
      Tensor loss = F::cross_entropy(logits, labels);
      t2 = Clock::now();
      loss.backward();
      t3 = Clock::now();
    }
    optimizer.step();
    if (!record) return;
    steps.push_back(ms_since(t0));
    auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    forward_ms.push_back(ms(t0, t1));
    loss_ms.push_back(ms(t1, t2));
    backward_ms.push_back(ms(t2, t3));
    step_ms.push_back(ms(t3, Clock::now()));
  };
  for (int i = 0; i < warmup; ++i) step(false);  // oneDNN primitives and replicas are built on first use
  for (int i = 0; i < reps; ++i) step(true);

  const double m = median(steps);
  std::printf("cohort %s batch %lld %s: median %.3f ms/step, %.1f images/s (%d reps)\n", arch.c_str(),
              static_cast<long long>(batch), setup.c_str(), m, static_cast<double>(batch) * 1000.0 / m, reps);
  if (phases)
    std::printf("  phases (median ms): forward %.2f, loss %.2f, backward %.2f, sgd step %.2f\n", median(forward_ms),
                median(loss_ms), median(backward_ms), median(step_ms));
  return 0;
}
