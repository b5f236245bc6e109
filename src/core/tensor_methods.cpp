// Tensor's methods: each forwards to the free function of the same name (documented in
// <cohort/ops/...>), so an op is implemented in one place.
#include "cohort/core/tensor.h"

#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/reorder.h"
#include "cohort/ops/scatter.h"
#include "cohort/ops/shape.h"
#include "cohort/ops/sorting.h"
#include "cohort/ops/unique.h"

namespace cohort {

const TensorImpl& Tensor::checked() const {
  COHORT_CHECK(impl_ != nullptr, "Tensor: this tensor is undefined (default-constructed); hint: assign it the result of an op first");
  return *impl_;
}

int64_t Tensor::size(int64_t d) const {
  const TensorImpl& t = checked();
  return t.sizes()[wrap_dim(d, std::max<int64_t>(t.dim(), 1), "size")];
}

int64_t Tensor::stride(int64_t d) const {
  const TensorImpl& t = checked();
  return t.strides()[wrap_dim(d, std::max<int64_t>(t.dim(), 1), "stride")];
}

Scalar Tensor::item() const {
  COHORT_CHECK(numel() == 1, "item: a Tensor with ", numel(), " elements cannot be converted to a Scalar (shape ",
               sizes(), "); hint: reduce it first, e.g. .sum() or .mean()");
  return dispatch_all(dtype(), [&](auto tag) -> Scalar {
    using T = decltype(tag);
    const T v = *static_cast<const T*>(checked().data());
    if constexpr (is_reduced_float_v<T>) return Scalar(static_cast<float>(v));
    else return Scalar(v);
  });
}

Tensor Tensor::view(IntArrayRef s) const { return cohort::view(*this, s); }
Tensor Tensor::reshape(IntArrayRef s) const { return cohort::reshape(*this, s); }
Tensor Tensor::permute(IntArrayRef d) const { return cohort::permute(*this, d); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return cohort::transpose(*this, a, b); }
Tensor Tensor::t() const { return cohort::t(*this); }
Tensor Tensor::expand(IntArrayRef s, bool) const { return cohort::expand(*this, s); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t len) const { return cohort::narrow(*this, d, start, len); }
Tensor Tensor::slice(int64_t d, std::optional<int64_t> s, std::optional<int64_t> e, int64_t step) const {
  return cohort::slice(*this, d, s, e, step);
}
Tensor Tensor::select(int64_t d, int64_t i) const { return cohort::select(*this, d, i); }
Tensor Tensor::unsqueeze(int64_t d) const { return cohort::unsqueeze(*this, d); }
Tensor Tensor::squeeze() const { return cohort::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return cohort::squeeze(*this, d); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return cohort::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t d, IntArrayRef s) const { return cohort::unflatten(*this, d, s); }
std::vector<Tensor> Tensor::chunk(int64_t n, int64_t d) const { return cohort::chunk(*this, n, d); }
std::vector<Tensor> Tensor::split(int64_t s, int64_t d) const { return cohort::split(*this, s, d); }
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef s, int64_t d) const { return cohort::split_with_sizes(*this, s, d); }
std::vector<Tensor> Tensor::unbind(int64_t d) const { return cohort::unbind(*this, d); }
Tensor Tensor::as_strided(IntArrayRef s, IntArrayRef st, std::optional<int64_t> o) const { return cohort::as_strided(*this, s, st, o); }
Tensor Tensor::contiguous() const { return cohort::contiguous(*this); }
Tensor Tensor::contiguous(MemoryFormat f) const { return cohort::contiguous(*this, f); }
bool Tensor::is_contiguous(MemoryFormat f) const { return is_contiguous_in(sizes(), strides(), f); }
MemoryFormat Tensor::suggest_memory_format(bool exact) const {
  return cohort::suggest_memory_format(sizes(), strides(), exact);
}
Tensor Tensor::unfold(int64_t d, int64_t size, int64_t step) const { return cohort::unfold(*this, d, size, step); }
Tensor Tensor::clone(std::optional<MemoryFormat> f) const { return cohort::clone(*this, f); }
Tensor Tensor::repeat(IntArrayRef r) const { return cohort::repeat(*this, r); }
Tensor Tensor::repeat_interleave(int64_t r, std::optional<int64_t> d, std::optional<int64_t> n) const {
  return cohort::repeat_interleave(*this, r, d, n);
}
Tensor Tensor::repeat_interleave(const Tensor& r, std::optional<int64_t> d, std::optional<int64_t> n) const {
  return cohort::repeat_interleave(*this, r, d, n);
}
Tensor Tensor::flip(IntArrayRef dims) const { return cohort::flip(*this, dims); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return cohort::roll(*this, shifts, dims); }

