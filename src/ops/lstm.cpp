// lstm_layer: an LSTM layer's whole time loop as one autograd node.
//
// Note [Fused LSTM layer]
// Composed of ops, a step of an LSTM records a dozen nodes (the hidden matmul, the gate slices, three
// sigmoids and two tanhs, the products and sums), and their backward allocates and accumulates a
// gradient per node per step. Here the forward runs per step one product for the gates (on the
// recurrent weight packed once per sequence: Note [Packed recurrent weight]) and one loop over the
// rows that activates them and computes c, tanh(c) and h (vector_math.h's vectorised sigmoid and
// tanh), keeping the activated gates, the cell states and tanh(c) of every step. The backward runs
// per step one loop (the gates' gradient from the saved activations) and one product (the
// gradient to the previous h); the gradients of w_hh and b_hh
// are one matmul and one sum over all steps at the end, and the input projection's gradient is the
// gates' gradient itself, so the caller's linear computes w_ih's gradient as one matmul too.
// Under create_graph the backward is composed of ops over a recomputed forward instead, so it is
// differentiable again (Note in src/ops/README.md).
#include "cohort/ops/rnn.h"

#include <optional>

#include "cohort/autograd/function.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/activation_loops.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/packed_product.h"

namespace cohort {
namespace {

// Rows per thread below which a step's cell loop stays on one thread: a row of H units costs some
// 5 H exponentials, and about 4096 of them pay for waking a second thread.
int64_t row_grain(int64_t H) { return std::max<int64_t>(1, 4096 / std::max<int64_t>(H, 1)); }

// The rows of step t in [T * N, *].
Tensor rows_of(const Tensor& x, int64_t t, int64_t N) { return x.narrow(0, t * N, N); }

// The previous h of every step, in the steps' rows: h0 for the first step run, else the output of the
// step run before.
Tensor previous_h(const Tensor& out, const Tensor& h0, int64_t T, int64_t N, bool reverse) {
  if (T == 1) return h0;
  return reverse ? cat({out.narrow(0, N, (T - 1) * N), h0}, 0) : cat({h0, out.narrow(0, 0, (T - 1) * N)}, 0);
}

// The backward composed of ops over a recomputed forward, for create_graph. g: gradients of out,
// h_n, c_n. Returns the gradients of xp, h0, c0, w_hh, b_hh.
std::vector<Tensor> backward_composed(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                                      const Tensor& b_hh, bool reverse, const std::vector<Tensor>& g) {
  const int64_t N = h0.size(0), H = h0.size(1), T = xp.size(0) / N;
  const Tensor xpb = b_hh.defined() ? xp + b_hh : xp;
  struct Saved {
    Tensor i, f, g, o, c_prev, tc;
  };
  std::vector<Saved> steps(static_cast<size_t>(T));
  std::vector<Tensor> outs(static_cast<size_t>(T));
  Tensor h = h0, c = c0;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    Tensor gates = addmm(rows_of(xpb, t, N), h, w_hh.t());
    Saved& st = steps[static_cast<size_t>(t)];
    st.i = sigmoid(gates.narrow(1, 0, H));
    st.f = sigmoid(gates.narrow(1, H, H));
    st.g = tanh(gates.narrow(1, 2 * H, H));
    st.o = sigmoid(gates.narrow(1, 3 * H, H));
    st.c_prev = c;
    c = st.f * c + st.i * st.g;
    st.tc = tanh(c);
    h = st.o * st.tc;
    outs[static_cast<size_t>(t)] = h;
  }
  Tensor dh = g[1], dc = g[2];
  std::vector<Tensor> dgates(static_cast<size_t>(T));
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = reverse ? T - 1 - s : s;
    const Saved& st = steps[static_cast<size_t>(t)];
    Tensor h_grad = rows_of(g[0], t, N) + dh;
    Tensor c_grad = dc + h_grad * st.o * (1 - st.tc * st.tc);
    Tensor d = cat({c_grad * st.g * st.i * (1 - st.i), c_grad * st.c_prev * st.f * (1 - st.f),
                    c_grad * st.i * (1 - st.g * st.g), h_grad * st.tc * st.o * (1 - st.o)},
                   1);
    dgates[static_cast<size_t>(t)] = d;
    dc = c_grad * st.f;
    dh = mm(d, w_hh);
  }
  Tensor dxp = cat(dgates, 0);
  Tensor dw = mm(dxp.t(), previous_h(cat(outs, 0), h0, T, N, reverse));
  return {dxp, dh, dc, dw, b_hh.defined() ? dxp.sum(0) : Tensor()};
}

