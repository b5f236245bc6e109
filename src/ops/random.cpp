// Random tensors: rand, randn, randint, multinomial (counter-based) and randperm (a shuffle).
//
// Note [Counter-based random tensors]
// A random tensor takes ONE 64-bit draw from its generator, the key; element g is then a pure
// function of (key, g): Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011) of the counter g under the key. Three things follow.
// - The fill is parallel, and bitwise the same for any thread count.
// - Under data parallelism (BatchSlice, core/generator.h), a replica that holds samples
//   [offset, offset + size) of `total` numbers its elements as they sit in the whole batch's tensor,
//   and every replica starts from the caller's generator state (Note [Replica RNG]). So a dropout
//   mask, or noise drawn in forward, is the same whichever way the batch was split, and the same as
//   on one device. A tensor without the chunk's size along the slice's dim (a per-feature draw) is
//   numbered as is: every replica then draws the one tensor that a single device would draw.
// - Each call advances the generator by exactly one draw, whatever the size.
// Normal values use Box-Muller on the 53-bit uniforms from one Philox block per element.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "cohort/ops/creation.h"
#include "ops/cpu/loops.h"
#include "ops/internal.h"

namespace cohort {

namespace {

struct Block {
  uint32_t w[4];
};

// Philox4x32 with 10 rounds: the counter (index, 0) under the 64-bit key.
inline Block philox(uint64_t key, uint64_t index) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(index), c1 = static_cast<uint32_t>(index >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c0, p1 = static_cast<uint64_t>(kMul1) * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {{c0, c1, c2, c3}};
}

inline uint64_t bits64(uint32_t hi, uint32_t lo) { return (static_cast<uint64_t>(hi) << 32) | lo; }
inline double unit53(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }  // [0, 1)
inline float unit24(uint32_t bits) { return static_cast<float>(bits >> 8) * 0x1.0p-24f; }    // [0, 1)

// Element i of a tensor of `sizes` -> its index in the whole batch (Note [Counter-based random tensors]).
class GlobalIndex {
 public:
  explicit GlobalIndex(IntArrayRef sizes) {
    const BatchSlice* s = BatchSliceScope::current();
    const int64_t ndim = static_cast<int64_t>(sizes.size());
    if (!s) return;
    const int64_t dim = s->dim < 0 ? s->dim + ndim : s->dim;  // as scatter counts it
    if (dim < 0 || dim >= ndim || sizes[dim] != s->size || s->total <= s->size) return;
    sliced_ = true;
    size_ = s->size, total_ = s->total, offset_ = s->offset;
    for (int64_t d = dim + 1; d < ndim; ++d) inner_ *= sizes[d];
  }
  uint64_t operator()(int64_t i) const {
    if (!sliced_) return static_cast<uint64_t>(i);
    const int64_t j = i % inner_, row = i / inner_, k = row % size_, outer = row / size_;
    return static_cast<uint64_t>((outer * total_ + offset_ + k) * inner_ + j);
  }

 private:
  bool sliced_ = false;
  int64_t size_ = 0, total_ = 0, offset_ = 0, inner_ = 1;
};

// A tensor of `sizes` with element i = value(philox(key, global index of i)); one draw from `gen`.
template <class T, class Value>
Tensor random_tensor(IntArrayRef sizes, const TensorOptions& options, Generator& gen, Value value) {
  Tensor t = detail::make_empty(sizes, options.dtype(), options.device());
  T* p = t.data_ptr<T>();
  const uint64_t key = gen.next_u64();
  const GlobalIndex global(sizes);
  kernel::parallel_for(t.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) p[i] = value(philox(key, global(i)));
  });
  // Drawn by logical index, so a channels-last tensor holds the values a contiguous one would.
  t = detail::in_requested_format(std::move(t), options);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

}  // namespace

Tensor rand(IntArrayRef sizes, Generator& gen, const TensorOptions& options) {
  return dispatch_floating_reduced(options.dtype(), "rand", [&](auto tag) {
    using T = decltype(tag);
    return random_tensor<T>(sizes, options, gen, [](const Block& b) {
      if constexpr (std::is_same_v<T, float>) return unit24(b.w[0]);
      // As many random bits as the type has digits, so that no value rounds up to 1.
      else if constexpr (is_reduced_float_v<T>)
        return T(static_cast<float>(b.w[0] >> (32 - std::numeric_limits<T>::digits)) *
                 std::ldexp(1.0f, -std::numeric_limits<T>::digits));
      else return static_cast<T>(unit53(bits64(b.w[0], b.w[1])));
    });
  });
}

Tensor randn(IntArrayRef sizes, Generator& gen, const TensorOptions& options) {
  return dispatch_floating_reduced(options.dtype(), "randn", [&](auto tag) {
    using T = decltype(tag);
    return random_tensor<T>(sizes, options, gen, [](const Block& b) {
      const double u1 = 1.0 - unit53(bits64(b.w[0], b.w[1])), u2 = unit53(bits64(b.w[2], b.w[3]));
      return static_cast<T>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
    });
  });
}

