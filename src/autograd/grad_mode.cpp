// Grad mode is per thread (replica threads copy the caller's); anomaly mode is per process.
#include "cohort/autograd/grad_mode.h"

#include <atomic>

namespace cohort {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference_mode = false;
std::atomic<bool> g_anomaly_enabled{false};
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }
InferenceMode::InferenceMode(bool enabled) : grad_(!enabled), previous_(t_inference_mode) { t_inference_mode = enabled; }
InferenceMode::~InferenceMode() { t_inference_mode = previous_; }
bool InferenceMode::is_enabled() { return t_inference_mode; }
bool AnomalyMode::is_enabled() { return g_anomaly_enabled.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { g_anomaly_enabled.store(enabled, std::memory_order_relaxed); }

}  // namespace cohort
