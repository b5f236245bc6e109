// Which oneDNN implementation serves bfloat16 on this CPU (Note [bfloat16 matmul] in matmul.cpp,
// Note [bfloat16 convolution] in conv.cpp), for tests and benchmarks: oneDNN's implementation name
// ("brg:avx512_core_amx_bf16", ...), or "float32 (widened)" where oneDNN has no bfloat16 kernel.
#pragma once

namespace cohort::kernel {

const char* bfloat16_matmul_implementation();
const char* bfloat16_conv_implementation();

}  // namespace cohort::kernel
