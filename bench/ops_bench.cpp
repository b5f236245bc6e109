// Op micro-benchmarks: the workloads bench/ops_torch.py times in PyTorch, under the same names, so
// bench/compare_ops.sh can put the two side by side. Tensors are float32 unless the name says bf16,
// and made outside the timed loop; each timed iteration allocates its result, as `a + b` does in
// both libraries. Rows with a GFLOP/s counter count 2 flops per multiply-add.
// CPU time is the whole process's (backward nodes run on the device's worker thread).
//   ./ops_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cohort/cohort.h>

using namespace cohort;

namespace {

constexpr int64_t kMillion = 1 << 20;

void keep(const Tensor& t) {
  void* p = t.data_ptr();
  benchmark::DoNotOptimize(p);
  benchmark::ClobberMemory();
}

void add_1M(benchmark::State& state) {
  Tensor a = randn({kMillion}), b = randn({kMillion});
  for (auto _ : state) keep(a + b);
  state.SetBytesProcessed(state.iterations() * 3 * kMillion * 4);
}
BENCHMARK(add_1M)->MeasureProcessCPUTime();

void add_broadcast_1000x1000_1000(benchmark::State& state) {
  Tensor a = randn({1000, 1000}), b = randn({1000});
  for (auto _ : state) keep(a + b);
}
BENCHMARK(add_broadcast_1000x1000_1000)->MeasureProcessCPUTime();

void relu_1M(benchmark::State& state) {
  Tensor a = randn({kMillion});
  for (auto _ : state) keep(a.relu());
}
BENCHMARK(relu_1M)->MeasureProcessCPUTime();

// ReLU's backward given its output (what relu's node runs).
void threshold_backward_1M(benchmark::State& state) {
  Tensor g = randn({kMillion}), y = randn({kMillion}).relu();
  for (auto _ : state) keep(threshold_backward(g, y, 0));
}
BENCHMARK(threshold_backward_1M)->MeasureProcessCPUTime();

void clamp_1M(benchmark::State& state) {
  Tensor a = randn({kMillion});
  for (auto _ : state) keep(a.clamp(-0.5, 0.5));
}
BENCHMARK(clamp_1M)->MeasureProcessCPUTime();

void exp_1M(benchmark::State& state) {
  Tensor a = randn({kMillion});
  for (auto _ : state) keep(a.exp());
}
BENCHMARK(exp_1M)->MeasureProcessCPUTime();

void sum_1M(benchmark::State& state) {
  Tensor a = randn({kMillion});
  for (auto _ : state) keep(a.sum());
}
BENCHMARK(sum_1M)->MeasureProcessCPUTime();

void sum_dim0_1000x1000(benchmark::State& state) {
  Tensor a = randn({1000, 1000});
  for (auto _ : state) keep(a.sum({0}));
}
BENCHMARK(sum_dim0_1000x1000)->MeasureProcessCPUTime();

void softmax_256x1000_dim1(benchmark::State& state) {
  Tensor a = randn({256, 1000});
  for (auto _ : state) keep(a.softmax(1));
}
BENCHMARK(softmax_256x1000_dim1)->MeasureProcessCPUTime();

void mm_512x512(benchmark::State& state) {
  Tensor a = randn({512, 512}), b = randn({512, 512});
  for (auto _ : state) keep(a.mm(b));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * 512 * 512 * 512 * state.iterations(),
                                                  benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(mm_512x512)->MeasureProcessCPUTime();

void gflops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops_per_iteration * static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

// bfloat16 against float32 at 2048^3: oneDNN's bf16 matmul (AMX here) against sgemm.
void mm_2048x2048(benchmark::State& state) {
  Tensor a = randn({2048, 2048}), b = randn({2048, 2048});
  for (auto _ : state) keep(a.mm(b));
  gflops(state, 2.0 * 2048 * 2048 * 2048);
}
BENCHMARK(mm_2048x2048)->MeasureProcessCPUTime();

void mm_2048x2048_bf16(benchmark::State& state) {
  Tensor a = randn({2048, 2048}).to(kBFloat16), b = randn({2048, 2048}).to(kBFloat16);
  for (auto _ : state) keep(a.mm(b));
  gflops(state, 2.0 * 2048 * 2048 * 2048);
}
BENCHMARK(mm_2048x2048_bf16)->MeasureProcessCPUTime();

// A ResNet-like 3x3 layer, 64 -> 64 channels on 8x64x56x56 (bench/compare's W5 layer), padding 1,
// no bias: forward, and forward + backward (input and weight gradients: 3x the forward's flops).
constexpr double kConvFlops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9;

void conv_layer(benchmark::State& state, DType dtype, bool backward) {
  Tensor x = randn({8, 64, 56, 56}).to(dtype).requires_grad_(backward);
  Tensor w = (randn({64, 64, 3, 3}) * 0.05).to(dtype).requires_grad_(backward);
  Tensor g = randn({8, 64, 56, 56}).to(dtype);
  for (auto _ : state) {
    Tensor y = conv2d(x, w, Tensor(), 1, 1);
    if (backward) {
      x.mutable_grad() = Tensor();
      w.mutable_grad() = Tensor();
      y.backward(g);
      keep(w.grad());
    }
    keep(y);
  }
  gflops(state, backward ? 3 * kConvFlops : kConvFlops);
}
void conv2d_3x3_64_fwd(benchmark::State& state) { conv_layer(state, kFloat32, false); }
void conv2d_3x3_64_fwd_bwd(benchmark::State& state) { conv_layer(state, kFloat32, true); }
void conv2d_3x3_64_bf16_fwd(benchmark::State& state) { conv_layer(state, kBFloat16, false); }
void conv2d_3x3_64_bf16_fwd_bwd(benchmark::State& state) { conv_layer(state, kBFloat16, true); }
BENCHMARK(conv2d_3x3_64_fwd)->MeasureProcessCPUTime();
BENCHMARK(conv2d_3x3_64_fwd_bwd)->MeasureProcessCPUTime();
BENCHMARK(conv2d_3x3_64_bf16_fwd)->MeasureProcessCPUTime();
BENCHMARK(conv2d_3x3_64_bf16_fwd_bwd)->MeasureProcessCPUTime();

// Per-op overhead: the work is 4 additions, the rest is checks, dispatch and allocation.
void add_tiny_4(benchmark::State& state) {
  Tensor a = randn({4}), b = randn({4});
  for (auto _ : state) keep(a + b);
}
BENCHMARK(add_tiny_4)->MeasureProcessCPUTime();

// A small graph of 10 ops on [64, 64], forward then backward, gradients reset each iteration.
// The same graph is in ops_torch.py.
void autograd_10ops_64x64(benchmark::State& state) {
  Tensor x = randn({64, 64}, requires_grad());
  Tensor w = (randn({64, 64}) * 0.1).requires_grad_();
  for (auto _ : state) {
    x.mutable_grad() = Tensor();
    w.mutable_grad() = Tensor();
    Tensor a = x * w;           // 1
    Tensor b = a + x;           // 2
    Tensor c = b.relu();        // 3
    Tensor d = c.mm(w);         // 4
    Tensor e = d.tanh();        // 5
    Tensor f = e * e;           // 6
    Tensor g = f - x;           // 7
    Tensor h = g.sigmoid();     // 8
    Tensor i = h * w;           // 9
    Tensor loss = i.sum();      // 10
    loss.backward();
    keep(x.grad());
    keep(w.grad());
  }
}
BENCHMARK(autograd_10ops_64x64)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
