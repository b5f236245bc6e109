// What the compute backends are (for `cohort info` and bug reports), and the one choice they leave to
// the user: how float32 3x3 convolutions are computed.
#pragma once

#include <string>

#include "cohort/core/dtype.h"

namespace cohort {

struct BackendInfo {
  std::string onednn_version;  // "2.6.3"
  std::string cpu_isa;         // the instruction set oneDNN dispatches to: "avx512_core", "avx2", ...
  std::string openmp;          // the OpenMP version the library was built with: "201511"
  std::string winograd;        // winograd_implementation()
  // How bfloat16 matrix products run here: "AMX tiles" or "AVX512_BF16" (instructions that take
  // bfloat16 and accumulate in float32), or "none" where the CPU has neither: bfloat16 then computes
  // through float32 conversions, correct but slower than float32 itself.
  std::string bfloat16;
  // How float16 computes here: always "none" with oneDNN 2.6, whose CPU matrix products and
  // convolutions take no float16: it computes through float32 conversions, slower than float32.
  std::string float16;
};

BackendInfo backend_info();

// Whether this CPU computes `dtype` (kBFloat16 or kFloat16) natively, i.e. faster than float32; and,
// where it does not, why, in one clause for a warning (empty when native).
// Autocast to such a dtype warns once per process with it (Note [Slow reduced precision] in
// src/ops/autocast.cpp).
bool computes_natively(DType dtype);
std::string slow_precision_reason(DType dtype);

// The algorithm of float32 convolutions on the CPU (the role of PyTorch's torch.backends flags).
// Winograd F(4x4, 3x3) needs about a quarter of direct convolution's multiplications, so it is 1.5x
// to 2x faster on 3x3, stride-1, undilated, ungrouped layers with enough 4x4 output tiles (ResNet's),
// at the price of a larger rounding error: about 1e-5 of the output's scale instead of 1e-6
// (bench/conv_algorithms.cpp measures both).
//   Auto      Winograd where it is faster: 3x3, stride 1, no dilation, no groups and at least 32
//             output tiles (batch x ceil(H/4) x ceil(W/4)); with cohort's kernels also at least 64
//             input and output channels and output sides that are multiples of 4. Direct
//             elsewhere. The default.
//   Direct    always direct (the most accurate; PyTorch 1.13's CPU choice).
//   Winograd  Winograd wherever the layer allows it (3x3, stride 1, no dilation; with cohort's
//             kernels grouped layers too), direct elsewhere.
// The choice is made per layer shape, so a given model and batch always runs the same code; it is
// process-wide and may be changed at any time (kernels built for the old choice are not reused).
// Winograd runs on oneDNN's kernels where oneDNN has them (2.6: AVX-512 CPUs) and on cohort's own
// elsewhere (AVX2); winograd_implementation() says which: "oneDNN" or "cohort".
enum class ConvAlgorithm { Auto, Direct, Winograd };
void set_conv_algorithm(ConvAlgorithm algorithm);
ConvAlgorithm conv_algorithm();
std::string winograd_implementation();

}  // namespace cohort
