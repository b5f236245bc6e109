// The PyTorch "60-minute blitz", part 1 ("What is PyTorch?": tensors), ported to cohort in the
// tutorial's order, printing what the tutorial prints. The end checks the values that do not depend
// on the random numbers and returns 1 on a mismatch, so `ctest -R example.blitz_tensors` catches
// regressions.
#include <cohort/cohort.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

using namespace cohort;
// repr(t) prints a tensor as the tutorial's Python does (std::cout << t prints libtorch's format).
using cohort::indexing::Slice;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "CHECK FAILED: " << what << "\n";
    ++failures;
  }
}

// Every element of a float tensor equals `value`.
bool all_equal(const Tensor& t, double value) {
  return equal(t, full_like(t, value));
}

}  // namespace

int main() {
  manual_seed(0);

  // "x = torch.empty(5, 3); print(x)" -- a 5x3 matrix, uninitialized: whatever the memory held.
  Tensor x = empty({5, 3});
  std::cout << repr(x) << "\n";

  // "x = torch.rand(5, 3); print(x)" -- a randomly initialized matrix, uniform on [0, 1).
  x = rand({5, 3});
  std::cout << repr(x) << "\n";
  check(x.ge(0.0).logical_not().sum().item<int64_t>() == 0 &&
            x.lt(1.0).logical_not().sum().item<int64_t>() == 0,
        "rand values lie in [0, 1)");

  // "x = torch.zeros(5, 3, dtype=torch.long); print(x)" -- filled with zeros, of dtype long.
  x = zeros({5, 3}, kLong);
  std::cout << repr(x) << "\n";
  check(x.dtype() == kInt64 && x.sum().item<int64_t>() == 0, "zeros(5, 3, kLong)");

  // "x = torch.tensor([5.5, 3]); print(x)" -- a tensor built directly from data.
  x = tensor({5.5, 3});
  std::cout << repr(x) << "\n";
  check(x.dtype() == kFloat32 && x[0].item<double>() == 5.5 && x[1].item<double>() == 3.0,
        "tensor({5.5, 3}) holds 5.5 and 3 as float32");

  // "x = x.new_ones(5, 3, dtype=torch.double)" -- new_* methods take sizes and reuse the input's
  // properties (dtype, device) unless told otherwise.
  x = x.new_ones({5, 3}, kDouble);
  std::cout << repr(x) << "\n";
  check(x.dtype() == kFloat64 && all_equal(x, 1.0), "new_ones({5, 3}, kDouble)");

  // "x = torch.randn_like(x, dtype=torch.float)" -- overrides the dtype; the result has the same size.
  x = randn_like(x, kFloat);
  std::cout << repr(x) << "\n";
  check(x.dtype() == kFloat32, "randn_like(x, kFloat) is float32");

  // "print(x.size())" -- torch.Size is a tuple; cohort's sizes() is an IntArrayRef.
  std::cout << x.sizes() << "\n";
  check(x.sizes() == IntArrayRef{5, 3}, "x.sizes() is [5, 3]");

  // Operations. "Addition: syntax 1" -- y = torch.rand(5, 3); print(x + y)
  Tensor y = rand({5, 3});
  Tensor sum1 = x + y;
  std::cout << repr(sum1) << "\n";

  // "Addition: syntax 2" -- print(torch.add(x, y))
  Tensor sum2 = add(x, y);
  std::cout << repr(sum2) << "\n";

  // "Addition: providing an output tensor as argument" -- result = torch.empty(5, 3);
  // torch.add(x, y, out=result); print(result)
  Tensor result = empty({5, 3});
  add_out(result, x, y);
  std::cout << repr(result) << "\n";

  // "Addition: in-place" -- y.add_(x) adds x to y. Any op that mutates a tensor in place ends in `_`.
  Tensor y_before = y.clone();
  y.add_(x);
  std::cout << repr(y) << "\n";
  check(equal(sum1, sum2) && equal(sum1, result) && equal(sum1, y),
        "x + y, add(x, y), add_out and y.add_(x) agree");
  check(equal(y - y_before, x) || allclose(y - y_before, x, 1e-6, 1e-6), "y.add_(x) added x");

  // "print(x[:, 1])" -- NumPy-like indexing: the second column.
  std::cout << repr(x) << "\n";
  Tensor column = x.index({Slice(), 1});
  std::cout << repr(column) << "\n";
  check(column.sizes() == IntArrayRef{5}, "x[:, 1] has 5 elements");
  for (int64_t i = 0; i < 5; ++i)
    check(column[i].item<float>() == x[i][1].item<float>(), "x[:, 1][" + std::to_string(i) + "] is x[i][1]");

  // Resizing: "x = torch.randn(4, 4); y = x.view(16); z = x.view(-1, 8)" -- the size -1 is
  // inferred from the other dims. "print(x.size(), y.size(), z.size())"
  x = randn({4, 4});
  y = x.view({16});
  Tensor z = x.view({-1, 8});
  Tensor r = x.reshape({8, -1});  // reshape works on any strides (copying only when it must)
  std::cout << x.sizes() << " " << y.sizes() << " " << z.sizes() << " " << r.sizes() << "\n";
  check(y.sizes() == IntArrayRef{16} && z.sizes() == IntArrayRef{2, 8} && r.sizes() == IntArrayRef{8, 2},
        "view({16}), view({-1, 8}), reshape({8, -1}) sizes");
  check(equal(z.reshape({4, 4}), x) && y.data_ptr() == x.data_ptr(), "views share x's data");

  // "x = torch.randn(1); print(x); print(x.item())" -- a one-element tensor's value as a number.
  x = randn({1});
  std::cout << repr(x) << "\n";
  std::cout << x.item() << "\n";
  check(x.item<float>() == x.data_ptr<float>()[0], "item() is the element");

  // NumPy bridge. The tutorial's a.numpy() / torch.from_numpy(a) share memory with the tensor; in
  // C++ the array is a std::vector<float> and from_blob wraps it without copying.
  // "a = torch.ones(5); b = a.numpy()" -- here b is the vector and a the tensor over it.
  std::vector<float> b(5, 1.0f);
  Tensor a = from_blob(b.data(), {5});
  std::cout << repr(a) << "\n";
  auto print_vector = [](const std::vector<float>& v) {
    std::cout << "[";
    for (size_t i = 0; i < v.size(); ++i) std::cout << (i ? " " : "") << v[i] << ".";
    std::cout << "]\n";
  };
  print_vector(b);

  // "a.add_(1); print(a); print(b)" -- changing the tensor changes the array.
  a.add_(1);
  std::cout << repr(a) << "\n";
  print_vector(b);
  for (float v : b) check(v == 2.0f, "a.add_(1) is visible in the vector");

  // "np.add(a, 1, out=a); print(a); print(b)" -- and changing the array changes the tensor.
  for (float& v : b) v += 1;
  print_vector(b);
  std::cout << repr(a) << "\n";
  check(all_equal(a, 3.0), "writes to the vector are visible in the tensor");

  // CUDA tensors: "if torch.cuda.is_available(): device = torch.device('cuda');
  // y = torch.ones_like(x, device=device); x = x.to(device); z = x + y; print(z);
  // print(z.to('cpu', torch.double))".
  // cohort has no GPU. Its devices are partitions of the machine's cores, cpu:0 .. cpu:n-1 (one per
  // data-parallel replica); a tensor on cpu:1 is computed by cpu:1's cores. The count defaults to the
  // number of cores, so we ask for 2 to make cpu:1 exist even on a 1-core machine. Moving between
  // them works exactly like .to("cuda") / .to("cpu").
  set_device_count(2);
  Device device("cpu:1");
  y = ones_like(x, device);
  x = x.to(device);
  z = x + y;
  std::cout << repr(z) << "\n";
  Tensor back = z.to("cpu", kDouble);  // .to can change the dtype while moving
  std::cout << repr(back) << "\n";
  check(z.device() == Device(kCPU, 1), "x + y on cpu:1 stays on cpu:1");
  check(back.device() == Device(kCPU, 0) && back.dtype() == kFloat64, "z.to(\"cpu\", kDouble)");
  check(std::abs(back.item<double>() - (x.item<double>() + 1.0)) < 1e-6, "z = x + 1");

  if (failures) {
    std::cerr << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "blitz_tensors: all checks passed\n";
  return 0;
}
