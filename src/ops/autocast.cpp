// Autocast's per-thread state and the casts of the ops that have a policy (Note [Autocast] in
// README.md).
#include "cohort/ops/autocast.h"

#include <atomic>
#include <iostream>
#include <memory>
#include <unordered_map>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/backend.h"
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

// Note [Slow reduced precision]
// A user who asks for bfloat16 or float16 autocast wants speed (and memory). On a CPU without
// AVX512_BF16 or AMX, oneDNN computes bfloat16 products and convolutions through conversions to float32
// and back, and float16 always does so with oneDNN 2.6: correct, but slower than float32 (ResNet-18
// training at 0.53x on an AVX2 AMD EPYC), which nothing else would tell. So the first autocast region
// of a process with such a dtype says so on stderr, once per dtype, with the reason
// (slow_precision_reason in ops/backend.h). Kernels that compute in float32 and store bfloat16 would
// keep the memory saving, but the matrix products and convolutions, most of a training step, would
// still do float32's arithmetic plus a conversion each way: at best float32's speed, which float32
// itself already has. cohort does not build them; the advice is float32 (BENCHMARKS.md, "bfloat16
// without bfloat16 instructions", measures the gap).
void warn_if_slow(DType dtype) {
  static std::atomic<bool> warned_bf16{false}, warned_f16{false};
  std::atomic<bool>& warned = dtype == kBFloat16 ? warned_bf16 : warned_f16;
  if (warned.load(std::memory_order_relaxed) || computes_natively(dtype) || warned.exchange(true)) return;
  std::cerr << "cohort: warning: autocast to " << dtype << " is slower than float32 on this CPU: "
            << slow_precision_reason(dtype) << "; hint: train in float32 here unless the memory matters\n";
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
  if (enabled) warn_if_slow(dtype);
}

AutocastGuard::~AutocastGuard() {
  decrement_nesting();
  t_state.enabled = enabled_;
  t_state.dtype = dtype_;
  t_state.cache_enabled = cache_enabled_;
}

bool is_cpu_enabled() { return t_state.enabled; }
void set_cpu_enabled(bool enabled) {
  t_state.enabled = enabled;
  if (enabled) warn_if_slow(t_state.dtype);
}
DType get_autocast_cpu_dtype() { return t_state.dtype; }
void set_autocast_cpu_dtype(DType dtype) {
  check_dtype("set_autocast_cpu_dtype", dtype);
  t_state.dtype = dtype;
  if (t_state.enabled) warn_if_slow(dtype);
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
