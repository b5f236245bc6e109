// Reduction kernels: sum, mean, prod, max/min, norms, variance; and max/min with indices.
//
// Floating sums accumulate in double, integer ones in int64. A reduction to few outputs is split
// into fixed chunks of the reduced range (not one per thread), so its result is the same bitwise
// whatever the number of threads; many outputs are computed one per thread each.
#include <cmath>
#include <limits>

#include "ops/cpu/kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"

// Every op is a case of its switch, with no default: a new op without its kernel does not compile
// (-Werror=switch, Note [Op tables] in kernels.h).

namespace cohort::kernel {

namespace {

constexpr int64_t kChunk = 16384;

// Walks the elements of a strided sub-tensor (the reduced dims) from a base pointer.
struct Walker {
  std::vector<int64_t> sizes, strides;  // bytes; coalesced, outermost first
  int64_t numel = 1;

  Walker(const std::vector<int64_t>& sz, const std::vector<int64_t>& st) {
    for (size_t d = sz.size(); d-- > 0;) {
      if (sz[d] == 1) continue;
      if (!sizes.empty() && st[d] == strides.front() * sizes.front()) {
        sizes.front() *= sz[d];
        continue;
      }
      sizes.insert(sizes.begin(), sz[d]);
      strides.insert(strides.begin(), st[d]);
    }
    if (sizes.empty()) sizes = {1}, strides = {0};
    for (int64_t s : sizes) numel *= s;
  }

  // f(const char* p, int64_t inner_stride, int64_t n) for the runs covering [begin, end).
  template <class F>
  void runs(const char* base, int64_t begin, int64_t end, F&& f) const {
    const size_t nd = sizes.size();
    std::vector<int64_t> index(nd);
    int64_t rest = begin;
    for (size_t d = nd; d-- > 0;) index[d] = rest % sizes[d], rest /= sizes[d];
    int64_t pos = begin;
    while (pos < end) {
      int64_t n = std::min(sizes[nd - 1] - index[nd - 1], end - pos);
      const char* p = base;
      for (size_t d = 0; d < nd; ++d) p += index[d] * strides[d];
      f(p, strides[nd - 1], n);
      pos += n;
      index[nd - 1] += n;
      for (size_t d = nd - 1; d > 0 && index[d] == sizes[d]; --d) index[d] = 0, ++index[d - 1];
    }
  }
};

template <class T>
using SumAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// Each reducer: Acc init(); void run(Acc&, const T*, stride_elems, n); void merge(Acc&, const Acc&);
// Out finish(const Acc&, count).
template <class T, class Out>
struct SumReducer {
  using Acc = SumAcc<T>;
  bool mean = false;
  Acc init() const { return 0; }
  void run(Acc& acc, const T* p, int64_t s, int64_t n) const {
    if (s == 1) {
      Acc lanes[8] = {};  // independent partial sums: vectorisable and deterministic
      int64_t i = 0;
      for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) lanes[k] += static_cast<Acc>(p[i + k]);
      for (; i < n; ++i) lanes[0] += static_cast<Acc>(p[i]);
      for (int k = 0; k < 8; ++k) acc += lanes[k];
    } else {
      for (int64_t i = 0; i < n; ++i) acc += static_cast<Acc>(p[i * s]);
    }
  }
  void merge(Acc& a, const Acc& b) const { a += b; }
  Out finish(const Acc& a, int64_t count) const {
    if (mean) return static_cast<Out>(static_cast<double>(a) / static_cast<double>(count));
    return static_cast<Out>(a);
  }
};

template <class T, class Out>
struct ProdReducer {
  using Acc = SumAcc<T>;
  Acc init() const { return 1; }
  void run(Acc& acc, const T* p, int64_t s, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) acc = static_cast<Acc>(acc * static_cast<Acc>(p[i * s]));
  }
  void merge(Acc& a, const Acc& b) const { a = static_cast<Acc>(a * b); }
  Out finish(const Acc& a, int64_t) const { return static_cast<Out>(a); }
};

