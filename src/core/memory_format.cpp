// Stride patterns of the memory formats.
#include "cohort/core/memory_format.h"

#include <ostream>

#include "cohort/core/error.h"

namespace cohort {

namespace {

// The dims of a channels-last layout from the fastest-varying to the slowest: C, W, H, (D,) N.
std::vector<size_t> channels_last_order(size_t rank) {
  std::vector<size_t> order{1};
  for (size_t d = rank; d-- > 2;) order.push_back(d);
  order.push_back(0);
  return order;
}

size_t rank_of(MemoryFormat format) { return format == MemoryFormat::ChannelsLast ? 4 : 5; }

}  // namespace

std::ostream& operator<<(std::ostream& os, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Contiguous: return os << "Contiguous";
    case MemoryFormat::Preserve: return os << "Preserve";
    case MemoryFormat::ChannelsLast: return os << "ChannelsLast";
    case MemoryFormat::ChannelsLast3d: return os << "ChannelsLast3d";
  }
  return os << "MemoryFormat(" << static_cast<int>(format) << ")";
}

std::vector<int64_t> memory_format_strides(IntArrayRef sizes, MemoryFormat format, const char* op) {
  std::vector<int64_t> strides(sizes.size());
  if (format == MemoryFormat::Contiguous) {
    int64_t s = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = s;
      s *= std::max<int64_t>(sizes[i], 1);
    }
    return strides;
  }
  COHORT_CHECK(format != MemoryFormat::Preserve, op, ": Preserve names no layout of its own; hint: give Contiguous, "
               "ChannelsLast or ChannelsLast3d");
  COHORT_CHECK(sizes.size() == rank_of(format), op, ": ", format, " needs a ", rank_of(format), "-d tensor ([N, C, ",
               format == MemoryFormat::ChannelsLast ? "H, W]" : "D, H, W]", "), got sizes ", sizes);
  // As PyTorch lays them out: each stride is the product of the faster dims' sizes, a 0 included.
  int64_t s = 1;
  for (size_t d : channels_last_order(sizes.size())) {
    strides[d] = s;
    s *= sizes[d];
  }
  return strides;
}

bool is_contiguous_in(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format) {
  COHORT_CHECK(format != MemoryFormat::Preserve, "is_contiguous: Preserve names no layout to test against; hint: "
               "give Contiguous, ChannelsLast or ChannelsLast3d");
  std::vector<size_t> order;
  if (format == MemoryFormat::Contiguous) {
    for (size_t d = sizes.size(); d-- > 0;) order.push_back(d);
  } else {
    if (sizes.size() != rank_of(format)) return false;
    order = channels_last_order(sizes.size());
  }
  int64_t expected = 1;
  for (size_t d : order) {
    if (sizes[d] == 0) return true;  // no element is out of place
  }
  for (size_t d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides, bool exact_match) {
  if (sizes.size() != 4 && sizes.size() != 5) return MemoryFormat::Contiguous;
  const MemoryFormat candidate = sizes.size() == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
  // Walk the dims from C outwards; each must have a stride no smaller than the extent of the ones
  // inside it. A C stride of 0 (broadcast channels), an empty dim, or an N whose stride equals C's
  // (an [N, 1, 1, 1] tensor, or [N, 1, 1, W] sliced to one W) leave the order ambiguous, and
  // ambiguity reads as Contiguous, the layout nobody has to opt into.
  if (strides[1] == 0) return MemoryFormat::Contiguous;
  int64_t floor = 0;
  for (size_t d : channels_last_order(sizes.size())) {
    if (sizes[d] == 0 || strides[d] < floor) return MemoryFormat::Contiguous;
    if (d == 0 && floor == strides[1]) return MemoryFormat::Contiguous;
    floor = strides[d] * (sizes[d] > 1 ? sizes[d] : 1);
  }
  if (exact_match && !is_contiguous_in(sizes, strides, candidate)) return MemoryFormat::Contiguous;
  return candidate;
}

}  // namespace cohort
