// PyTorch's file format: the zip archive (zip.h) around a pickle (pickle.h) and the storages' bytes;
// and io::PyValue, the tree of values in it.
#include "cohort/io/torch_file.h"

#include <algorithm>
#include <cstring>
#include <istream>
#include <iterator>
#include <ostream>

#include "cohort/core/error.h"
#include "io/file_util.h"
#include "io/pickle.h"
#include "io/torch_archive.h"
#include "io/zip.h"

namespace cohort::io {

static_assert(std::endian::native == std::endian::little, "io: PyTorch's files hold little-endian bytes");

// ---- PyValue ------------------------------------------------------------------------------------

PyValue::PyValue(bool value) : kind_(Kind::Bool), bool_(value) {}
PyValue::PyValue(int value) : kind_(Kind::Int), int_(value) {}
PyValue::PyValue(int64_t value) : kind_(Kind::Int), int_(value) {}
PyValue::PyValue(double value) : kind_(Kind::Float), float_(value) {}
PyValue::PyValue(std::string value) : kind_(Kind::String), string_(std::move(value)) {}
PyValue::PyValue(const char* value) : kind_(Kind::String), string_(value) {}
PyValue::PyValue(Tensor value) : kind_(Kind::Tensor), tensor_(std::move(value)) {}

PyValue PyValue::list(Items items) {
  PyValue v;
  v.kind_ = Kind::List;
  v.items_ = std::make_shared<const Items>(std::move(items));
  return v;
}

PyValue PyValue::tuple(Items items) {
  PyValue v = list(std::move(items));
  v.kind_ = Kind::Tuple;
  return v;
}

PyValue PyValue::dict(DictItems items, bool ordered) {
  PyValue v;
  v.kind_ = Kind::Dict;
  v.ordered_ = ordered;
  v.dict_ = std::make_shared<const DictItems>(std::move(items));
  return v;
}

PyValue PyValue::object(std::string class_name, DictItems attributes) {
  PyValue v = dict(std::move(attributes));
  v.kind_ = Kind::Object;
  v.string_ = std::move(class_name);
  return v;
}

namespace {
[[noreturn]] void wrong_kind(const PyValue& v, const char* wanted) {
  throw TypeError(cohort::detail::str("PyValue: expected ", wanted, ", got ", v.type_name()));
}
}  // namespace

bool PyValue::to_bool() const {
  if (kind_ != Kind::Bool) wrong_kind(*this, "a bool");
  return bool_;
}
int64_t PyValue::to_int() const {
  if (kind_ != Kind::Int) wrong_kind(*this, "an int");
  return int_;
}
double PyValue::to_double() const {
  if (kind_ == Kind::Int) return static_cast<double>(int_);
  if (kind_ != Kind::Float) wrong_kind(*this, "a number");
  return float_;
}
const std::string& PyValue::to_string() const {
  if (kind_ != Kind::String) wrong_kind(*this, "a str");
  return string_;
}
const Tensor& PyValue::to_tensor() const {
  if (kind_ != Kind::Tensor) wrong_kind(*this, "a Tensor");
  return tensor_;
}
const PyValue::Items& PyValue::items() const {
  if (kind_ != Kind::List && kind_ != Kind::Tuple) wrong_kind(*this, "a list or a tuple");
  return *items_;
}
const PyValue::DictItems& PyValue::dict_items() const {
  if (kind_ != Kind::Dict && kind_ != Kind::Object) wrong_kind(*this, "a dict or an object");
  return *dict_;
}
const std::string& PyValue::class_name() const {
  if (kind_ != Kind::Object) wrong_kind(*this, "an object");
  return string_;
}

const PyValue* PyValue::find(const std::string& key) const {
  if (kind_ != Kind::Dict && kind_ != Kind::Object) return nullptr;
  for (const auto& [k, v] : *dict_)
    if (k.is_string() && k.to_string() == key) return &v;
  return nullptr;
}

std::string PyValue::type_name() const {
  switch (kind_) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::Tensor: return "Tensor";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return ordered_ ? "OrderedDict" : "dict";
    case Kind::Object: return "object of class " + string_;
  }
  return "?";
}

