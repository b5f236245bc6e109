// bfloat16 and float16 in the CPU kernels: the contiguous conversions to and from float32 (vectorised
// per CPU, convert.cpp), and the helpers with which a float32 kernel serves the narrow dtypes
// (Note [Reduced floating dtypes] in src/ops/README.md): inputs widened to float32, the kernel run
// into a float32 result, the result rounded to nearest-even into the narrow output once.
#pragma once

#include <cstdint>
#include <utility>

#include "cohort/core/tensor.h"
#include "kernels.h"

namespace cohort::kernel {

namespace vec {
// out[i] = in[i] rounded to nearest, ties to even; NaN becomes 0x7FC0 (bfloat16) or keeps its sign
// with payload 0x200 (half); what half cannot hold becomes inf, its subnormals are exact.
// The widening ones are exact. Each picks the CPU's instructions at run time (AVX512_BF16
// vcvtne2ps2bf16, AVX-512 or F16C vcvtps2ph/vcvtph2ps) and gives the same bits on every CPU.
void float_to_bfloat16(uint16_t* out, const float* in, int64_t n);
void bfloat16_to_float(float* out, const uint16_t* in, int64_t n);
void float_to_half(uint16_t* out, const float* in, int64_t n);
void half_to_float(float* out, const uint16_t* in, int64_t n);
// The same for a narrow dtype given at run time (kBFloat16 or kFloat16), on the calling thread.
void narrow_to_float(float* out, const uint16_t* in, DType narrow, int64_t n);
void float_to_narrow(uint16_t* out, const float* in, DType narrow, int64_t n);
// The portable loops the above fall back to (and are tested against).
void float_to_bfloat16_portable(uint16_t* out, const float* in, int64_t n);
void float_to_half_portable(uint16_t* out, const float* in, int64_t n);
void half_to_float_portable(float* out, const uint16_t* in, int64_t n);
// The instructions the conversions use on this CPU, for tests and benchmarks: "avx512_bf16",
// "avx512f", "f16c" or "portable" for bfloat16 and half.
const char* bfloat16_conversion_isa();
const char* half_conversion_isa();
}  // namespace vec

// dst = src for n contiguous elements, where one of the two dtypes is float32 and the other
// bfloat16 or float16.
void convert_contiguous(void* dst, DType dst_dtype, const void* src, DType src_dtype, int64_t n);

// t itself unless it is bfloat16 or float16; then its values as a new contiguous float32 tensor.
Tensor widen(const Tensor& t);
// A new contiguous uninitialised float32 tensor of t's sizes on t's device.
Tensor float32_like(const Tensor& t);

// Runs kernel(target) where target is out, or, when out is bfloat16 or float16, a float32 tensor of
// out's sizes that is then rounded into out. `initialise`: the float32 stand-in starts with out's
// values (for kernels that accumulate into out).
template <class F>
void into(const Tensor& out, F&& kernel, bool initialise = false) {
  if (!is_reduced_floating_point(out.dtype())) return kernel(out);
  Tensor wide = initialise ? widen(out) : float32_like(out);
  kernel(wide);
  copy(out, wide);
}

}  // namespace cohort::kernel
