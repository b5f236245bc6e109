// data::CIFAR10 on one batch file (test_batch.bin = the input): record size, labels, the CHW -> HWC
// conversion.
#include "cohort/core/error.h"
#include "cohort/data/cifar10.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = cohort::fuzz::write_input("test_batch.bin", data, size);
  try {
    cohort::data::CIFAR10 set(path.parent_path().string(), /*train=*/false);
    if (set.size() * 3073 != static_cast<int64_t>(size)) std::abort();
    // The first record's label and its red value at pixel (0, 1) survive the conversion to HWC.
    if (set.labels()[0].item<int64_t>() != data[0]) std::abort();
    if (set.images()[0][0][1][0].item<uint8_t>() != data[1 + 1]) std::abort();
  } catch (const cohort::Error&) {
  }
  return 0;
}
