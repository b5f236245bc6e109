// Padding: constant padding is narrow (negative amounts) and cat with filled blocks; reflection,
// replication and circular padding are an index_select per padded dim with the mirrored, clamped or
// wrapped source positions. Composed of differentiable ops, so both gradients come from theirs.
#include "cohort/ops/padding.h"

#include <algorithm>
#include <vector>

#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/shape.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// Pads the last padding.size() / 2 dims of x, reading source position index_of(p, len) for each
// output position p in [-before, len + after).
template <class F>
Tensor pad_by_index(const char* op, const Tensor& x, IntArrayRef padding, int64_t spatial, F index_of) {
  detail::check_defined(op, x);
  COHORT_CHECK(static_cast<int64_t>(padding.size()) == 2 * spatial, op, ": expected padding to have ", 2 * spatial,
               " values, got ", padding);
  COHORT_CHECK(x.dim() == spatial + 1 || x.dim() == spatial + 2, op, ": expected a ", spatial + 1, "-d or ",
               spatial + 2, "-d input, got shape ", x.sizes());
  Tensor out = x;
  for (int64_t k = 0; k < spatial; ++k) {
    const int64_t d = x.dim() - 1 - k, before = padding[2 * k], after = padding[2 * k + 1], len = x.size(d);
    COHORT_CHECK(before >= 0 && after >= 0, op, ": padding must be non-negative, got ", padding);
    std::vector<int64_t> from;
    for (int64_t p = -before; p < len + after; ++p) from.push_back(index_of(p, len, before, after, d));
    out = index_select(out, d, tensor(ArrayRef<int64_t>(from), TensorOptions(kInt64).device(x.device())));
  }
  return out;
}

auto reflect(const char* op, const Tensor& x) {
  return [op, &x](int64_t p, int64_t len, int64_t before, int64_t after, int64_t d) {
    COHORT_CHECK(before < len && after < len, op, ": padding size should be less than the corresponding input "
                 "dimension, got padding (", before, ", ", after, ") at dimension ", d, " of input ", x.sizes());
    return p < 0 ? -p : (p >= len ? 2 * (len - 1) - p : p);
  };
}

auto replicate(const char* op, const Tensor& x) {
  return [op, &x](int64_t p, int64_t len, int64_t, int64_t, int64_t d) {
    COHORT_CHECK(len > 0, op, ": cannot pad an empty dimension ", d, " of input ", x.sizes());
    return p < 0 ? 0 : (p >= len ? len - 1 : p);
  };
}

auto wrap_around(const char* op, const Tensor& x) {
  return [op, &x](int64_t p, int64_t len, int64_t before, int64_t after, int64_t d) {
    COHORT_CHECK(before <= len && after <= len, op, ": circular padding must be at most the size of its dimension, "
                 "got padding (", before, ", ", after, ") at dimension ", d, " of input ", x.sizes());
    return p < 0 ? p + len : (p >= len ? p - len : p);
  };
}

}  // namespace

Tensor constant_pad_nd(const Tensor& x, IntArrayRef pad, const Scalar& value) {
  detail::check_defined("constant_pad_nd", x);
  COHORT_CHECK(pad.size() % 2 == 0, "constant_pad_nd: padding length must be divisible by 2, got ", pad.size(),
               " values ", pad);
  COHORT_CHECK(static_cast<int64_t>(pad.size()) <= 2 * x.dim(), "constant_pad_nd: padding length ", pad.size(),
               " is too large for an input of ", x.dim(), " dims (at most ", 2 * x.dim(), ")");
  Tensor out = x;
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const int64_t d = x.dim() - 1 - static_cast<int64_t>(k), before = pad[2 * k], after = pad[2 * k + 1];
    const int64_t len = out.size(d);
    COHORT_CHECK(len + before + after >= 0, "constant_pad_nd: the input size ", len, " at dimension ", d,
                 " plus padding ", before, " and ", after, " is negative");
    const int64_t start = before < 0 ? -before : 0, stop = after < 0 ? len + after : len;
    if (start > 0 || stop < len) out = out.narrow(d, start, std::max<int64_t>(stop - start, 0));
    std::vector<Tensor> parts;
    auto block = [&](int64_t n) {
      Shape s = out.sizes().vec();
      s[d] = n;
      return full(s, value, out.options());
    };
    if (before > 0) parts.push_back(block(before));
    parts.push_back(out);
    if (after > 0) parts.push_back(block(after));
    if (parts.size() > 1) out = cat(parts, d);
  }
  return out.is_same(x) ? x.clone() : out;
}

Tensor reflection_pad1d(const Tensor& x, IntArrayRef padding) {
  return pad_by_index("reflection_pad1d", x, padding, 1, reflect("reflection_pad1d", x));
}
Tensor reflection_pad2d(const Tensor& x, IntArrayRef padding) {
  return pad_by_index("reflection_pad2d", x, padding, 2, reflect("reflection_pad2d", x));
}
Tensor replication_pad1d(const Tensor& x, IntArrayRef padding) {
  return pad_by_index("replication_pad1d", x, padding, 1, replicate("replication_pad1d", x));
}
Tensor replication_pad2d(const Tensor& x, IntArrayRef padding) {
  return pad_by_index("replication_pad2d", x, padding, 2, replicate("replication_pad2d", x));
}

Tensor reflection_pad3d(const Tensor& x, IntArrayRef padding) {
  return pad_by_index("reflection_pad3d", x, padding, 3, reflect("reflection_pad3d", x));
}
Tensor replication_pad3d(const Tensor& x, IntArrayRef padding) {
  return pad_by_index("replication_pad3d", x, padding, 3, replicate("replication_pad3d", x));
}

Tensor pad(const Tensor& x, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  if (mode == "constant") return constant_pad_nd(x, pad, value.value_or(0));
  COHORT_CHECK(!value || *value == 0, "pad: a padding value goes with mode \"constant\" only, got value ", *value,
               " with mode \"", mode, "\"");
  COHORT_CHECK(pad.size() % 2 == 0 && pad.size() >= 2 && pad.size() <= 6, "pad: mode \"", mode,
               "\" pads 1 to 3 dims, expected 2, 4 or 6 values, got ", pad);
  const auto spatial = static_cast<int64_t>(pad.size() / 2);
  static const char* const reflect_ops[] = {"reflection_pad1d", "reflection_pad2d", "reflection_pad3d"};
  static const char* const replicate_ops[] = {"replication_pad1d", "replication_pad2d", "replication_pad3d"};
  if (mode == "reflect") {
    const char* op = reflect_ops[spatial - 1];
    return pad_by_index(op, x, pad, spatial, reflect(op, x));
  }
  if (mode == "replicate") {
    const char* op = replicate_ops[spatial - 1];
    return pad_by_index(op, x, pad, spatial, replicate(op, x));
  }
  COHORT_CHECK(mode == "circular", "pad: mode must be \"constant\", \"reflect\", \"replicate\" or \"circular\", "
               "got \"", mode, "\"");
  return pad_by_index("pad", x, pad, spatial, wrap_around("pad (circular)", x));
}

}  // namespace cohort
