// Saved tensors.
//
// Note [Version counters]
// Every Storage counts in-place writes (copy_, add_, fill_, an optimizer step, ...). Views share
// their base's storage and so its counter. An op that needs a tensor in backward keeps a
// SavedTensor, which remembers the counter at save time; unpacking a tensor whose storage has been
// written since is an error, because backward would silently use the new values.
#include "cohort/autograd/record.h"

namespace cohort::autograd {

SavedTensor::SavedTensor(const Tensor& t) {
  if (!t.defined()) return;
  data_ = t.detach();
  version_ = t._version();
}

Tensor SavedTensor::unpack() const {
  if (data_.defined() && data_._version() != version_)
    throw AutogradError(detail::str(
        "one of the tensors needed for gradient computation has been modified by an in-place operation: ",
        data_.dtype(), " ", data_.sizes(), " is at version ", data_._version(), "; expected version ", version_,
        "; hint: replace the in-place op (x.add_(y), x += y, relu_) by its out-of-place form, or clone() "
        "the tensor before changing it"));
  return data_;
}

}  // namespace cohort::autograd
