// nll_loss's loops: one pass over the samples forward, one scatter backward. The composed form
// (gather, where, min/max bounds checks, two sums and their graph nodes) cost about twenty ops
// and two synchronising .item() calls per loss, which is most of a small training step's loss.
// bfloat16 and float16 run on float32 copies (`widen`/`into`, Note [Reduced floating dtypes] in
// src/ops/README.md): the totals are double either way, the per-sample losses and gradients are
// rounded once.
#include <cstring>

#include "cohort/core/error.h"
#include "ops/cpu/loss_kernels.h"
#include "ops/cpu/reduced.h"

namespace cohort::kernel {

NllTotals nll_loss_forward(const char* op, const Tensor& per_sample, const Tensor& input, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index) {
  if (is_reduced_floating_point(input.dtype())) {
    const Tensor x = widen(input), w = weight.defined() ? widen(weight) : Tensor();
    if (!per_sample.defined()) return nll_loss_forward(op, per_sample, x, target, w, ignore_index);
    NllTotals totals;
    into(per_sample, [&](const Tensor& o) { totals = nll_loss_forward(op, o, x, target, w, ignore_index); });
    return totals;
  }
  const int64_t N = input.size(0), C = input.size(1);
  const int64_t* t = target.data_ptr<int64_t>();
  const int64_t ts = target.stride(0);
  NllTotals totals;
  dispatch_floating(input.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* x = input.data_ptr<T>();
    const int64_t xs0 = input.stride(0), xs1 = input.stride(1);
    const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
    const int64_t ws = weight.defined() ? weight.stride(0) : 0;
    T* out = per_sample.defined() ? per_sample.data_ptr<T>() : nullptr;
    for (int64_t i = 0; i < N; ++i) {
      const int64_t c = t[i * ts];
      T loss = 0;
      if (c != ignore_index) {
        COHORT_CHECK_AS(IndexError, c >= 0 && c < C, op, ": target ", c, " is out of bounds for ", C,
                        " classes (sample ", i, "); hint: targets are class indices in [0, ", C, ")");
        const T wc = w ? w[c * ws] : T(1);
        loss = -wc * x[i * xs0 + c * xs1];
        totals.loss += static_cast<double>(loss);
        totals.weight += static_cast<double>(wc);
      }
      if (out) out[i] = loss;
    }
  });
  return totals;
}

void nll_loss_backward(const Tensor& grad_input, const Tensor& scale, double factor, const Tensor& target,
                       const Tensor& weight, int64_t ignore_index) {
  if (is_reduced_floating_point(grad_input.dtype())) {
    const Tensor s = scale.defined() ? widen(scale) : Tensor(), w = weight.defined() ? widen(weight) : Tensor();
    return into(grad_input, [&](const Tensor& o) { nll_loss_backward(o, s, factor, target, w, ignore_index); });
  }
  const int64_t N = grad_input.size(0), C = grad_input.size(1);
  const int64_t* t = target.data_ptr<int64_t>();
  const int64_t ts = target.stride(0);
  dispatch_floating(grad_input.dtype(), "nll_loss_backward", [&](auto tag) {
    using T = decltype(tag);
    T* gx = grad_input.data_ptr<T>();
    std::memset(gx, 0, static_cast<size_t>(N * C) * sizeof(T));
    const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
    const int64_t ws = weight.defined() ? weight.stride(0) : 0;
    const T* s = scale.defined() ? scale.data_ptr<T>() : nullptr;
    const int64_t ss = scale.defined() && scale.numel() > 1 ? scale.stride(0) : 0;
    for (int64_t i = 0; i < N; ++i) {
      const int64_t c = t[i * ts];
      if (c == ignore_index) continue;  // forward checked the range
      const T wc = w ? w[c * ws] : T(1);
      gx[i * C + c] = static_cast<T>(-static_cast<double>(wc) * factor * static_cast<double>(s ? s[i * ss] : T(1)));
    }
  });
}

}  // namespace cohort::kernel
