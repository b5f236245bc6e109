// Op-table rows for the recurrent ops (include/cohort/ops/rnn.h: the cells, and lstm, gru, rnn_tanh and
// rnn_relu over padded and packed batches: bidirectional, two layers, batch_first, an LSTM's
// projection, decreasing batch_sizes) and attention's in_projection_packed. The reference runs
// every cell as plain loops over the units, row by row, step by step.
#include "cohort/ops/attention.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/rnn.h"
#include "support/op_table.h"

#include <algorithm>
#include <cmath>

namespace cohort::testing {
namespace {

using Idx = std::vector<int64_t>;
using Vec = std::vector<double>;

enum class M { Tanh, Relu, Lstm, Gru };
int64_t gates_of(M m) { return m == M::Lstm ? 4 : m == M::Gru ? 3 : 1; }
double sig(double v) { return 1 / (1 + std::exp(-v)); }

// One layer and direction's parameters.
struct CellW {
  const Nd *w_ih, *w_hh, *b_ih = nullptr, *b_hh = nullptr, *w_hr = nullptr;
};

// One step of one row: x [I]; h [Hout] and c [H] updated in place.
void cell_ref(M m, const CellW& w, const Vec& x, Vec& h, Vec& c) {
  const int64_t G = gates_of(m), H = w.w_hh->size(0) / G, Hout = w.w_hh->size(1), I = w.w_ih->size(1);
  Vec xi(G * H), hh(G * H);
  for (int64_t j = 0; j < G * H; ++j) {
    xi[j] = w.b_ih ? w.b_ih->v[j] : 0;
    hh[j] = w.b_hh ? w.b_hh->v[j] : 0;
    for (int64_t k = 0; k < I; ++k) xi[j] += w.w_ih->v[j * I + k] * x[k];
    for (int64_t k = 0; k < Hout; ++k) hh[j] += w.w_hh->v[j * Hout + k] * h[k];
  }
  switch (m) {
    case M::Tanh:
      for (int64_t j = 0; j < H; ++j) h[j] = std::tanh(xi[j] + hh[j]);
      return;
    case M::Relu:
      for (int64_t j = 0; j < H; ++j) h[j] = std::max(0.0, xi[j] + hh[j]);
      return;
    case M::Gru:
      for (int64_t j = 0; j < H; ++j) {
        const double r = sig(xi[j] + hh[j]), z = sig(xi[H + j] + hh[H + j]);
        const double n = std::tanh(xi[2 * H + j] + r * hh[2 * H + j]);
        h[j] = (1 - z) * n + z * h[j];
      }
      return;
    case M::Lstm: {
      Vec hn(H);
      for (int64_t j = 0; j < H; ++j) {
        const double i = sig(xi[j] + hh[j]), f = sig(xi[H + j] + hh[H + j]);
        const double g = std::tanh(xi[2 * H + j] + hh[2 * H + j]), o = sig(xi[3 * H + j] + hh[3 * H + j]);
        c[j] = f * c[j] + i * g;
        hn[j] = o * std::tanh(c[j]);
      }
      if (!w.w_hr) {
        h = hn;
        return;
      }
      for (int64_t p = 0; p < Hout; ++p) {
        h[p] = 0;
        for (int64_t j = 0; j < H; ++j) h[p] += w.w_hr->v[p * H + j] * hn[j];
      }
      return;
    }
  }
}

// A layer op's configuration: sizes of the test and the op's flags.
struct Spec {
  M mode;
  int64_t layers = 1;
  bool bidirectional = false, bias = true, batch_first = false;
  int64_t I = 2, H = 2, P = 0;  // P > 0: an LSTM's projection size
  int64_t D() const { return bidirectional ? 2 : 1; }
  int64_t Hout() const { return P > 0 ? P : H; }
  int64_t per() const { return 2 + (bias ? 2 : 0) + (P > 0 ? 1 : 0); }
  bool lstm() const { return mode == M::Lstm; }
};

// Parameter shapes in the ops' order.
std::vector<Shape> param_shapes(const Spec& s) {
  std::vector<Shape> out;
  const int64_t G = gates_of(s.mode) * s.H;
  for (int64_t l = 0; l < s.layers; ++l)
    for (int64_t d = 0; d < s.D(); ++d) {
      out.push_back({G, l == 0 ? s.I : s.D() * s.Hout()});
      out.push_back({G, s.Hout()});
      if (s.bias) {
        out.push_back({G});
        out.push_back({G});
      }
      if (s.P > 0) out.push_back({s.P, s.H});
    }
  return out;
}

// Every layer over packed rows (step t's bs[t] rows after step t-1's); h0 [L*D, N, Hout], c0
// [L*D, N, H] or null; params from `first`. Returns the last layer's rows, h_n, c_n.
std::vector<std::vector<Vec>> layers_ref(const Spec& s, std::vector<Vec> rows, const Idx& bs, const Nd& h0,
                                         const Nd* c0, const Refs& x, size_t first, Nd& hn, Nd& cn) {
  const int64_t T = static_cast<int64_t>(bs.size()), N = bs[0];
  Idx offset{0};
  for (int64_t b : bs) offset.push_back(offset.back() + b);
  hn = zeros_nd({s.layers * s.D(), N, s.Hout()});
  cn = zeros_nd({s.layers * s.D(), N, s.H});
  for (int64_t l = 0; l < s.layers; ++l) {
    std::vector<Vec> next(rows.size());
    for (int64_t d = 0; d < s.D(); ++d) {
      const int64_t k = l * s.D() + d;
      const size_t p = first + static_cast<size_t>(k * s.per());
      CellW w{&x[p], &x[p + 1]};
      if (s.bias) w.b_ih = &x[p + 2], w.b_hh = &x[p + 3];
      if (s.P > 0) w.w_hr = &x[p + (s.bias ? 4 : 2)];
      for (int64_t n = 0; n < N; ++n) {
        Vec h(s.Hout()), c(s.H);
        for (int64_t j = 0; j < s.Hout(); ++j) h[j] = h0.at({k, n, j});
        for (int64_t j = 0; j < s.H && c0; ++j) c[j] = c0->at({k, n, j});
        // Sequence n runs the steps whose batch holds it, forward or backward in time.
        for (int64_t i = 0; i < T; ++i) {
          const int64_t t = d == 1 ? T - 1 - i : i;
          if (n >= bs[t]) continue;
          const size_t r = static_cast<size_t>(offset[t] + n);
          cell_ref(s.mode, w, rows[r], h, c);
          next[r].resize(static_cast<size_t>(s.D() * s.Hout()));
          std::copy(h.begin(), h.end(), next[r].begin() + d * s.Hout());
        }
        for (int64_t j = 0; j < s.Hout(); ++j) hn.at({k, n, j}) = h[j];
        for (int64_t j = 0; j < s.H; ++j) cn.at({k, n, j}) = c[j];
      }
    }
    rows = next;
  }
  return {rows};
}

// Inputs: x, h0, [c0], params.
std::vector<Shape> layer_shapes(const Spec& s, Shape x, int64_t N) {
  std::vector<Shape> shapes{x, {s.layers * s.D(), N, s.Hout()}};
  if (s.lstm()) shapes.push_back({s.layers * s.D(), N, s.H});
  for (Shape& p : param_shapes(s)) shapes.push_back(p);
  return shapes;
}

std::vector<Tensor> params_of(const Spec& s, const In& x) {
  return std::vector<Tensor>(x.begin() + (s.lstm() ? 3 : 2), x.end());
}

Out call_padded(const Spec& s, const In& x) {
  const auto p = params_of(s, x);
  const bool bf = s.batch_first, bi = s.bidirectional;
  switch (s.mode) {
    case M::Lstm: {
      auto [o, h, c] = lstm(x[0], {x[1], x[2]}, p, s.bias, s.layers, 0.0, false, bi, bf);
      return {o, h, c};
    }
    case M::Gru: {
      auto [o, h] = gru(x[0], x[1], p, s.bias, s.layers, 0.0, false, bi, bf);
      return {o, h};
    }
    case M::Tanh: {
      auto [o, h] = rnn_tanh(x[0], x[1], p, s.bias, s.layers, 0.0, false, bi, bf);
      return {o, h};
    }
    case M::Relu: break;
  }
  auto [o, h] = rnn_relu(x[0], x[1], p, s.bias, s.layers, 0.0, false, bi, bf);
  return {o, h};
}

Out call_packed(const Spec& s, const Idx& batch_sizes, const In& x) {
  const auto p = params_of(s, x);
  const Tensor bs = tensor(batch_sizes);
  const bool bi = s.bidirectional;
  switch (s.mode) {
    case M::Lstm: {
      auto [o, h, c] = lstm(x[0], bs, {x[1], x[2]}, p, s.bias, s.layers, 0.0, false, bi);
      return {o, h, c};
    }
    case M::Gru: {
      auto [o, h] = gru(x[0], bs, x[1], p, s.bias, s.layers, 0.0, false, bi);
      return {o, h};
    }
    case M::Tanh: {
      auto [o, h] = rnn_tanh(x[0], bs, x[1], p, s.bias, s.layers, 0.0, false, bi);
      return {o, h};
    }
    case M::Relu: break;
  }
  auto [o, h] = rnn_relu(x[0], bs, x[1], p, s.bias, s.layers, 0.0, false, bi);
  return {o, h};
}

Refs outputs(const Spec& s, Nd out, const Nd& hn, const Nd& cn) {
  Refs r{std::move(out), hn};
  if (s.lstm()) r.push_back(cn);
  return r;
}

// A padded layer op over [T, N, I] ([N, T, I] when batch_first).
OpRow padded_row(std::string name, Spec s, int64_t T, int64_t N) {
  Shape x = s.batch_first ? Shape{N, T, s.I} : Shape{T, N, s.I};
  return {.name = std::move(name),
          .samples = {layer_shapes(s, x, N)},
          .op = [s](const In& x) { return call_padded(s, x); },
          .ref = [s, T, N](const Refs& x) {
            std::vector<Vec> rows(static_cast<size_t>(T * N));
            for (int64_t t = 0; t < T; ++t)
              for (int64_t n = 0; n < N; ++n)
                for (int64_t i = 0; i < s.I; ++i)
                  rows[t * N + n].push_back(s.batch_first ? x[0].at({n, t, i}) : x[0].at({t, n, i}));
            Nd hn, cn;
            auto out = layers_ref(s, rows, Idx(static_cast<size_t>(T), N), x[1], s.lstm() ? &x[2] : nullptr, x,
                                  s.lstm() ? 3 : 2, hn, cn)[0];
            const int64_t F = s.D() * s.Hout();
            Shape shape = s.batch_first ? Shape{N, T, F} : Shape{T, N, F};
            Nd o = build(shape, [&](const Idx& i) {
              return s.batch_first ? out[i[1] * N + i[0]][i[2]] : out[i[0] * N + i[1]][i[2]];
            });
            return outputs(s, o, hn, cn);
          },
          .domains = {real(-1, 1)},
          .atol = 1e-10};
}

// A packed layer op over data [sum(batch_sizes), I].
OpRow packed_row(std::string name, Spec s, Idx batch_sizes) {
  int64_t R = 0;
  for (int64_t b : batch_sizes) R += b;
  return {.name = std::move(name),
          .samples = {layer_shapes(s, {R, s.I}, batch_sizes[0])},
          .op = [s, batch_sizes](const In& x) { return call_packed(s, batch_sizes, x); },
          .ref = [s, batch_sizes, R](const Refs& x) {
            std::vector<Vec> rows(static_cast<size_t>(R));
            for (int64_t r = 0; r < R; ++r)
              for (int64_t i = 0; i < s.I; ++i) rows[r].push_back(x[0].at({r, i}));
            Nd hn, cn;
            auto out = layers_ref(s, rows, batch_sizes, x[1], s.lstm() ? &x[2] : nullptr, x, s.lstm() ? 3 : 2, hn,
                                  cn)[0];
            Nd o = build({R, s.D() * s.Hout()}, [&](const Idx& i) { return out[i[0]][i[1]]; });
            return outputs(s, o, hn, cn);
          },
          .domains = {real(-1, 1)},
          .atol = 1e-10};
}

// A cell op: inputs x [N, I], h [N, H], [c [N, H]], w_ih, w_hh, [b_ih, b_hh].
OpRow cell_row(std::string name, M m, bool bias) {
  const int64_t N = 3, I = 3, H = 2, G = gates_of(m) * H;
  std::vector<Shape> shapes{{N, I}, {N, H}};
  if (m == M::Lstm) shapes.push_back({N, H});
  shapes.push_back({G, I});
  shapes.push_back({G, H});
  if (bias) {
    shapes.push_back({G});
    shapes.push_back({G});
  }
  const size_t w0 = m == M::Lstm ? 3 : 2;
  return {.name = std::move(name),
          .samples = {shapes},
          .op = [m, bias, w0](const In& x) {
            const Tensor b_ih = bias ? x[w0 + 2] : Tensor(), b_hh = bias ? x[w0 + 3] : Tensor();
            switch (m) {
              case M::Lstm: {
                auto [h, c] = lstm_cell(x[0], {x[1], x[2]}, x[3], x[4], b_ih, b_hh);
                return Out{h, c};
              }
              case M::Gru: return Out{gru_cell(x[0], x[1], x[2], x[3], b_ih, b_hh)};
              case M::Tanh: return Out{rnn_tanh_cell(x[0], x[1], x[2], x[3], b_ih, b_hh)};
              case M::Relu: break;
            }
            return Out{rnn_relu_cell(x[0], x[1], x[2], x[3], b_ih, b_hh)};
          },
          .ref = [m, bias, w0, N, I, H](const Refs& x) {
            CellW w{&x[w0], &x[w0 + 1]};
            if (bias) w.b_ih = &x[w0 + 2], w.b_hh = &x[w0 + 3];
            Nd h2 = zeros_nd({N, H}), c2 = zeros_nd({N, H});
            for (int64_t n = 0; n < N; ++n) {
              Vec xs(I), h(H), c(H);
              for (int64_t i = 0; i < I; ++i) xs[i] = x[0].at({n, i});
              for (int64_t j = 0; j < H; ++j) h[j] = x[1].at({n, j}), c[j] = m == M::Lstm ? x[2].at({n, j}) : 0;
              cell_ref(m, w, xs, h, c);
              for (int64_t j = 0; j < H; ++j) h2.at({n, j}) = h[j], c2.at({n, j}) = c[j];
            }
            return m == M::Lstm ? Refs{h2, c2} : Refs{h2};
          },
          .domains = {real(-1, 1)}};
}

// q [Lq, E], k, v [Lk, E], w [3E, E], [b [3E]].
OpRow in_projection_row(std::string name, bool bias) {
  std::vector<Shape> shapes{{4, 3}, {5, 3}, {5, 3}, {9, 3}};
  if (bias) shapes.push_back({9});
  return {.name = std::move(name),
          .samples = {shapes},
          .op = [bias](const In& x) { return in_projection_packed(x[0], x[1], x[2], x[3], bias ? x[4] : Tensor()); },
          .ref = [bias](const Refs& x) {
            Refs out;
            for (int64_t p = 0; p < 3; ++p)
              out.push_back(build({x[p].size(0), 3}, [&](const Idx& i) {
                double acc = bias ? x[4].v[p * 3 + i[1]] : 0;
                for (int64_t k = 0; k < 3; ++k) acc += x[p].at({i[0], k}) * x[3].at({p * 3 + i[1], k});
                return acc;
              }));
            return out;
          }};
}

std::vector<OpRow> rnn_rows() {
  Spec lstm2{M::Lstm, 2, true}, gru2{M::Gru, 2, true}, tanh2{M::Tanh, 2, true}, relu2{M::Relu, 2, true};
  Spec lstm_bf{M::Lstm};
  lstm_bf.batch_first = true;
  lstm_bf.bias = false;
  Spec lstm_proj{M::Lstm, 1, true};
  lstm_proj.H = 3, lstm_proj.P = 2;
  const Idx decreasing{3, 2, 2, 1};
  return {
      cell_row("lstm_cell", M::Lstm, true),
      cell_row("lstm_cell_no_bias", M::Lstm, false),
      cell_row("gru_cell", M::Gru, true),
      cell_row("rnn_tanh_cell", M::Tanh, true),
      cell_row("rnn_relu_cell", M::Relu, false),
      padded_row("lstm_padded_bidirectional_2_layers", lstm2, 3, 2),
      padded_row("lstm_padded_batch_first_no_bias", lstm_bf, 3, 2),
      padded_row("lstm_padded_projection_bidirectional", lstm_proj, 3, 2),
      padded_row("gru_padded_bidirectional_2_layers", gru2, 3, 2),
      padded_row("rnn_tanh_padded_bidirectional_2_layers", tanh2, 3, 2),
      padded_row("rnn_relu_padded_bidirectional_2_layers", relu2, 3, 2),
      packed_row("lstm_packed_bidirectional_2_layers", lstm2, decreasing),
      packed_row("lstm_packed_projection_bidirectional", lstm_proj, decreasing),
      packed_row("gru_packed_bidirectional_2_layers", gru2, decreasing),
      packed_row("rnn_tanh_packed_bidirectional_2_layers", tanh2, decreasing),
      packed_row("rnn_relu_packed_bidirectional_2_layers", relu2, decreasing),
      in_projection_row("in_projection_packed", true),
      in_projection_row("in_projection_packed_no_bias", false),
  };
}
COHORT_OP_ROWS("rnn", rnn_rows);

}  // namespace
}  // namespace cohort::testing
