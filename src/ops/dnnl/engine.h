// The oneDNN CPU engine and this thread's stream, shared by every oneDNN kernel.
#pragma once

#include <dnnl.hpp>

namespace cohort::kernel {

dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();

}  // namespace cohort::kernel
