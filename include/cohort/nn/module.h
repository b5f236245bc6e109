// Module: the base of every layer and model. It owns named parameters, buffers and child modules,
// found by name (dotted paths: "features.0.weight"), never by position.
//
//   struct Net : nn::Module {
//     Net() : fc(nn::LinearOptions(4, 2)) { register_module("fc", fc); }
//     Tensor forward(const Tensor& x) { return fc->forward(x); }
//     nn::Linear fc;
//   };
//   auto net = std::make_shared<Net>();
//
// forward() is not virtual: each module declares the signature it needs, as in libtorch.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/nn/init.h"
#include "cohort/nn/ordered_dict.h"

namespace cohort::nn {

using StateDict = OrderedDict<std::string, Tensor>;
template <class Impl>
class ModuleHolder;

// T's implementation type: T itself, or what the holder T contains (nn::Linear -> nn::LinearImpl).
template <class T, class = void>
struct ModuleImplOf {
  using type = T;
};
template <class T>
struct ModuleImplOf<T, std::void_t<typename T::ContainedType>> {
  using type = typename T::ContainedType;
};
template <class T>
using module_impl_t = typename ModuleImplOf<T>::type;

class Module : public std::enable_shared_from_this<Module> {
 public:
  // `name` is what printing shows; by default the class name without namespaces and "Impl".
  explicit Module(std::string name = "");
  virtual ~Module() = default;
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;

  const std::string& name() const;

