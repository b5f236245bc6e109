// The fused inf/NaN check and unscale of one float32 gradient (Note [Fused unscale] in
// src/ops/amp_unscale.cpp).
#include <atomic>
#include <cstring>

#include "ops/cpu/loops.h"
#include "ops/cpu/optimizer_kernels.h"

namespace cohort::kernel {

bool check_and_unscale(float* g, int64_t n, float inv_scale) {
  std::atomic<bool> found{false};
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    uint32_t bad = 0;
    if (inv_scale == 1.0f) {
      for (int64_t i = begin; i < end; ++i) {
        uint32_t u;
        std::memcpy(&u, g + i, sizeof u);
        bad |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
      }
    } else {
      for (int64_t i = begin; i < end; ++i) {
        uint32_t u;
        std::memcpy(&u, g + i, sizeof u);
        bad |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
        g[i] *= inv_scale;
      }
    }
    if (bad) found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}

}  // namespace cohort::kernel