template <class T, class Out>
struct ExtremeReducer {
  using Acc = T;
  bool is_max = true;
  Acc init() const {
    if constexpr (std::is_floating_point_v<T>) return is_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else return is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  void take(Acc& acc, T v) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(acc)) return;
      if (std::isnan(v)) { acc = v; return; }
    }
    if (is_max ? v > acc : v < acc) acc = v;
  }
  void run(Acc& acc, const T* p, int64_t s, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) take(acc, p[i * s]);
  }
  void merge(Acc& a, const Acc& b) const { take(a, b); }
  Out finish(const Acc& a, int64_t) const { return static_cast<Out>(a); }
};

// (sum |x|^p)^(1/p), or max |x| for p = inf.
template <class T, class Out>
struct NormReducer {
  using Acc = double;
  double p = 2;
  bool inf = false;
  Acc init() const { return 0; }
  void run(Acc& acc, const T* x, int64_t s, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) {
      double v = std::abs(static_cast<double>(x[i * s]));
      if (inf) acc = std::isnan(v) || std::isnan(acc) ? std::numeric_limits<double>::quiet_NaN() : std::max(acc, v);
      else if (p == 2) acc += v * v;
      else if (p == 1) acc += v;
      else acc += std::pow(v, p);
    }
  }
  void merge(Acc& a, const Acc& b) const {
    // std::max would drop a NaN in b (a later chunk's).
    a = !inf ? a + b : std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
  }
  Out finish(const Acc& a, int64_t) const {
    if (inf || p == 1) return static_cast<Out>(a);
    return static_cast<Out>(p == 2 ? std::sqrt(a) : std::pow(a, 1.0 / p));
  }
};

struct Welford {
  double n = 0, mean = 0, m2 = 0;
};

template <class T, class Out>
struct VarReducer {
  using Acc = Welford;
  double correction = 1;
  Acc init() const { return {}; }
  void run(Acc& acc, const T* x, int64_t s, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) {
      double v = static_cast<double>(x[i * s]);
      acc.n += 1;
      double d = v - acc.mean;
      acc.mean += d / acc.n;
      acc.m2 += d * (v - acc.mean);
    }
  }
  void merge(Acc& a, const Acc& b) const {
    if (b.n == 0) return;
    if (a.n == 0) { a = b; return; }
    double n = a.n + b.n, d = b.mean - a.mean;
    a.mean += d * b.n / n;
    a.m2 += b.m2 + d * d * a.n * b.n / n;
    a.n = n;
  }
  Out finish(const Acc& a, int64_t) const {
    double denom = a.n - correction;
    return static_cast<Out>(denom > 0 ? a.m2 / denom : std::numeric_limits<double>::quiet_NaN());
  }
};

