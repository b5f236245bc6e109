// Module: registries of parameters, buffers and children, and what walks them (state dicts,
// device moves, printing).
#include "cohort/nn/module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <ostream>
#include <sstream>
#include <typeinfo>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"

namespace cohort::nn {

namespace {

// Re-points the existing handle t at source's data, so that every holder of it (an optimizer, the
// module's own member fields) sees the new tensor.
void repoint(const Tensor& t, const Tensor& source) {
  t.unsafe_impl()->set_storage(source.unsafe_impl()->storage(), source.dtype(), source.sizes().vec(),
                               source.strides().vec(), source.storage_offset());
}

// "cohort::nn::LinearImpl" -> "Linear"; "Net" -> "Net".
std::string readable_type_name(const std::type_info& type) {
  int status = 0;
  char* raw = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && raw ? raw : type.name();
  std::free(raw);
  if (auto colon = name.rfind("::"); colon != std::string::npos) name = name.substr(colon + 2);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0) name.resize(name.size() - 4);
  return name;
}

void check_name(const std::string& name, const char* what) {
  COHORT_CHECK(!name.empty(), "register_", what, ": the name must not be empty");
  COHORT_CHECK(name.find('.') == std::string::npos, "register_", what, ": the name '", name,
               "' must not contain a dot (dots separate nested module names)");
}

}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}

