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
  // oneDNN's ISA says whether it may use the tiles (the CPU has them and the kernel grants them) and
  // whether it may use AVX512_BF16 (ONEDNN_MAX_CPU_ISA can forbid both, as if the CPU lacked them);
  // the conversions' ISA whether the CPU has AVX512_BF16 at all.
  const bool bf16_instructions = std::string(kernel::vec::bfloat16_conversion_isa()) == "avx512_bf16" &&
                                 (info.cpu_isa == "avx512_core_bf16" || info.cpu_isa == "avx512_core_amx");
  info.bfloat16 = info.cpu_isa.find("amx") != std::string::npos ? "AMX tiles"
                  : bf16_instructions                            ? "AVX512_BF16"
                                                                 : "none";
  info.float16 = "none";
  return info;
}

namespace {
// backend_info() of this process, found once: the CPU and oneDNN's ISA do not change while it runs.
const BackendInfo& this_backend() {
  static const BackendInfo info = backend_info();
  return info;
}
}  // namespace

bool computes_natively(DType dtype) {
  return (dtype == kBFloat16 ? this_backend().bfloat16 : this_backend().float16) != "none";
}

std::string slow_precision_reason(DType dtype) {
  if (computes_natively(dtype)) return "";
  const BackendInfo& info = this_backend();
  if (dtype == kBFloat16)
    return "it has neither AVX512_BF16 nor AMX (oneDNN's ISA here: " + info.cpu_isa +
           "), so bfloat16 matrix products and convolutions compute through conversions to float32 and back "
           "(ResNet-18 training ran at 0.53x of float32's speed on an AVX2 AMD EPYC); bfloat16 only saves "
           "activation memory here";
  return "oneDNN " + info.onednn_version +
         " has no float16 matrix products or convolutions on CPUs, so float16 computes through conversions to "
         "float32 and back; float16 only saves activation memory here";
}

}  // namespace cohort