// ---- reading ------------------------------------------------------------------------------------

namespace detail {

namespace {

// Reads a storage's record into cohort's dtype (Note [PyTorch's zip layout] for the record).
void load_storage(ZipReader& zip, const std::string& prefix, StorageRecord& r) {
  size_t file_size = 0;
  std::string why;
  COHORT_ASSERT(parse_storage_type(r.type, file_size, r.dtype, why));  // checked at its GLOBAL
  const std::string name = prefix + "/data/" + r.key;
  const std::optional<uint64_t> actual = zip.size(name);
  if (!actual) zip.fail("storage '" + r.key + "' has no record '" + name + "'");
  const uint64_t numel = static_cast<uint64_t>(r.numel);
  if (numel > *actual / file_size || numel * file_size != *actual)
    zip.fail("storage '" + r.key + "' is a " + r.type + " of " + std::to_string(numel) + " elements, but its record '" +
             name + "' has " + std::to_string(*actual) + " bytes");
  const size_t cohort_size = element_size(r.dtype);
  r.storage = std::make_shared<StorageImpl>(numel * cohort_size, Device());
  if (cohort_size == file_size) {
    zip.read(name, r.storage->data(), *actual);
    if (r.dtype == kBool) {
      const auto* bytes = static_cast<const uint8_t*>(r.storage->data());
      for (uint64_t i = 0; i < numel; ++i)
        if (bytes[i] > 1) zip.fail("storage '" + r.key + "' holds the bool byte " + std::to_string(bytes[i]) + " (not 0 or 1)");
    }
    return;
  }
  // A dtype cohort lacks, widened exactly.
  std::string bytes(*actual, '\0');
  zip.read(name, bytes.data(), bytes.size());
  const char* src = bytes.data();
  if (r.type == "ShortStorage") {
    auto* dst = static_cast<int32_t*>(r.storage->data());
    for (uint64_t i = 0; i < numel; ++i) {
      int16_t v;
      std::memcpy(&v, src + 2 * i, 2);
      dst[i] = v;
    }
  } else {
    COHORT_ASSERT(r.type == "CharStorage");
    auto* dst = static_cast<int32_t*>(r.storage->data());
    for (uint64_t i = 0; i < numel; ++i) dst[i] = static_cast<int8_t>(src[i]);
  }
}

// A pickle of a state dict takes about a hundred bytes per tensor: this is millions of tensors, and
// what a crafted file declares is refused before it is read.
constexpr uint64_t kMaxPickleBytes = uint64_t{256} << 20;
// "3\n", "little": a record of these names that is longer is not PyTorch's.
constexpr uint64_t kMaxSmallRecordBytes = 64;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

PyValue read_archive(ZipReader& zip) {
  if (zip.names().empty()) zip.fail("the zip archive is empty; not a file written by torch.save");
  const std::string& first = zip.names().front();
  const size_t slash = first.find('/');
  if (slash == std::string::npos || slash == 0)
    zip.fail("record '" + first + "' is not inside the archive's folder; not a file written by torch.save");
  const std::string prefix = first.substr(0, slash);
  auto record = [&](const std::string& name) { return zip.size(prefix + "/" + name).has_value(); };
  auto read_small = [&](const std::string& name) {
    const uint64_t n = *zip.size(prefix + "/" + name);
    if (n > kMaxSmallRecordBytes)
      zip.fail("record '" + prefix + "/" + name + "' has " + std::to_string(n) + " bytes; PyTorch writes a few");
    return trimmed(zip.read(prefix + "/" + name));
  };

  const std::string version_name = record(".data/version") ? ".data/version" : "version";
  if (!record(version_name)) zip.fail("no '" + prefix + "/version' record; not a file written by torch.save");
  const std::string version = read_small(version_name);
  if (version.empty() || version.size() > 3 || version.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(version) < 1 || std::stoi(version) > 10)
    zip.fail("unsupported format version '" + version.substr(0, 20) + "' (PyTorch writes 1 to 10)");
  if (record("byteorder")) {
    const std::string order = read_small("byteorder");
    if (order == "big")
      zip.fail("the file was written on a big-endian machine (byteorder 'big'); cohort reads little-endian files "
               "only; hint: load and save it again with PyTorch on a little-endian machine");
    if (order != "little") zip.fail("unknown byteorder '" + order.substr(0, 20) + "'");
  }
  if (!record("data.pkl")) {
    zip.fail(record("model.json") || record("bytecode.pkl")
                 ? "a TorchScript model for another runtime (no data.pkl record); cohort reads tensor files"
                 : "no '" + prefix + "/data.pkl' record; not a file written by torch.save");
  }
  bool torchscript = record("constants.pkl");
  for (const auto& name : zip.names()) torchscript = torchscript || name.rfind(prefix + "/code/", 0) == 0;

  const uint64_t pkl_size = *zip.size(prefix + "/data.pkl");
  if (pkl_size > kMaxPickleBytes)
    zip.fail("record '" + prefix + "/data.pkl' has " + std::to_string(pkl_size) + " bytes, more than the " +
             std::to_string(kMaxPickleBytes >> 20) + " MiB cohort reads (a state dict's pickle takes about 100 bytes "
             "per tensor)");
  const std::string pkl = zip.read(prefix + "/data.pkl");
  UnpickleContext context;
  // A pickle inflated from fewer bytes gets the budget of the bytes the file really has.
  context.budget_base = std::min<uint64_t>(pkl.size(), zip.archive_size());
  context.torchscript = torchscript;
  context.load_storage = [&](StorageRecord& r) { load_storage(zip, prefix, r); };
  context.fail = [&](const std::string& what) { zip.fail(what); };
  return unpickle(pkl, context);
}

std::string archive_name(const std::filesystem::path& path) {
  // PyTorch names the folder after the file, without its extension.
  std::string stem = path.stem().string();
  return stem.empty() ? "archive" : stem;
}

void write_archive(const ZipSink& sink, const std::string& name, const PyValue& value) {
  std::vector<StorageRecord> storages;
  const std::string pkl = pickle(value, storages);
  ZipWriter zip(sink);
  zip.add(name + "/data.pkl", pkl.data(), pkl.size());
  for (const auto& s : storages)
    zip.add(name + "/data/" + s.key, s.storage->data(), static_cast<uint64_t>(s.numel) * element_size(s.dtype));
  zip.add(name + "/version", "3\n", 2);
  zip.finish();
}

}  // namespace

PyValue read_torch_archive(const std::filesystem::path& path, const std::string& op) {
  ZipReader zip(path, op);
  return read_archive(zip);
}

PyValue read_torch_archive(std::istream& in, const std::string& where, const std::string& op) {
  auto bytes = std::make_shared<std::string>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(op + ": " + where + ": reading the stream failed");
  ZipReader zip(std::move(bytes), where, op);
  return read_archive(zip);
}

void write_torch_archive(const std::filesystem::path& path, const PyValue& value, const std::string& op) {
  AtomicWriter writer(path, op);
  try {
    write_archive([&](const void* data, size_t n) { writer.write(data, n); }, archive_name(path), value);
  } catch (const Error& e) {
    // The writer's own failures name the file already; the pickler's (an undefined tensor) do not.
    if (std::string(e.what()).rfind(op + ": ", 0) == 0) throw;
    throw Error(op + ": " + path.string() + ": " + e.what());
  }
  writer.commit();
}

void write_torch_archive(std::ostream& out, const PyValue& value, const std::string& op) {
  write_archive([&](const void* data, size_t n) { out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n)); },
                "archive", value);
  if (!out) throw Error(op + ": writing to the stream failed");
}