  // Registration. A parameter is a leaf that requires grad (unless requires_grad is false); an
  // undefined tensor registers an absent one (a Linear without bias). Buffers are state saved with
  // the module but not trained (batch-norm running statistics).
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }
  // Returns the module itself, as libtorch does: assigning it to a holder member (nn::Linear, or a
  // TORCH_MODULE class) converts, and `auto m = register_module(...)` is used as m->forward(x).
  template <class Impl>
  std::shared_ptr<Impl> register_module(std::string name, ModuleHolder<Impl> holder) {
    add_child(std::move(name), holder.ptr());
    return holder.ptr();
  }
  // Replaces a registered child (e.g. swapping a head) and returns it.
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_child(name, module);
    return module;
  }

  // Recursive unless recurse = false; in registration order, children after their parent's own.
  std::vector<Tensor> parameters(bool recurse = true) const;
  StateDict named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  StateDict named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  // This module (unless include_self is false) and every descendant, depth first.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& prefix = "", bool include_self = true);
  // This module as a T (an implementation, or a holder such as nn::Linear), nullptr when it is not
  // one: `if (auto* conv = m->as<nn::Conv2d>()) ...`, as libtorch writes it.
  template <class T>
  auto* as() noexcept {
    return dynamic_cast<module_impl_t<T>*>(this);
  }
  template <class T>
  const auto* as() const noexcept {
    return dynamic_cast<const module_impl_t<T>*>(this);
  }

  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return is_training_; }

  // Sets every parameter's .grad() to undefined (set_to_none) or to zeros.
  void zero_grad(bool set_to_none = true);

  // Moves or converts parameters and buffers in place (the Tensor handles held by the module and
  // by optimizers stay valid; floating dtype changes touch floating tensors only).
  virtual void to(Device device, bool non_blocking = false);
  virtual void to(DType dtype, bool non_blocking = false);
  virtual void to(Device device, DType dtype, bool non_blocking = false);

  // Parameters and buffers by dotted name, as detached tensors sharing storage, in PyTorch's order:
  // module by module, each module's parameters then its buffers (bn1.weight, bn1.bias, bn1.running_mean).
  StateDict state_dict() const;
  // Copies values in by name. strict: every key must match both ways; all problems (missing,
  // unexpected, mis-shaped) are listed in one error, and nothing is copied when there is one.
  void load_state_dict(const StateDict& state, bool strict = true);

  // Calls fn on this module and every descendant.
  void apply(const std::function<void(Module&)>& fn);
  void apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& prefix = "");

  // One line describing this module alone, as in PyTorch's repr: "Linear(in_features=4, ...)".
  virtual void pretty_print(std::ostream& os) const;

  // A deep copy (new parameters with the same values), optionally on another device.
  // Built-in layers support it; a user module does by deriving from nn::Cloneable<Net>.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  // Forward hooks, run by ModuleHolder::operator() and by Sequential around each child.
  // A pre-hook sees the inputs; a post-hook the inputs and the output, and may replace the output.
  using PreHook = std::function<void(Module&, const std::vector<Tensor>&)>;
  using PostHook = std::function<Tensor(Module&, const std::vector<Tensor>&, const Tensor&)>;
  unsigned register_forward_pre_hook(PreHook hook);
  unsigned register_forward_hook(PostHook hook);
  // Backward hooks (PyTorch's register_full_backward_pre_hook and register_full_backward_hook), set
  // up by the same calls. When the gradient w.r.t. the module's output arrives, a pre-hook sees it
  // (grad_output) and may replace it (return {} to keep it); once the gradients w.r.t. the module's
  // tensor inputs are computed, a hook sees them (grad_input, undefined for an input that does not
  // require grad) with grad_output, and may replace grad_input. A module none of whose inputs require
  // grad calls its hooks with grad_input all undefined, as soon as grad_output is known. A hook that
  // returns the wrong number of gradients, or one of another shape, is an AutogradError.
  using BackwardPreHook = std::function<std::vector<Tensor>(Module&, const std::vector<Tensor>& grad_output)>;
  using BackwardHook = std::function<std::vector<Tensor>(Module&, const std::vector<Tensor>& grad_input,
                                                         const std::vector<Tensor>& grad_output)>;
  unsigned register_full_backward_pre_hook(BackwardPreHook hook);
  unsigned register_full_backward_hook(BackwardHook hook);
  // Removes a forward or backward hook by the handle its registration returned.
  void remove_hook(unsigned handle);
  // The hooks registered, with their handles, in the order they run.
  const std::vector<std::pair<unsigned, PreHook>>& forward_pre_hooks() const { return pre_hooks_; }
  const std::vector<std::pair<unsigned, PostHook>>& forward_hooks() const { return post_hooks_; }
  // Runs the hooks around f(inputs), for modules whose forward takes and returns tensors: f must
  // compute with the tensors it is given (the inputs, or aliases that carry the backward hooks).
  Tensor call_with_hooks(const std::vector<Tensor>& inputs, const std::function<Tensor(const std::vector<Tensor>&)>& f);

 protected:
  // Empties the registries (Cloneable uses it before reset()).
  void clear_registries();
  // Gives each parameter and buffer the dtype of the tensor of the same name in `reference` (new,
  // uninitialised values); names missing there are left alone. Cloneable uses it before loading
  // the values, so that a clone has the source's dtypes, not the ones reset() creates.
  void adopt_dtypes(const StateDict& reference);
  OrderedDict<std::string, Tensor>& own_parameters() { return parameters_; }
  OrderedDict<std::string, Tensor>& own_buffers() { return buffers_; }

 private:
  void add_child(std::string name, std::shared_ptr<Module> module);
  void replace_child(const std::string& name, std::shared_ptr<Module> module);
  void collect(const std::string& prefix, bool params, bool recurse, StateDict& out) const;
  void collect_state(const std::string& prefix, StateDict& out) const;
  void convert(const std::function<Tensor(const Tensor&)>& f);

  mutable std::string name_;
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  bool is_training_ = true;
  std::vector<std::pair<unsigned, PreHook>> pre_hooks_;
  std::vector<std::pair<unsigned, PostHook>> post_hooks_;
  std::vector<std::pair<unsigned, BackwardPreHook>> backward_pre_hooks_;
  std::vector<std::pair<unsigned, BackwardHook>> backward_hooks_;
  unsigned next_hook_ = 0;
};

// Prints the module tree like PyTorch: Net(\n  (fc): Linear(...)\n).
std::ostream& operator<<(std::ostream& os, const Module& module);

// Deep copies for a module whose parameters and children are created in reset() (the libtorch
// rule): clone() copy-constructs, empties the registries, calls reset(), then copies every
// parameter and buffer value by name.
template <class Derived>
class Cloneable : public Module {
 public:
  using Module::Module;
  virtual void reset() = 0;

  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    copy->clear_registries();
    {
      init::SkipRandomInitGuard skip;  // every value is overwritten by copy_state_from
      copy->reset();
    }
    copy->copy_state_from(*this);
    if (device) copy->to(*device);
    return copy;
  }

 private:
  void copy_state_from(const Module& source) {
    StateDict values = source.state_dict();
    adopt_dtypes(values);
    load_state_dict(values, /*strict=*/true);
    // requires_grad flags follow the source too.
    auto mine = named_parameters();
    for (const auto& item : source.named_parameters())
      if (Tensor* p = mine.find(item.key()); p && p->defined()) p->requires_grad_(item.value().requires_grad());
    train(source.is_training());
  }
};

}  // namespace cohort::nn
