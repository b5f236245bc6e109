// io::decode_image on JPEG bytes: TurboJPEG's header and scan decoding, the EXIF (APP1/TIFF) walk,
// CMYK conversion and orientation, in every mode and at a DCT-domain scale (fuzz_image.h).
#include "fuzz_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return cohort::fuzz::decode_image_input(data, size, {0xFF, 0xD8, 0xFF});
}
