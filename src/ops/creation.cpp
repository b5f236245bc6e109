// Factories: empty/zeros/ones/full, ranges, tensor({...}) and from_blob (random tensors: random.cpp).
#include "cohort/ops/creation.h"

#include <cmath>
#include <cstring>
#include <numeric>

#include "cohort/autograd/grad_mode.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// The factories fill a contiguous tensor; one asked for in another memory format is laid out so
// before it becomes a leaf.
Tensor finish(Tensor t, const TensorOptions& options) {
  t = detail::in_requested_format(std::move(t), options);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

// A *_like factory's options: the model's dtype and device unless given, and its channels-last
// layout kept unless another memory format is asked for.
TensorOptions like(const Tensor& t, const TensorOptions& options) {
  TensorOptions merged = t.options().merged_with(options);
  const MemoryFormat format = options.memory_format_opt().value_or(MemoryFormat::Preserve);
  return merged.memory_format(format == MemoryFormat::Preserve ? t.suggest_memory_format() : format);
}

int64_t shape_product(const NestedValues& v, Shape& shape, size_t depth, Scalar::Kind& kind) {
  if (!v.is_list()) {
    COHORT_CHECK(depth == shape.size(), "tensor: nested lists have inconsistent depths");
    kind = std::max(kind, v.kind());
    return 1;
  }
  int64_t n = static_cast<int64_t>(v.children().size());
  if (depth == shape.size()) shape.resize(depth + 1, n);  // not push_back: GCC 12 warns falsely (-Warray-bounds)
  else COHORT_CHECK(shape[depth] == n, "tensor: expected a list of ", shape[depth], " items at depth ", depth, ", got ", n);
  int64_t total = 0;
  for (const auto& c : v.children()) total += shape_product(c, shape, depth + 1, kind);
  return total;
}

void flatten_values(const NestedValues& v, std::vector<double>& out) {
  if (!v.is_list()) return out.push_back(v.scalar());
  for (const auto& c : v.children()) flatten_values(c, out);
}

}  // namespace

Tensor empty(IntArrayRef sizes, const TensorOptions& options, std::optional<MemoryFormat> memory_format) {
  COHORT_CHECK(!(memory_format && options.has_memory_format()), "empty: the memory format is given twice (in the "
               "options and as an argument); hint: give it once");
  const MemoryFormat format = memory_format.value_or(options.memory_format_opt().value_or(MemoryFormat::Contiguous));
  return finish(detail::make_empty(sizes, options.dtype(), options.device(), format), options.memory_format(std::nullopt));
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  COHORT_CHECK(sizes.size() == strides.size(), "empty_strided: got ", sizes.size(), " sizes but ", strides.size(), " strides");
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    COHORT_CHECK(strides[i] >= 0, "empty_strided: strides must be non-negative, got ", strides);
    if (sizes[i] == 0) extent = 0;
  }
  if (extent) for (size_t i = 0; i < sizes.size(); ++i) extent += (sizes[i] - 1) * strides[i];
  Tensor base = detail::make_empty({extent}, options.dtype(), options.device());
  Tensor t(std::make_shared<TensorImpl>(base.unsafe_impl()->storage(), options.dtype(), sizes.vec(), strides.vec(), 0));
  return finish(t, options);
}

Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options) {
  // Like PyTorch, full() without a dtype infers it from the value.
  DType dtype = options.has_dtype() ? options.dtype() : value.is_floating_point() ? get_default_dtype() : value.dtype();
  Tensor t = detail::make_empty(sizes, dtype, options.device());
  kernel::fill(t, value);
  return finish(t, options);
}

Tensor zeros(IntArrayRef sizes, const TensorOptions& options) { return full(sizes, 0.0, options.dtype(options.dtype())); }
Tensor ones(IntArrayRef sizes, const TensorOptions& options) { return full(sizes, 1.0, options.dtype(options.dtype())); }

Tensor eye(int64_t n, const TensorOptions& options) {
  Tensor t = zeros({n, n}, options.requires_grad(false));
  for (int64_t i = 0; i < n; ++i) kernel::fill(t.select(0, i).select(0, i), 1);
  return finish(t, options);
}

