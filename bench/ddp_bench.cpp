// Training throughput (images/s of forward, cross-entropy, backward and an SGD step) of a zoo model on
// random 3x32x32 images, with DistributedDataParallel when started as several ranks, else one process:
//   RANK=r WORLD_SIZE=n COHORT_STORE=file:/tmp/x ddp_bench <blitz-cnn|resnet18|lenet> <global batch> <threads> [reps] [warmup]
//   ddp_bench <blitz-cnn|resnet18|lenet> <global batch> <threads> [reps=10] [warmup=2]
// Each rank trains on global batch / n images per step; rank 0 prints the median step time of `reps`
// steps after `warmup`, and global images/s from it. bench/compare_ddp.sh runs it next to PyTorch's DDP
// (bench/ddp_torch.py).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cohort/cohort.h>
#include <cohort/distributed/ddp.h>
#include <cohort/distributed/init.h>
#include <cohort/models/model.h>

using namespace cohort;
namespace F = cohort::nn::functional;
namespace dist = cohort::distributed;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: ddp_bench <blitz-cnn|resnet18|lenet> <global batch> <threads> [reps=10] [warmup=2]\n");
    return 2;
  }
  const std::string arch = argv[1];
  const int64_t global_batch = std::atoll(argv[2]);
  const int threads = std::atoi(argv[3]);
  const int reps = argc > 4 ? std::atoi(argv[4]) : 10;
  const int warmup = argc > 5 ? std::atoi(argv[5]) : 2;
  const char* world_env = std::getenv("WORLD_SIZE");
  const bool distributed = world_env && std::atoi(world_env) > 1;

  set_num_threads(threads);
  std::shared_ptr<dist::ProcessGroup> pg = distributed ? dist::init_process_group() : nullptr;
  const int rank = pg ? pg->rank() : 0, world = pg ? pg->world_size() : 1;
  manual_seed(0);
  const bool mnist = arch == "lenet";  // 1x28x28 images, as the main job's Fashion-MNIST
  std::shared_ptr<models::Model> net =
      models::create(arch, mnist ? models::ModelOptions().in_channels(1).image_size(28) : models::ModelOptions());
  net->train();
  std::shared_ptr<dist::DistributedDataParallel<models::Model>> ddp;
  if (pg) ddp = std::make_shared<dist::DistributedDataParallel<models::Model>>(net, pg);
  optim::SGD optimizer(net->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  const int64_t batch = global_batch / world;
  manual_seed(1 + rank);
  Tensor images = mnist ? randn({batch, 1, 28, 28}) : randn({batch, 3, 32, 32});
  Tensor labels = randint(0, 10, {batch});

  std::vector<double> steps;
  for (int i = 0; i < warmup + reps; ++i) {
    auto t0 = Clock::now();
    optimizer.zero_grad();
    Tensor logits = ddp ? (*ddp)(images) : net->forward(images);
    F::cross_entropy(logits, labels).backward();  // with DDP: returns with the gradients averaged
    optimizer.step();
    if (i >= warmup) steps.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(steps.begin(), steps.end());
  const double m = steps[steps.size() / 2];
  if (rank == 0)
    std::printf("cohort %s batch %lld %dx%d: median %.3f ms/step, %.1f images/s (%d reps)\n", arch.c_str(),
                static_cast<long long>(global_batch), world, threads, m,
                static_cast<double>(batch * world) * 1000.0 / m, reps);
  if (pg) pg->barrier();
  return 0;
}
