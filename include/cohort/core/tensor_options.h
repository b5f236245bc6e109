// TensorOptions: dtype, device, requires_grad and memory format for the factories (zeros({2, 3}, kFloat64)).
#pragma once

#include <optional>

#include "cohort/core/device.h"
#include "cohort/core/dtype.h"
#include "cohort/core/memory_format.h"

namespace cohort {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType t) : dtype_(t) {}  // NOLINT: implicit like libtorch
  TensorOptions(Device d) : device_(d) {}  // NOLINT
  TensorOptions(DeviceType t) : device_(Device(t)) {}  // NOLINT
  TensorOptions(MemoryFormat f) : memory_format_(f) {}  // NOLINT

  TensorOptions dtype(DType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
  TensorOptions memory_format(std::optional<MemoryFormat> f) const { auto o = *this; o.memory_format_ = f; return o; }

  // What is set, else the defaults (the default dtype, cpu:0, false).
  DType dtype() const { return dtype_.value_or(get_default_dtype()); }
  Device device() const { return device_.value_or(Device(kCPU, 0)); }
  bool requires_grad() const { return requires_grad_; }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }
  bool has_memory_format() const { return memory_format_.has_value(); }
  // Fields set in `other` override this one's.
  TensorOptions merged_with(const TensorOptions& other) const;

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
  std::optional<MemoryFormat> memory_format_;
};

inline TensorOptions dtype(DType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions memory_format(MemoryFormat f) { return TensorOptions().memory_format(f); }

inline TensorOptions TensorOptions::merged_with(const TensorOptions& other) const {
  TensorOptions o = *this;
  if (other.dtype_) o.dtype_ = other.dtype_;
  if (other.device_) o.device_ = other.device_;
  if (other.requires_grad_) o.requires_grad_ = true;
  if (other.memory_format_) o.memory_format_ = other.memory_format_;
  return o;
}

}  // namespace cohort
