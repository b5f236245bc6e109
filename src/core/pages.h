// Page sizes and the huge-page advice, shared by the allocator's two sources of large blocks:
// aligned_alloc (allocator.cpp) and its own mappings (segment_arena.cpp). Note [Huge pages for large
// blocks] in allocator.cpp says why.
#pragma once

#include <cstddef>
#include <sys/mman.h>

namespace cohort::detail {

constexpr size_t kPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;

constexpr size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Asks for huge pages on the whole 2 MiB pages of the `bytes` at `base` (a 2 MiB boundary); the
// partial page at the end stays small. Fails, harmlessly, where transparent huge pages are off.
inline void advise_huge_pages(void* base, size_t bytes) {
  if (const size_t whole = bytes / kHugePage * kHugePage) madvise(base, whole, MADV_HUGEPAGE);
}

}  // namespace cohort::detail
