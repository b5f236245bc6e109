// What the emitters share (onnx_graph.h): ONNX's dtype codes, attributes, and the table from a traced
// op's name to its emitter, gathered from each family's list.
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cohort/core/error.h"
#include "io/onnx_graph.h"

namespace cohort::io {

namespace detail {

using proto::Writer;

// TensorProto.DataType and AttributeProto.AttributeType values.
constexpr int32_t kOnnxFloat = 1, kOnnxUInt8 = 2, kOnnxInt32 = 6, kOnnxInt64 = 7, kOnnxBool = 9, kOnnxDouble = 11;
constexpr int32_t kOnnxFloat16 = 10, kOnnxBFloat16 = 16;
constexpr int kAttrFloat = 1, kAttrInt = 2, kAttrString = 3, kAttrInts = 7, kAttrStrings = 8;

int32_t onnx_type(DType t) {
  switch (t) {
    case kFloat32: return kOnnxFloat;
    case kFloat64: return kOnnxDouble;
    case kInt64: return kOnnxInt64;
    case kInt32: return kOnnxInt32;
    case kUInt8: return kOnnxUInt8;
    case kBool: return kOnnxBool;
    case kFloat16: return kOnnxFloat16;
    case kBFloat16: return kOnnxBFloat16;
  }
  return 0;
}

Attribute Attribute::i(const std::string& name, int64_t v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrInt), a.w.int64(3, v);
  return a;
}
Attribute Attribute::f(const std::string& name, double v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrFloat), a.w.float32(2, static_cast<float>(v));
  return a;
}
Attribute Attribute::s(const std::string& name, const std::string& v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrString), a.w.bytes(4, v);
  return a;
}
Attribute Attribute::ints(const std::string& name, const std::vector<int64_t>& v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrInts);
  for (int64_t x : v) a.w.int64(8, x);
  return a;
}
Attribute Attribute::strings(const std::string& name, const std::vector<std::string>& v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrStrings);
  for (const std::string& x : v) a.w.bytes(9, x);
  return a;
}

const std::unordered_map<std::string, Emitter>& emitters() {
  static const auto table = [] {
    std::unordered_map<std::string, Emitter> t;
    for (EmitterList list : {layer_emitters(), elementwise_emitters(), shape_emitters(), sequence_emitters(),
                             transformer_emitters()}) {
      for (auto& [op, emit] : list) {
        const bool fresh = t.emplace(op, std::move(emit)).second;
        COHORT_CHECK(fresh, "export_onnx: two emitters for the op ", op, "; this is a bug in the exporter");
      }
    }
    return t;
  }();
  return table;
}

}  // namespace detail

}  // namespace cohort::io
