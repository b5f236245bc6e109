// Reading an ONNX model back far enough to check what export_onnx wrote (cohort/io/onnx.h).
#include <fstream>
#include <sstream>
#include <utility>

#include "cohort/core/error.h"
#include "cohort/io/onnx.h"
#include "io/onnx_proto.h"

namespace cohort::io {

namespace {

constexpr const char* kOp = "read_onnx_summary";

class Reader {
 public:
  explicit Reader(const std::string& where) : where_(where) {}

  std::vector<proto::Field> fields(std::string_view message) { return proto::parse(message, kOp, where_); }

  [[noreturn]] void fail(const std::string& what) const { throw Error(cohort::detail::str(kOp, ": ", where_, ": ", what)); }

  std::string_view bytes(const proto::Field& f, const char* what) const {
    if (f.wire_type != 2) fail(cohort::detail::str(what, " is not length-delimited (wire type ", f.wire_type, ")"));
    return f.bytes;
  }
  uint64_t number(const proto::Field& f, const char* what) const {
    if (f.wire_type != 0) fail(cohort::detail::str(what, " is not a varint (wire type ", f.wire_type, ")"));
    return f.varint;
  }

  // TypeProto -> elem type and dims.
  void type(std::string_view message, OnnxSummary::Value& v) {
    for (const auto& f : fields(message)) {
      if (f.number != 1) continue;  // tensor_type
      for (const auto& t : fields(bytes(f, "TypeProto.tensor_type"))) {
        if (t.number == 1) v.elem_type = static_cast<int32_t>(number(t, "elem_type"));
        if (t.number != 2) continue;
        for (const auto& d : fields(bytes(t, "shape"))) {
          if (d.number != 1) continue;
          std::string dim = "?";
          for (const auto& x : fields(bytes(d, "dim"))) {
            if (x.number == 1) dim = std::to_string(static_cast<int64_t>(number(x, "dim_value")));
            if (x.number == 2) dim = std::string(bytes(x, "dim_param"));
          }
          v.dims.push_back(dim);
        }
      }
    }
  }

  OnnxSummary::Value value_info(std::string_view message) {
    OnnxSummary::Value v;
    for (const auto& f : fields(message)) {
      if (f.number == 1) v.name = bytes(f, "ValueInfoProto.name");
      if (f.number == 2) type(bytes(f, "ValueInfoProto.type"), v);
    }
    return v;
  }

  OnnxSummary::Initializer initializer(std::string_view message) {
    OnnxSummary::Initializer init;
    for (const auto& f : fields(message)) {
      if (f.number == 1) {
        if (f.wire_type == 2) {  // packed
          for (uint64_t d : proto::parse_packed_varints(f.bytes, kOp, where_))
            init.dims.push_back(static_cast<int64_t>(d));
        } else {
          init.dims.push_back(static_cast<int64_t>(number(f, "TensorProto.dims")));
        }
      }
      if (f.number == 2) init.data_type = static_cast<int32_t>(number(f, "TensorProto.data_type"));
      if (f.number == 8) init.name = bytes(f, "TensorProto.name");
      if (f.number == 9) init.raw_bytes = bytes(f, "TensorProto.raw_data").size();
    }
    const int64_t size = element_size(init.data_type);
    if (size > 0) {
      uint64_t numel = 1;
      for (int64_t d : init.dims) {
        if (d < 0) fail(cohort::detail::str("initializer '", init.name, "' has a negative dimension ", d));
        if (d > 0 && numel > (uint64_t{1} << 62) / static_cast<uint64_t>(d))
          fail(cohort::detail::str("initializer '", init.name, "' is too large"));
        numel *= static_cast<uint64_t>(d);
      }
      if (init.raw_bytes != numel * static_cast<uint64_t>(size))
        fail(cohort::detail::str("initializer '", init.name, "' has ", init.raw_bytes, " bytes of raw data, but its ",
                         init.dims.size(), " dims need ", numel * static_cast<uint64_t>(size)));
    }
    return init;
  }

  static int64_t element_size(int32_t type) {
    switch (type) {
      case 1: case 6: return 4;    // float, int32
      case 7: case 11: return 8;   // int64, double
      case 2: case 9: return 1;    // uint8, bool
      default: return 0;           // not checked
    }
  }

 private:
  std::string where_;
};

}  // namespace

OnnxSummary read_onnx_summary(const std::string& bytes, const std::string& where) {
  Reader r(where);
  OnnxSummary s;
  bool has_graph = false;
  for (const auto& f : r.fields(bytes)) {
    if (f.number == 1) s.ir_version = static_cast<int64_t>(r.number(f, "ModelProto.ir_version"));
    if (f.number == 2) s.producer = r.bytes(f, "ModelProto.producer_name");
    if (f.number == 8) {
      std::string domain;
      int64_t version = 0;
      for (const auto& o : r.fields(r.bytes(f, "ModelProto.opset_import"))) {
        if (o.number == 1) domain = r.bytes(o, "OperatorSetIdProto.domain");
        if (o.number == 2) version = static_cast<int64_t>(r.number(o, "OperatorSetIdProto.version"));
      }
      if (domain.empty() || domain == "ai.onnx") s.opset = version;
    }
    if (f.number == 14) {
      std::pair<std::string, std::string> entry;
      for (const auto& e : r.fields(r.bytes(f, "ModelProto.metadata_props"))) {
        if (e.number == 1) entry.first = r.bytes(e, "StringStringEntryProto.key");
        if (e.number == 2) entry.second = r.bytes(e, "StringStringEntryProto.value");
      }
      s.metadata.push_back(std::move(entry));
    }
    if (f.number != 7) continue;
    has_graph = true;
    for (const auto& g : r.fields(r.bytes(f, "ModelProto.graph"))) {
      if (g.number == 1) {
        for (const auto& n : r.fields(r.bytes(g, "GraphProto.node")))
          if (n.number == 4) s.ops.emplace_back(r.bytes(n, "NodeProto.op_type"));
      }
      if (g.number == 5) s.initializers.push_back(r.initializer(r.bytes(g, "GraphProto.initializer")));
      if (g.number == 11) s.inputs.push_back(r.value_info(r.bytes(g, "GraphProto.input")));
      if (g.number == 12) s.outputs.push_back(r.value_info(r.bytes(g, "GraphProto.output")));
    }
  }
  if (!has_graph) r.fail("no graph (not an ONNX model)");
  return s;
}

OnnxSummary read_onnx_summary(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(cohort::detail::str(kOp, ": ", path.string(), ": cannot open the file"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return read_onnx_summary(ss.str(), path.string());
}

}  // namespace cohort::io