// Splits `in` into kept and reduced dims and runs the reducer.
template <class T, class Out, class R>
void run_reduction(const R& r, const Tensor& out, const Tensor& in, IntArrayRef dims) {
  const int64_t nd = in.dim();
  std::vector<bool> reduced(nd, false);
  for (int64_t d : dims) reduced[d] = true;
  std::vector<int64_t> kept_sizes, kept_strides, red_sizes, red_strides;
  for (int64_t d = 0; d < nd; ++d) {
    int64_t stride_bytes = in.stride(d) * static_cast<int64_t>(sizeof(T));
    (reduced[d] ? red_sizes : kept_sizes).push_back(in.size(d));
    (reduced[d] ? red_strides : kept_strides).push_back(stride_bytes);
  }
  Walker kept(kept_sizes, kept_strides), red(red_sizes, red_strides);
  const int64_t n_out = out.numel(), n_red = red.numel;
  Out* o = out.data_ptr<Out>();
  const char* base = static_cast<const char*>(in.data_ptr());
  using Acc = typename R::Acc;
  auto reduce_range = [&](const char* start, int64_t begin, int64_t end) {
    Acc acc = r.init();
    red.runs(start, begin, end, [&](const char* p, int64_t s, int64_t n) {
      r.run(acc, reinterpret_cast<const T*>(p), s / static_cast<int64_t>(sizeof(T)), n);
    });
    return acc;
  };
  if (n_out == 0) return;
  if (n_red == 0 || in.numel() == 0) {
    for (int64_t i = 0; i < n_out; ++i) o[i] = r.finish(r.init(), 0);
    return;
  }
  // Dims that are one run of equal steps ([T, N, C] over T and N) walk as one dim, in the same order.
  auto coalesced = [](const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
    std::pair<std::vector<int64_t>, std::vector<int64_t>> run;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!run.first.empty() && run.second.back() == strides[d] * sizes[d]) {
        run.first.back() *= sizes[d];
        run.second.back() = strides[d];
      } else {
        run.first.push_back(sizes[d]);
        run.second.push_back(strides[d]);
      }
    }
    return run;
  };
  const auto [kept_run_sizes, kept_run_strides] = coalesced(kept_sizes, kept_strides);
  const auto [red_run_sizes, red_run_strides] = coalesced(red_sizes, red_strides);
  if (kept_run_sizes.size() == 1 && red_run_sizes.size() == 1 && kept_run_strides[0] == static_cast<int64_t>(sizeof(T)) &&
      red_run_strides[0] != static_cast<int64_t>(sizeof(T)) && n_out >= 16) {
    // Columns of a matrix ([R, C] summed over R, as a bias gradient): a block of adjacent outputs is
    // walked row by row, so each row is read once, in order, instead of each column with a stride
    // of a row. Each output still adds its elements one at a time in row order, as the loop below,
    // so the results are the same bits.
    constexpr int64_t kBlock = 64;
    const int64_t s = red_run_strides[0] / static_cast<int64_t>(sizeof(T));
    const int64_t blocks = (n_out + kBlock - 1) / kBlock;
    parallel_for(blocks, std::max<int64_t>(1, kParallelGrain / (n_red * kBlock)), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const int64_t first = b * kBlock, count = std::min(kBlock, n_out - first);
        Acc acc[kBlock];
        for (int64_t k = 0; k < count; ++k) acc[k] = r.init();
        const T* col = reinterpret_cast<const T*>(base) + first;
        for (int64_t i = 0; i < n_red; ++i)
          for (int64_t k = 0; k < count; ++k) r.run(acc[k], col + i * s + k, s, 1);
        for (int64_t k = 0; k < count; ++k) o[first + k] = r.finish(acc[k], n_red);
      }
    });
    return;
  }
  if (n_out >= 16 || n_red < 2 * kChunk) {
    // One output per iteration; outputs in order of `out` (contiguous, kept dims in order).
    parallel_for(n_out, std::max<int64_t>(1, kParallelGrain / n_red), [&](int64_t begin, int64_t end) {
      kept.runs(base, begin, end, [&](const char* p, int64_t s, int64_t n) {
        for (int64_t i = 0; i < n; ++i, ++begin) o[begin] = r.finish(reduce_range(p + i * s, 0, n_red), n_red);
      });
    });
    return;
  }
  // Few outputs, long reductions: fixed chunks of the reduced range, merged in order.
  const int64_t chunks = (n_red + kChunk - 1) / kChunk;
  std::vector<Acc> partial(static_cast<size_t>(n_out * chunks));
  parallel_for(n_out * chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t job = begin; job < end; ++job) {
      int64_t oi = job / chunks, c = job % chunks;
      const char* start = base;
      kept.runs(base, oi, oi + 1, [&](const char* p, int64_t, int64_t) { start = p; });
      partial[job] = reduce_range(start, c * kChunk, std::min(n_red, (c + 1) * kChunk));
    }
  });
  for (int64_t oi = 0; oi < n_out; ++oi) {
    Acc acc = partial[oi * chunks];
    for (int64_t c = 1; c < chunks; ++c) r.merge(acc, partial[oi * chunks + c]);
    o[oi] = r.finish(acc, n_red);
  }
}

}  // namespace

