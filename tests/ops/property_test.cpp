// Property tests: random shapes, random strided layouts (permuted, sliced, expanded) and
// short random chains of ops — views, pointwise, broadcasting, reductions, matmul — checked against
// float64 references built with the op table's plain loops (support/op_table.h), against the same
// chain with contiguous() after every step, in float32, and (the differentiable chains) through
// gradcheck against central finite differences.
//
// Deterministic: case i uses the seed kSeed + i. A failure names the case, its seed and its chain:
//   case 317 (seed 20240317): x0[3, 4] -> permute(1, 0) -> add(x1[4] sliced) -> sum([0])
// COHORT_PROPERTY_SEED and COHORT_PROPERTY_CASES explore other cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "support/gradcheck.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

using Rng = std::mt19937_64;
using Dims = std::vector<int64_t>;

int64_t pick(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool chance(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

std::string str(const Dims& d) {
  std::ostringstream os;
  os << IntArrayRef(d);
  return os.str();
}

int64_t numel(const Dims& s) { return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()); }

// ---- Steps ------------------------------------------------------------------------------------
// One op of a chain: the cohort op on (current, other operand) and its plain-loop reference.

struct Step {
  std::string name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<Nd(const Nd&, const Nd&)> ref;
  int other = -1;                 // the leaf that is the second operand, or -1
  std::vector<Step> other_views;  // applied to that leaf first (its layout)
  bool smooth = true;             // differentiable at the sampled values (no kinks, no ties)
};

// Reference of a view: out[idx] = in[src(idx)].
Nd gather_ref(const Nd& in, Dims out_shape, const std::function<std::vector<int64_t>(const std::vector<int64_t>&)>& src) {
  return build(out_shape, [&](const std::vector<int64_t>& idx) { return in.at(src(idx)); });
}

Step permute_step(const Dims& dims) {
  return {"permute" + str(dims), [dims](const Tensor& x, const Tensor&) { return permute(x, dims); },
          [dims](const Nd& x, const Nd&) {
            Dims shape(dims.size());
            for (size_t j = 0; j < dims.size(); ++j) shape[j] = x.shape[dims[j]];
            return gather_ref(x, shape, [&](const std::vector<int64_t>& idx) {
              std::vector<int64_t> s(idx.size());
              for (size_t j = 0; j < dims.size(); ++j) s[dims[j]] = idx[j];
              return s;
            });
          }};
}

Step transpose_step(int64_t a, int64_t b) {
  return {"transpose(" + std::to_string(a) + ", " + std::to_string(b) + ")",
          [a, b](const Tensor& x, const Tensor&) { return transpose(x, a, b); },
          [a, b](const Nd& x, const Nd&) {
            Dims shape = x.shape;
            std::swap(shape[a], shape[b]);
            return gather_ref(x, shape, [&](std::vector<int64_t> idx) {
              std::swap(idx[a], idx[b]);
              return idx;
            });
          }};
}

Step slice_step(int64_t d, int64_t start, int64_t end, int64_t step) {
  return {"slice(" + std::to_string(d) + ", " + std::to_string(start) + ":" + std::to_string(end) + ":" +
              std::to_string(step) + ")",
          [=](const Tensor& x, const Tensor&) { return slice(x, d, start, end, step); },
          [=](const Nd& x, const Nd&) {
            Dims shape = x.shape;
            shape[d] = (end - start + step - 1) / step;
            return gather_ref(x, shape, [&](std::vector<int64_t> idx) {
              idx[d] = start + idx[d] * step;
              return idx;
            });
          }};
}

Step expand_step(const Dims& sizes) {
  return {"expand" + str(sizes), [sizes](const Tensor& x, const Tensor&) { return expand(x, sizes); },
          [sizes](const Nd& x, const Nd&) {
            return gather_ref(x, sizes, [&](const std::vector<int64_t>& idx) {
              std::vector<int64_t> s(idx.end() - x.dim(), idx.end());
              for (int64_t d = 0; d < x.dim(); ++d) if (x.shape[d] == 1) s[d] = 0;
              return s;
            });
          }};
}

Step select_step(int64_t d, int64_t i) {
  return {"select(" + std::to_string(d) + ", " + std::to_string(i) + ")",
          [=](const Tensor& x, const Tensor&) { return select(x, d, i); },
          [=](const Nd& x, const Nd&) {
            Dims shape = x.shape;
            shape.erase(shape.begin() + d);
            return gather_ref(x, shape, [&](std::vector<int64_t> idx) {
              idx.insert(idx.begin() + d, i);
              return idx;
            });
          }};
}

// unsqueeze and reshape keep the row-major values; only the shape changes.
Step reshape_step(const std::string& name, const Dims& shape, std::function<Tensor(const Tensor&)> op) {
  return {name, [op](const Tensor& x, const Tensor&) { return op(x); }, [shape](const Nd& x, const Nd&) {
            Nd r = x;
            r.shape = shape;
            return r;
          }};
}

Step unary_step(const std::string& name, Tensor (*op)(const Tensor&), double (*f)(double), bool smooth = true) {
  return {name, [op](const Tensor& x, const Tensor&) { return op(x); },
          [f](const Nd& x, const Nd&) { return map(x, f); }, -1, {}, smooth};
}

// ---- Layouts ----------------------------------------------------------------------------------
// A leaf of shape `base` and the views that turn it into a tensor of shape `target`, strided.

struct Layout {
  Dims base;
  std::vector<Step> views;
  std::string kind;
};

Layout random_layout(Rng& rng, const Dims& target, bool allow_expand = true) {
  const auto rank = static_cast<int64_t>(target.size());
  switch (pick(rng, 0, 3)) {
    case 1:
      if (rank >= 2) {  // stored with the dims in another order
        Dims p(rank), inv(rank), base(rank);
        std::iota(p.begin(), p.end(), 0);
        std::shuffle(p.begin(), p.end(), rng);
        if (std::is_sorted(p.begin(), p.end())) std::swap(p[0], p[1]);
        for (int64_t i = 0; i < rank; ++i) base[i] = target[p[i]], inv[p[i]] = i;
        return {base, {permute_step(inv)}, "permuted"};
      }
      break;
    case 2:
      if (rank >= 1) {  // every other element of a larger buffer, from an offset
        const int64_t d = pick(rng, 0, rank - 1);
        Dims base = target;
        base[d] = 2 * target[d] + 1;
        return {base, {slice_step(d, 1, 1 + 2 * target[d], 2)}, "sliced"};
      }
      break;
    case 3:
      if (allow_expand) {  // a dim of size 1 (stride 0) broadcast to the target
        Dims wide;
        for (int64_t d = 0; d < rank; ++d) if (target[d] > 1) wide.push_back(d);
        if (!wide.empty()) {
          Dims base = target;
          base[wide[pick(rng, 0, static_cast<int64_t>(wide.size()) - 1)]] = 1;
          return {base, {expand_step(target)}, "expanded"};
        }
      }
      break;
  }
  return {target, {}, "contiguous"};
}

// ---- Cases ------------------------------------------------------------------------------------

struct Case {
  std::vector<Dims> leaf_shapes;
  std::vector<bool> positive;  // leaf values in [0.5, 2] (divisors) instead of [-1.5, 1.5]
  std::vector<Step> chain;     // applied to leaf 0
  std::string text;            // "x0[3, 4] -> permute(1, 0) -> ..."
};

class CaseBuilder {
 public:
  explicit CaseBuilder(uint64_t seed) : rng_(seed) {}

  Case make(bool smooth_only) {
    Case c;
    used_exp_ = false;
    Dims shape;
    for (int64_t r = pick(rng_, 0, 3); r > 0; --r) shape.push_back(pick(rng_, 1, 4));
    const Layout layout = random_layout(rng_, shape);
    add_leaf(c, layout.base, false);
    c.text = "x0" + str(layout.base);
    shape = layout.base;
    for (const Step& v : layout.views) append(c, v, shape);
    const int64_t ops = pick(rng_, 1, 4);
    for (int64_t k = 0; k < ops; ++k) {
      Step s = random_op(c, shape, smooth_only);
      append(c, s, shape);
    }
    return c;
  }

 private:
  void add_leaf(Case& c, const Dims& shape, bool positive) {
    c.leaf_shapes.push_back(shape);
    c.positive.push_back(positive);
  }

  // Appends a step and updates `shape` by running its reference on zeros.
  void append(Case& c, const Step& s, Dims& shape) {
    Nd other;
    if (s.other >= 0) {
      other = zeros_nd(c.leaf_shapes[s.other]);
      for (const Step& v : s.other_views) other = v.ref(other, {});
    }
    shape = s.ref(zeros_nd(shape), other).shape;
    c.text += " -> " + s.name;
    c.chain.push_back(s);
  }

  // A second operand of a shape that broadcasts with `shape`, laid out at random: returns its step
  // fields (leaf index and views) and names it.
  std::pair<int, std::vector<Step>> operand(Case& c, const Dims& target, bool positive, std::string& name) {
    const Layout layout = random_layout(rng_, target, /*allow_expand=*/true);
    const int index = static_cast<int>(c.leaf_shapes.size());
    add_leaf(c, layout.base, positive);
    name = "x" + std::to_string(index) + str(target) + (layout.kind == "contiguous" ? "" : " " + layout.kind);
    return {index, layout.views};
  }

  Dims broadcast_partner(const Dims& shape) {
    Dims other;
    auto keep = static_cast<size_t>(pick(rng_, 0, static_cast<int64_t>(shape.size())));
    if (chance(rng_, 0.2) && shape.size() < 4) {  // other has more dims: the result grows
      other.push_back(pick(rng_, 2, 3));
      keep = shape.size();
    }
    for (size_t d = shape.size() - keep; d < shape.size(); ++d) other.push_back(chance(rng_, 0.3) ? 1 : shape[d]);
    return other;
  }

  Step random_op(Case& c, const Dims& shape, bool smooth_only) {
    const auto rank = static_cast<int64_t>(shape.size());
    for (;;) {
      switch (pick(rng_, 0, 15)) {
        case 0: return unary_step("neg", neg, [](double v) { return -v; });
        case 1: return unary_step("tanh", tanh, [](double v) { return std::tanh(v); });
        case 2: return unary_step("sigmoid", sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); });
        case 3: return unary_step("sin", sin, [](double v) { return std::sin(v); });
        case 4:
          if (used_exp_) break;  // once per chain: exp(exp(exp(x))) leaves float32's range
          used_exp_ = true;
          return unary_step("exp", exp, [](double v) { return std::exp(v); });
        case 5:
          if (smooth_only) break;
          return chance(rng_, 0.5) ? unary_step("relu", relu, [](double v) { return v > 0 ? v : 0.0; }, false)
                                   : unary_step("abs", abs, [](double v) { return std::abs(v); }, false);
        case 6: case 7: {  // broadcasting binary op
          static const char* names[] = {"add", "sub", "mul", "div"};
          const int which = static_cast<int>(pick(rng_, 0, 3));
          std::string name;
          auto [leaf, views] = operand(c, broadcast_partner(shape), which == 3, name);
          Step s{std::string(names[which]) + "(" + name + ")", nullptr, nullptr, leaf, views};
          switch (which) {
            case 0: s.op = [](const Tensor& a, const Tensor& b) { return add(a, b); };
                    s.ref = [](const Nd& a, const Nd& b) { return map2(a, b, [](double x, double y) { return x + y; }); }; break;
            case 1: s.op = [](const Tensor& a, const Tensor& b) { return sub(a, b); };
                    s.ref = [](const Nd& a, const Nd& b) { return map2(a, b, [](double x, double y) { return x - y; }); }; break;
            case 2: s.op = [](const Tensor& a, const Tensor& b) { return mul(a, b); };
                    s.ref = [](const Nd& a, const Nd& b) { return map2(a, b, [](double x, double y) { return x * y; }); }; break;
            default: s.op = [](const Tensor& a, const Tensor& b) { return div(a, b); };
                     s.ref = [](const Nd& a, const Nd& b) { return map2(a, b, [](double x, double y) { return x / y; }); };
          }
          return s;
        }
        case 8: {  // sum or mean over some dims, or everything
          const bool is_mean = chance(rng_, 0.4);
          const auto f = is_mean ? +[](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }
                                 : +[](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
          if (rank == 0 || chance(rng_, 0.2))
            return {is_mean ? "mean()" : "sum()", [is_mean](const Tensor& x, const Tensor&) { return is_mean ? mean(x) : sum(x); },
                    [f](const Nd& x, const Nd&) { return cohort::testing::reduce(x, {}, false, f); }};
          const Dims dims = random_dims(rank);
          const bool keep = chance(rng_, 0.5);
          return {std::string(is_mean ? "mean" : "sum") + str(dims) + (keep ? " keepdim" : ""),
                  [=](const Tensor& x, const Tensor&) { return is_mean ? mean(x, dims, keep) : sum(x, dims, keep); },
                  [=](const Nd& x, const Nd&) { return cohort::testing::reduce(x, dims, keep, f); }};
        }
        case 9: {  // amax: ties (expanded inputs) make it non-differentiable
          if (smooth_only || rank == 0) break;
          const Dims dims = random_dims(rank);
          const bool keep = chance(rng_, 0.5);
          return {"amax" + str(dims) + (keep ? " keepdim" : ""), [=](const Tensor& x, const Tensor&) { return amax(x, dims, keep); },
                  [=](const Nd& x, const Nd&) {
                    return cohort::testing::reduce(x, dims, keep, [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
                  }, -1, {}, false};
        }
        case 10: {
          if (rank == 0) break;
          const int64_t d = pick(rng_, 0, rank - 1);
          return {"softmax(" + std::to_string(d) + ")", [d](const Tensor& x, const Tensor&) { return softmax(x, d); },
                  [d](const Nd& x, const Nd&) {
                    return along(x, d, [](const std::vector<double>& lane) {
                      const double m = *std::max_element(lane.begin(), lane.end());
                      std::vector<double> out(lane.size());
                      double z = 0;
                      for (size_t i = 0; i < lane.size(); ++i) z += out[i] = std::exp(lane[i] - m);
                      for (double& o : out) o /= z;
                      return out;
                    });
                  }};
        }
        case 11: {  // matmul with a matrix (or a vector) on the right
          if (rank == 0) break;
          const int64_t n = shape.back();
          const bool vector = chance(rng_, 0.25);
          const Dims w = vector ? Dims{n} : Dims{n, pick(rng_, 1, 4)};
          std::string name;
          auto [leaf, views] = operand(c, w, false, name);
          return {"matmul(" + name + ")", [](const Tensor& a, const Tensor& b) { return matmul(a, b); },
                  [](const Nd& a, const Nd& b) {
                    Dims out(a.shape.begin(), a.shape.end() - 1);
                    if (b.dim() == 2) out.push_back(b.shape[1]);
                    const int64_t n = a.shape.back();
                    return build(out, [&](const std::vector<int64_t>& idx) {
                      std::vector<int64_t> ai(idx.begin(), idx.begin() + (a.dim() - 1));
                      ai.push_back(0);
                      double s = 0;
                      for (ai.back() = 0; ai.back() < n; ++ai.back())
                        s += a.at(ai) * (b.dim() == 2 ? b.at({ai.back(), idx.back()}) : b.at({ai.back()}));
                      return s;
                    });
                  }, leaf, views};
        }
        case 12: {  // a view that reorders dims
          if (rank < 2) break;
          if (chance(rng_, 0.5)) {
            const int64_t a = pick(rng_, 0, rank - 1), b = pick(rng_, 0, rank - 1);
            return transpose_step(a, b);
          }
          Dims p(rank);
          std::iota(p.begin(), p.end(), 0);
          std::shuffle(p.begin(), p.end(), rng_);
          return permute_step(p);
        }
        case 13: {  // a view that drops elements or a dim
          if (rank == 0) break;
          const int64_t d = pick(rng_, 0, rank - 1);
          if (shape[d] >= 2 && chance(rng_, 0.6)) {
            const int64_t step = pick(rng_, 1, 2), start = pick(rng_, 0, shape[d] - 1);
            const int64_t end = pick(rng_, start + 1, shape[d]);
            return slice_step(d, start, end, step);
          }
          return select_step(d, pick(rng_, 0, shape[d] - 1));
        }
        case 14: {  // a view that adds a dim, broadcast or not
          if (rank >= 4) break;
          const int64_t d = pick(rng_, 0, rank);
          Dims out = shape;
          out.insert(out.begin() + d, 1);
          if (chance(rng_, 0.5)) return reshape_step("unsqueeze(" + std::to_string(d) + ")", out, [d](const Tensor& x) { return unsqueeze(x, d); });
          Dims wide = out;
          wide[d] = pick(rng_, 2, 3);
          Step u = reshape_step("unsqueeze(" + std::to_string(d) + ")", out, [d](const Tensor& x) { return unsqueeze(x, d); });
          Step e = expand_step(wide);
          return {u.name + " -> " + e.name, [u, e](const Tensor& x, const Tensor& o) { return e.op(u.op(x, o), o); },
                  [u, e](const Nd& x, const Nd& o) { return e.ref(u.ref(x, o), o); }};
        }
        case 15: {  // reshape: flatten all, or merge two neighbouring dims (a copy when strided)
          if (rank == 0) break;
          if (rank == 1 || chance(rng_, 0.3)) return reshape_step("flatten", {numel(shape)}, [](const Tensor& x) { return flatten(x); });
          const int64_t d = pick(rng_, 0, rank - 2);
          Dims out = shape;
          out[d] *= out[d + 1];
          out.erase(out.begin() + d + 1);
          return reshape_step("reshape" + str(out), out, [out](const Tensor& x) { return reshape(x, out); });
        }
      }
    }
  }

  // A non-empty random subset of the dims, in increasing order.
  Dims random_dims(int64_t rank) {
    Dims dims;
    for (int64_t d = 0; d < rank; ++d) if (chance(rng_, 0.5)) dims.push_back(d);
    if (dims.empty()) dims.push_back(pick(rng_, 0, rank - 1));
    return dims;
  }

  Rng rng_;
  bool used_exp_ = false;
};

// ---- Running a case ---------------------------------------------------------------------------

std::vector<Nd> leaf_values(const Case& c, uint64_t seed) {
  Rng rng(seed ^ 0x5DEECE66Dull);
  std::vector<Nd> leaves;
  for (size_t i = 0; i < c.leaf_shapes.size(); ++i) {
    Nd x = zeros_nd(c.leaf_shapes[i]);
    std::uniform_real_distribution<double> u(c.positive[i] ? 0.5 : -1.5, c.positive[i] ? 2.0 : 1.5);
    for (double& v : x.v) v = u(rng);
    leaves.push_back(x);
  }
  return leaves;
}

Tensor to_tensor(const Nd& x, DType dtype) {
  return tensor(x.v, TensorOptions(kFloat64)).reshape(x.shape).to(dtype);
}

Tensor run(const Case& c, const std::vector<Tensor>& leaves, bool contiguous_between) {
  Tensor x = leaves[0];
  for (const Step& s : c.chain) {
    Tensor other;
    if (s.other >= 0) {
      other = leaves[s.other];
      for (const Step& v : s.other_views) other = v.op(other, {});
    }
    x = s.op(x, other);
    if (contiguous_between) x = x.contiguous();
  }
  return x;
}

// Also returns the largest magnitude met along the chain: float32's rounding error scales with it
// (sin(exp(x)) loses digits where exp(x) is large, however small the result).
Nd run_ref(const Case& c, const std::vector<Nd>& leaves, double& scale) {
  Nd x = leaves[0];
  auto grow = [&scale](const Nd& v) {
    for (double e : v.v) scale = std::max(scale, std::abs(e));
  };
  scale = 0;
  grow(x);
  for (const Step& s : c.chain) {
    Nd other;
    if (s.other >= 0) {
      other = leaves[s.other];
      for (const Step& v : s.other_views) other = v.ref(other, {});
      grow(other);
    }
    x = s.ref(x, other);
    grow(x);
  }
  return x;
}

// |got - want| <= atol + rtol |want| elementwise.
::testing::AssertionResult matches(const std::string& what, const Tensor& got, const Nd& want, double atol, double rtol) {
  if (got.sizes().vec() != want.shape)
    return ::testing::AssertionFailure() << what << ": shape " << got.sizes() << ", expected " << IntArrayRef(want.shape);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = element_at(got, i), e = want.v[i];
    if (!(std::abs(g - e) <= atol + rtol * std::abs(e)))
      return ::testing::AssertionFailure() << what << ", element " << index_string(got.sizes(), i) << ": expected " << e
                                           << ", got " << g << " (|diff| " << std::abs(g - e) << ")";
  }
  return ::testing::AssertionSuccess();
}

uint64_t base_seed() {
  const char* env = std::getenv("COHORT_PROPERTY_SEED");
  return env ? std::strtoull(env, nullptr, 10) : 20240000;
}
int cases(int fallback) {
  const char* env = std::getenv("COHORT_PROPERTY_CASES");
  return env ? std::atoi(env) : fallback;
}

std::string label(int i, uint64_t seed, const Case& c) {
  return "case " + std::to_string(i) + " (seed " + std::to_string(seed) + "): " + c.text;
}

}  // namespace

