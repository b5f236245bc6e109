// Python's pickle as PyTorch's files use it, the writing half: protocol 2 laid out the way Python's
// pickler writes tensors and dicts. The storage types of both halves are here too.
#include "io/pickle.h"

#include <bit>
#include <map>

#include "cohort/core/error.h"
#include "cohort/core/tensor_impl.h"

namespace cohort::io::detail {

namespace {

struct StorageType {
  const char* name;
  size_t file_element_size;
  DType dtype;  // what cohort loads it as
};
constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", 4, kFloat32}, {"DoubleStorage", 8, kFloat64}, {"LongStorage", 8, kInt64},
    {"IntStorage", 4, kInt32},     {"ByteStorage", 1, kUInt8},     {"BoolStorage", 1, kBool},
    {"HalfStorage", 2, kFloat16},  {"BFloat16Storage", 2, kBFloat16},
    // Widened exactly into a dtype cohort has.
    {"ShortStorage", 2, kInt32},   {"CharStorage", 1, kInt32},
};

}  // namespace

const char* storage_type_of(DType dtype) {
  for (const auto& t : kStorageTypes)
    if (t.dtype == dtype) return t.name;  // the native one comes first
  COHORT_ASSERT(false);
}

bool parse_storage_type(const std::string& type, size_t& file_element_size, DType& dtype, std::string& why) {
  for (const auto& t : kStorageTypes) {
    if (type == t.name) {
      file_element_size = t.file_element_size;
      dtype = t.dtype;
      return true;
    }
  }
  if (type.rfind("Complex", 0) == 0) why = "cohort has no complex dtype";
  else if (type.rfind("Q", 0) == 0) why = "cohort has no quantized dtypes";
  else why = "not a storage type cohort knows";
  return false;
}

// ---- writing ------------------------------------------------------------------------------------

namespace {

using namespace opcode;

class Pickler {
 public:
  explicit Pickler(std::vector<StorageRecord>& storages) : storages_(storages) {}

  std::string run(const PyValue& value) {
    op(PROTO);
    op(2);
    put(value);
    op(STOP);
    return std::move(out_);
  }

