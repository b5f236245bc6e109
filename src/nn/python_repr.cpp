// Python's float and tuple reprs.
#include "python_repr.h"

#include <charconv>
#include <sstream>

namespace cohort::nn::detail {

namespace {

std::string with_point(std::string digits) {
  if (digits.find_first_of(".ein") == std::string::npos) digits += ".0";
  return digits;
}

}  // namespace

std::string python_float(double v) {
  std::ostringstream os;
  os << v;
  return with_point(os.str());
}

std::string python_repr(double v) {
  char buf[32];
  const char* end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return with_point(std::string(static_cast<const char*>(buf), end));
}

std::string python_tuple(const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << (values.size() == 1 ? ",)" : ")");
  return os.str();
}

}  // namespace cohort::nn::detail
