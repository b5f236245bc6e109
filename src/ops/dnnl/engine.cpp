// One oneDNN engine per process; one stream per thread (streams are not thread-safe).
#include "ops/dnnl/engine.h"

namespace cohort::kernel {

dnnl::engine& dnnl_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& dnnl_stream() {
  thread_local dnnl::stream stream(dnnl_engine());
  return stream;
}

}  // namespace cohort::kernel