// Every case: float64 against the reference; the same chain with contiguous() between the steps
// (the contiguous fast paths must agree with the strided ones); float32 against the reference.
TEST(Property, RandomChainsMatchFloat64References) {
  NoGradGuard no_grad;
  const int n = cases(1200);
  int failures = 0;
  for (int i = 0; i < n && failures < 5; ++i) {
    const uint64_t seed = base_seed() + static_cast<uint64_t>(i);
    const Case c = CaseBuilder(seed).make(/*smooth_only=*/false);
    const std::vector<Nd> leaves = leaf_values(c, seed);
    std::vector<Tensor> x64, x32;
    for (const Nd& l : leaves) x64.push_back(to_tensor(l, kFloat64)), x32.push_back(to_tensor(l, kFloat32));
    const std::string what = label(i, seed, c);
    try {
      double scale = 0;
      const Nd want = run_ref(c, leaves, scale);
      ::testing::AssertionResult ok = matches(what + " [float64]", run(c, x64, false), want, 1e-11 * (1 + scale), 1e-10);
      if (ok) ok = matches(what + " [contiguous between steps]", run(c, x64, true), want, 1e-11 * (1 + scale), 1e-10);
      if (ok) {
        const Tensor got32 = run(c, x32, false);
        ok = got32.dtype() == kFloat32 ? matches(what + " [float32]", got32, want, 2e-5 * (1 + scale), 2e-4)
                                       : ::testing::AssertionFailure() << what << " [float32]: dtype " << got32.dtype();
      }
      EXPECT_TRUE(ok);
      failures += !ok;
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": threw " << e.what();
      ++failures;
    }
  }
}

