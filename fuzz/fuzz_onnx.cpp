// io::read_onnx_summary (the protobuf wire-format reader under it and the ONNX fields it reads):
// parse or throw a cohort::Error. Whatever the wire-format layer parses must write back, field by
// field, to bytes that parse to the same fields.
#include <cstdlib>
#include <string>

#include "cohort/core/error.h"
#include "cohort/io/onnx.h"
#include "io/onnx_proto.h"

namespace {

using cohort::io::proto::Field;

bool same(const std::vector<Field>& a, const std::vector<Field>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].number != b[i].number || a[i].wire_type != b[i].wire_type || a[i].varint != b[i].varint ||
        a[i].bytes != b[i].bytes)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    cohort::io::read_onnx_summary(bytes, "fuzz");
  } catch (const cohort::Error&) {
  }
  std::vector<Field> fields;
  try {
    fields = cohort::io::proto::parse(bytes, "fuzz", "fuzz");
  } catch (const cohort::Error&) {
    return 0;
  }
  cohort::io::proto::Writer w;
  for (const Field& f : fields) {
    switch (f.wire_type) {
      case 0: w.varint(f.number, f.varint); break;
      case 1: w.fixed64(f.number, f.varint); break;
      case 5: w.fixed32(f.number, static_cast<uint32_t>(f.varint)); break;
      default: w.bytes(f.number, f.bytes); break;
    }
  }
  const std::string again = w.data();
  if (!same(fields, cohort::io::proto::parse(again, "fuzz", "again"))) std::abort();
  return 0;
}
