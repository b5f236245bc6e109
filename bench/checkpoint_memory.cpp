// Activation checkpointing's trade, measured: a training step (forward, cross entropy, backward) of a
// ResNet with and without checkpointing by stage (utils::checkpoint, Note [Checkpoint] in
// include/cohort/utils/checkpoint.h): the allocator's peak bytes during the step and the step's
// median wall time.
//   checkpoint_memory [model=resnet18] [batch=32] [image_size=32] [steps=5] [threads=0: all cores]
//   -> "<model> batch <n> checkpoint <off|on> peak_mib <allocated peak> step_ms <median>" per mode
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cohort/cohort.h"

using namespace cohort;

int main(int argc, char** argv) {
  const std::string model = argc > 1 ? argv[1] : "resnet18";
  const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 32;
  const int64_t image_size = argc > 3 ? std::atoll(argv[3]) : 32;
  const int steps = argc > 4 ? std::atoi(argv[4]) : 5;
  if (argc > 5 && std::atoi(argv[5]) > 0) set_num_threads(std::atoi(argv[5]));
  const Device cpu(kCPU, 0);
  for (bool on : {false, true}) {
    manual_seed(0);
    auto net = models::create(model, models::ModelOptions().image_size(image_size));
    auto* resnet = dynamic_cast<models::ResNet*>(net.get());
    if (!resnet) {
      std::fprintf(stderr, "checkpoint_memory: %s is not a ResNet\n", model.c_str());
      return 2;
    }
    resnet->set_checkpoint_activations(on);
    net->train();
    Tensor x = randn({batch, 3, image_size, image_size}), y = randint(0, 10, {batch});
    std::vector<double> ms;
    int64_t peak = 0;
    for (int s = 0; s <= steps; ++s) {  // step 0 warms the caches and is not counted
      for (Tensor& p : net->parameters()) p.mutable_grad() = Tensor();
      reset_peak_memory_stats(cpu);
      const int64_t before = memory_stats(cpu).allocated_bytes;
      const auto t0 = std::chrono::steady_clock::now();
      nn::functional::cross_entropy(net->forward(x), y).backward();
      const auto t1 = std::chrono::steady_clock::now();
      if (s == 0) continue;
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      peak = std::max(peak, memory_stats(cpu).peak_bytes - before);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%s batch %lld checkpoint %s peak_mib %.1f step_ms %.1f\n", model.c_str(),
                static_cast<long long>(batch), on ? "on" : "off", peak / 1048576.0, ms[ms.size() / 2]);
  }
  return 0;
}
