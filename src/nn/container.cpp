// Sequential, ModuleList and ModuleDict.
#include "cohort/nn/container.h"

namespace cohort::nn {

SequentialImpl::SequentialImpl(std::initializer_list<std::pair<std::string, AnyModule>> named) {
  for (const auto& [name, module] : named) push_back(name, module);
}

void SequentialImpl::push_back(AnyModule module) { push_back(std::to_string(items_.size()), std::move(module)); }

void SequentialImpl::push_back(std::string name, AnyModule module) {
  register_module(std::move(name), module.ptr());
  items_.push_back(std::move(module));
}

Tensor SequentialImpl::forward(const Tensor& x) {
  Tensor out = x;
  for (const AnyModule& m : items_) {
    Tensor in = out;
    out = m.ptr()->call_with_hooks({in}, [&](const std::vector<Tensor>& args) { return m.forward(args[0]); });
  }
  return out;
}

std::shared_ptr<Module> SequentialImpl::operator[](size_t index) const {
  COHORT_CHECK_AS(IndexError, index < items_.size(), "Sequential: index ", index, " is out of range for ", items_.size(),
                  " modules");
  return items_[index].ptr();
}

std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>();
  auto names = named_children().keys();
  for (size_t i = 0; i < items_.size(); ++i) copy->push_back(names[i], items_[i].rebound(items_[i].ptr()->clone(device)));
  copy->train(is_training());
  return copy;
}

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(items_.size()), module);
  items_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleListImpl::operator[](size_t index) const {
  COHORT_CHECK_AS(IndexError, index < items_.size(), "ModuleList: index ", index, " is out of range for ", items_.size(),
                  " modules");
  return items_[index];
}

std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>();
  for (const auto& m : items_) copy->push_back(m->clone(device));
  copy->train(is_training());
  return copy;
}

void ModuleDictImpl::insert(std::string key, std::shared_ptr<Module> module) { register_module(std::move(key), std::move(module)); }

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  auto children = named_children();
  COHORT_CHECK_AS(IndexError, children.contains(key), "ModuleDict: no module named '", key, "'");
  return children[key];
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& item : named_children()) copy->insert(item.key(), item.value()->clone(device));
  copy->train(is_training());
  return copy;
}

}  // namespace cohort::nn
