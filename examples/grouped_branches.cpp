// Port of a blog post on parallelising a model with grouped convolutions (its Parallel_Bottleneck,
// groups=12): G per-group branches run one after the other (a ModuleList, as the post's "old serial
// format") against one grouped network that does the same work in three convolutions, and per-group
// Linear layers against one einsum ("bgi,gio->bgo"). Both pairs get the same weights; the example
// checks the outputs are identical and prints the speed ratio.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include <cohort/cohort.h>

using namespace cohort;

namespace {

constexpr int64_t kGroups = 12, kGroupChannels = 64, kBatch = 8, kSize = 14;

// One branch of the post's serial format: squeeze 1x1, 3x3, expand 1x1, residual, ReLU.
struct Branch : nn::Module {
  Branch()
      : conv1(nn::Conv2dOptions(kGroupChannels, kGroupChannels / 2, 1).bias(false)),
        conv2(nn::Conv2dOptions(kGroupChannels / 2, kGroupChannels / 2, 3).padding(1).bias(false)),
        conv3(nn::Conv2dOptions(kGroupChannels / 2, kGroupChannels, 1).bias(false)) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv3", conv3);
  }
  Tensor forward(const Tensor& x) {
    Tensor out = conv1(x).relu();
    out = conv2(out).relu();
    return (conv3(out) + x).relu();
  }
  nn::Conv2d conv1, conv2, conv3;
};

// The post's Parallel_Bottleneck: all branches at once. conv1 maps the shared input to every
// group's squeezed channels; conv2 and conv3 are grouped, so group g only sees its own channels.
struct GroupedBottleneck : nn::Module {
  GroupedBottleneck()
      : conv1(nn::Conv2dOptions(kGroupChannels, kGroups * kGroupChannels / 2, 1).bias(false)),
        conv2(nn::Conv2dOptions(kGroups * kGroupChannels / 2, kGroups * kGroupChannels / 2, 3)
                  .padding(1).groups(kGroups).bias(false)),
        conv3(nn::Conv2dOptions(kGroups * kGroupChannels / 2, kGroups * kGroupChannels, 1).groups(kGroups).bias(false)) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv3", conv3);
  }
  Tensor forward(const Tensor& x) {
    Tensor residual = x.repeat({1, kGroups, 1, 1});  // the post's torch.cat loop, as repeat
    Tensor out = conv1(x).relu();
    out = conv2(out).relu();
    return (conv3(out) + residual).relu();
  }
  nn::Conv2d conv1, conv2, conv3;
};

// Median time of f in milliseconds.
double time_ms(const std::function<void()>& f, int reps = 7) {
  f();  // warm-up: primitives are created on first use
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

bool check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  return ok;
}

}  // namespace

int main() {
  manual_seed(0);
  NoGradGuard no_grad;  // inference timing; the gradients are checked by the tests
  bool ok = true;

  // --- 1. Serial branches vs the grouped bottleneck ------------------------------------------
  nn::ModuleList branches;
  for (int64_t g = 0; g < kGroups; ++g) branches->push_back(std::make_shared<Branch>());
  auto grouped = std::make_shared<GroupedBottleneck>();
  auto branch = [&](int64_t g) { return branches->ptr<Branch>(static_cast<size_t>(g)); };
  std::vector<Tensor> w1, w2, w3;
  for (int64_t g = 0; g < kGroups; ++g) {
    w1.push_back(branch(g)->conv1->weight);
    w2.push_back(branch(g)->conv2->weight);
    w3.push_back(branch(g)->conv3->weight);
  }
  grouped->conv1->weight.copy_(cat(w1));  // output channels of group g follow group g-1's
  grouped->conv2->weight.copy_(cat(w2));
  grouped->conv3->weight.copy_(cat(w3));

  Tensor x = randn({kBatch, kGroupChannels, kSize, kSize});
  auto serial = [&] {
    std::vector<Tensor> outs;
    for (int64_t g = 0; g < kGroups; ++g) outs.push_back(branch(g)->forward(x));
    return cat(outs, 1);
  };
  Tensor a = serial(), b = grouped->forward(x);
  std::printf("serial branches: %lld x [%lld, %lld, %lld, %lld] -> %s; grouped: %s\n", (long long)kGroups,
              (long long)kBatch, (long long)kGroupChannels, (long long)kSize, (long long)kSize,
              a.describe().c_str(), b.describe().c_str());
  ok &= check(a.allclose(b, 1e-4, 1e-5), "grouped convolution output equals the 12 serial branches");
  double t_serial = time_ms([&] { serial(); });
  double t_grouped = time_ms([&] { grouped->forward(x); });
  std::printf("bottleneck forward: serial %.2f ms, grouped %.2f ms, serial/grouped %.2fx\n", t_serial, t_grouped,
              t_serial / t_grouped);

  // --- 2. Per-group Linear layers vs einsum ---------------------------------------------------
  const int64_t in = 64, out = 32;
  nn::ModuleList fcs;
  for (int64_t g = 0; g < kGroups; ++g) fcs->push_back(nn::Linear(in, out));
  std::vector<Tensor> weights, biases;
  for (int64_t g = 0; g < kGroups; ++g) {
    auto fc = fcs->ptr<nn::LinearImpl>(static_cast<size_t>(g));
    weights.push_back(fc->weight.t());  // [in, out]
    biases.push_back(fc->bias);
  }
  Tensor W = stack(weights);  // [G, in, out]
  Tensor B = stack(biases);   // [G, out]
  Tensor features = randn({kBatch, kGroups, in});
  auto per_group = [&] {
    std::vector<Tensor> outs;
    for (int64_t g = 0; g < kGroups; ++g)
      outs.push_back(fcs->ptr<nn::LinearImpl>(static_cast<size_t>(g))->forward(features.select(1, g)));
    return stack(outs, 1);  // [B, G, out]
  };
  auto grouped_linear = [&] { return einsum("bgi,gio->bgo", {features, W}) + B; };
  ok &= check(per_group().allclose(grouped_linear(), 1e-5, 1e-6), "einsum grouped linear equals the 12 Linear layers");
  double t_loop = time_ms([&] { per_group(); }, 51);
  double t_einsum = time_ms([&] { grouped_linear(); }, 51);
  std::printf("grouped linear: per-group loop %.3f ms, einsum %.3f ms, loop/einsum %.2fx\n", t_loop, t_einsum,
              t_loop / t_einsum);
  return ok ? 0 : 1;
}
