// Saved tensors.
//
// Note [Version counters]
// Every Storage counts in-place writes (copy_, add_, fill_, an optimizer step, ...). Views share
// their base's storage and so its counter. An op that needs a tensor in backward keeps a
// SavedTensor, which remembers the counter at save time; unpacking a tensor whose storage has been
// written since is an error, because backward would silently use the new values.
#include "cohort/autograd/record.h"

#include "autograd/engine_state.h"
#include "autograd/meta.h"

namespace cohort::autograd {

SavedTensor::SavedTensor(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  version_ = t._version();
  if (!is_output) {
    // An input keeps its history, which its consumers keep alive anyway; create_graph needs it.
    data_ = t.requires_grad() ? t : t.detach();
    return;
  }
  data_ = t.detach();
  is_output_ = true;
}

Tensor SavedTensor::unpack() const {
  if (data_.defined() && data_._version() != version_)
    throw AutogradError(detail::str(
        "one of the tensors needed for gradient computation has been modified by an in-place operation: ",
        data_.dtype(), " ", data_.sizes(), " is at version ", data_._version(), "; expected version ", version_,
        "; hint: replace the in-place op (x.add_(y), x += y, relu_) by its out-of-place form, or clone() "
        "the tensor before changing it"));
  if (GradMode::is_enabled()) {
    if (Node* running = current_node(); running && is_output_) {
      std::shared_ptr<Node> fn = running->shared_from_this();
      Tensor alias = data_.detach();
      auto& meta = alias.unsafe_impl()->ensure_autograd_meta();
      meta.requires_grad = true;
      meta.grad_fn = std::move(fn);
      return alias;
    }
  }
  return data_;
}

}  // namespace cohort::autograd
