// app::train_config_from_json (a checkpoint's run configuration) and TrainConfig::validate. What is
// accepted must round-trip through to_json.
#include <nlohmann/json.hpp>

#include "cohort/core/error.h"
#include "fuzz_util.h"

#include "app/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // not JSON: the caller's parse fails first
  try {
    const cohort::app::TrainConfig c = cohort::app::train_config_from_json(j);
    c.validate();
    if (cohort::app::to_json(cohort::app::train_config_from_json(cohort::app::to_json(c))) != cohort::app::to_json(c))
      std::abort();
  } catch (const cohort::Error&) {
  }
  return 0;
}
