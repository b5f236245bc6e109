// PyTorch's own file format, what Python's torch.save writes (and torch.load reads) since 1.6: a zip
// archive of a pickle (<name>/data.pkl), one record of raw little-endian bytes per tensor storage
// (<name>/data/<key>) and <name>/version. The value in the pickle is a small tree of Python values,
// io::PyValue; cohort::save / cohort::load (io/serialize.h) build and read the trees of a state dict,
// a tensor, a list of tensors and an optimizer's state on top of these functions.
//
//   io::PyValue v = io::read_torch_file("resnet18.pt");      // torch.save(model.state_dict(), ...)
//   auto weights = io::read_torch_state_dict("resnet18.pt");  // "conv1.weight" -> Tensor, ...
//   io::write_torch_file("t.pt", io::PyValue(x));             // torch.load("t.pt") gives x
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/nn/ordered_dict.h"

namespace cohort::io {

// One Python value of such a file: None, bool, int, float, str, a tensor, a list, a tuple, a dict
// (keys of any of these kinds, in order; `ordered` when it was a collections.OrderedDict) or, read
// from libtorch's C++ torch::save archives only, an object of a TorchScript class with attributes.
// Copies share the containers' items (cheap); a value is never changed after it is built.
class PyValue {
 public:
  enum class Kind { None, Bool, Int, Float, String, Tensor, List, Tuple, Dict, Object };
  using Items = std::vector<PyValue>;
  using DictItems = std::vector<std::pair<PyValue, PyValue>>;

  PyValue() = default;  // None
  PyValue(bool value);  // NOLINT: the implicit conversions make trees easy to spell
  PyValue(int value);   // NOLINT
  PyValue(int64_t value);  // NOLINT
  PyValue(double value);  // NOLINT
  PyValue(std::string value);  // NOLINT
  PyValue(const char* value);  // NOLINT
  PyValue(Tensor value);  // NOLINT
  static PyValue list(Items items);
  static PyValue tuple(Items items);
  static PyValue dict(DictItems items, bool ordered = false);
  static PyValue object(std::string class_name, DictItems attributes);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_tuple() const { return kind_ == Kind::Tuple; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_object() const { return kind_ == Kind::Object; }
  bool is_ordered_dict() const { return kind_ == Kind::Dict && ordered_; }

  // Each throws a cohort::TypeError naming both kinds when the value is of another kind.
  bool to_bool() const;
  int64_t to_int() const;
  double to_double() const;  // an int or a float
  const std::string& to_string() const;
  const Tensor& to_tensor() const;
  const Items& items() const;           // a list's or a tuple's
  const DictItems& dict_items() const;  // a dict's items or an object's attributes
  const std::string& class_name() const;  // an object's ("__torch__.Module")
  // The value under a string key of a dict or an object, or nullptr.
  const PyValue* find(const std::string& key) const;

  // "None", "int", "dict", "Tensor", "list", "OrderedDict", the class of an object ...
  std::string type_name() const;

  // libtorch's spelling, for the results of pickle_load.
  bool isTensor() const { return is_tensor(); }
  const Tensor& toTensor() const { return to_tensor(); }

 private:
  Kind kind_ = Kind::None;
  bool ordered_ = false;
  bool bool_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::string string_;  // a str, or an object's class
  Tensor tensor_;
  std::shared_ptr<const Items> items_;
  std::shared_ptr<const DictItems> dict_;
};

// Reads a file written by Python's torch.save (PyTorch 1.6 and later) or by cohort::save. Only what
// such files of tensors, state dicts and optimizer states hold is loaded: the pickle's globals must be
// collections.OrderedDict, torch._utils._rebuild_tensor_v2 / _rebuild_parameter and the storage types
// of float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8 and bool; any other global
// (a pickled nn.Module, a numpy array, os.system) or opcode is refused by name. Storages are read into
// cohort's dtypes, widening those cohort lacks (int16 and int8 to int32, exactly); tensors that shared a storage in the file share one in memory, with their offsets
// and strides. The archive of libtorch's C++ torch::save is read too: its modules are objects
// (PyValue::Kind::Object) whose attributes are their tensors and submodules.
// Throws a cohort::Error "read_torch_file: <path>: <what is wrong>" for anything malformed: not a zip,
// a corrupt or truncated record, a big-endian file, a bad opcode, a storage out of range, ...
PyValue read_torch_file(const std::filesystem::path& path);
// The same from a stream (read to its end) or from bytes; `where` names the source in messages.
PyValue read_torch_stream(std::istream& in, const std::string& where = "<stream>");
PyValue read_torch_bytes(std::string bytes, const std::string& where = "<bytes>");

// Writes `value` as Python's torch.save writes it (pickle protocol 2; records stored and 64-byte
// aligned, the archive named after the file's stem, version 3), atomically (Note [Atomic writes] in
// src/io/file_util.h). Tensors that share a storage are written once, with their offsets and strides,
// as PyTorch does; undefined tensors and objects cannot be written (a cohort::Error says which).
void write_torch_file(const std::filesystem::path& path, const PyValue& value);
// The same to a stream or to bytes, the archive named "archive".
void write_torch_stream(std::ostream& out, const PyValue& value);
std::string write_torch_bytes(const PyValue& value);

// Name -> tensor of a state dict file: a dict of str -> tensor (Python's torch.save(model.state_dict())
// or cohort::save(module)), or the modules of a libtorch archive flattened to dotted names
// ("fc.weight"). Throws a cohort::Error naming the file and the first key that is not a tensor.
OrderedDict<std::string, Tensor> read_torch_state_dict(const std::filesystem::path& path);

// Weights trained in PyTorch: the name -> tensor map of a file written by Python's
// torch.save(model.state_dict()) (PyTorch 1.6 and later; the OrderedDict's _metadata attribute is
// ignored), for module->load_state_dict(...), which names every missing, unexpected and mis-shaped
// key. What such files hold loads as PyTorch wrote it: tensors that shared a storage share one
// (offsets and strides kept, non-contiguous views included), float64 and int64 tensors keep their
// dtype (num_batches_tracked is int64; load_state_dict converts to the module's dtypes). Nothing in
// the file is ever run: any global other than the tensor rebuilds, storage types and OrderedDict
// (a whole pickled nn.Module, a numpy array, os.system) is refused by its name.
//   net->load_state_dict(io::load_pytorch_state_dict("resnet18.pt"));
// A model saved from inside nn.DataParallel or DistributedDataParallel has every key prefixed with
// "module." ("module.conv1.weight"): when every key has it (and none is only that), it is removed, so
// the names are those of the bare model; `stripped_prefix`, when given, is set to the prefix removed
// ("module.") or "" so that the caller can say so.
// Throws a cohort::Error "load_pytorch_state_dict: <path>: ..." (the file is not a state dict: a
// value that is not a tensor is named by its key).
OrderedDict<std::string, Tensor> load_pytorch_state_dict(const std::filesystem::path& path,
                                                         std::string* stripped_prefix = nullptr);

}  // namespace cohort::io
