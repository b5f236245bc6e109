// Helpers shared by the op implementations (not part of the public API).
#pragma once

#include <string>

#include "cohort/autograd/record.h"
#include "cohort/core/expanding_array.h"
#include "cohort/core/tensor.h"

namespace cohort {
class Generator;
}

namespace cohort::detail {

// A new contiguous tensor (uninitialised).
Tensor make_empty(IntArrayRef sizes, DType dtype, Device device);
// Uninitialized, dense in `format` (Contiguous, ChannelsLast for 4-d, ChannelsLast3d for 5-d).
Tensor make_empty(IntArrayRef sizes, DType dtype, Device device, MemoryFormat format);
// A factory's freshly filled contiguous t, laid out in the memory format its options ask for (t
// itself when they ask for none or Contiguous).
Tensor in_requested_format(Tensor t, const TensorOptions& options);
// A view of t's storage with new geometry; records nothing (the view ops do).
Tensor make_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset);
// t converted to dtype without recording autograd (t itself when it already has it).
Tensor cast_nograd(const Tensor& t, DType dtype);
// A 0-d tensor holding s, of dtype.
Tensor scalar_to_tensor(const Scalar& s, DType dtype, Device device);
// Throws DeviceError naming op when a and b live on different devices.
void check_same_device(const char* op, const Tensor& a, const Tensor& b);
void check_defined(const char* op, const Tensor& t, const char* what = "input");
// Checks an in-place write into `self` is allowed: not a leaf that requires grad (under grad mode),
// and, when the result needs a graph, not a view. Bumps self's version after the write.
void check_inplace(const char* op, const Tensor& self, bool result_requires_grad);
// Makes `self` (written in place) carry the graph of `result` (the same values computed out of place).
void rebase_history(const Tensor& self, const Tensor& result);
// Resizes an out= argument to sizes (new storage) when its shape differs.
void resize_out(const char* op, Tensor& out, IntArrayRef sizes, DType dtype);
// Sums grad down to an input's sizes and converts it to the input's dtype (broadcasting backward).
Tensor reduce_grad(const Tensor& grad, IntArrayRef sizes, DType dtype);
// What dropout multiplies by, of `sizes` (feature_dropout's broadcasts over the trailing dims): 0
// with probability p, else 1 / (1 - p); all zeros when p is 1. Drawn from `generator` (the default
// generator when null). dropout.cpp.
Tensor dropout_mask(IntArrayRef sizes, const TensorOptions& options, double p, Generator* generator);

// A per-spatial-dim argument given as one value for every dim or one per dim (libtorch's stride=2
// or stride={2, 1}); throws naming op and the argument otherwise.
template <size_t D>
ExpandingArray<D> expand_param(const char* op, const char* name, IntArrayRef values) {
  COHORT_CHECK(values.size() == 1 || values.size() == D, op, ": expected ", name, " to have 1 or ", D,
               " values, got ", values.size(), " (", name, "=", values, ")");
  return values.size() == 1 ? ExpandingArray<D>(values[0]) : ExpandingArray<D>(values);
}

}  // namespace cohort::detail
