// io::load_safetensors and load_safetensors_metadata: header length, the JSON header (syntax,
// duplicate keys, dtypes, shapes, offsets: bounds, overlaps, holes), BOOL bytes. What loads must
// save and load back to the same tensors and metadata.
#include <cstring>

#include "cohort/core/error.h"
#include "cohort/io/safetensors.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  const auto path = fuzz::write_input("input.safetensors", data, size);
  io::Metadata metadata;
  try {
    metadata = io::load_safetensors_metadata(path);
  } catch (const Error&) {
  }
  OrderedDict<std::string, Tensor> tensors;
  try {
    tensors = io::load_safetensors(path);
  } catch (const Error&) {
    return 0;
  }
  const auto again = fuzz::scratch_dir() / "again.safetensors";
  io::save_safetensors(again, tensors, metadata);
  auto reloaded = io::load_safetensors(again);
  if (reloaded.size() != tensors.size() || io::load_safetensors_metadata(again) != metadata) std::abort();
  for (const auto& item : tensors) {
    const Tensor* u = reloaded.find(item.key());
    const Tensor& t = item.value();
    if (!u || u->sizes() != t.sizes() || u->dtype() != t.dtype() ||
        (t.nbytes() > 0 && std::memcmp(u->data_ptr(), t.data_ptr(), t.nbytes()) != 0))
      std::abort();
  }
  return 0;
}