struct LSTMLayer : autograd::Function<LSTMLayer> {
  static autograd::variable_list forward(autograd::AutogradContext* ctx, const Tensor& xp, const Tensor& h0,
                                         const Tensor& c0, const Tensor& w_hh, const Tensor& b_hh, bool reverse) {
    const int64_t N = h0.size(0), H = h0.size(1), T = xp.size(0) / N;
    const TensorOptions options = xp.options();
    const Tensor xpc = xp.contiguous();
    // Each step's gates start as the hidden projection h w_hh^T + b_hh, written into act, whose rows
    // the cell loop then activates in place.
    std::optional<kernel::PackedProduct> recurrent;
    if (kernel::PackedProduct::available(w_hh)) recurrent.emplace(w_hh.t(), b_hh, N);
    Tensor act = empty({T * N, 4 * H}, options), cells = empty({T * N, H}, options),
           tcs = empty({T * N, H}, options), out = empty({T * N, H}, options);
    Tensor h = h0.contiguous(), c = c0.contiguous();
    dispatch_floating(xp.dtype(), "lstm_layer", [&](auto tag) {
      using T_ = decltype(tag);
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = reverse ? T - 1 - s : s;
        Tensor a = rows_of(act, t, N), cn = rows_of(cells, t, N), tc = rows_of(tcs, t, N), hn = rows_of(out, t, N);
        if (recurrent)
          recurrent->run(a, h);
        else
          a.copy_(linear(h, w_hh, b_hh));  // the dtypes PackedProduct does not take
        T_* ap = a.data_ptr<T_>();
        const T_* xr = rows_of(xpc, t, N).data_ptr<T_>();
        const T_* cp = c.data_ptr<T_>();
        T_ *cr = cn.data_ptr<T_>(), *tr = tc.data_ptr<T_>(), *hr = hn.data_ptr<T_>();
        kernel::parallel_for(N, row_grain(H), [&](int64_t begin, int64_t end) {
          for (int64_t n = begin; n < end; ++n)
            kernel::vec::lstm_cell_forward(ap + n * 4 * H, xr + n * 4 * H, cp + n * H, cr + n * H, tr + n * H,
                                           hr + n * H, H);
        });
        h = hn;
        c = cn;
      }
    });
    ctx->save_for_backward({xp, h0, c0, w_hh, b_hh, out});
    ctx->saved_data["act"] = act;
    ctx->saved_data["cells"] = cells;
    ctx->saved_data["tcs"] = tcs;
    ctx->saved_data["reverse"] = reverse;
    return {out, h.clone(), c.clone()};
  }

  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &xp = saved[0], &h0 = saved[1], &c0 = saved[2], &w_hh = saved[3], &b_hh = saved[4], &out = saved[5];
    const bool reverse = ctx->saved_data["reverse"].toBool();
    if (GradMode::is_enabled()) {
      auto r = backward_composed(xp, h0, c0, w_hh, b_hh, reverse, g);
      r.push_back(Tensor());
      return r;
    }
    const int64_t N = h0.size(0), H = h0.size(1), T = xp.size(0) / N;
    const Tensor act = ctx->saved_data["act"].toTensor(), cells = ctx->saved_data["cells"].toTensor(),
                 tcs = ctx->saved_data["tcs"].toTensor();
    const Tensor gout = g[0].defined() ? g[0].contiguous() : Tensor();
    // dh: the gradient reaching the current step's h, rewritten in place by each step's product.
    Tensor dh = g[1].defined() ? g[1].contiguous().clone() : zeros({N, H}, xp.options());
    Tensor dc = g[2].defined() ? g[2].contiguous().clone() : zeros({N, H}, xp.options());
    const Tensor c0c = c0.contiguous();
    Tensor dgates = empty({T * N, 4 * H}, xp.options());
    std::optional<kernel::PackedProduct> recurrent;  // dh = dgates w_hh
    if (kernel::PackedProduct::available(w_hh)) recurrent.emplace(w_hh, Tensor(), N);
    dispatch_floating(xp.dtype(), "lstm_layer", [&](auto tag) {
      using T_ = decltype(tag);
      T_ *dhp = dh.data_ptr<T_>(), *dcp = dc.data_ptr<T_>();
      for (int64_t s = T - 1; s >= 0; --s) {
        const int64_t t = reverse ? T - 1 - s : s;
        const bool first = s == 0;
        const int64_t t_prev = reverse ? t + 1 : t - 1;
        const T_* c_prev = first ? c0c.data_ptr<T_>() : rows_of(cells, t_prev, N).data_ptr<T_>();
        const Tensor d = rows_of(dgates, t, N);
        const T_ *ap = rows_of(act, t, N).data_ptr<T_>(), *tp = rows_of(tcs, t, N).data_ptr<T_>();
        const T_* gp = gout.defined() ? rows_of(gout, t, N).data_ptr<T_>() : nullptr;
        T_* dp = d.data_ptr<T_>();
        kernel::parallel_for(N, row_grain(H), [&](int64_t begin, int64_t end) {
          for (int64_t n = begin; n < end; ++n)
            kernel::vec::lstm_cell_backward(ap + n * 4 * H, tp + n * H, c_prev + n * H, gp ? gp + n * H : nullptr,
                                            dhp + n * H, dcp + n * H, dp + n * 4 * H, H);
        });
        if (first && !ctx->needs_input_grad(1)) continue;
        if (recurrent)
          recurrent->run(dh, d);
        else
          dh.copy_(mm(d, w_hh));
      }
    });
    Tensor dw = ctx->needs_input_grad(3) ? mm(dgates.t(), previous_h(out, h0, T, N, reverse)) : Tensor();
    Tensor db = b_hh.defined() && ctx->needs_input_grad(4) ? dgates.sum(0) : Tensor();
    return {dgates, ctx->needs_input_grad(1) ? dh : Tensor(), ctx->needs_input_grad(2) ? dc : Tensor(), dw, db,
            Tensor()};
  }
};

}  // namespace

