// Custom autograd functions, as libtorch's torch::autograd::Function<T>:
//
//   struct MulConstant : autograd::Function<MulConstant> {
//     static Tensor forward(autograd::AutogradContext* ctx, Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
//       return {g[0] * ctx->saved_data["c"].toDouble(), Tensor()};  // one per forward argument
//     }
//   };
//   Tensor y = MulConstant::apply(x, 5.0);
//
// apply(args...) runs T::forward(ctx, args...) with grad mode off; if grad mode is on and a tensor
// argument requires grad, the outputs that can have a gradient get a node (named by T's type, as
// libtorch's) whose backward calls T::backward(ctx, grad_outputs).
// - Arguments: a Tensor is an input (also an undefined one); an std::optional<Tensor> is one when it
//   holds a defined tensor; each element of an ArrayRef<Tensor> (TensorList) is one; anything else
//   (numbers, strings, a std::vector<Tensor>, as in libtorch) is passed through and is not.
// - forward returns a Tensor or a variable_list. Outputs that are not floating point, or marked with
//   ctx->mark_non_differentiable, do not require grad. Several differentiable outputs are supported:
//   each gets a relay node that hands its gradient to the function's node (the engine's nodes have
//   one output each), which runs backward once all of them have arrived.
// - backward gets one gradient per output (zeros for an output that got none, unless
//   ctx->set_materialize_grads(false): then an undefined Tensor) and returns one per forward
//   argument: an undefined Tensor for an argument that is not an input, or for an input that needs
//   none; trailing undefined extras are ignored. A gradient whose shape the input broadcasts to is
//   summed down to it (libtorch's rule); another dtype is cast to the input's.
// - Under backward(create_graph=true) T::backward runs with grad mode on, so a backward made of
//   differentiable ops is differentiable again (saved outputs are re-linked to their node).
// Errors (cohort::AutogradError, naming T's type): backward returning the wrong number of gradients,
// a defined gradient for an argument that is not a tensor input, a gradient of a shape the input
// does not broadcast to (naming the argument's position); mark_dirty of a leaf that requires grad,
// of a view, or of a tensor forward does not return; reading saved variables after the graph was freed, or after
// they were modified in place.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cohort/autograd/record.h"
#include "cohort/core/ivalue.h"
#include "cohort/core/tensor.h"

namespace cohort::autograd {

using Variable = Tensor;  // libtorch's name for a tensor in autograd code
using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;

namespace custom {
class CustomNode;
class CustomCall;
}  // namespace custom

// What forward hands to backward. Lives as long as the function's node.
class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Anything else backward needs (libtorch: ska::flat_hash_map<std::string, at::IValue>).
  std::unordered_map<std::string, IValue> saved_data;

  // Tensors (inputs or outputs of forward) for backward; kept with their version (Note [Version
  // counters] in src/autograd/saved.cpp). Call once, in forward.
  void save_for_backward(variable_list to_save);
  // In backward: the saved tensors, in the order given.
  variable_list get_saved_variables() const;
  // Inputs forward modified in place (and returns); they take the function's node as history.
  void mark_dirty(const variable_list& inputs);
  // Outputs that get no gradient (indices, masks).
  void mark_non_differentiable(const variable_list& outputs);
  // false: backward gets undefined tensors, not zeros, for outputs that received no gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether tensor input i (counting tensor inputs only, as libtorch's edges) needs a gradient.
  bool needs_input_grad(size_t input_index) const;

 private:
  friend class custom::CustomNode;
  friend class custom::CustomCall;

  variable_list to_save_;
  std::vector<SavedTensor> saved_;
  std::vector<int> saved_output_;  // per saved tensor: the output it is (relinked by index), or -1
  bool saved_freed_ = false;
  std::unordered_set<const void*> dirty_, non_differentiable_;
  bool materialize_grads_ = true;
  std::vector<bool> needs_input_grad_;
  std::weak_ptr<custom::CustomNode> node_;
};

namespace custom {

std::string demangle(const char* mangled);

using CustomBackwardFn = variable_list (*)(AutogradContext*, variable_list);

// One call of Function<T>::apply: collects the arguments, then wraps forward's outputs.
class CustomCall {
 public:
  CustomCall(std::string name, CustomBackwardFn backward);
  CustomCall(const CustomCall&) = delete;
  CustomCall& operator=(const CustomCall&) = delete;
  ~CustomCall();

  void argument(const Tensor& t) { add(&t); }
  void argument(const std::optional<Tensor>& t) { add(t && t->defined() ? &*t : nullptr); }
  void argument(ArrayRef<Tensor> list) {
    for (const Tensor& t : list) add(&t);
  }
  template <class A>
  void argument(const A&) {
    add(nullptr);
  }

  // After the arguments, before forward.
  AutogradContext* begin();
  // After forward (which ran with grad mode off): the outputs, with their history set.
  variable_list finish(variable_list outputs);

 private:
  void add(const Tensor* t);  // null: an argument that is not a tensor input

  std::string name_;
  CustomBackwardFn backward_;
  std::vector<bool> is_input_;
  std::vector<Tensor> inputs_;
  std::shared_ptr<CustomNode> node_;
  std::unique_ptr<AutogradContext> unattached_;  // the context when no node is made
};

}  // namespace custom

template <class X, class... Args>
using forward_t = decltype(X::forward(nullptr, std::declval<Args>()...));

template <class T>
struct Function {
  template <class X = T, class... Args>
  static auto apply(Args&&... args) -> std::enable_if_t<std::is_same_v<X, T>, forward_t<X, Args...>> {
    using Result = forward_t<X, Args...>;
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, variable_list>,
                  "Function<T>::apply: T::forward must return a Tensor or a variable_list");
    custom::CustomCall call(custom::demangle(typeid(T).name()),
                            [](AutogradContext* ctx, variable_list grads) -> variable_list {
                              return T::backward(ctx, std::move(grads));
                            });
    (call.argument(args), ...);
    AutogradContext* ctx = call.begin();
    Result outputs;
    {
      AutoGradMode no_grad(false);
      outputs = T::forward(ctx, std::forward<Args>(args)...);
    }
    if constexpr (std::is_same_v<Result, Tensor>) {
      return call.finish({std::move(outputs)})[0];
    } else {
      return call.finish(std::move(outputs));
    }
  }
};

}  // namespace cohort::autograd
