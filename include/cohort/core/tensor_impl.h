// TensorImpl: a strided view of a Storage (sizes, strides and offset in elements, dtype) plus the
// autograd state, which is allocated only for tensors that take part in autograd.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cohort/core/array_ref.h"
#include "cohort/core/dtype.h"
#include "cohort/core/storage.h"

namespace cohort {

namespace autograd {
struct AutogradMeta;
}

class TensorImpl {
 public:
  TensorImpl(Storage storage, DType dtype, Shape sizes, Shape strides, int64_t offset);
  ~TensorImpl();

  const Storage& storage() const { return storage_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t numel() const { return numel_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  bool is_contiguous() const { return contiguous_; }
  void* data() const {
    return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  // A view made by a view op (view, narrow, transpose, ...), sharing its base's storage.
  bool is_view() const { return is_view_; }
  void set_is_view(bool v) { is_view_ = v; }

  // Re-points this tensor at new storage and geometry (resizing an `out=` argument, moving a
  // module's parameter to another device or dtype while every handle to it stays valid).
  void set_storage(Storage storage, Shape sizes, Shape strides, int64_t offset);
  void set_storage(Storage storage, DType dtype, Shape sizes, Shape strides, int64_t offset);

  autograd::AutogradMeta* autograd_meta() const { return autograd_.get(); }
  autograd::AutogradMeta& ensure_autograd_meta();

 private:
  void refresh();

  Storage storage_;
  DType dtype_;
  Shape sizes_;
  Shape strides_;
  int64_t offset_;
  int64_t numel_ = 1;
  bool contiguous_ = true;
  bool is_view_ = false;
  std::unique_ptr<autograd::AutogradMeta> autograd_;
};

// Row-major strides of a contiguous tensor of these sizes.
Shape contiguous_strides(IntArrayRef sizes);
// Product of sizes; throws when it overflows int64 or a size is negative (op names the caller).
int64_t checked_numel(IntArrayRef sizes, const char* op);

}  // namespace cohort