 private:
  void op(uint8_t c) { out_.push_back(static_cast<char>(c)); }
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) op(static_cast<uint8_t>(v >> (8 * i)));
  }

  void global(const std::string& module, const std::string& name) {
    const std::string key = module + "\n" + name + "\n";
    if (auto it = memo_.find(key); it != memo_.end()) {
      memo_get(it->second);
      return;
    }
    op(GLOBAL);
    out_ += key;
    const uint32_t index = static_cast<uint32_t>(memo_.size());
    memo_[key] = index;
    if (index < 256) {
      op(BINPUT);
      op(static_cast<uint8_t>(index));
    } else {
      op(LONG_BINPUT);
      le(index, 4);
    }
  }
  void memo_get(uint32_t index) {
    if (index < 256) {
      op(BINGET);
      op(static_cast<uint8_t>(index));
    } else {
      op(LONG_BINGET);
      le(index, 4);
    }
  }

  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      op(BININT1);
      op(static_cast<uint8_t>(v));
    } else if (v >= 0 && v < 65536) {
      op(BININT2);
      le(static_cast<uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      op(BININT);
      le(static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
    } else {
      // LONG1: the shortest little-endian two's complement, as Python's encode_long.
      uint8_t bytes[8];
      for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
      int n = 8;
      while (n > 1 && ((bytes[n - 1] == 0x00 && !(bytes[n - 2] & 0x80)) || (bytes[n - 1] == 0xFF && (bytes[n - 2] & 0x80))))
        --n;
      op(LONG1);
      op(static_cast<uint8_t>(n));
      for (int i = 0; i < n; ++i) op(bytes[i]);
    }
  }

  void string(const std::string& s) {
    op(BINUNICODE);
    COHORT_CHECK(s.size() <= UINT32_MAX, "pickle: a string of ", s.size(), " bytes is too long");
    le(s.size(), 4);
    out_ += s;
  }

  void tuple_of(const std::vector<int64_t>& values) {
    PyValue::Items items(values.begin(), values.end());
    tuple(items);
  }
  void tuple(const PyValue::Items& items) {
    if (items.empty()) {
      op(EMPTY_TUPLE);
      return;
    }
    if (items.size() > 3) op(MARK);
    for (const auto& item : items) put(item);
    op(items.size() == 1 ? TUPLE1 : items.size() == 2 ? TUPLE2 : items.size() == 3 ? TUPLE3 : TUPLE);
  }

  void empty_ordered_dict() {
    global("collections", "OrderedDict");
    op(EMPTY_TUPLE);
    op(REDUCE);
  }

  void tensor(const Tensor& t) {
    COHORT_CHECK(t.defined(), "pickle: cannot write an undefined tensor");
    const TensorImpl& impl = *t.unsafe_impl();
    const DType dtype = impl.dtype();
    const auto key = std::make_pair(impl.storage().get(), dtype);
    auto it = storage_index_.find(key);
    if (it == storage_index_.end()) {
      StorageRecord record;
      record.key = std::to_string(storages_.size());
      record.type = storage_type_of(dtype);
      record.numel = static_cast<int64_t>(impl.storage()->nbytes() / element_size(dtype));
      record.storage = impl.storage();
      record.dtype = dtype;
      storages_.push_back(record);
      it = storage_index_.emplace(key, storages_.size() - 1).first;
    }
    const StorageRecord& record = storages_[it->second];
    global("torch._utils", "_rebuild_tensor_v2");
    op(MARK);
    op(MARK);
    string("storage");
    global("torch", record.type);
    string(record.key);
    string("cpu");
    integer(record.numel);
    op(TUPLE);
    op(BINPERSID);
    integer(impl.offset());
    tuple_of(std::vector<int64_t>(impl.sizes().begin(), impl.sizes().end()));
    tuple_of(std::vector<int64_t>(impl.strides().begin(), impl.strides().end()));
    op(t.requires_grad() ? NEWTRUE : NEWFALSE);
    empty_ordered_dict();  // backward hooks
    op(TUPLE);
    op(REDUCE);
  }

  void put(const PyValue& v) {
    switch (v.kind()) {
      case PyValue::Kind::None: op(NONE); return;
      case PyValue::Kind::Bool: op(v.to_bool() ? NEWTRUE : NEWFALSE); return;
      case PyValue::Kind::Int: integer(v.to_int()); return;
      case PyValue::Kind::Float: {
        op(BINFLOAT);
        const uint64_t bits = std::bit_cast<uint64_t>(v.to_double());
        for (int i = 7; i >= 0; --i) op(static_cast<uint8_t>(bits >> (8 * i)));  // big-endian
        return;
      }
      case PyValue::Kind::String: string(v.to_string()); return;
      case PyValue::Kind::Tensor: tensor(v.to_tensor()); return;
      case PyValue::Kind::Tuple: tuple(v.items()); return;
      case PyValue::Kind::List:
        op(EMPTY_LIST);
        if (!v.items().empty()) {
          op(MARK);
          for (const auto& item : v.items()) put(item);
          op(APPENDS);
        }
        return;
      case PyValue::Kind::Dict:
        if (v.is_ordered_dict()) empty_ordered_dict();
        else op(EMPTY_DICT);
        if (!v.dict_items().empty()) {
          op(MARK);
          for (const auto& [key, value] : v.dict_items()) {
            put(key);
            put(value);
          }
          op(SETITEMS);
        }
        return;
      case PyValue::Kind::Object:
        throw Error("pickle: cannot write an object of class " + v.class_name() +
                    " (only tensors, numbers, strings, None, lists, tuples and dicts)");
    }
  }

  std::string out_;
  std::map<std::string, uint32_t> memo_;
  std::vector<StorageRecord>& storages_;
  std::map<std::pair<const StorageImpl*, DType>, size_t> storage_index_;
};

}  // namespace

std::string pickle(const PyValue& value, std::vector<StorageRecord>& storages) { return Pickler(storages).run(value); }

}  // namespace cohort::io::detail
