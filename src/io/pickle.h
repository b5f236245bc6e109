// Internal to io/: Python's pickle, as far as PyTorch's files use it (torch_file.cpp): a writer of
// protocol 2 and a restricted reader that builds io::PyValue trees.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cohort/core/storage.h"
#include "cohort/io/torch_file.h"

namespace cohort::io::detail {

// The opcodes pickle.cpp and unpickle.cpp use, with pickletools' names.
namespace opcode {
enum : uint8_t {
  MARK = '(', STOP = '.', BININT = 'J', BININT1 = 'K', BININT2 = 'M', NONE = 'N', BINPERSID = 'Q',
  REDUCE = 'R', BINUNICODE = 'X', EMPTY_LIST = ']', APPEND = 'a', BUILD = 'b', GLOBAL = 'c', DICT = 'd',
  APPENDS = 'e', BINGET = 'h', LONG_BINGET = 'j', LIST = 'l', BINPUT = 'q', LONG_BINPUT = 'r', SETITEM = 's',
  TUPLE = 't', SETITEMS = 'u', EMPTY_DICT = '}', EMPTY_TUPLE = ')', BINFLOAT = 'G', PROTO = 0x80, NEWOBJ = 0x81,
  TUPLE1 = 0x85, TUPLE2 = 0x86, TUPLE3 = 0x87, NEWTRUE = 0x88, NEWFALSE = 0x89, LONG1 = 0x8a,
  SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d, STACK_GLOBAL = 0x93, MEMOIZE = 0x94, FRAME = 0x95,
};
}  // namespace opcode

// A storage as the pickle names it through a persistent id ('storage', torch.FloatStorage, key,
// location, numel), and as the reader loads it.
struct StorageRecord {
  std::string key;   // the record is <archive>/data/<key>
  std::string type;  // "FloatStorage", ...
  int64_t numel = 0;
  Storage storage;   // in cohort's dtype `dtype`, numel elements
  DType dtype = kFloat32;
};

// Pickles `value` as Python's pickler does at protocol 2 (tensors through
// torch._utils._rebuild_tensor_v2, OrderedDicts through collections.OrderedDict). Appends one
// StorageRecord (key, type, numel, storage) per distinct storage of the tensors, in order of first
// use, keys "0", "1", ...; throws a cohort::Error on an undefined tensor or an object.
std::string pickle(const PyValue& value, std::vector<StorageRecord>& storages);

struct UnpickleContext {
  // Returns the storage of a persistent id (the same key must give the same storage), filling
  // `storage` and `dtype` of the record it is given.
  std::function<void(StorageRecord&)> load_storage;
  // The archive is a TorchScript one (libtorch's C++ torch::save): its __torch__.* classes load as
  // objects.
  bool torchscript = false;
  // Throws a cohort::Error that names the file; `what` says what is wrong.
  std::function<void(const std::string& what)> fail;
  // When set, receives the bytes the reader charged to its budget (Note [Unpickling in bounded
  // memory] in unpickle.cpp), for tests that measure real files against it.
  uint64_t* charged = nullptr;
  // The size the budget is a multiple of; 0: the pickle's. An archive whose pickle was deflated
  // passes its own size, so the budget stays a multiple of the bytes on disk.
  uint64_t budget_base = 0;
};

// Unpickles `bytes`, accepting only the opcodes and globals of PyTorch's tensor files
// (the list is in torch_file.h), in memory bounded by a multiple of bytes.size() (Note [Unpickling in
// bounded memory] in unpickle.cpp): a pickle that needs more, or nests deeper, is refused while it is read.
PyValue unpickle(std::string_view bytes, const UnpickleContext& context);

// Name of the storage type of a dtype ("FloatStorage"), and the element size and cohort dtype of a
// storage type name; false when cohort cannot load it (`why` says so).
const char* storage_type_of(DType dtype);
bool parse_storage_type(const std::string& type, size_t& file_element_size, DType& dtype, std::string& why);

}  // namespace cohort::io::detail
