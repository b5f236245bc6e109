// The op table's machinery: reference building blocks, input generation and the generic checks.
#include "support/op_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"

namespace cohort::testing {

// --- Nd -----------------------------------------------------------------------------------------

int64_t Nd::flat(const std::vector<int64_t>& idx) const {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

static int64_t numel_of(IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::vector<int64_t> unravel(IntArrayRef shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) idx[d] = flat % shape[d], flat /= shape[d];
  return idx;
}

Nd zeros_nd(Shape shape, DType dtype) {
  Nd r{shape, std::vector<double>(numel_of(shape), 0.0), dtype};
  return r;
}

Nd to_nd(const Tensor& t) {
  Nd r = zeros_nd(t.sizes().vec(), t.dtype());
  for (int64_t i = 0; i < r.numel(); ++i) r.v[i] = element_at(t, i);
  return r;
}

Nd build(Shape shape, const std::function<double(const std::vector<int64_t>&)>& f, DType dtype) {
  Nd r = zeros_nd(shape, dtype);
  for (int64_t i = 0; i < r.numel(); ++i) r.v[i] = f(unravel(shape, i));
  return r;
}

Nd map(const Nd& x, const std::function<double(double)>& f, DType dtype) {
  Nd r = zeros_nd(x.shape, dtype);
  for (int64_t i = 0; i < r.numel(); ++i) r.v[i] = f(x.v[i]);
  return r;
}

static Shape broadcast(const Shape& a, const Shape& b) {
  Shape r(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < r.size(); ++i) {
    const int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1, sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    r[r.size() - 1 - i] = sa == 1 ? sb : sa;
  }
  return r;
}

// Element of x seen through a broadcast to `out` at multi-index idx.
static double at_broadcast(const Nd& x, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  const size_t lead = idx.size() - x.shape.size();
  for (size_t d = 0; d < x.shape.size(); ++d) f = f * x.shape[d] + (x.shape[d] == 1 ? 0 : idx[lead + d]);
  return x.v[f];
}

Nd map2(const Nd& a, const Nd& b, const std::function<double(double, double)>& f, DType dtype) {
  return build(broadcast(a.shape, b.shape),
               [&](const std::vector<int64_t>& i) { return f(at_broadcast(a, i), at_broadcast(b, i)); }, dtype);
}

Nd where_nd(const Nd& c, const Nd& a, const Nd& b) {
  return build(broadcast(c.shape, broadcast(a.shape, b.shape)), [&](const std::vector<int64_t>& i) {
    return at_broadcast(c, i) != 0 ? at_broadcast(a, i) : at_broadcast(b, i);
  });
}

Nd reduce(const Nd& x, std::vector<int64_t> dims, bool keepdim,
          const std::function<double(const std::vector<double>&)>& f, DType dtype) {
  std::vector<bool> reduced(x.dim(), dims.empty());
  for (int64_t d : dims) reduced[d < 0 ? d + x.dim() : d] = true;
  Shape kept;  // output shape with keepdim
  for (int64_t d = 0; d < x.dim(); ++d) kept.push_back(reduced[d] ? 1 : x.shape[d]);
  std::vector<std::vector<double>> groups(numel_of(kept));
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(x.shape, i);
    for (int64_t d = 0; d < x.dim(); ++d) if (reduced[d]) idx[d] = 0;
    groups[zeros_nd(kept).flat(idx)].push_back(x.v[i]);
  }
  Shape out;
  for (int64_t d = 0; d < x.dim(); ++d) if (!reduced[d] || keepdim) out.push_back(kept[d]);
  Nd r = zeros_nd(out, dtype);
  for (size_t g = 0; g < groups.size(); ++g) r.v[g] = f(groups[g]);
  return r;
}

Nd along(const Nd& x, int64_t dim, const std::function<std::vector<double>(const std::vector<double>&)>& f) {
  if (dim < 0) dim += x.dim();
  Nd r = x;
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(x.shape, i);
    if (idx[dim] != 0) continue;
    std::vector<double> lane;
    for (idx[dim] = 0; idx[dim] < x.shape[dim]; ++idx[dim]) lane.push_back(x.at(idx));
    std::vector<double> out = f(lane);
    for (idx[dim] = 0; idx[dim] < x.shape[dim]; ++idx[dim]) r.at(idx) = out[idx[dim]];
  }
  return r;
}

// --- Inputs -------------------------------------------------------------------------------------

static uint64_t seed_of(const std::string& name, size_t sample) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h ^ (sample * 0x9E3779B97F4A7C15ull);
}

