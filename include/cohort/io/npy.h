// NumPy's .npy format (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html): one
// array per file, readable by numpy.load and written byte for byte as numpy.save writes it.
//
//   io::save_npy("x.npy", x);        // np.load("x.npy")
//   Tensor y = io::load_npy("y.npy"); // np.save("y.npy", a)
//
// dtypes: <f4 <f8 <f2 <i8 <i4 |u1 |b1 (float32, float64, float16, int64, int32, uint8, bool). numpy
// has no bfloat16: saving one is a TypeError (save .to(kFloat32), or use safetensors' BF16).
#pragma once

#include <filesystem>

#include "cohort/core/tensor.h"

namespace cohort::io {

// Writes format version 1.0 (2.0 only if the header needs it, as numpy does), C order, any strides
// (by value), atomically (Note [Atomic writes] in src/io/file_util.h). Throws a cohort::Error naming
// the file on failure; the old file, if any, is then unchanged.
void save_npy(const std::filesystem::path& path, const Tensor& tensor);

// Reads versions 1.0, 2.0 and 3.0 into a contiguous CPU tensor. Big-endian data ('>f4') is
// byte-swapped; fortran_order True is loaded as the same logical array (read transposed, then made
// C-contiguous). Everything is validated: magic, version, header length, the header dict ('descr',
// 'fortran_order', 'shape', no other keys), the data size (neither short nor trailing bytes) and bool
// bytes (0 or 1); a malformed file throws a cohort::Error "load_npy: <path>: <what is wrong>".
Tensor load_npy(const std::filesystem::path& path);

}  // namespace cohort::io
