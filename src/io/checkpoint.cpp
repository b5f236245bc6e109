// Module and optimizer state through safetensors; the optimizer's scalars ride in "__metadata__".
#include "cohort/io/checkpoint.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "cohort/io/safetensors.h"
#include "cohort/nn/module.h"
#include "cohort/optim/optimizer.h"

namespace cohort::io {

namespace {

constexpr const char* kOptimizerKey = "cohort.optimizer";
constexpr const char* kScalarsKey = "cohort.scalars";
constexpr const char* kModelPrefix = "model/";
constexpr const char* kOptimizerPrefix = "optimizer/";

// JSON has no inf/nan: they are written as strings.
std::string encode_scalars(const std::map<std::string, double>& values) {
  nlohmann::json scalars = nlohmann::json::object();
  for (const auto& [key, value] : values) {
    if (std::isfinite(value)) scalars[key] = value;
    else scalars[key] = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  }
  return scalars.dump();
}

std::map<std::string, double> decode_scalars(const std::string& text, const std::string& op) {
  nlohmann::json scalars;
  try {
    scalars = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(op + "'" + kScalarsKey + "' is not valid JSON: " + escape_text(e.what()));
  }
  COHORT_CHECK(scalars.is_object(), op, "'", kScalarsKey, "' must be a JSON object, got ", scalars.dump());
  std::map<std::string, double> values;
  for (const auto& [key, value] : scalars.items()) {
    if (value.is_number()) {
      values[key] = value.get<double>();
    } else if (value == "inf" || value == "-inf" || value == "nan") {
      const std::string s = value.get<std::string>();
      values[key] = s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
    } else {
      throw Error(op + "scalar '" + escape_text(key) + "' must be a number, got " + escape_text(value.dump()));
    }
  }
  return values;
}

// The optimizer's name and scalars from `metadata`, checked against `optimizer`.
std::map<std::string, double> optimizer_scalars(const Metadata& metadata, const optim::Optimizer& optimizer,
                                                const std::string& op) {
  auto name = metadata.find(kOptimizerKey);
  auto text = metadata.find(kScalarsKey);
  COHORT_CHECK(name != metadata.end() && text != metadata.end(), op, "no optimizer state in this file (its __metadata__ lacks '",
               kOptimizerKey, "' and '", kScalarsKey, "'); hint: was it written by io::save(optimizer, path)?");
  COHORT_CHECK(name->second == optimizer.name(), op, "the file holds the state of a ", escape_text(name->second),
               " optimizer, got a ", optimizer.name());
  return decode_scalars(text->second, op);
}

// What module.load_state_dict(weights, strict) would refuse, found before anything is loaded: the
// first name one side lacks, or the first shape that differs.
void check_fits(const nn::Module& module, const nn::StateDict& weights, const std::string& op) {
  const nn::StateDict mine = module.state_dict();
  for (const auto& item : mine) {
    COHORT_CHECK(weights.contains(item.key()), op, "'", escape_text(item.key()), "' is missing from the file");
    COHORT_CHECK(weights[item.key()].sizes() == item.value().sizes(), op, "'", escape_text(item.key()), "' is ",
                 weights[item.key()].sizes(), " in the file, ", item.value().sizes(), " in the module");
  }
  for (const auto& item : weights)
    COHORT_CHECK(mine.contains(item.key()), op, "the file's '", escape_text(item.key()), "' is not in the module");
}

void check_module_name(const std::string& name, const std::string& op) {
  COHORT_CHECK(!name.empty() && name.find('/') == std::string::npos && name != "model" && name != "optimizer", op,
               "a module's name must be non-empty, without '/', and neither 'model' nor 'optimizer', got '",
               escape_text(name), "'");
}

}  // namespace

void save(const nn::Module& module, const std::filesystem::path& path) { save_safetensors(path, module.state_dict()); }

void load(nn::Module& module, const std::filesystem::path& path, bool strict) {
  module.load_state_dict(load_safetensors(path), strict);
}

void save(const optim::Optimizer& optimizer, const std::filesystem::path& path) {
  const optim::OptimizerState state = optimizer.state_dict();
  save_safetensors(path, state.tensors,
                   {{kOptimizerKey, optimizer.name()}, {kScalarsKey, encode_scalars(state.scalars)}});
}

void load(optim::Optimizer& optimizer, const std::filesystem::path& path) {
  const std::string op = "load(" + optimizer.name() + "): " + path.string() + ": ";
  optim::OptimizerState state;
  state.scalars = optimizer_scalars(load_safetensors_metadata(path), optimizer, op);
  for (const auto& item : load_safetensors(path)) state.tensors[item.key()] = item.value();
  optimizer.load_state_dict(state);
}

void save_checkpoint(const std::filesystem::path& path, const nn::Module& module, const optim::Optimizer* optimizer,
                     const Metadata& metadata, const ModuleMap& others) {
  std::map<std::string, Tensor> tensors;
  for (const auto& item : module.state_dict()) tensors[kModelPrefix + item.key()] = item.value();
  for (const auto& [name, other] : others) {
    check_module_name(name, "save_checkpoint: " + path.string() + ": ");
    COHORT_CHECK(other != nullptr, "save_checkpoint: ", path.string(), ": the module '", escape_text(name), "' is null");
    for (const auto& item : other->state_dict()) tensors[name + "/" + item.key()] = item.value();
  }
  Metadata all = metadata;
  if (optimizer) {
    const optim::OptimizerState state = optimizer->state_dict();
    for (const auto& [key, value] : state.tensors) tensors[kOptimizerPrefix + key] = value;
    all[kOptimizerKey] = optimizer->name();
    all[kScalarsKey] = encode_scalars(state.scalars);
  }
  save_safetensors(path, tensors, all, /*checksum=*/true);
}

Metadata load_checkpoint(const std::filesystem::path& path, nn::Module& module, optim::Optimizer* optimizer,
                         const MutableModuleMap& others) {
  const std::string op = "load_checkpoint: " + path.string() + ": ";
  Metadata metadata = load_safetensors_metadata(path);
  nn::StateDict weights;
  std::map<std::string, nn::StateDict> other_weights;
  optim::OptimizerState state;
  for (const auto& [name, other] : others) {
    check_module_name(name, op);
    COHORT_CHECK(other != nullptr, op, "the module '", escape_text(name), "' is null");
  }
  for (const auto& item : load_safetensors(path)) {
    const std::string& key = item.key();
    const size_t slash = key.find('/');
    if (key.rfind(kModelPrefix, 0) == 0) {
      weights.insert(key.substr(std::char_traits<char>::length(kModelPrefix)), item.value());
    } else if (key.rfind(kOptimizerPrefix, 0) == 0) {
      state.tensors[key.substr(std::char_traits<char>::length(kOptimizerPrefix))] = item.value();
    } else if (slash != std::string::npos && slash > 0) {  // another module's: kept only when asked for
      if (const auto other = others.find(key.substr(0, slash)); other != others.end())
        other_weights[other->first].insert(key.substr(slash + 1), item.value());
    } else {
      throw Error(op + "unexpected tensor '" + escape_text(key) +
                  "' (a checkpoint holds only 'model/…', 'optimizer/…' and other modules' '<name>/…')");
    }
  }
  COHORT_CHECK(!weights.empty(), op, "no model weights in this file; hint: was it written by io::save_checkpoint?");
  for (const auto& [name, other] : others)
    COHORT_CHECK(other_weights.count(name), op, "no module '", escape_text(name), "' in this file");
  // The file is decoded before anything changes; a checkpoint of another model then fails in
  // load_state_dict (which checks every key first) before the optimizer is touched. The other
  // modules' names and shapes are checked first for the same reason.
  if (optimizer) state.scalars = optimizer_scalars(metadata, *optimizer, op);
  for (const auto& [name, other] : others) check_fits(*other, other_weights[name], op + "module '" + name + "': ");
  module.load_state_dict(weights, /*strict=*/true);
  if (optimizer) optimizer->load_state_dict(state);
  for (const auto& [name, other] : others) other->load_state_dict(other_weights[name], /*strict=*/true);
  metadata.erase(kOptimizerKey);
  metadata.erase(kScalarsKey);
  metadata.erase(kChecksumKey);
  return metadata;
}

void load_checkpoint_module(const std::filesystem::path& path, const std::string& name, nn::Module& module) {
  const std::string op = "load_checkpoint_module: " + path.string() + ": ";
  if (name != "model") check_module_name(name, op);
  const std::string prefix = name + "/";
  nn::StateDict weights;
  for (const auto& item : load_safetensors(path))
    if (item.key().rfind(prefix, 0) == 0) weights.insert(item.key().substr(prefix.size()), item.value());
  COHORT_CHECK(!weights.empty(), op, "no module '", escape_text(name), "' in this file");
  module.load_state_dict(weights, /*strict=*/true);
}

}  // namespace cohort::io
