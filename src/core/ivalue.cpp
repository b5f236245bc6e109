// IValue's kind names and its one error.
#include "cohort/core/ivalue.h"

namespace cohort {

const char* IValue::tagKind() const {
  static const char* const kNames[] = {"None", "Double", "Int", "Bool", "String", "Tensor", "IntList"};
  return kNames[value_.index()];
}

void IValue::throw_wrong_kind(const char* wanted) const {
  throw TypeError(detail::str("IValue: expected ", wanted, " but got ", tagKind()));
}

}  // namespace cohort