Tensor Tensor::to(DType t, bool, bool copy, std::optional<MemoryFormat> f) const {
  return cohort::to(*this, TensorOptions(t).memory_format(f), copy);
}
Tensor Tensor::to(Device d, bool, bool copy, std::optional<MemoryFormat> f) const {
  return cohort::to(*this, TensorOptions(d).memory_format(f), copy);
}
Tensor Tensor::to(Device d, DType t, bool, bool copy, std::optional<MemoryFormat> f) const {
  return cohort::to(*this, TensorOptions(t).device(d).memory_format(f), copy);
}
Tensor Tensor::to(const TensorOptions& o, bool, bool copy, std::optional<MemoryFormat> f) const {
  return cohort::to(*this, f ? o.memory_format(f) : o, copy);
}
Tensor Tensor::new_empty(IntArrayRef s, const TensorOptions& o) const { return empty(s, options().merged_with(o)); }
Tensor Tensor::new_zeros(IntArrayRef s, const TensorOptions& o) const { return zeros(s, options().merged_with(o)); }
Tensor Tensor::new_ones(IntArrayRef s, const TensorOptions& o) const { return ones(s, options().merged_with(o)); }
Tensor Tensor::new_full(IntArrayRef s, const Scalar& v, const TensorOptions& o) const { return full(s, v, options().merged_with(o)); }

