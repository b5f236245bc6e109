// io::decode_image on PNG bytes: stb_image's chunk, zlib and filter decoding (palettes, 16-bit,
// interlacing), the size limit and the channel conversions, in every mode (fuzz_image.h).
#include "fuzz_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return cohort::fuzz::decode_image_input(data, size, {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'});
}
