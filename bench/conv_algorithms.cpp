// Direct against Winograd convolution (cohort::set_conv_algorithm) on the 3x3 layers of ResNet-18
// (CIFAR variant) and the W5 layer of bench/workloads.cpp: median time of forward and of forward +
// backward, the rounding error of each against a float64 convolution. ConvAlgorithm::Auto's rule (at
// least 32 output tiles of 4x4) is read off these tables; Winograd is oneDNN's on AVX-512 and
// cohort's (src/ops/dnnl/winograd.cpp) elsewhere.
// Note [Winograd convolution] in src/ops/dnnl/conv.cpp rests on these numbers.
//   conv_algorithms [threads=1] [reps=7]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cohort/cohort.h>

using namespace cohort;
namespace F = cohort::nn::functional;

namespace {

struct Layer {
  int64_t batch, channels, size;
};

template <class Fn>
double median_ms(int reps, Fn&& fn) {
  fn();  // warm-up: builds the primitives
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Largest |got - exact| over the largest |exact|: an error relative to the output's scale.
double relative_error(const Tensor& got, const Tensor& exact) {
  return (got.to(kFloat64) - exact).abs().max().item<double>() / exact.abs().max().item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 7;
  set_num_threads(threads);
  const std::vector<Layer> layers = {{32, 64, 32}, {32, 128, 16}, {32, 256, 8}, {32, 512, 4}, {4, 64, 32},
                                     {4, 512, 4},  {128, 64, 32}, {128, 512, 4}, {8, 64, 56}};
  std::printf("threads %d; ms are medians of %d; error: max |conv - float64 conv| / max |float64 conv|\n", threads,
              reps);
  std::printf("| batch x channels x size | direct fwd | winograd fwd | direct fwd+bwd | winograd fwd+bwd | "
              "direct error | winograd error | 4x4 tiles |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Layer& l : layers) {
    manual_seed(0);
    Tensor x = randn({l.batch, l.channels, l.size, l.size});
    Tensor w = (randn({l.channels, l.channels, 3, 3}) / std::sqrt(9.0 * l.channels)).requires_grad_(true);
    const auto opts = F::Conv2dFuncOptions().padding(1);
    Tensor exact;
    {
      NoGradGuard no_grad;
      exact = F::conv2d(x.to(kFloat64), w.to(kFloat64), opts);
    }
    double fwd[2], train[2], error[2];
    const ConvAlgorithm algorithms[2] = {ConvAlgorithm::Direct, ConvAlgorithm::Winograd};
    for (int a = 0; a < 2; ++a) {
      set_conv_algorithm(algorithms[a]);
      fwd[a] = median_ms(reps, [&] {
        NoGradGuard no_grad;
        F::conv2d(x, w, opts);
      });
      train[a] = median_ms(reps, [&] { F::conv2d(x, w, opts).sum().backward(); });
      NoGradGuard no_grad;
      error[a] = relative_error(F::conv2d(x, w, opts), exact);
    }
    set_conv_algorithm(ConvAlgorithm::Auto);
    const int64_t tiles = l.batch * ((l.size + 3) / 4) * ((l.size + 3) / 4);
    std::printf("| %ldx%ldx%ld | %.2f | %.2f | %.2f | %.2f | %.1e | %.1e | %ld |\n", static_cast<long>(l.batch),
                static_cast<long>(l.channels), static_cast<long>(l.size), fwd[0], fwd[1], train[0], train[1],
                error[0], error[1], static_cast<long>(tiles));
  }
}
