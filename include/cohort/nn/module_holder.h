// ModuleHolder: the thin shared handle that built-in layers are used through (nn::Linear over
// nn::LinearImpl), as in libtorch: `nn::Linear fc{nullptr}` is empty, `fc->forward(x)` reaches the
// implementation, `fc(x)` runs forward with the module's hooks. One template, no macros.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include "cohort/nn/module.h"

namespace cohort::nn {

template <class Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;

  // An empty holder, to be assigned later.
  ModuleHolder(std::nullptr_t) {}  // NOLINT
  // Default-constructs the implementation, when it has a default constructor.
  ModuleHolder() : impl_(make_default()) {}
  // Constructs the implementation from these arguments (options, or the options' own arguments).
  template <class First, class... Rest,
            std::enable_if_t<!std::is_same_v<std::decay_t<First>, ModuleHolder> &&
                                 !std::is_same_v<std::decay_t<First>, std::shared_ptr<Impl>> &&
                                 !std::is_same_v<std::decay_t<First>, std::nullptr_t>,
                             int> = 0>
  explicit ModuleHolder(First&& first, Rest&&... rest)
      : impl_(std::make_shared<Impl>(std::forward<First>(first), std::forward<Rest>(rest)...)) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT

  Impl* operator->() { return checked(); }
  const Impl* operator->() const { return checked(); }
  Impl& operator*() { return *checked(); }
  const Impl& operator*() const { return *checked(); }
  Impl* get() { return checked(); }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  // Calls forward; for tensor-in, tensor-out modules, with the forward hooks.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    Impl* impl = checked();
    if constexpr ((std::is_convertible_v<Args, const Tensor&> && ...) &&
                  std::is_same_v<std::decay_t<decltype(impl->forward(std::forward<Args>(args)...))>, Tensor>) {
      std::vector<Tensor> inputs{Tensor(args)...};
      // forward gets the tensors call_with_hooks hands it: aliases that carry backward hooks.
      return impl->call_with_hooks(inputs, [impl](const std::vector<Tensor>& in) {
        return forward_with(impl, in, std::index_sequence_for<Args...>{});
      });
    } else {
      return impl->forward(std::forward<Args>(args)...);
    }
  }
  // The implementation's operator[] (a Sequential's or ModuleList's module, a ModuleDict's by key).
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*checked())[std::forward<Arg>(arg)];
  }

 private:
  template <size_t... I>
  static Tensor forward_with(Impl* impl, const std::vector<Tensor>& in, std::index_sequence<I...>) {
    return impl->forward(in[I]...);
  }
  static std::shared_ptr<Impl> make_default() {
    static_assert(std::is_default_constructible_v<Impl>,
                  "this module has no default constructor: give it its options, or declare an empty holder "
                  "with `= nullptr` (e.g. `nn::Linear fc = nullptr;` or `nn::Linear fc{nullptr};`) and assign "
                  "it later");
    return std::make_shared<Impl>();
  }
  Impl* checked() const {
    COHORT_CHECK(impl_ != nullptr, "ModuleHolder: accessing an empty ", typeid(Impl).name(),
                 " holder; hint: construct it (e.g. in the parent's constructor) before use");
    return impl_.get();
  }
  std::shared_ptr<Impl> impl_;
};

template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& holder) {
  return os << *holder;
}

}  // namespace cohort::nn

// libtorch's way to give a user module its holder, which is spelled only as a macro there:
//   struct NetImpl : nn::Module { ... };
//   TORCH_MODULE(Net);          // class Net : public nn::ModuleHolder<NetImpl>, with its constructors
// Use the holder `Net` as the built-in layers are used: Net net(args); net->forward(x); net(x).
#define TORCH_MODULE_IMPL(Name, ImplType)                               \
  class Name : public ::cohort::nn::ModuleHolder<ImplType> { /* NOLINT */ \
   public:                                                              \
    using ::cohort::nn::ModuleHolder<ImplType>::ModuleHolder;           \
    using Impl = ImplType;                                              \
  }
#define TORCH_MODULE(Name) TORCH_MODULE_IMPL(Name, Name##Impl)
