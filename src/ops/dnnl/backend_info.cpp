// backend_info(): oneDNN's version and the ISA it picked on this machine.
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include "cohort/ops/backend.h"

#include "ops/cpu/reduced.h"

namespace cohort {

namespace {

std::string isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "all (no specific ISA)";
  }
}

}  // namespace

BackendInfo backend_info() {
  const dnnl_version_t* v = dnnl_version();
  BackendInfo info;
  info.onednn_version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  info.cpu_isa = isa_name(dnnl_get_effective_cpu_isa());
  info.openmp = std::to_string(_OPENMP);
  info.winograd = winograd_implementation();
  // oneDNN's ISA says whether it may use the tiles (the CPU has them and the kernel grants them);
  // the conversions' ISA whether the CPU has AVX512_BF16.
  const bool bf16_instructions = std::string(kernel::vec::bfloat16_conversion_isa()) == "avx512_bf16";
  info.bfloat16 = info.cpu_isa.find("amx") != std::string::npos ? "AMX tiles"
                  : bf16_instructions                            ? "AVX512_BF16"
                                                                 : "none";
  return info;
}

}  // namespace cohort