namespace {

void flatten(const PyValue& v, const std::string& prefix, OrderedDict<std::string, Tensor>& out,
             const std::string& where) {
  for (const auto& [key, value] : v.dict_items()) {
    if (!key.is_string())
      throw Error(where + "a key is a " + key.type_name() + ", not a str; not a state dict");
    const std::string name = prefix + key.to_string();
    if (value.is_tensor()) {
      if (out.contains(name)) throw Error(where + "the name '" + name + "' appears twice");
      out.insert(name, value.to_tensor());
    } else if (v.is_object() && value.is_object()) {
      flatten(value, name + ".", out, where);  // a submodule of a libtorch archive
    } else if (v.is_dict()) {
      throw Error(where + "the entry '" + name + "' is a " + value.type_name() +
                  ", not a tensor; hint: a state dict maps names to tensors (in Python, save model.state_dict(); "
                  "a checkpoint dict holding one under a key is not read as a state dict)");
    }
    // An object's other attributes (libtorch's "training" flag, ...) are not state.
  }
}

}  // namespace

OrderedDict<std::string, Tensor> state_dict_of(const PyValue& value, const std::string& where, const std::string& op) {
  const std::string prefix = op + ": " + where + ": ";
  if (!value.is_dict() && !value.is_object())
    throw Error(prefix + "the file holds a " + value.type_name() + ", not a state dict (a dict of name -> tensor)");
  OrderedDict<std::string, Tensor> out;
  flatten(value, "", out, prefix);
  return out;
}

}  // namespace detail