std::vector<Tensor> lstm_layer(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                               const Tensor& b_hh, bool reverse) {
  COHORT_CHECK(h0.defined() && h0.dim() == 2 && c0.defined() && c0.sizes() == h0.sizes(),
               "lstm_layer: expected h0 and c0 of one shape [N, H], got ", h0.defined() ? h0.sizes().vec() : Shape{},
               " and ", c0.defined() ? c0.sizes().vec() : Shape{});
  const int64_t N = h0.size(0), H = h0.size(1);
  COHORT_CHECK(w_hh.defined() && w_hh.dim() == 2 && w_hh.size(0) == 4 * H && w_hh.size(1) == H,
               "lstm_layer: expected w_hh of shape [", 4 * H, ", ", H, "], got ",
               w_hh.defined() ? w_hh.sizes().vec() : Shape{});
  COHORT_CHECK(xp.defined() && xp.dim() == 2 && xp.size(1) == 4 * H && N > 0 && xp.size(0) % N == 0 &&
                   xp.size(0) > 0,
               "lstm_layer: expected xp of shape [T * ", N, ", ", 4 * H, "] with T >= 1, got ",
               xp.defined() ? xp.sizes().vec() : Shape{});
  COHORT_CHECK(!b_hh.defined() || (b_hh.dim() == 1 && b_hh.size(0) == 4 * H), "lstm_layer: expected b_hh of shape [",
               4 * H, "], got ", b_hh.defined() ? b_hh.sizes().vec() : Shape{});
  for (const Tensor* t : {&h0, &c0, &w_hh, &b_hh})
    COHORT_CHECK_AS(TypeError, !t->defined() || t->dtype() == xp.dtype(), "lstm_layer: expected every tensor in ",
                    xp.dtype(), " (xp's dtype), got ", t->dtype());
  return LSTMLayer::apply(xp, h0, c0, w_hh, b_hh, reverse);
}

}  // namespace cohort
