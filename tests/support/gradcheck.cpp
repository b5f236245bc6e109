// gradcheck: analytical Jacobian (one backward pass per output element, one-hot grad_outputs)
// against central differences (two forward passes per input element).
#include "support/gradcheck.h"

#include <cmath>
#include <random>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"

namespace cohort::testing {

std::string index_string(IntArrayRef sizes, int64_t flat) {
  std::vector<int64_t> idx(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    idx[d] = sizes[d] == 0 ? 0 : flat % sizes[d];
    flat = sizes[d] == 0 ? 0 : flat / sizes[d];
  }
  std::ostringstream os;
  os << IntArrayRef(idx);
  return os.str();
}

int64_t strided_offset(IntArrayRef sizes, IntArrayRef strides, int64_t flat) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    off += (flat % sizes[d]) * strides[d];
    flat /= sizes[d];
  }
  return off;
}

double element_at(const Tensor& t, int64_t flat) {
  const int64_t off = strided_offset(t.sizes(), t.strides(), flat);
  return dispatch(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(static_cast<const T*>(t.data_ptr())[off]);
  });
}

void set_element(const Tensor& t, int64_t flat, double v) {
  const int64_t off = strided_offset(t.sizes(), t.strides(), flat);
  dispatch(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    static_cast<T*>(t.data_ptr())[off] = static_cast<T>(v);
  });
}

Tensor make_noncontiguous(const Tensor& x) {
  const int64_t n = x.dim();
  Tensor v;
  if (n == 0) {
    v = full({3}, 77, TensorOptions(x.dtype())).select(0, 1);  // a 0-d view with an offset
  } else {
    Shape base_sizes(n);
    std::vector<int64_t> reverse(n);
    for (int64_t d = 0; d < n; ++d) base_sizes[d] = 2 * x.size(n - 1 - d) + 1, reverse[d] = n - 1 - d;
    v = full(base_sizes, 77, TensorOptions(x.dtype()));  // 77: a visible value should a kernel read a gap
    for (int64_t d = 0; d < n; ++d) v = v.slice(d, 1, base_sizes[d], 2);
    v = v.permute(reverse);
  }
  for (int64_t i = 0; i < x.numel(); ++i) set_element(v, i, element_at(x, i));
  return v;
}

namespace {

std::vector<std::vector<double>> values_of(const std::vector<Tensor>& outs, const std::vector<bool>& checked) {
  std::vector<std::vector<double>> r(outs.size());
  for (size_t o = 0; o < outs.size(); ++o)
    if (checked[o])
      for (int64_t j = 0; j < outs[o].numel(); ++j) r[o].push_back(element_at(outs[o], j));
  return r;
}

std::string shapes_of(const std::vector<Tensor>& xs) {
  std::ostringstream os;
  for (size_t i = 0; i < xs.size(); ++i) os << (i ? ", " : "") << xs[i].sizes();
  return os.str();
}

}  // namespace

::testing::AssertionResult gradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs, double eps,
                                     double atol, double rtol, const std::string& name) {
  const std::string where = "gradcheck " + name + " (inputs " + shapes_of(inputs) + "): ";
  std::vector<Tensor> xs;
  std::vector<size_t> diff;  // indices of the float64 inputs
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor x = inputs[i].detach();
    if (x.dtype() == kFloat64) x.requires_grad_(true), diff.push_back(i);
    xs.push_back(x);
  }
  std::vector<Tensor> wrt;
  for (size_t k : diff) wrt.push_back(xs[k]);

  // Analytical: an[o][k][j * numel_k + e] = d out_o[j] / d x_k[e].
  std::vector<Tensor> outs;
  std::vector<bool> checked;
  std::vector<std::vector<std::vector<double>>> an;
  try {
    EnableGradGuard grad_on;
    outs = fn(xs);
    for (size_t o = 0; o < outs.size(); ++o) {
      checked.push_back(outs[o].is_floating_point());
      an.emplace_back(diff.size());
      for (size_t k = 0; k < diff.size(); ++k) an[o][k].assign(outs[o].numel() * xs[diff[k]].numel(), 0.0);
      if (!checked[o] || !outs[o].requires_grad()) continue;
      for (int64_t j = 0; j < outs[o].numel(); ++j) {
        Tensor onehot = zeros(outs[o].sizes(), TensorOptions(outs[o].dtype()));
        set_element(onehot, j, 1.0);
        auto grads = autograd::grad({outs[o]}, wrt, {onehot}, /*retain_graph=*/true, false, /*allow_unused=*/true);
        for (size_t k = 0; k < diff.size(); ++k) {
          if (!grads[k].defined()) continue;
          const Tensor& x = xs[diff[k]];
          if (grads[k].sizes() != x.sizes())
            return ::testing::AssertionFailure() << where << "the gradient of input " << diff[k] << " has shape "
                                                 << grads[k].sizes() << ", expected " << x.sizes();
          for (int64_t e = 0; e < x.numel(); ++e) an[o][k][j * x.numel() + e] = element_at(grads[k], e);
        }
      }
    }
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << where << "forward or backward threw: " << e.what();
  }

  // Numerical, reading each result before the next evaluation (an output may alias an input).
  NoGradGuard no_grad;
  std::ostringstream failures;
  int n_fail = 0;
  for (size_t k = 0; k < diff.size(); ++k) {
    const Tensor& x = xs[diff[k]];
    for (int64_t e = 0; e < x.numel(); ++e) {
      const double orig = element_at(x, e);
      std::vector<std::vector<double>> plus, minus;
      try {
        set_element(x, e, orig + eps);
        plus = values_of(fn(xs), checked);
        set_element(x, e, orig - eps);
        minus = values_of(fn(xs), checked);
        set_element(x, e, orig);
      } catch (const std::exception& ex) {
        set_element(x, e, orig);
        return ::testing::AssertionFailure() << where << "forward threw while perturbed: " << ex.what();
      }
      for (size_t o = 0; o < outs.size(); ++o) {
        if (!checked[o]) continue;
        for (int64_t j = 0; j < outs[o].numel(); ++j) {
          const double num = (plus[o][j] - minus[o][j]) / (2 * eps);
          const double got = an[o][k][j * x.numel() + e];
          if (std::abs(got - num) <= atol + rtol * std::abs(num)) continue;
          if (++n_fail <= 3)
            failures << "\n  d(output " << o << ")" << index_string(outs[o].sizes(), j) << " / d(input " << diff[k]
                     << ")" << index_string(x.sizes(), e) << ": expected (finite difference) " << num
                     << ", got (autograd) " << got;
        }
      }
    }
  }
  if (n_fail == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << where << n_fail << " Jacobian entries differ" << failures.str()
                                       << (n_fail > 3 ? "\n  ..." : "");
}