// Chains without kinks or ties, through gradcheck: the leaves as given (contiguous) for even cases,
// as non-contiguous copies for odd ones. Views are steps of the chain, so their backward is checked.
TEST(Property, RandomDifferentiableChainsPassGradcheck) {
  const int n = cases(400);
  int failures = 0, checked = 0;
  for (int i = 0; checked < n && failures < 5; ++i) {
    const uint64_t seed = base_seed() + 1'000'000 + static_cast<uint64_t>(i);
    const Case c = CaseBuilder(seed).make(/*smooth_only=*/true);
    const std::vector<Nd> leaves = leaf_values(c, seed);
    int64_t total = 0;
    for (const Nd& l : leaves) total += l.numel();
    if (total > 48) continue;  // finite differences cost two runs per element
    ++checked;
    std::vector<Tensor> x;
    for (const Nd& l : leaves) x.push_back(to_tensor(l, kFloat64));
    const std::string what = label(i, seed, c);
    const TensorFn fn = [&c](const std::vector<Tensor>& in) { return std::vector<Tensor>{run(c, in, false)}; };
    try {
      const ::testing::AssertionResult ok =
          i % 2 ? gradcheck_noncontiguous(fn, x, 1e-6, 1e-5, 1e-3, what) : gradcheck(fn, x, 1e-6, 1e-5, 1e-3, what);
      EXPECT_TRUE(ok);
      failures += !ok;
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": threw " << e.what();
      ++failures;
    }
  }
  EXPECT_EQ(checked, n);
}

}  // namespace cohort::testing

