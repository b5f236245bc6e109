// io::read_torch_file: the zip archive (through libzip), the version and byteorder records, the
// restricted unpickler (opcodes, globals, the memo, marks, nesting) and the storages behind each
// tensor view. What loads must write and load back to the same tensors; loading the tiny run's model
// and optimizer from it must succeed or throw a cohort::Error.
#include <cstring>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/io/serialize.h"
#include "cohort/io/torch_file.h"
#include "fuzz_util.h"

namespace {

// Every tensor of a value, depth first, so the value read back can be compared with the first.
void tensors_of(const cohort::io::PyValue& v, std::vector<cohort::Tensor>& out) {
  if (v.is_tensor()) out.push_back(v.to_tensor());
  if (v.is_list() || v.is_tuple())
    for (const auto& item : v.items()) tensors_of(item, out);
  if (v.is_dict() || v.is_object())
    for (const auto& [key, value] : v.dict_items()) tensors_of(value, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = cohort::fuzz::write_input("input.pt", data, size);
  cohort::io::PyValue value;
  try {
    value = cohort::io::read_torch_file(path);
  } catch (const cohort::Error&) {
    return 0;
  }
  cohort::fuzz::TinyRun run;
  try {
    cohort::load(run.model, path);
  } catch (const cohort::Error&) {
  }
  try {
    cohort::load(*run.optimizer, path);
  } catch (const cohort::Error&) {
  }
  if (value.is_object()) return 0;  // libtorch's archives are read, never written
  const auto again = cohort::fuzz::scratch_dir() / "again.pt";
  cohort::io::write_torch_file(again, value);
  std::vector<cohort::Tensor> first, second;
  tensors_of(value, first);
  tensors_of(cohort::io::read_torch_file(again), second);
  if (first.size() != second.size()) std::abort();
  for (size_t i = 0; i < first.size(); ++i) {
    const cohort::Tensor& a = first[i];
    const cohort::Tensor& b = second[i];
    if (a.sizes() != b.sizes() || a.dtype() != b.dtype() || a.strides() != b.strides()) std::abort();
    // Zero strides can make a huge tensor of a few bytes; compare the small ones byte for byte.
    if (a.numel() > (1 << 16)) continue;
    const cohort::Tensor ca = a.contiguous(), cb = b.contiguous();
    if (ca.nbytes() > 0 && std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) != 0) std::abort();
  }
  return 0;
}
