// Activation checkpointing's trade, measured: training steps (forward, cross entropy, backward) of a
// model with checkpointing on or off (ResNet::set_checkpoint_activations, by block;
// CharTransformer::set_checkpoint_activations, by residual step): the allocator's peak bytes during a
// step above what was allocated before it (weights, the batch), the growth of the process's resident
// set from before the first step to its peak (VmHWM - VmRSS) and the median step time. One mode per
// process, so that the RSS high-water mark is the mode's own: bench/checkpoint_memory.sh runs both,
// alternating, and prints the table.
//   checkpoint_memory MODEL off|on [batch=32] [size=32: image size, or sequence length] [steps=5] [threads=0]
//   -> "model <m> batch <n> size <s> checkpoint <off|on> peak_mib <p> rss_mib <r> step_ms <t> grad_diff <d>"
// It also checks that the gradients of the first step equal those of an unchecked model (a bitwise
// comparison on one thread, within float32 rounding otherwise) and fails if they do not.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cohort/cohort.h"
#include "cohort/models/char_transformer.h"

using namespace cohort;

namespace {

// A field of /proc/self/status in MiB: VmRSS (the resident set now), VmHWM (its peak).
double status_mib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(field + ":", 0) == 0) return std::atof(line.c_str() + field.size() + 1) / 1024.0;
  return -1;
}

std::shared_ptr<models::Model> build(const std::string& name, int64_t size, bool on) {
  manual_seed(0);
  const bool text = name == "char-transformer";
  auto net = models::create(name, models::ModelOptions().image_size(size).num_classes(text ? 96 : 10));
  if (auto* resnet = dynamic_cast<models::ResNet*>(net.get())) {
    resnet->set_checkpoint_activations(on);
  } else if (auto* transformer = dynamic_cast<models::CharTransformer*>(net.get())) {
    transformer->set_checkpoint_activations(on);
  } else {
    std::fprintf(stderr, "checkpoint_memory: %s does not checkpoint its activations\n", name.c_str());
    std::exit(2);
  }
  net->train();
  return net;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || (std::string(argv[2]) != "on" && std::string(argv[2]) != "off")) {
    std::fprintf(stderr, "usage: checkpoint_memory MODEL off|on [batch] [size] [steps] [threads]\n");
    return 2;
  }
  const std::string model = argv[1];
  const bool on = std::string(argv[2]) == "on";
  const int64_t batch = argc > 3 ? std::atoll(argv[3]) : 32;
  const int64_t size = argc > 4 ? std::atoll(argv[4]) : 32;
  const int steps = argc > 5 ? std::atoi(argv[5]) : 5;
  if (argc > 6 && std::atoi(argv[6]) > 0) set_num_threads(std::atoi(argv[6]));
  const Device cpu(kCPU, 0);
  const bool text = model == "char-transformer";
  manual_seed(1);
  const Tensor x = text ? randint(0, 96, {batch, size}) : randn({batch, 3, size, size});
  const Tensor y = text ? randint(0, 96, {batch * size}) : randint(0, 10, {batch});

  auto net = build(model, size, on);
  const double rss_before = status_mib("VmRSS");  // the weights, the batch, the program
  std::vector<double> ms;
  int64_t peak = 0;
  for (int s = 0; s <= steps; ++s) {  // step 0 warms the caches and is not timed
    for (Tensor& p : net->parameters()) p.mutable_grad() = Tensor();
    reset_peak_memory_stats(cpu);
    const int64_t before = memory_stats(cpu).allocated_bytes;
    const auto t0 = std::chrono::steady_clock::now();
    nn::functional::cross_entropy(net->forward(x), y).backward();
    const auto t1 = std::chrono::steady_clock::now();
    peak = std::max(peak, memory_stats(cpu).peak_bytes - before);
    if (s > 0) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  const double rss = status_mib("VmHWM") - rss_before;

  // The gradients of the last step against an unchecked copy's (same weights, same batch). Batch
  // norm's running statistics moved with every step (twice per step when checkpointed), which the
  // gradients of a training step do not depend on.
  auto plain = build(model, size, false);
  plain->load_state_dict(net->state_dict());
  for (Tensor& p : net->parameters()) p.mutable_grad() = Tensor();
  nn::functional::cross_entropy(net->forward(x), y).backward();
  nn::functional::cross_entropy(plain->forward(x), y).backward();
  const auto a = net->named_parameters(), b = plain->named_parameters();
  double worst = 0;
  for (const auto& item : a) {
    const Tensor ga = item.value().grad(), gb = b[item.key()].grad();
    worst = std::max(worst, (ga - gb).abs().max().item<double>() / (gb.abs().max().item<double>() + 1e-30));
  }
  if (get_num_threads() == 1 ? worst != 0 : worst > 1e-4) {
    std::fprintf(stderr, "checkpoint_memory: the gradients differ from the unchecked model's (relative %.3g)\n", worst);
    return 1;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("model %s batch %lld size %lld checkpoint %s peak_mib %.1f rss_mib %.1f step_ms %.1f grad_diff %.3g\n",
              model.c_str(), static_cast<long long>(batch), static_cast<long long>(size), on ? "on" : "off",
              peak / 1048576.0, rss, ms[ms.size() / 2], worst);
  return 0;
}
