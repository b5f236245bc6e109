// Containers: Sequential (chains modules whose forward takes and returns one tensor), ModuleList
// and ModuleDict (hold modules for the parent's own forward).
//
//   nn::Sequential seq(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 2));
//   nn::Sequential named({{"fc1", nn::Linear(4, 8)}, {"act", nn::ReLU()}});
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/nn/module_holder.h"

namespace cohort::nn {

namespace detail {
// Whether Impl's forward(x) takes one tensor and returns one.
template <class Impl, class = void>
struct forward_takes_one_tensor : std::false_type {};
template <class Impl>
struct forward_takes_one_tensor<Impl, std::void_t<decltype(std::declval<Impl&>().forward(std::declval<const Tensor&>()))>>
    : std::is_convertible<decltype(std::declval<Impl&>().forward(std::declval<const Tensor&>())), Tensor> {};
}  // namespace detail

// A module type-erased (libtorch's AnyModule), whose forward(x) is callable when the module's forward
// takes one tensor; a module whose forward takes more (a transformer decoder) is held and reached with
// get<T>().
class AnyModule {
 public:
  template <class Impl>
  AnyModule(ModuleHolder<Impl> holder) : AnyModule(holder.ptr()) {}  // NOLINT
  template <class Impl>
  AnyModule(std::shared_ptr<Impl> impl)  // NOLINT
      : module_(impl), call_(caller<Impl>()) {}
  Tensor forward(const Tensor& x) const {
    COHORT_CHECK(call_ != nullptr, "AnyModule: ", module_->name(), "'s forward does not take one tensor; hint: call "
                 "it as get<", module_->name(), "Impl>().forward(...)");
    return call_(*module_, x);
  }
  const std::shared_ptr<Module>& ptr() const { return module_; }
  // The module as a T (an implementation type), checked.
  template <class T>
  std::shared_ptr<T> ptr() const {
    auto p = std::dynamic_pointer_cast<T>(module_);
    COHORT_CHECK(p != nullptr, "AnyModule: the module is a ", module_->name(), ", not the requested type");
    return p;
  }
  template <class T>
  T& get() const {
    return *ptr<T>();
  }
  // The same call on a module of the same type (a clone).
  AnyModule rebound(std::shared_ptr<Module> module) const {
    AnyModule copy = *this;
    copy.module_ = std::move(module);
    return copy;
  }

 private:
  using Call = std::function<Tensor(Module&, const Tensor&)>;
  template <class Impl>
  using takes_one_tensor = detail::forward_takes_one_tensor<Impl>;
  template <class Impl>
  static Call caller() {
    if constexpr (takes_one_tensor<Impl>::value)
      return [](Module& m, const Tensor& x) { return static_cast<Impl&>(m).forward(x); };
    else
      return nullptr;
  }

  std::shared_ptr<Module> module_;
  Call call_;
};

class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  template <class... M>
  explicit SequentialImpl(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  SequentialImpl(std::initializer_list<std::pair<std::string, AnyModule>> named);

  // Appends a module named by its index ("0", "1", ...) or by `name`.
  void push_back(AnyModule module);
  void push_back(std::string name, AnyModule module);
  // Runs the modules in order, each with its forward hooks.
  Tensor forward(const Tensor& x);

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  std::shared_ptr<Module> operator[](size_t index) const;
  // The module at `index`, as a Module, or as its type: ptr<LinearImpl>(i).
  template <class Impl = Module>
  std::shared_ptr<Impl> ptr(size_t index) const {
    auto p = std::dynamic_pointer_cast<Impl>((*this)[index]);
    COHORT_CHECK(p != nullptr, "Sequential: module ", index, " is a ", (*this)[index]->name(), ", not the requested type");
    return p;
  }
  // The modules in order, as AnyModule: for (const auto& m : *seq) m.ptr()->name();
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

 private:
  std::vector<AnyModule> items_;
};

class ModuleListImpl : public Module {
 public:
  ModuleListImpl() = default;
  template <class... M>
  explicit ModuleListImpl(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  template <class Impl>
  void push_back(ModuleHolder<Impl> holder) { push_back(std::shared_ptr<Module>(holder.ptr())); }
  void push_back(std::shared_ptr<Module> module);

  size_t size() const { return items_.size(); }
  std::shared_ptr<Module> operator[](size_t index) const;
  // The module at `index`, as a Module, or as its type: ptr<LinearImpl>(i).
  template <class Impl = Module>
  std::shared_ptr<Impl> ptr(size_t index) const {
    auto p = std::dynamic_pointer_cast<Impl>((*this)[index]);
    COHORT_CHECK(p != nullptr, "ModuleList: module ", index, " is a ", (*this)[index]->name(), ", not the requested type");
    return p;
  }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;

 private:
  std::vector<std::shared_ptr<Module>> items_;
};

class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() = default;
  template <class Impl>
  void insert(std::string key, ModuleHolder<Impl> holder) { insert(std::move(key), std::shared_ptr<Module>(holder.ptr())); }
  void insert(std::string key, std::shared_ptr<Module> module);
  bool contains(const std::string& key) const { return named_children().contains(key); }
  std::shared_ptr<Module> operator[](const std::string& key) const;
  size_t size() const { return named_children().size(); }
  std::vector<std::string> keys() const { return named_children().keys(); }
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
};

class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential() : ModuleHolder<SequentialImpl>() {}
  // Named modules: nn::Sequential({{"fc", nn::Linear(4, 8)}, {"act", nn::ReLU()}}).
  Sequential(std::initializer_list<std::pair<std::string, AnyModule>> named)
      : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>(named)) {}
};
using ModuleList = ModuleHolder<ModuleListImpl>;
using ModuleDict = ModuleHolder<ModuleDictImpl>;

}  // namespace cohort::nn
