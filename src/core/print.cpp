// operator<<(Tensor): libtorch's C++ format, character for character (the text a libtorch program
// prints, checked against libtorch 1.13 by tests/compat/printing.cpp):
//    1  0
//    0  1
//   [ CPUFloatType{2,2} ]
// One value per line for 1-d tensors, rows for 2-d ones (in blocks of "Columns i to j" when they do
// not fit 80 characters), "(i,j,.,.) = " matrices for more dims; one number format per printed
// matrix, chosen from its values (below). repr() (repr.cpp) gives Python's format instead.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

namespace {

constexpr int64_t kLineWidth = 80;

// The elements of t in row-major order, as double, read through its sizes and strides (printing
// must work on any view, without running an op).
std::vector<double> values_of(const Tensor& t) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.numel()));
  if (t.numel() == 0) return out;
  std::vector<int64_t> index(static_cast<size_t>(t.dim()), 0);
  dispatch_all(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* base = static_cast<const T*>(t.data_ptr());
    for (int64_t n = 0; n < t.numel(); ++n) {
      int64_t offset = 0;
      for (int64_t d = 0; d < t.dim(); ++d) offset += index[d] * t.stride(d);
      out.push_back(static_cast<double>(base[offset]));
      for (int64_t d = t.dim() - 1; d >= 0 && ++index[d] == t.size(d); --d) index[d] = 0;
    }
  });
  return out;
}

// How the numbers of one matrix (or vector) are written: libtorch picks
// - whole numbers: plain, as wide as the largest one's digits (scientific from 10 digits on);
// - a spread of more than 4 decimal orders of magnitude: scientific with 4 digits;
// - numbers of 6 or more integer digits, or all below 0.1: fixed 4 decimals after dividing by a
//   power of ten printed above them ("0.001 *");
// - otherwise fixed with 4 decimals.
struct NumberFormat {
  enum class Style { Plain, Fixed, Scientific } style = Style::Plain;
  double scale = 1;
  int width = 1;
};

// Digits before the decimal point of |v| (log10 based, so 0.05 gives -1), 1 for zero.
double magnitude(double v) { return v != 0 ? std::floor(std::log10(v)) + 1 : 1; }

NumberFormat choose_format(const std::vector<double>& v) {
  NumberFormat f;
  bool whole = true;
  for (double z : v)
    if (std::isfinite(z) && z != std::ceil(z)) whole = false;
  double lo = 1, hi = 1;
  auto first = std::find_if(v.begin(), v.end(), [](double z) { return std::isfinite(z); });
  if (first != v.end()) {
    double smallest = std::fabs(*first), largest = std::fabs(*first);
    for (double z : v) {
      if (!std::isfinite(z)) continue;
      smallest = std::min(smallest, std::fabs(z));
      // libtorch compares the signed value with the largest magnitude here, so a negative number
      // never widens the format; kept, so that output matches libtorch's.
      if (z > largest) largest = std::fabs(z);
    }
    lo = magnitude(smallest);
    hi = magnitude(largest);
  }
  if (whole) {
    if (hi > 9) {
      f.style = NumberFormat::Style::Scientific;
      f.width = 11;
    } else {
      f.width = static_cast<int>(hi) + 1;
    }
  } else if (hi - lo > 4) {
    f.style = NumberFormat::Style::Scientific;
    f.width = std::fabs(hi) > 99 || std::fabs(lo) > 99 ? 12 : 11;
  } else if (hi > 5 || hi < 0) {
    f.style = NumberFormat::Style::Fixed;
    f.width = 7;
    f.scale = std::pow(10, hi - 1);
  } else {
    f.style = NumberFormat::Style::Fixed;
    f.width = hi == 0 ? 7 : static_cast<int>(hi) + 6;
  }
  return f;
}

// Sets the stream for the numbers of f; the caller's flags are restored by StreamState.
void apply(std::ostream& os, const NumberFormat& f) {
  switch (f.style) {
    case NumberFormat::Style::Plain: os.unsetf(std::ios_base::floatfield); break;
    case NumberFormat::Style::Fixed: os << std::fixed << std::setprecision(4); break;
    case NumberFormat::Style::Scientific: os << std::scientific << std::setprecision(4); break;
  }
}

// Restores the stream's flags and precision when printing ends, also after an exception.
class StreamState {
 public:
  explicit StreamState(std::ostream& os) : os_(os), flags_(os.flags()), precision_(os.precision()) {}
  ~StreamState() {
    os_.flags(flags_);
    os_.precision(precision_);
  }
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

 private:
  std::ostream& os_;
  std::ios_base::fmtflags flags_;
  std::streamsize precision_;
};