Tensor Tensor::add(const Tensor& o, const Scalar& a) const { return cohort::add(*this, o, a); }
Tensor Tensor::add(const Scalar& o, const Scalar& a) const { return cohort::add(*this, o, a); }
Tensor Tensor::sub(const Tensor& o, const Scalar& a) const { return cohort::sub(*this, o, a); }
Tensor Tensor::sub(const Scalar& o, const Scalar& a) const { return cohort::sub(*this, o, a); }
Tensor Tensor::mul(const Tensor& o) const { return cohort::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return cohort::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return cohort::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return cohort::div(*this, o); }
Tensor Tensor::pow(const Tensor& e) const { return cohort::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return cohort::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return cohort::maximum(*this, o); }
Tensor Tensor::remainder(const Tensor& o) const { return cohort::remainder(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return cohort::remainder(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return cohort::minimum(*this, o); }
Tensor Tensor::neg() const { return cohort::neg(*this); }
Tensor Tensor::exp() const { return cohort::exp(*this); }
Tensor Tensor::log() const { return cohort::log(*this); }
Tensor Tensor::sqrt() const { return cohort::sqrt(*this); }
Tensor Tensor::rsqrt() const { return cohort::rsqrt(*this); }
Tensor Tensor::abs() const { return cohort::abs(*this); }
Tensor Tensor::sign() const { return cohort::sign(*this); }
Tensor Tensor::relu() const { return cohort::relu(*this); }
Tensor Tensor::sigmoid() const { return cohort::sigmoid(*this); }
Tensor Tensor::tanh() const { return cohort::tanh(*this); }
Tensor Tensor::square() const { return cohort::square(*this); }
Tensor Tensor::reciprocal() const { return cohort::reciprocal(*this); }
Tensor Tensor::sin() const { return cohort::sin(*this); }
Tensor Tensor::cos() const { return cohort::cos(*this); }
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const { return cohort::clamp(*this, lo, hi); }
Tensor Tensor::clamp_min(const Scalar& lo) const { return cohort::clamp_min(*this, lo); }
Tensor Tensor::clamp_max(const Scalar& hi) const { return cohort::clamp_max(*this, hi); }
Tensor Tensor::clamp(const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) const {
  return cohort::clamp(*this, lo, hi);
}
Tensor Tensor::clamp_min(const Tensor& lo) const { return cohort::clamp_min(*this, lo); }
Tensor Tensor::clamp_max(const Tensor& hi) const { return cohort::clamp_max(*this, hi); }

Tensor Tensor::eq(const Tensor& o) const { return cohort::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return cohort::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return cohort::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return cohort::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return cohort::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return cohort::ge(*this, o); }
Tensor Tensor::eq(const Scalar& o) const { return cohort::eq(*this, o); }
Tensor Tensor::ne(const Scalar& o) const { return cohort::ne(*this, o); }
Tensor Tensor::lt(const Scalar& o) const { return cohort::lt(*this, o); }
Tensor Tensor::le(const Scalar& o) const { return cohort::le(*this, o); }
Tensor Tensor::gt(const Scalar& o) const { return cohort::gt(*this, o); }
Tensor Tensor::ge(const Scalar& o) const { return cohort::ge(*this, o); }
#define COHORT_COMPARE_INPLACE(op)                                                       \
  const Tensor& Tensor::op##_(const Tensor& o) const { return copy_(cohort::op(*this, o)); } \
  const Tensor& Tensor::op##_(const Scalar& o) const { return copy_(cohort::op(*this, o)); }
COHORT_COMPARE_INPLACE(eq)
COHORT_COMPARE_INPLACE(ne)
COHORT_COMPARE_INPLACE(lt)
COHORT_COMPARE_INPLACE(le)
COHORT_COMPARE_INPLACE(gt)
COHORT_COMPARE_INPLACE(ge)
#undef COHORT_COMPARE_INPLACE
Tensor Tensor::logical_not() const { return cohort::logical_not(*this); }
Tensor Tensor::isnan() const { return cohort::isnan(*this); }

Tensor Tensor::sum(std::optional<DType> t) const { return cohort::sum(*this, t); }
Tensor Tensor::sum(IntArrayRef d, bool k, std::optional<DType> t) const { return cohort::sum(*this, d, k, t); }
Tensor Tensor::mean(std::optional<DType> t) const { return cohort::mean(*this, t); }
Tensor Tensor::mean(IntArrayRef d, bool k, std::optional<DType> t) const { return cohort::mean(*this, d, k, t); }
Tensor Tensor::prod() const { return cohort::prod(*this); }
Tensor Tensor::all() const { return cohort::all(*this); }
Tensor Tensor::all(int64_t d, bool k) const { return cohort::all(*this, d, k); }
Tensor Tensor::any() const { return cohort::any(*this); }
Tensor Tensor::any(int64_t d, bool k) const { return cohort::any(*this, d, k); }
Tensor Tensor::max() const { return cohort::max(*this); }
Tensor Tensor::min() const { return cohort::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool k) const { return cohort::max(*this, d, k); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool k) const { return cohort::min(*this, d, k); }
Tensor Tensor::amax(IntArrayRef d, bool k) const { return cohort::amax(*this, d, k); }
Tensor Tensor::amin(IntArrayRef d, bool k) const { return cohort::amin(*this, d, k); }
Tensor Tensor::argmax(std::optional<int64_t> d, bool k) const { return cohort::argmax(*this, d, k); }
Tensor Tensor::argmin(std::optional<int64_t> d, bool k) const { return cohort::argmin(*this, d, k); }
Tensor Tensor::norm(const Scalar& p) const { return cohort::norm(*this, p); }
Tensor Tensor::norm(const Scalar& p, IntArrayRef d, bool k) const { return cohort::norm(*this, p, d, k); }
Tensor Tensor::var(IntArrayRef d, bool u, bool k) const { return cohort::var(*this, d, u, k); }
Tensor Tensor::std(IntArrayRef d, bool u, bool k) const { return cohort::std(*this, d, u, k); }
Tensor Tensor::softmax(int64_t d, std::optional<DType> t) const { return cohort::softmax(*this, d, t); }
Tensor Tensor::log_softmax(int64_t d, std::optional<DType> t) const { return cohort::log_softmax(*this, d, t); }
bool Tensor::allclose(const Tensor& o, double r, double a, bool n) const { return cohort::allclose(*this, o, r, a, n); }
bool Tensor::equal(const Tensor& o) const { return cohort::equal(*this, o); }

Tensor Tensor::matmul(const Tensor& o) const { return cohort::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return cohort::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return cohort::bmm(*this, o); }
Tensor Tensor::tril(int64_t d) const { return cohort::tril(*this, d); }
Tensor Tensor::triu(int64_t d) const { return cohort::triu(*this, d); }
Tensor Tensor::cumsum(int64_t d, std::optional<DType> t) const { return cohort::cumsum(*this, d, t); }
std::tuple<Tensor, Tensor> Tensor::sort(int64_t d, bool desc) const { return cohort::sort(*this, d, desc); }
Tensor Tensor::argsort(int64_t d, bool desc) const { return cohort::argsort(*this, d, desc); }
Tensor Tensor::multinomial(int64_t n, bool replacement) const { return cohort::multinomial(*this, n, replacement); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t d, bool largest, bool sorted) const {
  return cohort::topk(*this, k, d, largest, sorted);
}

const Tensor& Tensor::uniform_(double from, double to) const {
  COHORT_CHECK_AS(TypeError, is_floating_point(), "uniform_: expected a floating-point tensor, got ", dtype());
  COHORT_CHECK(from <= to, "uniform_: expected from <= to, got from=", from, " and to=", to);
  return copy_(rand(sizes(), options()) * (to - from) + from);
}

const Tensor& Tensor::normal_(double mean, double std) const {
  COHORT_CHECK_AS(TypeError, is_floating_point(), "normal_: expected a floating-point tensor, got ", dtype());
  COHORT_CHECK(std >= 0, "normal_: expected std >= 0, got std=", std);
  return copy_(randn(sizes(), options()) * std + mean);
}

}  // namespace cohort
