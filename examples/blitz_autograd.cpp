// The PyTorch "60-minute blitz", part 2 ("Autograd: automatic differentiation"), ported to cohort
// in the tutorial's order, printing what the tutorial prints. The end checks the key numbers
// (d(out)/dx = 4.5 everywhere, the vector-Jacobian product v * 2^k, grad-mode flags) and returns 1
// on a mismatch, so `ctest -R example.blitz_autograd` catches regressions.
#include <cohort/cohort.h>

#include <cmath>
#include <iostream>
#include <string>

using namespace cohort;
// repr(t) prints a tensor as the tutorial's Python does (std::cout << t prints libtorch's format).

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "CHECK FAILED: " << what << "\n";
    ++failures;
  }
}

}  // namespace

int main() {
  manual_seed(0);

  // "x = torch.ones(2, 2, requires_grad=True); print(x)" -- track computation on x.
  Tensor x = ones({2, 2}, requires_grad());
  std::cout << repr(x) << "\n";

  // "y = x + 2; print(y)" -- y was made by an op, so it has a grad_fn. "print(y.grad_fn)"
  Tensor y = x + 2;
  std::cout << repr(y) << "\n";
  std::cout << "<" << y.grad_fn()->name() << ">\n";
  // Python prints <AddBackward0> (it wraps the 2 in a tensor); libtorch's C++ tensor + scalar
  // overload, which cohort follows, is AddBackward1.
  check(y.grad_fn() != nullptr && y.grad_fn()->name() == "AddBackward1", "y.grad_fn() is AddBackward1");
  check(x.grad_fn() == nullptr && x.is_leaf(), "x, made by the user, has no grad_fn");

  // "z = y * y * 3; out = z.mean(); print(z, out)"
  Tensor z = y * y * 3;
  Tensor out = z.mean();
  std::cout << repr(z) << " " << repr(out) << "\n";
  check(equal(z, full({2, 2}, 27.0)), "z = 3 * (1 + 2)^2 = 27 everywhere");
  check(out.item<float>() == 27.0f, "out = mean(3 * (1 + 2)^2) = 27");

  // ".requires_grad_(...) changes an existing tensor's requires_grad flag in place (default False)."
  // "a = torch.randn(2, 2); a = ((a * 3) / (a - 1)); print(a.requires_grad); a.requires_grad_(True);
  // print(a.requires_grad); b = (a * a).sum(); print(b.grad_fn)"
  Tensor a = randn({2, 2});
  a = ((a * 3) / (a - 1));
  std::cout << std::boolalpha << a.requires_grad() << "\n";
  check(!a.requires_grad(), "a does not require grad by default");
  a.requires_grad_(true);
  std::cout << a.requires_grad() << "\n";
  check(a.requires_grad(), "a.requires_grad_(true) sets the flag");
  Tensor b = (a * a).sum();
  std::cout << "<" << b.grad_fn()->name() << ">\n";
  // PyTorch prints <SumBackward0> (SumBackward1 is its sum over dims); only the op is checked here.
  check(b.grad_fn() != nullptr && b.grad_fn()->name().rfind("SumBackward", 0) == 0,
        "b.grad_fn() is a SumBackward node");

  // Gradients. "out.backward()" -- out is a scalar, so this equals out.backward(torch.tensor(1.)).
  out.backward();
  // "print(x.grad)" -- d(out)/dx: out = 1/4 sum 3 (x + 2)^2, so d(out)/dx_i = 3/2 (x_i + 2) = 4.5.
  std::cout << repr(x.grad()) << "\n";
  check(x.grad().defined() && x.grad().sizes() == IntArrayRef{2, 2}, "x.grad() is a 2x2 tensor");
  check(x.grad().defined() && equal(x.grad(), full({2, 2}, 4.5)), "x.grad() is 4.5 everywhere");

  // Vector-Jacobian product. "x = torch.randn(3, requires_grad=True); y = x * 2;
  // while y.data.norm() < 1000: y = y * 2; print(y)"
  x = randn({3}, requires_grad());
  y = x * 2;
  int doublings = 1;  // y = x * 2^doublings
  while (y.detach().norm().item<double>() < 1000) {
    y = y * 2;
    ++doublings;
  }
  std::cout << repr(y) << "\n";
  // y is not a scalar, so autograd cannot compute the full Jacobian for us; passing a vector v to
  // backward gives the product J^T v. "v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float);
  // y.backward(v); print(x.grad)"
  Tensor v = tensor({0.1, 1.0, 0.0001}, kFloat);
  y.backward(v);
  std::cout << repr(x.grad()) << "\n";
  // J = 2^k I, so the product is v * 2^k, exactly (multiplying by a power of two is exact).
  Tensor expected = v * std::ldexp(1.0, doublings);
  std::cout << "k = " << doublings << ", v * 2^k = " << expected << "\n";
  check(x.grad().defined() && equal(x.grad(), expected), "x.grad() is v * 2^k");

  // Stopping autograd. "print(x.requires_grad); print((x ** 2).requires_grad);
  // with torch.no_grad(): print((x ** 2).requires_grad)"
  std::cout << x.requires_grad() << "\n";
  std::cout << x.pow(2).requires_grad() << "\n";
  check(x.pow(2).requires_grad(), "x ** 2 requires grad outside no_grad");
  {
    NoGradGuard no_grad;
    std::cout << x.pow(2).requires_grad() << "\n";
    check(!x.pow(2).requires_grad(), "x ** 2 does not require grad inside NoGradGuard");
  }
  check(x.pow(2).requires_grad(), "grad mode is restored after NoGradGuard");

  // ".detach() gives a new tensor with the same content that does not require gradients."
  // "print(x.requires_grad); y = x.detach(); print(y.requires_grad); print(x.eq(y).all())"
  std::cout << x.requires_grad() << "\n";
  y = x.detach();
  std::cout << y.requires_grad() << "\n";
  Tensor same = x.eq(y);
  std::cout << same << "\n";
  check(!y.requires_grad() && y.grad_fn() == nullptr, "x.detach() does not require grad");
  check(same.sum().item<int64_t>() == 3, "x.detach() has x's values");
  check(y.data_ptr() == x.data_ptr(), "x.detach() shares x's data");

  if (failures) {
    std::cerr << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "blitz_autograd: all checks passed\n";
  return 0;
}