namespace cohort::testing {
namespace {

// What the random chains found, kept as named cases: float32 layouts that oneDNN's matmul refused
// ("could not create a descriptor" / "could not execute a primitive"; src/ops/dnnl/matmul.cpp).
TEST(Property, Float32MatmulOfLayoutsOneDnnRefused) {
  NoGradGuard no_grad;
  const TensorOptions f32(kFloat32);
  auto check = [](const std::string& what, const Tensor& a, const Tensor& b) {
    try {
      EXPECT_TRUE(matches(what, matmul(a, b), to_nd(matmul(a.to(kFloat64), b.to(kFloat64))), 1e-5, 1e-5));
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": threw " << e.what();
    }
  };
  check("both operands expanded over the batch", arange(6, f32).reshape({1, 3, 2}).expand({2, 3, 2}),
        arange(2, f32).reshape({2, 1}));
  check("a batch stride inside a row", arange(12, f32).reshape({2, 3, 2}).permute({1, 0, 2}).slice(0, 0, 3, 2),
        arange(4, f32).reshape({2, 2}));
  check("a [16, 1] column with strides (1, 4)", as_strided(arange(64, f32), {16, 1}, {1, 4}),
        arange(4, f32).reshape({1, 4}));
  check("a [4, 4, 1] batch with strides (4, 1, 4)", arange(16, f32).reshape({4, 1, 4}).permute({0, 2, 1}),
        arange(4, f32).reshape({1, 4}));
  check("an expanded row", arange(3, f32).reshape({1, 3}).expand({4, 3}), arange(6, f32).reshape({3, 2}));
}

// A product of at least 2 GFLOP runs on oneDNN's sgemm instead of its matmul primitive (matmul.cpp):
// each layout it accepts (row-major or transposed on either side, with padded rows) against the
// primitive, reached through a batch of two.
TEST(Property, LargeMatmulOnSgemmMatchesThePrimitive) {
  NoGradGuard no_grad;
  manual_seed(7);
  const int64_t n = 1024;
  Tensor a = randn({n, n + 8}).slice(1, 0, n), b = randn({n, n});  // a: rows padded to n + 8
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Tensor x = ta ? a.t() : a, y = tb ? b.t() : b;
      Tensor got = mm(x, y);
      Tensor primitive = matmul(x.unsqueeze(0).expand({2, n, n}), y)[1];
      const double scale = primitive.abs().max().item<double>();
      EXPECT_LT((got - primitive).abs().max().item<double>() / scale, 1e-5) << "a" << (ta ? "^T" : "") << " b"
                                                                           << (tb ? "^T" : "");
    }
}

}  // namespace
}  // namespace cohort::testing