static std::vector<Tensor> inputs_of_shapes(const OpRow& row, const std::vector<Shape>& shapes, size_t sample,
                                            DType float_dtype) {
  std::mt19937_64 rng(seed_of(row.name, sample));
  auto domain = [&](size_t i) { return row.domains[std::min(i, row.domains.size() - 1)]; };
  // One jittered grid per Real range, dealt out over the inputs with that range.
  std::map<std::pair<double, double>, std::vector<double>> grids;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (domain(i).kind == Kind::Real) grids[{domain(i).lo, domain(i).hi}].resize(
        grids[{domain(i).lo, domain(i).hi}].size() + numel_of(shapes[i]));
  std::uniform_real_distribution<double> u(0.1, 0.4);
  for (auto& [range, g] : grids) {
    const double n = static_cast<double>(g.size()), cell = (range.second - range.first) / n;
    std::vector<int64_t> perm(g.size());
    for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (size_t k = 0; k < g.size(); ++k)
      g[k] = range.first + cell * (perm[k] + 0.5 + (rng() % 2 ? 1 : -1) * u(rng));
  }
  std::map<std::pair<double, double>, size_t> used;
  std::vector<Tensor> xs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Domain d = domain(i);
    const DType dt = d.kind == Kind::Bool ? kBool : d.kind == Kind::Index ? kInt64 : float_dtype;
    Tensor x = empty(shapes[i], TensorOptions(dt));
    for (int64_t e = 0; e < x.numel(); ++e) {
      double v = 0;
      switch (d.kind) {
        case Kind::Real: v = grids[{d.lo, d.hi}][used[{d.lo, d.hi}]++]; break;
        case Kind::Integer: v = d.lo + static_cast<double>(rng() % static_cast<uint64_t>(d.hi - d.lo + 1)); break;
        case Kind::Bool: v = static_cast<double>(rng() % 2); break;
        case Kind::Index: v = static_cast<double>(rng() % static_cast<uint64_t>(d.hi)); break;
      }
      set_element(x, e, v);
    }
    xs.push_back(x);
  }
  return xs;
}

std::vector<Tensor> make_inputs(const OpRow& row, size_t sample, DType float_dtype) {
  return inputs_of_shapes(row, row.samples[sample], sample, float_dtype);
}

size_t special_sample_count(const OpRow& row) { return row.samples.size() + row.special_samples.size(); }

std::vector<Tensor> special_inputs(const OpRow& row, size_t sample, DType float_dtype) {
  const bool own = sample < row.samples.size();
  std::vector<Tensor> xs = inputs_of_shapes(
      row, own ? row.samples[sample] : row.special_samples[sample - row.samples.size()], sample, float_dtype);
  std::mt19937_64 rng(seed_of(row.name, sample) ^ 0x5EC1A15ull);
  constexpr double kSpecial[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity()};
  for (size_t i = 0; i < xs.size(); ++i) {
    const Kind kind = row.domains[std::min(i, row.domains.size() - 1)].kind;
    if (kind != Kind::Real && kind != Kind::Integer) continue;
    for (int64_t e = 0; e < xs[i].numel(); ++e)
      if (const uint64_t pick = rng() % 6; pick < 3) set_element(xs[i], e, kSpecial[pick]);
  }
  return xs;
}

// --- Checks -------------------------------------------------------------------------------------

static std::string describe(const OpRow& row, const std::vector<Tensor>& xs, const char* variant) {
  std::ostringstream os;
  os << row.name << variant << " with inputs";
  for (const Tensor& x : xs) os << " " << dtype_name(x.dtype()) << x.sizes() << (x.is_contiguous() ? "" : "(strided)");
  return os.str();
}

