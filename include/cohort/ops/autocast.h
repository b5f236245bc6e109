// Autocast: mixed precision by op. Inside an autocast region the ops that gain from a narrow dtype
// (matrix products, linear, convolution) cast their float32 inputs to bfloat16 (or float16) and
// compute in it, the ops that lose accuracy in one (losses, prod, transposed convolution) cast
// theirs to float32, and every other op runs in the dtype of its inputs: PyTorch 1.13's CPU autocast
// policy, op for op (tests/fixtures/generate_autocast.py records it from PyTorch).
//
//   {
//     cohort::autocast::AutocastGuard autocast(cohort::kBFloat16);
//     Tensor loss = cross_entropy(model->forward(x), y);  // linear/conv in bfloat16, the loss in float32
//   }
//   loss.backward();  // parameter gradients are float32: the casts are differentiable
//
// Parameters and optimizer state stay float32 (master weights); a float32 parameter that a region
// uses several times is cast once per region (a cache, emptied when the outermost region ends),
// and the cached copy is remade when the parameter changes in place (an optimizer step inside a
// long region), so a region never computes with stale weights. float64 tensors are never cast.
// Inside an op that cast its inputs, the ops it is made of run as called (they are not cast again).
//
// The state is per thread, like grad mode; DataParallel's replica threads and the backward engine's
// workers run with the state of the thread that called them (current_state / StateGuard).
// Ops that compute in bfloat16 run at bfloat16's speed where the CPU has AVX512_BF16 or AMX, and
// correctly but more slowly elsewhere (`cohort info`'s bfloat16 line says which).
#pragma once

#include "cohort/core/dtype.h"

namespace cohort::autocast {

// Enables autocast for this thread's scope, in `dtype` (kBFloat16 or kHalf; kHalf needs loss
// scaling in training: optim/grad_scaler.h), and restores the previous state when it ends.
// `cache_enabled`: cast each float32 leaf parameter once per region (the default).
class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype = kBFloat16, bool enabled = true, bool cache_enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_;
  DType dtype_;
  bool cache_enabled_;
};

// --- libtorch's names (at::autocast::...) -------------------------------------------------------
// A libtorch program enables CPU autocast with these, then calls clear_cache() when it leaves the
// region; increment_nesting()/decrement_nesting() count nested regions as Python's torch.autocast
// does, and the cache empties when the count returns to zero.
bool is_cpu_enabled();
void set_cpu_enabled(bool enabled);
DType get_autocast_cpu_dtype();
void set_autocast_cpu_dtype(DType dtype);  // kBFloat16 or kHalf; anything else is an error
bool is_autocast_cache_enabled();
void set_autocast_cache_enabled(bool enabled);
void clear_cache();
int increment_nesting();
int decrement_nesting();
// GPU autocast: there is no GPU in cohort. is_enabled() is false; set_enabled(true) is an error
// that points to set_cpu_enabled.
bool is_enabled();
void set_enabled(bool enabled);

// --- Carrying the state to other threads ---------------------------------------------------------
struct State {
  bool enabled = false;
  DType dtype = kBFloat16;
  bool cache_enabled = true;
  bool inside_cast_op = false;  // within an op that already cast its inputs
};
State current_state();

// Sets this thread's state for its scope (a worker running on behalf of another thread); the
// worker's cast cache is emptied when the scope ends.
class StateGuard {
 public:
  explicit StateGuard(const State& state);
  ~StateGuard();
  StateGuard(const StateGuard&) = delete;
  StateGuard& operator=(const StateGuard&) = delete;

 private:
  State previous_;
};

}  // namespace cohort::autocast
