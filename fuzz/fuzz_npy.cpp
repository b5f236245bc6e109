// io::load_npy: magic, version, header length, the header dict parser, dtype, shape, data size,
// fortran order, big-endian data, bool bytes. What loads must save and load back to the same bytes.
#include <cstring>

#include "cohort/core/error.h"
#include "cohort/io/npy.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = cohort::fuzz::write_input("input.npy", data, size);
  cohort::Tensor t;
  try {
    t = cohort::io::load_npy(path);
  } catch (const cohort::Error&) {
    return 0;
  }
  const auto again = cohort::fuzz::scratch_dir() / "again.npy";
  cohort::io::save_npy(again, t);
  cohort::Tensor u = cohort::io::load_npy(again);
  if (u.sizes() != t.sizes() || u.dtype() != t.dtype() || !u.is_contiguous() ||
      (t.nbytes() > 0 && std::memcmp(u.data_ptr(), t.data_ptr(), t.nbytes()) != 0))
    std::abort();
  return 0;
}
