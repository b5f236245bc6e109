// Recording an op in the backward graph: how every differentiable op attaches its backward.
//
//   Tensor mul(const Tensor& a, const Tensor& b) {
//     Tensor out = kernel::mul(a, b);
//     return autograd::record("MulBackward0", out, {a, b},
//         [sa = SavedTensor(a), sb = SavedTensor(b), a_sizes = a.sizes().vec(), ...](const Tensor& g) {
//           return std::vector<Tensor>{sum_to(g * sb.unpack(), ...), ...}; });
//   }
//
// The backward function gets the gradient w.r.t. `out` and returns one gradient per input (undefined
// for an input that needs none). It runs with grad mode off unless backward(create_graph=true).
#pragma once

#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/node.h"
#include "cohort/core/tensor.h"

namespace cohort::autograd {

using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;

// Whether an op on these inputs must record a node (grad mode on, some input requires grad).
bool needs_grad(std::initializer_list<Tensor> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

// Attaches a new node named `name` to `out` (which must be freshly made by the op).
Tensor attach(const char* name, Tensor out, const std::vector<Tensor>& inputs, BackwardFn fn);

template <class F>
Tensor record(const char* name, Tensor out, std::initializer_list<Tensor> inputs, F&& fn) {
  if (!needs_grad(inputs)) return out;
  return attach(name, std::move(out), std::vector<Tensor>(inputs), BackwardFn(std::forward<F>(fn)));
}
template <class F>
Tensor record(const char* name, Tensor out, const std::vector<Tensor>& inputs, F&& fn) {
  if (!needs_grad(inputs)) return out;
  return attach(name, std::move(out), inputs, BackwardFn(std::forward<F>(fn)));
}

// A tensor kept for backward. unpack() throws AutogradError if the tensor was modified in place
// after it was saved (Note [Version counters] in src/autograd/saved.cpp).
// is_output: `t` is the output of the op doing the saving. It is then kept detached (its grad_fn
// is the saving node: a strong link would be a cycle); under create_graph, unpack() re-links it to
// the node running.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t, bool is_output = false);
  Tensor unpack() const;
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  bool is_output_ = false;
  uint32_t version_ = 0;
};

}  // namespace cohort::autograd
