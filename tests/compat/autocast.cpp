// The libtorch-port promise for CPU autocast as a libtorch program drives it: at::autocast's
// set_autocast_cpu_dtype / set_cpu_enabled / clear_cache around a forward pass, then backward outside
// the region. Under it, linear layers, matrix products and convolutions compute in bfloat16, the
// losses in float32, and the float32 parameters get float32 gradients. Inputs are small whole
// numbers and halves, exact in bfloat16, so the expected values are worked out by hand.
#include "compat.h"

#include <cmath>

using namespace compat;

namespace {

// The autocast region of a libtorch program; the program's own RAII, as libtorch has none.
struct CpuAutocast {
  CpuAutocast() {
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(true);
    at::autocast::increment_nesting();
  }
  ~CpuAutocast() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_cpu_enabled(false);
  }
};

void state() {
  check(!at::autocast::is_cpu_enabled(), "autocast is off by default");
  {
    CpuAutocast region;
    check(at::autocast::is_cpu_enabled(), "set_cpu_enabled(true) turns it on");
    check(at::autocast::get_autocast_cpu_dtype() == at::kBFloat16, "get_autocast_cpu_dtype is bfloat16");
  }
  check(!at::autocast::is_cpu_enabled(), "set_cpu_enabled(false) turns it off");
}

void linear_and_loss() {
  auto w = torch::tensor({{1.0, 0.5, 0.0}, {0.0, 1.0, 2.0}}, torch::requires_grad());
  auto b = torch::tensor({0.5, -1.0}, torch::requires_grad());
  auto x = torch::tensor({{1.0, 2.0, 3.0}, {0.0, 1.0, 0.5}});
  torch::Tensor y, loss, p;
  {
    CpuAutocast region;
    y = torch::nn::functional::linear(x, w, b);
    p = torch::matmul(x, w.t());
    loss = torch::nn::functional::cross_entropy(y, torch::tensor({1, 0}));
  }
  check(y.scalar_type() == torch::kBFloat16, "linear runs in bfloat16");
  check(p.scalar_type() == torch::kBFloat16, "matmul runs in bfloat16");
  check(loss.scalar_type() == torch::kFloat32, "cross_entropy runs in float32");
  check(close(y, torch::tensor({{2.5, 7.0}, {1.0, 1.0}})), "linear's values: x w^T + b");
  loss.backward();
  check(w.grad().scalar_type() == torch::kFloat32, "the float32 weight gets a float32 gradient");
  check(b.grad().scalar_type() == torch::kFloat32, "the float32 bias gets a float32 gradient");
  // softmax - one_hot, averaged over the rows: row 1 (logits 2.5 and 7, target 1) gives (s, -s) with
  // s the softmax of 2.5; row 2 (equal logits, target 0) gives (-1/2, 1/2).
  const double s = 1.0 / (1.0 + std::exp(4.5));
  check(close(b.grad(), torch::tensor({(s - 0.5) / 2, (0.5 - s) / 2}), 1e-3), "the bias gradient");
}

void float64_untouched() {
  CpuAutocast region;
  auto a = torch::ones({2, 2}, torch::kFloat64);
  check(torch::mm(a, a).scalar_type() == torch::kFloat64, "float64 is never cast");
}

}  // namespace

int main() {
  section("state", state);
  section("linear and loss", linear_and_loss);
  section("float64", float64_untouched);
  return finish("autocast");
}