PyValue read_torch_file(const std::filesystem::path& path) { return detail::read_torch_archive(path, "read_torch_file"); }

PyValue read_torch_stream(std::istream& in, const std::string& where) {
  return detail::read_torch_archive(in, where, "read_torch_stream");
}

PyValue read_torch_bytes(std::string bytes, const std::string& where) {
  detail::ZipReader zip(std::make_shared<const std::string>(std::move(bytes)), where, "read_torch_bytes");
  return detail::read_archive(zip);
}

void write_torch_file(const std::filesystem::path& path, const PyValue& value) {
  detail::write_torch_archive(path, value, "write_torch_file");
}

void write_torch_stream(std::ostream& out, const PyValue& value) {
  detail::write_torch_archive(out, value, "write_torch_stream");
}

std::string write_torch_bytes(const PyValue& value) {
  std::string out;
  detail::write_archive([&](const void* data, size_t n) { out.append(static_cast<const char*>(data), n); }, "archive",
                        value);
  return out;
}

OrderedDict<std::string, Tensor> read_torch_state_dict(const std::filesystem::path& path) {
  return detail::state_dict_of(read_torch_file(path), path.string(), "read_torch_state_dict");
}

OrderedDict<std::string, Tensor> load_pytorch_state_dict(const std::filesystem::path& path,
                                                         std::string* stripped_prefix) {
  OrderedDict<std::string, Tensor> state = detail::state_dict_of(
      detail::read_torch_archive(path, "load_pytorch_state_dict"), path.string(), "load_pytorch_state_dict");
  if (stripped_prefix) stripped_prefix->clear();
  // DataParallel and DistributedDataParallel hold the model as their child "module".
  const std::string prefix = "module.";
  bool all_prefixed = !state.is_empty();
  for (const auto& item : state)
    all_prefixed = all_prefixed && item.key().size() > prefix.size() && item.key().rfind(prefix, 0) == 0;
  if (!all_prefixed) return state;
  OrderedDict<std::string, Tensor> bare;
  for (const auto& item : state) bare.insert(item.key().substr(prefix.size()), item.value());
  if (stripped_prefix) *stripped_prefix = prefix;
  return bare;
}

}  // namespace cohort::io
