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
}  // namespace

void save(const nn::Module& module, const std::filesystem::path& path) { save_safetensors(path, module.state_dict()); }

void load(nn::Module& module, const std::filesystem::path& path, bool strict) {
  module.load_state_dict(load_safetensors(path), strict);
}

void save(const optim::Optimizer& optimizer, const std::filesystem::path& path) {
  const optim::OptimizerState state = optimizer.state_dict();
  nlohmann::json scalars = nlohmann::json::object();
  for (const auto& [key, value] : state.scalars) {
    if (std::isfinite(value)) scalars[key] = value;
    else scalars[key] = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  }
  save_safetensors(path, state.tensors, {{kOptimizerKey, optimizer.name()}, {kScalarsKey, scalars.dump()}});
}

void load(optim::Optimizer& optimizer, const std::filesystem::path& path) {
  const std::string op = "load(" + optimizer.name() + "): " + path.string() + ": ";
  const Metadata metadata = load_safetensors_metadata(path);
  auto name = metadata.find(kOptimizerKey);
  auto text = metadata.find(kScalarsKey);
  COHORT_CHECK(name != metadata.end() && text != metadata.end(), op, "no optimizer state in this file (its __metadata__ lacks '",
               kOptimizerKey, "' and '", kScalarsKey, "'); hint: was it written by io::save(optimizer, path)?");
  COHORT_CHECK(name->second == optimizer.name(), op, "the file holds the state of a ", name->second,
               " optimizer, got a ", optimizer.name());

  optim::OptimizerState state;
  nlohmann::json scalars;
  try {
    scalars = nlohmann::json::parse(text->second);
  } catch (const nlohmann::json::exception& e) {
    throw Error(op + "'" + kScalarsKey + "' is not valid JSON: " + e.what());
  }
  COHORT_CHECK(scalars.is_object(), op, "'", kScalarsKey, "' must be a JSON object, got ", scalars.dump());
  for (const auto& [key, value] : scalars.items()) {
    if (value.is_number()) {
      state.scalars[key] = value.get<double>();
    } else if (value == "inf" || value == "-inf" || value == "nan") {
      const std::string s = value.get<std::string>();
      state.scalars[key] = s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
    } else {
      throw Error(op + "scalar '" + key + "' must be a number, got " + value.dump());
    }
  }
  for (const auto& item : load_safetensors(path)) state.tensors[item.key()] = item.value();
  optimizer.load_state_dict(state);
}

}  // namespace cohort::io
