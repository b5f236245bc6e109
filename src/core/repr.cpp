// repr(tensor): the text PyTorch 1.13's repr(tensor) gives (torch/_tensor_str.py, default print
// options), character for character. operator<< prints libtorch's C++ format instead (print.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "cohort/autograd/node.h"
#include "cohort/core/tensor.h"

namespace cohort {

namespace {

// PyTorch's default PRINT_OPTS.
constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;  // more elements than this are summarized
constexpr int64_t kEdgeItems = 3;     // shown at each end of a summarized dim
constexpr int64_t kLineWidth = 80;

// Elements are read in place through sizes and strides, without calling any op: printing must work
// on any view, under any grad mode, and while debugging a broken op.
// An element is addressed by its offset, in elements, from data_ptr().
double load_double(const Tensor& t, int64_t offset) {
  return dispatch_all(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return static_cast<double>(static_cast<const T*>(t.data_ptr())[offset]);
  });
}

// The unpadded text of a non-floating element, as Python's "{}".format(value).
std::string integral_str(const Tensor& t, int64_t offset) {
  return dispatch(t.dtype(), [&](auto tag) -> std::string {
    using T = decltype(tag);
    T v = static_cast<const T*>(t.data_ptr())[offset];
    if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
    else return std::to_string(static_cast<int64_t>(v));
  });
}

// The indices of a dim that are printed: all, or the first and last kEdgeItems when summarizing.
std::vector<int64_t> shown_indices(int64_t size, bool summarize) {
  std::vector<int64_t> idx;
  bool elide = summarize && size > 2 * kEdgeItems;
  for (int64_t i = 0; i < size; ++i)
    if (!elide || i < kEdgeItems || i >= size - kEdgeItems) idx.push_back(i);
  return idx;
}

bool elided(int64_t size, bool summarize) { return summarize && size > 2 * kEdgeItems; }

// Offsets of the printed elements; the formatter's choices depend on these only (get_summarized_data).
void collect_offsets(const Tensor& t, int64_t dim, int64_t offset, bool summarize, std::vector<int64_t>& out) {
  if (dim == t.dim()) {
    out.push_back(offset);
    return;
  }
  for (int64_t i : shown_indices(t.size(dim), summarize))
    collect_offsets(t, dim + 1, offset + i * t.stride(dim), summarize, out);
}

// Python's "{:.<precision>e}" / "{:.<precision>f}" for finite values (glibc rounds the same way:
// correctly, half to even). %f of a large double is long, so the buffer is sized by snprintf.
std::string printf_str(char conversion, int precision, double v) {
  const char fmt[] = {'%', '.', '*', conversion, '\0'};
  int n = std::snprintf(nullptr, 0, fmt, precision, v);
  std::string buf(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(buf.data(), buf.size(), fmt, precision, v);
  buf.pop_back();
  return buf;
}

// PyTorch's _Formatter: one notation and one width for every element of a tensor.
class Formatter {
 public:
  Formatter(const Tensor& t, const std::vector<int64_t>& offsets) : t_(t), floating_(t.is_floating_point()) {
    if (!floating_) {
      for (int64_t o : offsets) width_ = std::max(width_, integral_str(t, o).size());
      return;
    }
    // The choice ignores zeros and non-finite values; so does the width, hence `[100.,  nan]` but
    // `[1., nan]`.
    std::vector<double> vals;
    for (int64_t o : offsets) {
      double v = load_double(t, o);
      if (std::isfinite(v) && v != 0) vals.push_back(v);
    }
    if (vals.empty()) return;
    double lo = std::abs(vals[0]), hi = lo;
    for (double v : vals) {
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double v : vals) {
      // Integral floats print as "2." : one more than "{:.0f}".
      size_t w = sci_mode_ ? printf_str('e', kPrecision, v).size()
                 : int_mode_ ? printf_str('f', 0, v).size() + 1
                             : printf_str('f', kPrecision, v).size();
      width_ = std::max(width_, w);
    }
  }

  size_t width() const { return width_; }

  // The element at `offset`, left-padded to the common width.
  std::string format(int64_t offset) const {
    std::string s = floating_ ? format_floating(load_double(t_, offset)) : integral_str(t_, offset);
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }

 private:
  std::string format_floating(double v) const {
    // Python spells non-finite values the same in every notation (and never "-nan", as glibc may).
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci_mode_) return printf_str('e', kPrecision, v);
    if (int_mode_) return printf_str('f', 0, v) + ".";
    return printf_str('f', kPrecision, v);
  }

  const Tensor& t_;
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

std::string spaces(int64_t n) { return std::string(static_cast<size_t>(std::max<int64_t>(n, 0)), ' '); }

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// "[" parts joined by separator and the next level's indent "]". Built by appending: GCC 12 warns
// falsely (-Wrestrict) on "[" + std::string.
std::string bracketed(const std::vector<std::string>& parts, std::string separator, int64_t indent) {
  separator += spaces(indent + 1);
  std::string out = "[";
  out += join(parts, separator);
  out += ']';
  return out;
}

// One 1-d row, wrapped so that each line holds as many elements as fit in kLineWidth.
std::string vector_str(const Tensor& t, int64_t offset, int64_t indent, bool summarize, const Formatter& f) {
  int64_t n = t.size(-1), stride = t.stride(-1);
  std::vector<std::string> cells;
  for (int64_t i : shown_indices(n, summarize)) {
    if (elided(n, summarize) && i == n - kEdgeItems) cells.push_back(" ...");
    cells.push_back(f.format(offset + i * stride));
  }
  int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / static_cast<int64_t>(f.width() + 2));
  std::vector<std::string> lines;
  for (size_t i = 0; i < cells.size(); i += per_line) {
    auto first = cells.begin() + i, last = cells.begin() + std::min(cells.size(), i + per_line);
    lines.push_back(join(std::vector<std::string>(first, last), ", "));
  }
  return bracketed(lines, ",\n", indent);
}

// The sub-tensor starting at `dim`; deeper dims are separated by more blank lines, as in PyTorch.
std::string tensor_str(const Tensor& t, int64_t dim, int64_t offset, int64_t indent, bool summarize,
                       const Formatter& f) {
  if (t.dim() == 0) return f.format(offset);
  if (dim == t.dim() - 1) return vector_str(t, offset, indent, summarize, f);
  int64_t n = t.size(dim);
  std::vector<std::string> slices;
  for (int64_t i : shown_indices(n, summarize)) {
    if (elided(n, summarize) && i == n - kEdgeItems) slices.push_back("...");
    slices.push_back(tensor_str(t, dim + 1, offset + i * t.stride(dim), indent + 1, summarize, f));
  }
  std::string separator = ",";
  separator.append(static_cast<size_t>(std::max<int64_t>(t.dim() - dim - 1, 0)), '\n');  // a blank line per deeper dim
  return bracketed(slices, separator, indent);
}

// Python's str(tuple(shape)): "(0, 3)", "(0,)".
std::string tuple_str(IntArrayRef sizes) {
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + (sizes.size() == 1 ? ",)" : ")");
}

// Appends ", suffix" to the last line, or starts a new line when it would pass kLineWidth.
std::string add_suffixes(std::string s, const std::vector<std::string>& suffixes, int64_t indent) {
  size_t nl = s.rfind('\n');
  // PyTorch's len(s) - s.rfind("\n") + 1, where rfind gives -1 when there is no newline.
  int64_t last_line_len = static_cast<int64_t>(s.size()) - (nl == std::string::npos ? -1 : int64_t(nl)) + 1;
  for (const std::string& suffix : suffixes) {
    int64_t len = static_cast<int64_t>(suffix.size());
    if (last_line_len + len + 2 > kLineWidth) {
      s += ",\n" + spaces(indent) + suffix;
      last_line_len = indent + len;
    } else {
      s += ", " + suffix;
      last_line_len += len + 2;
    }
  }
  return s + ")";
}

}  // namespace

std::string repr(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;
  // PyTorch omits the default device; cohort's default is cpu:0.
  if (t.device().index() != 0) suffixes.push_back("device='" + t.device().str() + "'");
  const std::string dtype_suffix = std::string("dtype=torch.") + dtype_name(t.dtype());
  std::string body = "[]";
  if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back("size=" + tuple_str(t.sizes()));
    // No element shows the kind, so every dtype but the default is named.
    if (t.dtype() != get_default_dtype()) suffixes.push_back(dtype_suffix);
  } else {
    if (t.dtype() != get_default_dtype() && t.dtype() != kInt64 && t.dtype() != kBool)
      suffixes.push_back(dtype_suffix);
    bool summarize = t.numel() > kThreshold;
    std::vector<int64_t> offsets;
    collect_offsets(t, 0, 0, summarize, offsets);
    body = tensor_str(t, 0, 0, indent, summarize, Formatter(t, offsets));
  }
  if (auto fn = t.grad_fn()) suffixes.push_back("grad_fn=<" + fn->name() + ">");
  else if (t.requires_grad()) suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, indent);
}

}  // namespace cohort
