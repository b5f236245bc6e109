// Internal-assert failures and the printers of the small core types.
#include "cohort/core/error.h"

#include <ostream>

#include "cohort/core/array_ref.h"
#include "cohort/core/scalar.h"

namespace cohort {

namespace detail {
void internal_assert_fail(const char* cond, const char* file, int line) {
  throw Error(str("internal assert failed: ", cond, " at ", file, ":", line,
                  "; this is a bug in cohort, please report it"));
}
}  // namespace detail

std::ostream& operator<<(std::ostream& os, IntArrayRef a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << ']';
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_floating_point()) return os << s.to_double();
  if (s.is_bool()) return os << (s.to<bool>() ? "True" : "False");
  return os << s.to_long();
}

}  // namespace cohort