::testing::AssertionResult gradcheck_noncontiguous(const TensorFn& fn, const std::vector<Tensor>& inputs,
                                                   double eps, double atol, double rtol, const std::string& name) {
  std::vector<Tensor> xs;
  for (const Tensor& x : inputs) xs.push_back(make_noncontiguous(x));
  return gradcheck(fn, xs, eps, atol, rtol, name + " [non-contiguous inputs]");
}

::testing::AssertionResult gradgradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs, double eps,
                                         double atol, double rtol, const std::string& name, uint64_t seed) {
  // The outputs that get a grad_output: floating ones that require grad when every float64 input does.
  std::vector<Tensor> xs;
  for (const Tensor& x : inputs) xs.push_back(x.dtype() == kFloat64 ? x.detach().requires_grad_(true) : x);
  std::vector<size_t> diff_outs;
  std::vector<Tensor> grad_outputs;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  try {
    EnableGradGuard grad_on;
    std::vector<Tensor> outs = fn(xs);
    for (size_t o = 0; o < outs.size(); ++o) {
      if (!outs[o].is_floating_point() || !outs[o].requires_grad()) continue;
      diff_outs.push_back(o);
      Tensor g = zeros(outs[o].sizes(), TensorOptions(kFloat64));
      for (int64_t j = 0; j < g.numel(); ++j) set_element(g, j, normal(rng));
      grad_outputs.push_back(g);
    }
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "gradgradcheck " << name << ": forward threw: " << e.what();
  }
  if (diff_outs.empty()) return ::testing::AssertionSuccess();

  // args = inputs..., grad_outputs...; the result is one gradient per float64 input (zeros when unused).
  const size_t n_in = inputs.size();
  TensorFn vjp = [&](const std::vector<Tensor>& args) {
    const bool create_graph = GradMode::is_enabled();  // off while gradcheck takes finite differences
    EnableGradGuard grad_on;
    std::vector<Tensor> in(args.begin(), args.begin() + n_in), wrt, outs, gos;
    for (const Tensor& x : in)
      if (x.dtype() == kFloat64) wrt.push_back(x);
    std::vector<Tensor> all = fn(in);
    for (size_t k = 0; k < diff_outs.size(); ++k) {
      outs.push_back(all[diff_outs[k]]);
      gos.push_back(args[n_in + k].to(all[diff_outs[k]].dtype()));
    }
    std::vector<Tensor> grads = autograd::grad(outs, wrt, gos, /*retain_graph=*/std::nullopt, create_graph,
                                               /*allow_unused=*/true);
    for (size_t k = 0; k < grads.size(); ++k)
      if (!grads[k].defined()) grads[k] = zeros(wrt[k].sizes(), TensorOptions(kFloat64));
    return grads;
  };
  std::vector<Tensor> args = inputs;
  args.insert(args.end(), grad_outputs.begin(), grad_outputs.end());
  return gradcheck(vjp, args, eps, atol, rtol, name + " [double backward]");
}

}  // namespace cohort::testing