const std::string& Module::name() const {
  // Filled lazily: typeid sees the most-derived type only after construction.
  if (name_.empty()) name_ = readable_type_name(typeid(*this));
  return name_;
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_name(name, "parameter");
  if (tensor.defined()) {
    // A parameter is a leaf: detach from any graph it was computed in.
    if (!tensor.is_leaf()) tensor = tensor.detach();
    if (requires_grad) tensor.requires_grad_(true);
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_name(name, "buffer");
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::add_child(std::string name, std::shared_ptr<Module> module) {
  check_name(name, "module");
  COHORT_CHECK(module != nullptr, "register_module: the module '", name, "' is empty (nullptr); hint: construct it first");
  children_.insert(std::move(name), std::move(module));
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> module) {
  COHORT_CHECK(children_.contains(name), "replace_module: no submodule named '", name, "'");
  children_[name] = std::move(module);
}

void Module::clear_registries() {
  parameters_.clear();
  buffers_.clear();
  children_.clear();
}

void Module::collect(const std::string& prefix, bool params, bool recurse, StateDict& out) const {
  for (const auto& item : params ? parameters_ : buffers_)
    if (item.value().defined()) out.insert(prefix + item.key(), item.value());
  if (!recurse) return;
  for (const auto& child : children_) child.value()->collect(prefix + child.key() + ".", params, true, out);
}

StateDict Module::named_parameters(bool recurse) const {
  StateDict out;
  collect("", true, recurse, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

StateDict Module::named_buffers(bool recurse) const {
  StateDict out;
  collect("", false, recurse, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const { return children_; }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& prefix, bool include_self) {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  if (include_self) out.insert(prefix, shared_from_this());
  for (const auto& child : children_) {
    std::string child_prefix = prefix.empty() ? child.key() : prefix + "." + child.key();
    for (auto& item : child.value()->named_modules(child_prefix, true)) out.insert(item.key(), item.value());
  }
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules("", include_self).values();
}

void Module::train(bool on) {
  is_training_ = on;
  for (auto& child : children_) child.value()->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
    } else {
      NoGradGuard no_grad;
      g = g.detach();
      g.zero_();
    }
  }
}

void Module::convert(const std::function<Tensor(const Tensor&)>& f) {
  NoGradGuard no_grad;
  for (auto* registry : {&parameters_, &buffers_}) {
    for (auto& item : *registry) {
      Tensor& t = item.value();
      if (!t.defined()) continue;
      Tensor converted = f(t);
      if (converted.is_same(t)) continue;
      repoint(t, converted);
      if (t.grad().defined()) t.mutable_grad() = f(t.grad());
    }
  }
  for (auto& child : children_) child.value()->convert(f);
}

void Module::adopt_dtypes(const StateDict& reference) {
  NoGradGuard no_grad;
  StateDict mine = named_parameters();
  for (auto& item : named_buffers()) mine.insert(item.key(), item.value());
  for (auto& item : mine) {
    const Tensor* ref = reference.find(item.key());
    Tensor& t = item.value();
    if (!ref || !t.defined() || ref->dtype() == t.dtype()) continue;
    repoint(t, empty(t.sizes(), t.options().dtype(ref->dtype())));
  }
}

void Module::to(Device device, bool) {
  check_device(device, "Module::to");
  convert([&](const Tensor& t) { return t.to(device); });
}

void Module::to(DType dtype, bool) {
  COHORT_CHECK_AS(TypeError, is_floating_point(dtype), "Module::to: expected a floating dtype, got ", dtype);
  convert([&](const Tensor& t) { return t.is_floating_point() ? t.to(dtype) : t; });
}

void Module::to(Device device, DType dtype, bool non_blocking) {
  to(dtype, non_blocking);
  to(device, non_blocking);
}

// PyTorch's order: module by module (depth first), each module's parameters, then its buffers.
void Module::collect_state(const std::string& prefix, StateDict& out) const {
  for (const auto* registry : {&parameters_, &buffers_})
    for (const auto& item : *registry)
      if (item.value().defined()) out.insert(prefix + item.key(), item.value().detach());
  for (const auto& child : children_) child.value()->collect_state(prefix + child.key() + ".", out);
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state("", out);
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  StateDict mine = named_parameters();
  for (auto& item : named_buffers()) mine.insert(item.key(), item.value());
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& item : mine) {
    const Tensor* source = state.find(item.key());
    if (!source) {
      missing.push_back(item.key());
    } else if (source->sizes() != item.value().sizes()) {
      std::ostringstream os;
      os << item.key() << " (checkpoint " << source->sizes() << ", model " << item.value().sizes() << ")";
      mismatched.push_back(os.str());
    }
  }
  for (const auto& item : state)
    if (!mine.contains(item.key())) unexpected.push_back(item.key());
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + escape_text(x);  // names from a file, maybe crafted
    return s;
  };
  bool bad = !mismatched.empty() || (strict && (!missing.empty() || !unexpected.empty()));
  if (bad) {
    std::ostringstream os;
    os << "load_state_dict: error(s) in loading the state dict for " << name() << ":";
    if (!missing.empty() && strict) os << " missing key(s): " << list(missing) << ";";
    if (!unexpected.empty() && strict) os << " unexpected key(s): " << list(unexpected) << ";";
    if (!mismatched.empty()) os << " size mismatch for: " << list(mismatched) << ";";
    os << " hint: strict=false ignores missing and unexpected keys";
    throw Error(os.str());
  }
  NoGradGuard no_grad;
  for (auto& item : mine) {
    if (const Tensor* source = state.find(item.key())) {
      item.value().copy_(*source);
    }
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (auto& child : children_) child.value()->apply(fn);
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& prefix) {
  fn(prefix, *this);
  for (auto& child : children_)
    child.value()->apply(fn, prefix.empty() ? child.key() : prefix + "." + child.key());
}

void Module::pretty_print(std::ostream& os) const { os << name(); }

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  throw Error(detail::str("clone: ", name(), " does not support clone(); hint: derive it from nn::Cloneable<",
                          name(), "> and create its parameters and submodules in reset()"));
}

namespace {
void print_tree(std::ostream& os, const Module& m, const std::string& indent) {
  m.pretty_print(os);
  auto children = m.named_children();
  if (children.empty()) return;
  os << "(\n";
  for (const auto& child : children) {
    os << indent << "  (" << child.key() << "): ";
    print_tree(os, *child.value(), indent + "  ");
    os << "\n";
  }
  os << indent << ")";
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& module) {
  print_tree(os, module, "");
  return os;
}

}  // namespace cohort::nn