// got (any dtype) against expected values; both must have the same shape, and the dtype when
// check_dtype is set. Exact for non-floating expectations.
static ::testing::AssertionResult compare(const std::string& what, const std::vector<Tensor>& got, const Refs& want,
                                          double atol, double rtol, bool check_dtype) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << what << ": " << got.size() << " outputs, expected " << want.size();
  for (size_t o = 0; o < got.size(); ++o) {
    const std::string out = what + ", output " + std::to_string(o);
    if (!got[o].defined()) return ::testing::AssertionFailure() << out << " is undefined";
    if (got[o].sizes().vec() != want[o].shape)
      return ::testing::AssertionFailure() << out << ": shape " << got[o].sizes() << ", expected "
                                           << IntArrayRef(want[o].shape);
    if (check_dtype && got[o].dtype() != want[o].dtype)
      return ::testing::AssertionFailure() << out << ": dtype " << got[o].dtype() << ", expected " << want[o].dtype;
    const bool exact = !is_floating_point(want[o].dtype);
    for (int64_t j = 0; j < want[o].numel(); ++j) {
      const double g = element_at(got[o], j), e = want[o].v[j];
      const bool ok = exact || std::isinf(e) ? g == e
                                             : (std::isnan(e) ? std::isnan(g) : std::abs(g - e) <= atol + rtol * std::abs(e));
      if (!ok)
        return ::testing::AssertionFailure() << out << ", element " << index_string(got[o].sizes(), j)
                                             << ": expected " << e << ", got " << g << " (|diff| "
                                             << std::abs(g - e) << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

template <class F>
static ::testing::AssertionResult guarded(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << what << ": threw " << e.what();
  }
}

::testing::AssertionResult check_reference(const OpRow& row, size_t sample, bool noncontiguous) {
  std::vector<Tensor> xs = make_inputs(row, sample, kFloat64);
  if (noncontiguous)
    for (Tensor& x : xs) x = make_noncontiguous(x);
  const std::string what = describe(row, xs, noncontiguous ? " [non-contiguous]" : "");
  return guarded(what, [&] {
    Refs in;
    for (const Tensor& x : xs) in.push_back(to_nd(x));
    Refs want = row.ref(in);
    NoGradGuard no_grad;
    return compare(what, row.op(xs), want, row.atol, row.rtol, /*check_dtype=*/true);
  });
}

::testing::AssertionResult check_gradients(const OpRow& row, size_t sample, bool noncontiguous) {
  std::vector<Tensor> xs = make_inputs(row, sample, kFloat64);
  const std::string what = describe(row, xs, "");
  return guarded(what, [&] {
    return noncontiguous ? gradcheck_noncontiguous(row.op, xs, row.grad_eps, row.grad_atol, row.grad_rtol, what)
                         : gradcheck(row.op, xs, row.grad_eps, row.grad_atol, row.grad_rtol, what);
  });
}

::testing::AssertionResult check_gradgrad(const OpRow& row, size_t sample, bool noncontiguous) {
  std::vector<Tensor> xs = make_inputs(row, sample, kFloat64);
  if (noncontiguous)
    for (Tensor& x : xs) x = make_noncontiguous(x);
  const std::string what = describe(row, xs, noncontiguous ? " [non-contiguous]" : "");
  return guarded(what, [&] {
    return gradgradcheck(row.op, xs, row.grad_eps, row.grad_atol, row.grad_rtol, what, seed_of(row.name, sample));
  });
}

::testing::AssertionResult check_float32(const OpRow& row, size_t sample) {
  std::vector<Tensor> x64 = make_inputs(row, sample, kFloat64), x32 = make_inputs(row, sample, kFloat32);
  const std::string what = describe(row, x32, " [float32 vs float64]");
  return guarded(what, [&] {
    NoGradGuard no_grad;
    std::vector<Tensor> out64 = row.op(x64), out32 = row.op(x32);
    Refs want;
    for (const Tensor& o : out64) {
      want.push_back(to_nd(o));
      if (!row.fixed_dtype && want.back().dtype == kFloat64) want.back().dtype = kFloat32;  // float32 in, float32 out
    }
    bool any_float_input = false;
    for (const Tensor& x : x32) any_float_input |= x.dtype() == kFloat32;
    return compare(what, out32, want, row.f32_atol, row.f32_rtol, /*check_dtype=*/any_float_input);
  });
}

// "[nan, 1.5, -inf, ...]": the first values of a tensor, to show which element held what.
static std::string values_string(const Tensor& x) {
  std::ostringstream os;
  os << "[";
  const int64_t shown = std::min<int64_t>(x.numel(), 16);
  for (int64_t e = 0; e < shown; ++e) os << (e ? ", " : "") << element_at(x, e);
  os << (x.numel() > shown ? ", ...]" : "]");
  return os.str();
}

::testing::AssertionResult check_specials(const OpRow& row, size_t sample, DType float_dtype, bool noncontiguous) {
  std::vector<Tensor> xs = special_inputs(row, sample, float_dtype);
  if (noncontiguous)
    for (Tensor& x : xs) x = make_noncontiguous(x);
  std::string what = describe(row, xs, noncontiguous ? " [special values, non-contiguous]" : " [special values]");
  what += " valued";
  for (const Tensor& x : xs) what += " " + values_string(x);
  return guarded(what, [&] {
    Refs in;
    for (const Tensor& x : xs) in.push_back(to_nd(x));  // float32 values are exact doubles
    Refs want = row.ref(in);
    const bool f32 = float_dtype == kFloat32;
    bool any_float_input = false;
    for (const Tensor& x : xs) any_float_input |= x.dtype() == float_dtype;
    if (f32 && !row.fixed_dtype)
      for (Nd& w : want)
        if (w.dtype == kFloat64) w.dtype = kFloat32;
    NoGradGuard no_grad;
    return compare(what, row.op(xs), want, f32 ? row.f32_atol : row.atol, f32 ? row.f32_rtol : row.rtol,
                   /*check_dtype=*/any_float_input);
  });
}

// --- Registry -----------------------------------------------------------------------------------

using Maker = std::pair<std::string, std::vector<OpRow> (*)()>;
static std::vector<Maker>& makers() {
  static std::vector<Maker> m;
  return m;
}

RowRegistrar::RowRegistrar(const char* area, std::vector<OpRow> (*make)()) { makers().emplace_back(area, make); }

std::vector<std::pair<std::string, size_t>>& op_table_areas() {
  static std::vector<std::pair<std::string, size_t>> areas;
  return areas;
}

std::vector<OpRow>& op_table() {
  static std::vector<OpRow> rows = [] {
    std::vector<OpRow> all;
    std::vector<Maker> sorted = makers();  // registration order differs between link orders
    std::sort(sorted.begin(), sorted.end(), [](const Maker& a, const Maker& b) { return a.first < b.first; });
    for (auto& [area, make] : sorted) {
      std::vector<OpRow> r = make();
      op_table_areas().emplace_back(area, r.size());
      all.insert(all.end(), r.begin(), r.end());
    }
    return all;
  }();
  return rows;
}

}  // namespace cohort::testing
