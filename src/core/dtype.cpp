// dtype sizes, names and the promotion lattice.
#include "cohort/core/dtype.h"

#include <atomic>
#include <ostream>

namespace cohort {

size_t element_size(DType t) {
  switch (t) {
    case kBool: case kUInt8: return 1;
    case kBFloat16: case kFloat16: return 2;
    case kInt32: case kFloat32: return 4;
    case kInt64: case kFloat64: return 8;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case kBool: return "bool";
    case kUInt8: return "uint8";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kFloat32: return "float32";
    case kFloat64: return "float64";
    case kBFloat16: return "bfloat16";
    case kFloat16: return "float16";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // bfloat16 and float16 each hold values the other cannot: together they need float32.
  if (is_reduced_floating_point(a) && is_reduced_floating_point(b)) return kFloat32;
  // Any other float wins over integers and bool, and a wider float (float32, float64) over a narrow one.
  if (is_reduced_floating_point(a)) return is_floating_point(b) ? b : a;
  if (is_reduced_floating_point(b)) return is_floating_point(a) ? a : b;
  // Order by kind then width; bool < uint8 < int32 < int64 < float32 < float64 holds for every
  // pair of these six (no int8/uint8 sign clash among them).
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

namespace {
std::atomic<DType> g_default_dtype{kFloat32};
}

namespace detail {
void throw_unsupported_dtype(const char* op, DType t) {
  throw TypeError(str(op ? op : "this op", ": ", dtype_name(t), " tensors are not supported; convert with .to(kFloat)"));
}
}  // namespace detail

DType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(DType t) {
  COHORT_CHECK_AS(TypeError, t == kFloat32 || t == kFloat64,
                  "set_default_dtype: expected float32 or float64, got ", t);
  g_default_dtype.store(t, std::memory_order_relaxed);
}

}  // namespace cohort
