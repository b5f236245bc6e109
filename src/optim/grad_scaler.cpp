// GradScaler: PyTorch's dynamic loss scaling (torch.amp.GradScaler); its unscale_ runs the op
// non_finite_check_and_unscale_ (src/ops/amp_unscale.cpp) over the optimizer's gradients.
#include "cohort/optim/grad_scaler.h"

#include <cmath>
#include <cstdio>

#include "cohort/core/error.h"
#include "cohort/ops/optimizer_step.h"

namespace cohort::optim {

namespace {

void check_scaler_options(const char* op, double growth_factor, double backoff_factor, int64_t growth_interval) {
  COHORT_CHECK(growth_factor > 1.0 && std::isfinite(growth_factor), op, ": growth_factor must be > 1, got ",
               growth_factor);
  COHORT_CHECK(backoff_factor > 0.0 && backoff_factor < 1.0, op, ": backoff_factor must be in (0, 1), got ",
               backoff_factor);
  COHORT_CHECK(growth_interval >= 1, op, ": growth_interval must be >= 1, got ", growth_interval);
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options)
    : scale_(static_cast<float>(options.init_scale())),
      growth_factor_(options.growth_factor()),
      backoff_factor_(options.backoff_factor()),
      growth_interval_(options.growth_interval()),
      enabled_(options.enabled()) {
  COHORT_CHECK(options.init_scale() > 0 && std::isfinite(scale_), "GradScaler: init_scale must be positive and "
               "finite in float32, got ", options.init_scale());
  check_scaler_options("GradScaler", growth_factor_, backoff_factor_, growth_interval_);
}

Tensor GradScaler::scale(const Tensor& outputs) const {
  if (!enabled_) return outputs;
  COHORT_CHECK(outputs.defined(), "GradScaler::scale: the output is undefined");
  COHORT_CHECK_AS(TypeError, outputs.is_floating_point(), "GradScaler::scale: expected a floating-point output, got ",
                  outputs.dtype());
  const bool narrow = outputs.dtype() == kBFloat16 || outputs.dtype() == kHalf;
  return (narrow ? outputs.to(kFloat32) : outputs) * static_cast<double>(scale_);
}

std::vector<Tensor> GradScaler::scale(const std::vector<Tensor>& outputs) const {
  std::vector<Tensor> out;
  out.reserve(outputs.size());
  for (const Tensor& t : outputs) out.push_back(scale(t));
  return out;
}

void GradScaler::unscale_(Optimizer& optimizer) {
  if (!enabled_) return;
  PerOptimizer& state = per_optimizer_[&optimizer];
  COHORT_CHECK(state.stage != Stage::kUnscaled, "GradScaler::unscale_: already called for this ", optimizer.name(),
               " optimizer since the last update(); hint: call it once per step, before step(), then update()");
  COHORT_CHECK(state.stage != Stage::kStepped, "GradScaler::unscale_: called after step() for this ", optimizer.name(),
               " optimizer; hint: unscale_ before step(), and call update() after it");
  // PyTorch: inv_scale = scale.double().reciprocal().float().
  const float inv_scale = static_cast<float>(1.0 / static_cast<double>(scale_));
  std::vector<Tensor> grads;
  for (const Tensor& p : optimizer.parameters())
    if (p.grad().defined()) grads.push_back(p.grad());
  state.found_inf = non_finite_check_and_unscale_(grads, inv_scale);
  state.stage = Stage::kUnscaled;
}

bool GradScaler::step(Optimizer& optimizer) {
  if (!enabled_) {
    optimizer.step();
    return true;
  }
  {
    const PerOptimizer& state = per_optimizer_[&optimizer];
    COHORT_CHECK(state.stage != Stage::kStepped, "GradScaler::step: already called for this ", optimizer.name(),
                 " optimizer since the last update(); hint: call update() after each step");
    if (state.stage == Stage::kReady) unscale_(optimizer);
  }
  PerOptimizer& state = per_optimizer_[&optimizer];
  const bool stepping = !state.found_inf;
  if (stepping) optimizer.step();
  state.stage = Stage::kStepped;
  return stepping;
}

void GradScaler::update() {
  if (!enabled_) return;
  bool any = false, found = false;
  for (const auto& [opt, state] : per_optimizer_) {
    if (state.stage == Stage::kReady) continue;
    any = true;
    found |= state.found_inf;
  }
  COHORT_CHECK(any, "GradScaler::update: no inf/NaN check ran since the last update(); hint: call step(optimizer) "
               "(or unscale_(optimizer)) before update()");
  // PyTorch's _amp_update_scale_, in float32 as its scale tensor is.
  if (found) {
    scale_ *= static_cast<float>(backoff_factor_);
    growth_tracker_ = 0;
  } else if (growth_tracker_ + 1 == growth_interval_) {
    const float grown = scale_ * static_cast<float>(growth_factor_);
    if (std::isfinite(grown)) scale_ = grown;  // an inf scale would make every step overflow
    growth_tracker_ = 0;
  } else {
    ++growth_tracker_;
  }
  per_optimizer_.clear();
}

void GradScaler::update(double new_scale) {
  if (!enabled_) return;
  const float s = static_cast<float>(new_scale);
  COHORT_CHECK(new_scale > 0 && std::isfinite(s), "GradScaler::update: the new scale must be positive and finite "
               "in float32, got ", new_scale);
  scale_ = s;
  per_optimizer_.clear();
}

void GradScaler::set_growth_factor(double v) {
  check_scaler_options("GradScaler::set_growth_factor", v, backoff_factor_, growth_interval_);
  growth_factor_ = v;
}

void GradScaler::set_backoff_factor(double v) {
  check_scaler_options("GradScaler::set_backoff_factor", growth_factor_, v, growth_interval_);
  backoff_factor_ = v;
}

void GradScaler::set_growth_interval(int64_t v) {
  check_scaler_options("GradScaler::set_growth_interval", growth_factor_, backoff_factor_, v);
  growth_interval_ = v;
}

bool GradScaler::found_inf(const Optimizer& optimizer) const {
  auto it = per_optimizer_.find(&optimizer);
  return it != per_optimizer_.end() && it->second.found_inf;
}

namespace {
const char* const kStateKeys[] = {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"};
}  // namespace

std::map<std::string, double> GradScaler::state_dict() const {
  if (!enabled_) return {};
  return {{"scale", static_cast<double>(scale_)},
          {"growth_factor", growth_factor_},
          {"backoff_factor", backoff_factor_},
          {"growth_interval", static_cast<double>(growth_interval_)},
          {"_growth_tracker", static_cast<double>(growth_tracker_)}};
}

void GradScaler::load_state_dict(const std::map<std::string, double>& state) {
  if (!enabled_) return;
  COHORT_CHECK(!state.empty(), "GradScaler::load_state_dict: the state is empty, possibly because it was saved from a "
               "disabled GradScaler");
  std::string missing;
  for (const char* key : kStateKeys)
    if (!state.count(key)) missing += (missing.empty() ? "" : ", ") + std::string(key);
  COHORT_CHECK(missing.empty(), "GradScaler::load_state_dict: missing ", missing);
  const double scale = state.at("scale"), tracker = state.at("_growth_tracker");
  const double interval = state.at("growth_interval");
  COHORT_CHECK(scale > 0 && std::isfinite(static_cast<float>(scale)), "GradScaler::load_state_dict: scale must be "
               "positive and finite, got ", scale);
  COHORT_CHECK(tracker >= 0 && tracker == std::floor(tracker), "GradScaler::load_state_dict: _growth_tracker must be "
               "a count, got ", tracker);
  COHORT_CHECK(interval == std::floor(interval), "GradScaler::load_state_dict: growth_interval must be an integer, got ",
               interval);
  check_scaler_options("GradScaler::load_state_dict", state.at("growth_factor"), state.at("backoff_factor"),
                       static_cast<int64_t>(interval));
  scale_ = static_cast<float>(scale);
  growth_factor_ = state.at("growth_factor");
  backoff_factor_ = state.at("backoff_factor");
  growth_interval_ = static_cast<int64_t>(interval);
  growth_tracker_ = static_cast<int64_t>(tracker);
}

void GradScaler::save_metadata(std::map<std::string, std::string>& metadata, const std::string& prefix) const {
  for (const auto& [key, value] : state_dict()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);  // 17 significant digits read back as the same double
    metadata[prefix + key] = text;
  }
}

void GradScaler::load_metadata(const std::map<std::string, std::string>& metadata, const std::string& prefix) {
  if (!enabled_) return;
  std::map<std::string, double> state;
  for (const char* key : kStateKeys) {
    auto it = metadata.find(prefix + key);
    COHORT_CHECK(it != metadata.end(), "GradScaler::load_metadata: no \"", prefix + key, "\" in the metadata; hint: "
                 "save it with save_metadata() (from an enabled GradScaler) and load with the same prefix");
    char* end = nullptr;
    state[key] = std::strtod(it->second.c_str(), &end);
    COHORT_CHECK(end && *end == '\0' && !it->second.empty(), "GradScaler::load_metadata: \"", prefix + key,
                 "\" is not a number: \"", it->second, "\"");
  }
  load_state_dict(state);
}

}  // namespace cohort::optim