Tensor arange(const Scalar& end, const TensorOptions& options) { return arange(0, end, 1, options); }
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options) { return arange(start, end, 1, options); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& options) {
  bool all_int = !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  DType dtype = options.has_dtype() ? options.dtype() : all_int ? kInt64 : get_default_dtype();
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  COHORT_CHECK(st != 0, "arange: step must be nonzero");
  COHORT_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound and larger bound inconsistent with step sign, got start=",
               start, " end=", end, " step=", step);
  int64_t n = all_int ? (end.to_long() - start.to_long() + step.to_long() - (step.to_long() > 0 ? 1 : -1)) / step.to_long()
                      : static_cast<int64_t>(std::ceil((e - s) / st));
  Tensor t = detail::make_empty({n}, dtype, options.device());
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = all_int ? static_cast<T>(start.to_long() + i * step.to_long()) : static_cast<T>(s + static_cast<double>(i) * st);
  });
  return finish(t, options);
}

Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options) {
  COHORT_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  Tensor t = detail::make_empty({steps}, options.dtype(), options.device());
  dispatch_all(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data_ptr<T>();
    double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0;
    // Fill from both ends so that the last value is exactly `end`, as PyTorch does.
    for (int64_t i = 0; i < steps; ++i)
      p[i] = static_cast<T>(i < steps / 2 ? start + step * static_cast<double>(i)
                                          : end - step * static_cast<double>(steps - 1 - i));
  });
  return finish(t, options);
}

Tensor empty_like(const Tensor& t, const TensorOptions& options) { return empty(t.sizes(), like(t, options)); }
Tensor zeros_like(const Tensor& t, const TensorOptions& options) { return zeros(t.sizes(), like(t, options)); }
Tensor ones_like(const Tensor& t, const TensorOptions& options) { return ones(t.sizes(), like(t, options)); }
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& options) {
  return full(t.sizes(), value, like(t, options));
}
Tensor rand_like(const Tensor& t, const TensorOptions& options) { return rand(t.sizes(), like(t, options)); }
Tensor randn_like(const Tensor& t, const TensorOptions& options) { return randn(t.sizes(), like(t, options)); }
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, const TensorOptions& options) {
  return randint(low, high, t.sizes(), like(t, options));
}

Tensor tensor(const NestedValues& values, const TensorOptions& options) {
  Shape shape;
  Scalar::Kind kind = Scalar::Kind::Bool;
  int64_t n = shape_product(values, shape, 0, kind);
  std::vector<double> flat;
  flat.reserve(static_cast<size_t>(n));
  flatten_values(values, flat);
  DType inferred = kind == Scalar::Kind::Float ? get_default_dtype() : kind == Scalar::Kind::Int ? kInt64 : kBool;
  DType dtype = options.has_dtype() ? options.dtype() : inferred;
  Tensor t = detail::make_empty(shape, dtype, options.device());
  dispatch_all(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(flat[i]);
  });
  return finish(t, options);
}

namespace detail {
Tensor tensor_1d(const void* data, int64_t n, DType source, const TensorOptions& options) {
  Tensor t = make_empty({n}, source, options.device());
  if (n > 0) std::memcpy(t.data_ptr(), data, static_cast<size_t>(n) * element_size(source));
  if (options.has_dtype() && options.dtype() != source) t = cast_nograd(t, options.dtype());
  return finish(t, options);
}
}  // namespace detail

Tensor scalar_tensor(const Scalar& value, const TensorOptions& options) {
  DType dtype = options.has_dtype() ? options.dtype() : value.is_floating_point() ? get_default_dtype() : value.dtype();
  return finish(detail::scalar_to_tensor(value, dtype, options.device()), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  COHORT_CHECK(data != nullptr || checked_numel(sizes, "from_blob") == 0, "from_blob: data is a null pointer");
  COHORT_CHECK(sizes.size() == strides.size(), "from_blob: got ", sizes.size(), " sizes but ", strides.size(), " strides");
  checked_numel(sizes, "from_blob");
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) extent += sizes[i] == 0 ? 0 : (sizes[i] - 1) * strides[i];
  check_device(options.device(), "from_blob");
  auto storage = std::make_shared<StorageImpl>(data, static_cast<size_t>(extent) * element_size(options.dtype()),
                                               options.device(), nullptr);
  Tensor t(std::make_shared<TensorImpl>(std::move(storage), options.dtype(), sizes.vec(), strides.vec(), 0));
  return finish(t, options);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  return from_blob(data, sizes, contiguous_strides(sizes), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, const TensorOptions& options) {
  Tensor t = from_blob(data, sizes, options);
  auto storage = std::make_shared<StorageImpl>(data, t.unsafe_impl()->storage()->nbytes(), options.device(), std::move(deleter));
  t.unsafe_impl()->set_storage(std::move(storage), sizes.vec(), contiguous_strides(sizes), 0);
  return t;
}

}  // namespace cohort
