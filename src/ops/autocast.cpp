// Autocast's per-thread state and the casts of the ops that have a policy (Note [Autocast] in
// README.md).
#include "cohort/ops/autocast.h"

#include <memory>
#include <unordered_map>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "ops/autocast_casts.h"

namespace cohort::autocast {
namespace {

thread_local State t_state;
thread_local int t_nesting = 0;

// A float32 leaf's cast, valid while the leaf is alive, unchanged (its version) and used with grad
// mode as it was when cast (a cast made under no_grad has no graph to reach the leaf).
struct CachedCast {
  std::weak_ptr<TensorImpl> source;
  uint32_t version = 0;
  bool with_graph = false;
  DType dtype = kBFloat16;
  Tensor cast;
};
thread_local std::unordered_map<const TensorImpl*, CachedCast> t_cache;

void check_dtype(const char* where, DType dtype) {
  COHORT_CHECK(dtype == kBFloat16 || dtype == kFloat16, where, ": CPU autocast computes in bfloat16 or float16, got ",
               dtype);
}

bool eligible(const Tensor& t) {
  return t.defined() && is_floating_point(t.dtype()) && t.dtype() != kFloat64;
}

}  // namespace

AutocastGuard::AutocastGuard(DType dtype, bool enabled, bool cache_enabled)
    : enabled_(t_state.enabled), dtype_(t_state.dtype), cache_enabled_(t_state.cache_enabled) {
  check_dtype("AutocastGuard", dtype);
  t_state.enabled = enabled;
  t_state.dtype = dtype;
  t_state.cache_enabled = cache_enabled;
  increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  decrement_nesting();
  t_state.enabled = enabled_;
  t_state.dtype = dtype_;
  t_state.cache_enabled = cache_enabled_;
}

bool is_cpu_enabled() { return t_state.enabled; }
void set_cpu_enabled(bool enabled) { t_state.enabled = enabled; }
DType get_autocast_cpu_dtype() { return t_state.dtype; }
void set_autocast_cpu_dtype(DType dtype) {
  check_dtype("set_autocast_cpu_dtype", dtype);
  t_state.dtype = dtype;
}
bool is_autocast_cache_enabled() { return t_state.cache_enabled; }
void set_autocast_cache_enabled(bool enabled) { t_state.cache_enabled = enabled; }
void clear_cache() { t_cache.clear(); }
int increment_nesting() { return ++t_nesting; }
int decrement_nesting() {
  if (--t_nesting == 0 && !t_cache.empty()) clear_cache();
  return t_nesting;
}
bool is_enabled() { return false; }
void set_enabled(bool enabled) {
  COHORT_CHECK(!enabled, "autocast::set_enabled: that is GPU autocast, and cohort runs on CPU devices; ",
               "use autocast::set_cpu_enabled(true) or an AutocastGuard");
}

State current_state() { return t_state; }

StateGuard::StateGuard(const State& state) : previous_(t_state) {
  t_state = state;
  increment_nesting();
}

StateGuard::~StateGuard() {
  decrement_nesting();
  t_state = previous_;
}

bool active() { return t_state.enabled && !t_state.inside_cast_op; }

CastOpScope::CastOpScope() : previous_(t_state.inside_cast_op) { t_state.inside_cast_op = true; }
CastOpScope::~CastOpScope() { t_state.inside_cast_op = previous_; }

Tensor to_lower(const Tensor& t) {
  const DType dtype = t_state.dtype;
  if (!eligible(t) || t.dtype() == dtype) return t;
  const bool cacheable = t_state.cache_enabled && t.dtype() == kFloat32 && t.requires_grad() && t.is_leaf();
  if (!cacheable) return t.to(dtype);
  const bool with_graph = GradMode::is_enabled();
  const TensorImpl* key = t.impl().get();
  auto it = t_cache.find(key);
  if (it != t_cache.end()) {
    const CachedCast& c = it->second;
    if (c.source.lock() == t.impl() && c.version == t._version() && c.with_graph == with_graph && c.dtype == dtype)
      return c.cast;
  }
  Tensor cast = t.to(dtype);
  t_cache[key] = CachedCast{t.impl(), t._version(), with_graph, dtype, cast};
  return cast;
}

Tensor to_float32(const Tensor& t) { return eligible(t) && t.dtype() != kFloat32 ? t.to(kFloat32) : t; }

}  // namespace cohort::autocast
