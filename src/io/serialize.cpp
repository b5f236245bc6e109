// cohort::save / cohort::load: modules, tensors, vectors of tensors and optimizers as the values
// Python's torch.save writes for them (io/serialize.h), through io/torch_file.h.
#include "cohort/io/serialize.h"

#include <cmath>
#include <map>
#include <set>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/tensor_impl.h"
#include "cohort/ops/creation.h"
#include "cohort/optim/optimizer.h"
#include "io/torch_archive.h"

namespace cohort {

using io::PyValue;

namespace {

std::string where_of(const std::filesystem::path& path) { return path.string(); }
std::string where_of(std::istream&) { return "<stream>"; }

template <class Source>
PyValue read(Source& source) {
  if constexpr (std::is_same_v<Source, std::istream>) return io::detail::read_torch_archive(source, "<stream>", "load");
  else return io::detail::read_torch_archive(source, "load");
}

// Runs f, prefixing a cohort::Error that does not already name the source with "load: <where>: ".
template <class F>
void naming(const std::string& op, const std::string& where, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    const std::string prefix = op + ": " + where + ": ";
    if (std::string(e.what()).rfind(prefix, 0) == 0) throw;
    throw Error(prefix + e.what());
  }
}

std::string libtorch_hint(const PyValue& v) {
  return v.is_object() ? " (an archive of libtorch's C++ torch::save holding another kind of value)" : "";
}

// ---- tensors ------------------------------------------------------------------------------------

PyValue tensor_value(const Tensor& t) {
  COHORT_CHECK(t.defined(), "save: cannot save an undefined tensor");
  return PyValue(t);
}

Tensor loaded_tensor(const PyValue& v, const std::optional<Device>& device) {
  // A tensor from Python or cohort; libtorch's archive is an object with the tensor as attribute "0".
  const PyValue* t = v.is_object() && v.dict_items().size() == 1 ? v.find("0") : &v;
  if (!t || !t->is_tensor()) throw Error("the file holds a " + v.type_name() + ", not a tensor");
  Tensor out = t->to_tensor();
  return device ? out.to(*device) : out;
}

// libtorch's load re-points a defined tensor at the loaded data (Tensor::set_), so that every handle
// to it sees the new value; an undefined one is simply assigned.
void assign(Tensor& tensor, const Tensor& loaded) {
  if (!tensor.defined()) {
    tensor = loaded;
    return;
  }
  const TensorImpl& src = *loaded.unsafe_impl();
  tensor.unsafe_impl()->set_storage(src.storage(), src.dtype(), Shape(src.sizes().begin(), src.sizes().end()),
                                    Shape(src.strides().begin(), src.strides().end()), src.offset());
}

std::vector<Tensor> loaded_tensors(const PyValue& v, const std::optional<Device>& device) {
  std::vector<Tensor> out;
  if (v.is_list() || v.is_tuple()) {
    for (size_t i = 0; i < v.items().size(); ++i) {
      const PyValue& item = v.items()[i];
      if (!item.is_tensor()) throw Error("item " + std::to_string(i) + " of the list is a " + item.type_name() + ", not a tensor");
      out.push_back(device ? item.to_tensor().to(*device) : item.to_tensor());
    }
    return out;
  }
  if (v.is_object()) {  // libtorch: attributes "0", "1", ...
    for (size_t i = 0; i < v.dict_items().size(); ++i) {
      const PyValue* item = v.find(std::to_string(i));
      if (!item || !item->is_tensor()) throw Error("the libtorch archive holds no tensor '" + std::to_string(i) + "'");
      out.push_back(device ? item->to_tensor().to(*device) : item->to_tensor());
    }
    return out;
  }
  throw Error("the file holds a " + v.type_name() + ", not a list of tensors");
}

// ---- optimizers ---------------------------------------------------------------------------------

// Note [Optimizer state in PyTorch's shape]
// Python's optimizer.state_dict() is {"state": {index: {name: value}}, "param_groups": [{option: value,
// ..., "params": [index, ...]}]}, parameters numbered across groups in order, as cohort numbers them.
// cohort's options and state already carry PyTorch's names (optim/optimizer.h), except that Adam's
// betas are "betas.0" and "betas.1" and that flags are numbers; what differs per optimizer is the
// order of the options, the PyTorch 1.13 options cohort lacks (written with their defaults, which
// are cohort's behaviour: maximize=False, foreach=None, ...) and whether "step" is a tensor (Adam,
// AdamW, Adagrad: a 0-d float32 tensor in 1.13; Adamax, Adadelta, NAdam, RAdam, laid out as 2.x's,
// also; NAdam's "mu_product" is a 0-d tensor too) or an int (RMSprop). Loading accepts those options
// back when they mean cohort's behaviour: maximize must be False; foreach, capturable,
// differentiable and fused change how the update runs, not what it computes, and are ignored, as is
// an LR scheduler's "initial_lr".
struct OptimizerLayout {
  const char* name;
  std::vector<const char*> options;  // PyTorch 1.13's order, before "params"
  bool step_is_tensor;
};
const OptimizerLayout kLayouts[] = {
    {"SGD", {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach", "differentiable"}, false},
    {"Adam", {"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable", "differentiable", "fused"}, true},
    {"AdamW", {"lr", "betas", "eps", "weight_decay", "amsgrad", "foreach", "maximize", "capturable"}, true},
    {"RMSprop", {"lr", "momentum", "alpha", "eps", "centered", "weight_decay", "foreach", "maximize", "differentiable"}, false},
    {"Adagrad", {"lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value", "foreach", "maximize"}, true},
    // PyTorch 2.x's, whose updates these follow (1.13 lacks decoupled_weight_decay).
    {"Adamax", {"lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable", "capturable"}, true},
    {"Adadelta", {"lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach", "differentiable"}, true},
    {"NAdam", {"lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize", "foreach",
               "capturable", "differentiable"}, true},
    {"RAdam", {"lr", "betas", "eps", "weight_decay", "maximize", "foreach", "capturable", "decoupled_weight_decay",
               "differentiable"}, true},
};
const std::set<std::string> kFlags = {"nesterov", "amsgrad", "centered", "decoupled_weight_decay"};
const std::set<std::string> kFalseOptions = {"maximize", "capturable", "differentiable", "fused"};
const std::set<std::string> kIgnoredOptions = {"foreach", "capturable", "differentiable", "fused", "initial_lr"};

const OptimizerLayout* layout_of(const std::string& name) {
  for (const auto& l : kLayouts)
    if (name == l.name) return &l;
  return nullptr;  // another optimizer: its options in to_scalars' order, as numbers
}

PyValue optimizer_value(const optim::Optimizer& optimizer) {
  const OptimizerLayout* layout = layout_of(optimizer.name());
  PyValue::DictItems state;
  PyValue::Items groups;
  int64_t index = 0;
  for (const auto& group : optimizer.param_groups()) {
    std::map<std::string, double> options = group.options().to_scalars();
    PyValue::DictItems g;
    auto take = [&](const std::string& key) {
      auto it = options.find(key);
      if (it == options.end()) return false;
      g.emplace_back(key, kFlags.count(key) ? PyValue(it->second != 0) : PyValue(it->second));
      options.erase(it);
      return true;
    };
    if (layout) {
      for (const std::string key : layout->options) {
        if (key == "betas" && options.count("betas.0") && options.count("betas.1")) {
          g.emplace_back("betas", PyValue::tuple({options["betas.0"], options["betas.1"]}));
          options.erase("betas.0");
          options.erase("betas.1");
        } else if (key == "foreach") {
          g.emplace_back(key, PyValue());
        } else if (kFalseOptions.count(key)) {
          g.emplace_back(key, false);
        } else {
          take(key);
        }
      }
    }
    for (const auto& [key, value] : options) g.emplace_back(key, value);  // options PyTorch lacks
    PyValue::Items params;
    for (const Tensor& p : group.params()) {
      params.emplace_back(index);
      auto it = optimizer.state().find(p.unsafe_impl());
      if (it != optimizer.state().end()) {
        PyValue::DictItems s;
        for (const auto& [key, value] : it->second.scalars) {
          if (key == "step" && layout && layout->step_is_tensor) s.emplace_back(key, scalar_tensor(value, TensorOptions(kFloat32)));
          // NAdam's running product, a 0-d tensor in PyTorch; float64 so that a resumed run is exact.
          else if (key == "mu_product") s.emplace_back(key, scalar_tensor(value, TensorOptions(kFloat64)));
          else if (key == "step" && value == std::floor(value)) s.emplace_back(key, static_cast<int64_t>(value));
          else s.emplace_back(key, value);
        }
        for (const auto& [key, value] : it->second.tensors)
          if (value.defined()) s.emplace_back(key, value.detach());
        state.emplace_back(index, PyValue::dict(std::move(s)));
      }
      ++index;
    }
    g.emplace_back("params", PyValue::list(std::move(params)));
    groups.push_back(PyValue::dict(std::move(g)));
  }
  return PyValue::dict({{"state", PyValue::dict(std::move(state))}, {"param_groups", PyValue::list(std::move(groups))}});
}

double number_of(const PyValue& v, const std::string& what) {
  if (v.is_bool()) return v.to_bool() ? 1 : 0;
  if (v.is_number()) return v.to_double();
  if (v.is_tensor() && v.to_tensor().numel() == 1) return v.to_tensor().to(kFloat64).item<double>();
  throw Error(what + " is a " + v.type_name() + ", not a number");
}

optim::OptimizerState optimizer_state_of(const PyValue& v, const optim::Optimizer& optimizer) {
  if (v.is_object() && v.find("pytorch_version"))
    throw Error("an optimizer archive of libtorch's C++ torch::save, which keys the state by memory addresses; "
                "cohort reads optimizer state written by cohort::save or by Python's "
                "torch.save(optimizer.state_dict())");
  const PyValue* state = v.find("state");
  const PyValue* groups = v.find("param_groups");
  if (!v.is_dict() || !state || !groups || !state->is_dict() || !groups->is_list())
    throw Error("the file holds a " + v.type_name() + libtorch_hint(v) +
                ", not an optimizer state dict {'state': {...}, 'param_groups': [...]}");
  optim::OptimizerState out;
  std::map<int64_t, size_t> index_of;  // the file's parameter ids -> cohort's numbering
  for (size_t g = 0; g < groups->items().size(); ++g) {
    const PyValue& group = groups->items()[g];
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    if (!group.is_dict()) throw Error("param_groups[" + std::to_string(g) + "] is a " + group.type_name() + ", not a dict");
    const PyValue* params = group.find("params");
    if (!params || !params->is_list()) throw Error("param_groups[" + std::to_string(g) + "] has no 'params' list");
    for (const PyValue& id : params->items()) {
      if (!id.is_int()) throw Error("param_groups[" + std::to_string(g) + "]['params'] holds a " + id.type_name());
      if (!index_of.emplace(id.to_int(), index_of.size()).second)
        throw Error("parameter " + std::to_string(id.to_int()) + " is in two parameter groups");
    }
    out.scalars[prefix + "num_params"] = static_cast<double>(params->items().size());
    for (const auto& [key, value] : group.dict_items()) {
      if (!key.is_string()) throw Error("param_groups[" + std::to_string(g) + "] has a key of type " + key.type_name());
      const std::string& name = key.to_string();
      const std::string what = "option '" + name + "' of param_groups[" + std::to_string(g) + "]";
      if (name == "params") continue;
      if (name == "maximize") {
        if (value.is_bool() && value.to_bool()) throw Error(optimizer.name() + " in cohort has no maximize; the file sets it True");
        continue;
      }
      if (kIgnoredOptions.count(name)) continue;
      if ((value.is_tuple() || value.is_list()) && value.items().size() == 2) {
        out.scalars[prefix + name + ".0"] = number_of(value.items()[0], what);
        out.scalars[prefix + name + ".1"] = number_of(value.items()[1], what);
      } else {
        out.scalars[prefix + name] = number_of(value, what);
      }
    }
  }
  for (const auto& [key, entries] : state->dict_items()) {
    if (!key.is_int()) throw Error("a key of 'state' is a " + key.type_name() + ", not a parameter index");
    auto it = index_of.find(key.to_int());
    if (it == index_of.end()) throw Error("'state' names parameter " + std::to_string(key.to_int()) + ", which no group holds");
    if (!entries.is_dict()) throw Error("state[" + std::to_string(key.to_int()) + "] is a " + entries.type_name());
    const std::string prefix = "state." + std::to_string(it->second) + ".";
    for (const auto& [name, value] : entries.dict_items()) {
      if (!name.is_string()) throw Error("state[" + std::to_string(key.to_int()) + "] has a key of type " + name.type_name());
      const std::string& n = name.to_string();
      if (value.is_none()) continue;  // SGD without momentum keeps momentum_buffer=None
      if (value.is_tensor() && n != "step" && n != "mu_product") out.tensors[prefix + n] = value.to_tensor();
      else out.scalars[prefix + n] = number_of(value, "state[" + std::to_string(key.to_int()) + "]['" + n + "']");
    }
  }
  return out;
}

}  // namespace

// ---- the entry points -----------------------------------------------------------------------------

namespace io::detail {

void save_module(const nn::Module& module, const std::filesystem::path& path) {
  PyValue::DictItems items;
  for (const auto& item : module.state_dict()) items.emplace_back(item.key(), item.value());
  write_torch_archive(path, PyValue::dict(std::move(items), /*ordered=*/true), "save");
}

void save_module(const nn::Module& module, std::ostream& out) {
  PyValue::DictItems items;
  for (const auto& item : module.state_dict()) items.emplace_back(item.key(), item.value());
  write_torch_archive(out, PyValue::dict(std::move(items), /*ordered=*/true), "save");
}

template <class Source>
void load_module_from(nn::Module& module, Source& source) {
  const std::string where = where_of(source);
  const PyValue value = read(source);
  const nn::StateDict state = state_dict_of(value, where, "load");
  naming("load", where, [&] { module.load_state_dict(state, /*strict=*/true); });
}

void load_module(nn::Module& module, const std::filesystem::path& path) { load_module_from(module, path); }
void load_module(nn::Module& module, std::istream& in) { load_module_from(module, in); }

}  // namespace io::detail

void save(const Tensor& tensor, const std::filesystem::path& path) {
  io::detail::write_torch_archive(path, tensor_value(tensor), "save");
}
void save(const Tensor& tensor, std::ostream& out) { io::detail::write_torch_archive(out, tensor_value(tensor), "save"); }

void save(const std::vector<Tensor>& tensors, const std::filesystem::path& path) {
  io::detail::write_torch_archive(path, PyValue::list(PyValue::Items(tensors.begin(), tensors.end())), "save");
}
void save(const std::vector<Tensor>& tensors, std::ostream& out) {
  io::detail::write_torch_archive(out, PyValue::list(PyValue::Items(tensors.begin(), tensors.end())), "save");
}

void save(const optim::Optimizer& optimizer, const std::filesystem::path& path) {
  io::detail::write_torch_archive(path, optimizer_value(optimizer), "save");
}
void save(const optim::Optimizer& optimizer, std::ostream& out) {
  io::detail::write_torch_archive(out, optimizer_value(optimizer), "save");
}

namespace {

template <class Source>
void load_tensor(Tensor& tensor, Source& source, const std::optional<Device>& device) {
  const PyValue value = read(source);
  naming("load", where_of(source), [&] {
    Tensor loaded = loaded_tensor(value, device);
    NoGradGuard no_grad;
    assign(tensor, loaded);
  });
}

template <class Source>
void load_tensors(std::vector<Tensor>& tensors, Source& source, const std::optional<Device>& device) {
  const PyValue value = read(source);
  naming("load", where_of(source), [&] { tensors = loaded_tensors(value, device); });
}

template <class Source>
void load_optimizer(optim::Optimizer& optimizer, Source& source) {
  const PyValue value = read(source);
  naming("load", where_of(source), [&] { optimizer.load_state_dict(optimizer_state_of(value, optimizer)); });
}

}  // namespace

void load(Tensor& tensor, const std::filesystem::path& path, std::optional<Device> device) { load_tensor(tensor, path, device); }
void load(Tensor& tensor, std::istream& in, std::optional<Device> device) { load_tensor(tensor, in, device); }
void load(std::vector<Tensor>& tensors, const std::filesystem::path& path, std::optional<Device> device) {
  load_tensors(tensors, path, device);
}
void load(std::vector<Tensor>& tensors, std::istream& in, std::optional<Device> device) { load_tensors(tensors, in, device); }
void load(optim::Optimizer& optimizer, const std::filesystem::path& path) { load_optimizer(optimizer, path); }
void load(optim::Optimizer& optimizer, std::istream& in) { load_optimizer(optimizer, in); }

}  // namespace cohort