Tensor rand(IntArrayRef sizes, const TensorOptions& options) { return rand(sizes, default_generator(), options); }
Tensor randn(IntArrayRef sizes, const TensorOptions& options) { return randn(sizes, default_generator(), options); }

Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& options) { return randint(0, high, sizes, options); }

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& options) {
  COHORT_CHECK(low < high, "randint: expected low < high, got low=", low, " high=", high);
  TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  return dispatch(o.dtype(), "randint", [&](auto tag) {
    using T = decltype(tag);
    return random_tensor<T>(sizes, o, default_generator(), [&](const Block& b) {
      // Multiply-shift maps 64 random bits onto [0, range) without a division.
      const uint64_t r = static_cast<uint64_t>((static_cast<unsigned __int128>(bits64(b.w[0], b.w[1])) * range) >> 64);
      return static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + r));
    });
  });
}

Tensor randperm(int64_t n, const TensorOptions& options) {
  COHORT_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  {
    Generator& gen = default_generator();
    std::lock_guard<std::mutex> l(gen.mutex());
    for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[gen.engine()() % static_cast<uint64_t>(i + 1)]);
  }
  return tensor(perm, TensorOptions(o.dtype()).device(o.device()));
}

Tensor multinomial(const Tensor& input, int64_t num_samples, bool replacement, Generator& gen) {
  detail::check_defined("multinomial", input);
  COHORT_CHECK(input.dim() == 1 || input.dim() == 2, "multinomial: expected weights of 1 or 2 dims, got shape ",
               input.sizes());
  COHORT_CHECK_AS(TypeError, is_floating_point(input.dtype()),
                  "multinomial: expected floating-point weights, got ", input.dtype());
  const int64_t rows = input.dim() == 2 ? input.size(0) : 1, n = input.size(-1);
  COHORT_CHECK(num_samples > 0, "multinomial: num_samples must be positive, got ", num_samples);
  COHORT_CHECK(replacement || num_samples <= n, "multinomial: cannot draw ", num_samples,
               " samples without replacement from ", n, " categories");
  const Tensor w = input.detach().to(kFloat64).contiguous();
  const double* pw = w.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    int64_t nonzero = 0;
    for (int64_t c = 0; c < n; ++c) {
      const double v = pw[r * n + c];
      COHORT_CHECK(std::isfinite(v) && v >= 0, "multinomial: weights must be finite and non-negative, got ", v,
                   " at ", input.dim() == 2 ? detail::str("row ", r, ", ") : std::string(), "category ", c);
      total += v;
      nonzero += v > 0;
    }
    COHORT_CHECK(total > 0, "multinomial: the weights", input.dim() == 2 ? detail::str(" of row ", r) : std::string(),
                 " sum to 0");
    COHORT_CHECK(replacement || nonzero >= num_samples, "multinomial: cannot draw ", num_samples,
                 " samples without replacement from ", nonzero, " categories of non-zero weight",
                 input.dim() == 2 ? detail::str(" (row ", r, ")") : std::string());
  }
  // One draw from the generator (Note [Counter-based random tensors]); sample s of row r uses the
  // uniform of the output element's global index, so a replica's rows draw as in the whole batch.
  const uint64_t key = gen.next_u64();
  Tensor out = detail::make_empty(input.dim() == 2 ? Shape{rows, num_samples} : Shape{num_samples}, kInt64,
                                  input.device());
  const GlobalIndex global(out.sizes());
  int64_t* po = out.data_ptr<int64_t>();
  kernel::parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> weights(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      std::copy(pw + r * n, pw + (r + 1) * n, weights.begin());
      double total = std::accumulate(weights.begin(), weights.end(), 0.0);
      for (int64_t s = 0; s < num_samples; ++s) {
        const Block b = philox(key, global(r * num_samples + s));
        const double target = unit53(bits64(b.w[0], b.w[1])) * total;
        // The category whose cumulative weight first exceeds the target; the last one with weight
        // if rounding leaves the target at the total.
        int64_t pick = -1;
        double acc = 0;
        for (int64_t c = 0; c < n; ++c) {
          if (weights[c] <= 0) continue;
          acc += weights[c];
          pick = c;
          if (target < acc) break;
        }
        po[r * num_samples + s] = pick;
        if (!replacement) {  // drawn: out of the urn
          total -= weights[pick];
          weights[pick] = 0;
        }
      }
    }
  });
  return out;
}

Tensor multinomial(const Tensor& input, int64_t num_samples, bool replacement) {
  return multinomial(input, num_samples, replacement, default_generator());
}

}  // namespace cohort