void reduce(ReduceOp op, const Tensor& out, const Tensor& in, IntArrayRef dims, double param) {
  // The output dtype is the input's, except integer sums and products, which are int64 (the ops
  // convert the input first for any other requested dtype); this keeps the instantiations few.
  // Mean, norms and variance are floating-only: their ops refuse integer tensors. bfloat16 and
  // float16 run the float32 reduction (which accumulates in double) and round the result once.
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor wide = widen(in);
    return into(out, [&](const Tensor& o) { reduce(op, o, wide, dims, param); });
  }
  dispatch(in.dtype(), [&](auto in_tag) {
    using T = decltype(in_tag);
    constexpr bool kFloating = std::is_floating_point_v<T>;
    using Wide = std::conditional_t<kFloating, T, int64_t>;  // the dtype of sums and products
    COHORT_ASSERT(out.dtype() == ((op == ReduceOp::Sum || op == ReduceOp::Prod) ? dtype_v<Wide> : in.dtype()));
    switch (op) {
      case ReduceOp::Sum: return run_reduction<T, Wide>(SumReducer<T, Wide>{false}, out, in, dims);
      case ReduceOp::Prod: return run_reduction<T, Wide>(ProdReducer<T, Wide>{}, out, in, dims);
      case ReduceOp::Max: return run_reduction<T, T>(ExtremeReducer<T, T>{true}, out, in, dims);
      case ReduceOp::Min: return run_reduction<T, T>(ExtremeReducer<T, T>{false}, out, in, dims);
      case ReduceOp::Mean:
        if constexpr (kFloating) return run_reduction<T, T>(SumReducer<T, T>{true}, out, in, dims);
        break;
      case ReduceOp::NormP:
        if constexpr (kFloating) return run_reduction<T, T>(NormReducer<T, T>{param, false}, out, in, dims);
        break;
      case ReduceOp::NormInf:
        if constexpr (kFloating) return run_reduction<T, T>(NormReducer<T, T>{param, true}, out, in, dims);
        break;
      case ReduceOp::Var:
        if constexpr (kFloating) return run_reduction<T, T>(VarReducer<T, T>{param}, out, in, dims);
        break;
      case ReduceOp::kCount: break;
    }
    COHORT_ASSERT(false && "a floating-only reduction on an integer tensor, or ReduceOp::kCount");
  });
}

void reduce_with_index(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor wide = widen(in);
    return into(values, [&](const Tensor& v) { reduce_with_index(is_max, v, indices, wide, dim); });
  }
  dispatch(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    std::vector<int64_t> kept_sizes, kept_strides;
    for (int64_t d = 0; d < in.dim(); ++d)
      if (d != dim) kept_sizes.push_back(in.size(d)), kept_strides.push_back(in.stride(d) * sizeof(T));
    Walker kept(kept_sizes, kept_strides);
    const int64_t n = in.size(dim), s = in.stride(dim), n_out = values.numel();
    T* v = values.data_ptr<T>();
    int64_t* ix = indices.data_ptr<int64_t>();
    const char* base = static_cast<const char*>(in.data_ptr());
    parallel_for(n_out, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
      kept.runs(base, begin, end, [&](const char* p, int64_t ks, int64_t count) {
        for (int64_t i = 0; i < count; ++i, ++begin) {
          const T* x = reinterpret_cast<const T*>(p + i * ks);
          T best = x[0];
          int64_t best_i = 0;
          for (int64_t j = 1; j < n; ++j) {
            T cur = x[j * s];
            if constexpr (std::is_floating_point_v<T>) {
              if (std::isnan(best)) break;
              if (std::isnan(cur)) { best = cur, best_i = j; break; }
            }
            if (is_max ? cur > best : cur < best) best = cur, best_i = j;
          }
          v[begin] = best;
          ix[begin] = best_i;
        }
      });
    });
  });
}

}  // namespace cohort::kernel
