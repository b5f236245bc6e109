// TensorImpl geometry bookkeeping.
#include "cohort/core/tensor_impl.h"

#include <algorithm>

#include "autograd/meta.h"
#include "cohort/core/error.h"

namespace cohort {

Shape contiguous_strides(IntArrayRef sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

int64_t checked_numel(IntArrayRef sizes, const char* op) {
  // The contiguous strides multiply the sizes with 0 counted as 1, so they must fit as well: an
  // empty [0, 2^40, 2^40] has no elements but a stride of 2^80.
  int64_t n = 1, extent = 1;
  for (int64_t s : sizes) {
    COHORT_CHECK(s >= 0, op, ": sizes must be non-negative, got ", sizes);
    if (__builtin_mul_overflow(extent, std::max<int64_t>(s, 1), &extent))
      throw OutOfMemoryError(detail::str(op, ": the number of elements (or the strides) of a tensor of sizes ", sizes,
                                         " overflows int64"));
    n *= s;  // n <= extent
  }
  return n;
}

TensorImpl::TensorImpl(Storage storage, DType dtype, Shape sizes, Shape strides, int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), sizes_(std::move(sizes)), strides_(std::move(strides)),
      offset_(offset) {
  COHORT_ASSERT(sizes_.size() == strides_.size());
  refresh();
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::set_storage(Storage storage, Shape sizes, Shape strides, int64_t offset) {
  storage_ = std::move(storage);
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  offset_ = offset;
  refresh();
}

void TensorImpl::set_storage(Storage storage, DType dtype, Shape sizes, Shape strides, int64_t offset) {
  dtype_ = dtype;
  set_storage(std::move(storage), std::move(sizes), std::move(strides), offset);
}

void TensorImpl::refresh() {
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  contiguous_ = true;
  if (numel_ == 0) return;  // as in PyTorch: no element is out of place (empty({2, 0}) is contiguous)
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) {
      contiguous_ = false;
      break;
    }
    expected *= sizes_[i];
  }
}

autograd::AutogradMeta& TensorImpl::ensure_autograd_meta() {
  if (!autograd_) autograd_ = std::make_unique<autograd::AutogradMeta>();
  return *autograd_;
}

}  // namespace cohort
