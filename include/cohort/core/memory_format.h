// Memory formats: the order in which a tensor's elements lie in memory, as libtorch names them.
//   x.contiguous(MemoryFormat::ChannelsLast)   // [N, C, H, W] stored as N, H, W, C
//   x.is_contiguous(MemoryFormat::ChannelsLast), x.suggest_memory_format()
//   empty({8, 3, 32, 32}, TensorOptions().memory_format(MemoryFormat::ChannelsLast))
// A format is a stride pattern over the logical [N, C, (D,) H, W] shape, never a different shape:
// every op takes a channels-last tensor and gives the values a contiguous one would give.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "cohort/core/array_ref.h"

namespace cohort {

enum class MemoryFormat : int8_t {
  Contiguous,      // row-major: the last dim varies fastest
  Preserve,        // keep the input's format (a request to clone, to and the *_like factories)
  ChannelsLast,    // 4-d [N, C, H, W] laid out as [N, H, W, C]
  ChannelsLast3d,  // 5-d [N, C, D, H, W] laid out as [N, D, H, W, C]
};

std::ostream& operator<<(std::ostream& os, MemoryFormat format);

inline MemoryFormat get_contiguous_memory_format() { return MemoryFormat::Contiguous; }

// The strides of a dense tensor of `sizes` in `format` (Contiguous, or a channels-last format of
// the matching rank); op names the caller in the error for a rank that does not fit.
std::vector<int64_t> memory_format_strides(IntArrayRef sizes, MemoryFormat format, const char* op);
// Whether (sizes, strides) is dense in `format`: size-1 dims may have any stride, as for
// is_contiguous().
bool is_contiguous_in(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format);
// The format that strides suggest, by PyTorch's rule: channels-last when the strides order C
// innermost, then W, H (D), N, with ambiguous cases (C of size 1 or equal strides) read as
// Contiguous; with `exact_match` the strides must also be dense.
MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides, bool exact_match = false);

}  // namespace cohort
