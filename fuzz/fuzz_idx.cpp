// data::read_idx on a plain IDX file: magic, type byte, dims, data size.
#include "cohort/core/error.h"
#include "cohort/data/mnist.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = cohort::fuzz::write_input("input-idx3-ubyte", data, size);
  try {
    cohort::Tensor t = cohort::data::read_idx(path.string());
    // Parsed: the header plus the data must be the whole file.
    if (static_cast<size_t>(4 + 4 * t.dim() + t.numel()) != size) std::abort();
  } catch (const cohort::Error&) {
  }
  return 0;
}