void print_scale(std::ostream& os, double scale) {
  std::ios_base::fmtflags flags = os.flags();
  os.unsetf(std::ios_base::floatfield);
  os << scale << " *\n";
  os.flags(flags);
}

void print_indent(std::ostream& os, int64_t indent) { os << std::string(static_cast<size_t>(indent), ' '); }

// A [rows, cols] matrix, each line starting with `indent` spaces.
void print_matrix(std::ostream& os, const std::vector<double>& v, int64_t rows, int64_t cols, int64_t line_width,
                  int64_t indent) {
  const NumberFormat f = choose_format(v);
  apply(os, f);
  print_indent(os, indent);
  const int64_t per_line = std::max<int64_t>(1, (line_width - indent) / (f.width + 1));
  for (int64_t first = 0; first < cols;) {
    const int64_t last = std::min(first + per_line, cols) - 1;
    if (per_line < cols) {
      if (first != 0) os << '\n';
      os << "Columns " << first + 1 << " to " << last + 1;
      print_indent(os, indent);
    }
    if (f.scale != 1) {
      print_scale(os, f.scale);
      print_indent(os, indent);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = first; c <= last; ++c) {
        os << std::setw(f.width) << v[static_cast<size_t>(r * cols + c)] / f.scale;
        if (c != last) {
          os << ' ';
          continue;
        }
        os << '\n';
        if (r != rows - 1) {
          print_indent(os, indent);
          if (f.scale != 1) os << ' ';  // libtorch's rows under a scale line are one space further in
        }
      }
    }
    first = last + 1;
  }
}

// Three or more dims: each [rows, cols] matrix under its "(i,j,.,.) = " heading, the FIRST leading
// index running fastest, as libtorch orders them.
void print_slices(std::ostream& os, const Tensor& t, const std::vector<double>& v, int64_t line_width) {
  const int64_t lead = t.dim() - 2, rows = t.size(-2), cols = t.size(-1), plane = rows * cols;
  std::vector<int64_t> index(static_cast<size_t>(lead), 0);
  for (bool first = true;; first = false) {
    if (!first) {
      int64_t d = 0;
      while (d < lead && ++index[d] == t.size(d)) index[d++] = 0;
      if (d == lead) return;
      os << '\n';
    }
    os << '(';
    int64_t offset = 0;
    for (int64_t d = 0; d < lead; ++d) {
      os << index[d] + 1 << ',';
      offset = offset * t.size(d) + index[d];
    }
    os << ".,.) = \n";
    std::vector<double> slice(v.begin() + offset * plane, v.begin() + (offset + 1) * plane);
    print_matrix(os, slice, rows, cols, line_width, 1);
  }
}

const char* type_name(DType t) {
  switch (t) {
    case kBool: return "CPUBoolType";
    case kUInt8: return "CPUByteType";
    case kInt32: return "CPUIntType";
    case kInt64: return "CPULongType";
    case kFloat32: return "CPUFloatType";
    case kFloat64: return "CPUDoubleType";
    case kBFloat16: return "CPUBFloat16Type";
    case kFloat16: return "CPUHalfType";
  }
  return "CPUType";
}

}  // namespace

std::string Tensor::toString() const { return type_name(dtype()); }

std::string Tensor::describe() const {
  if (!defined()) return "undefined";
  std::string s = std::string(dtype_name(dtype())) + " [";
  for (int64_t i = 0; i < dim(); ++i) s += (i ? ", " : "") + std::to_string(size(i));
  return s + "] on " + device().str();
}

void print(std::ostream& os, const Tensor& t, int64_t line_width) {
  if (!t.defined()) {
    os << "[ Tensor (undefined) ]";
    return;
  }
  StreamState state(os);
  const std::vector<double> v = values_of(t);
  if (t.dim() == 0) {
    os.unsetf(std::ios_base::floatfield);
    os << v[0] << '\n';
  } else if (t.dim() == 1 && !v.empty()) {
    const NumberFormat f = choose_format(v);
    if (f.scale != 1) print_scale(os, f.scale);
    apply(os, f);
    for (double z : v) os << std::setw(f.width) << z / f.scale << '\n';
  } else if (t.dim() == 2 && !v.empty()) {
    print_matrix(os, v, t.size(0), t.size(1), line_width, 0);
  } else if (!v.empty()) {
    print_slices(os, t, v, line_width);
  }
  os << "[ " << t.toString() << '{';
  for (int64_t d = 0; d < t.dim(); ++d) os << (d ? "," : "") << t.size(d);
  os << "} ]";
}

void print(const Tensor& t, int64_t line_width) { print(std::cout, t, line_width); }

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  print(os, t, kLineWidth);
  return os;
}

}  // namespace cohort
