// Large blocks: chunks of mappings the allocator makes itself.
#include "segment_arena.h"

#include <algorithm>
#include <cstdint>
#include <sys/mman.h>

#include "pages.h"

namespace cohort::detail {

// Note [Segments]
// A training step asks for its large blocks in a mix of sizes that changes from one phase to the
// next: the forward's activations, the backward's gradients, a checkpointed segment's recompute. A
// cache that hands a freed block only to a request of about its size keeps a block of every size the
// step ever asked for, and its pool outgrows the step's peak (a checkpointed char-transformer step
// kept 362 MiB for a 201 MiB peak). So blocks of a megabyte and more are chunks of segments, the
// mappings the allocator makes itself:
//  - a request takes the smallest free chunk that holds it and leaves the rest, when that is a
//    megabyte or more, free for the next; a freed chunk merges with its free neighbours, so the
//    pieces of a mapping come back together;
//  - where no free chunk is large enough, the request's size is mapped afresh (mmap: unmapping
//    returns the memory to the system at once, where glibc keeps large blocks in heaps it does not
//    shrink once its mmap threshold has risen). First, while the mapped bytes would pass the most
//    the arena ever had in use by more than its room (a sixteenth of that peak), free chunks are
//    unmapped, the largest first. Chunks are whole pages, so any free chunk can go, even one between
//    two in use; the pool stays within the room above the live peak;
//  - a loop can need more room than that: the blitz CNN's step holds 3.8 MiB in three chunks when it
//    asks for 6.1 MiB, so with the pool at its 9.9 MiB peak the pieces were unmapped and mapped again
//    every step (2 mmaps, 10 munmaps and 70 page faults a step: 3% of its time), and a checkpointed
//    ResNet-50 mapped 8-20 blocks afresh every step. Unmapping while the peak still rises is
//    surplus from an earlier phase going back (a checkpointed char-transformer's first step does it
//    six times); once the peak has stood for more allocations than it took to reach it, the loop has
//    come round again, and a miss that must unmap means it will want that memory every time: the
//    room doubles (up to the peak itself). The blitz CNN maps nothing more after its fourth step,
//    ResNet-50 after its third; the char-transformer, whose misses all come in its first step, keeps
//    a sixteenth;
//  - free chunks are also unmapped, the largest first, while the device's cache limit is passed, and
//    all of them by empty_cache, which also starts the peak and the room afresh.
// A fresh mapping starts on a 2 MiB boundary with its whole 2 MiB pages advised for huge pages (Note
// [Huge pages for large blocks] in allocator.cpp); its partial last page stays small.

namespace {

// `bytes` (a multiple of the page) of fresh memory on a 2 MiB boundary; nullptr when there is none.
void* map_pages(size_t bytes) {
  const size_t span = bytes + kHugePage - kPage;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = round_up(start, kHugePage);
  if (aligned > start) munmap(p, aligned - start);
  if (const size_t tail = start + span - (aligned + bytes)) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  auto* base = reinterpret_cast<void*>(aligned);
  advise_huge_pages(base, bytes);
  return base;
}

}  // namespace

SegmentArena::~SegmentArena() {
  for (Chunk* chunk : free_chunks_) {
    munmap(chunk->data, chunk->size);
    delete chunk;
  }
  for (auto& [data, chunk] : handed_out_) {
    munmap(data, chunk->size);
    delete chunk;
  }
}

void* SegmentArena::allocate(size_t nbytes) {
  const size_t size = round_up(nbytes, kPage);
  std::vector<Range> unmap;
  {
    std::lock_guard<std::mutex> l(mutex_);
    if (Chunk* chunk = take_best_fit(size)) return hand_out(chunk);
    const int64_t wanted = static_cast<int64_t>(size);
    const int64_t live = std::max(peak_in_use_, in_use_ + wanted);
    unmap = detach_free_chunks(-1, live + (live >> room_shift_) - wanted);
    if (!unmap.empty()) note_forced_unmap();
  }
  for (const Range& r : unmap) munmap(r.base, r.size);
  void* base = map_pages(size);
  if (!base) return nullptr;
  std::lock_guard<std::mutex> l(mutex_);
  mapped_ += static_cast<int64_t>(size);
  ++mappings_;
  return hand_out(new Chunk{static_cast<char*>(base), size});
}

int64_t SegmentArena::mapped_bytes() {
  std::lock_guard<std::mutex> l(mutex_);
  return mapped_;
}

int64_t SegmentArena::mappings() {
  std::lock_guard<std::mutex> l(mutex_);
  return mappings_;
}

void* SegmentArena::hand_out(Chunk* chunk) {
  handed_out_.emplace(chunk->data, chunk);
  in_use_ += static_cast<int64_t>(chunk->size);
  ++allocations_;
  if (in_use_ > peak_in_use_) {
    peak_in_use_ = in_use_;
    allocations_at_peak_ = allocations_;
  }
  update_free_bytes();
  return chunk->data;
}

bool SegmentArena::deallocate(void* data, int64_t keep_at_most) {
  std::vector<Range> unmap;
  {
    std::lock_guard<std::mutex> l(mutex_);
    auto it = handed_out_.find(data);
    if (it == handed_out_.end()) return false;
    Chunk* chunk = it->second;
    handed_out_.erase(it);
    in_use_ -= static_cast<int64_t>(chunk->size);
    mark_free(chunk);
    update_free_bytes();
    if (mapped_ - in_use_ > keep_at_most) unmap = detach_free_chunks(keep_at_most, -1);
  }
  for (const Range& r : unmap) munmap(r.base, r.size);
  return true;
}

void SegmentArena::release() {
  std::vector<Range> unmap;
  {
    std::lock_guard<std::mutex> l(mutex_);
    unmap = detach_free_chunks(0, -1);
    peak_in_use_ = in_use_;  // the pool's bound starts again from what is in use now
    room_shift_ = kFirstRoomShift;
    allocations_ = allocations_at_peak_ = 0;
  }
  for (const Range& r : unmap) munmap(r.base, r.size);
}

// A miss had to unmap free chunks to keep the pool within its room above the peak. While the peak
// is still rising (or has stood for fewer allocations than it took to reach it) that is surplus from
// an earlier phase going back. Later, it is a loop that will ask for the same memory again every time
// round: the room doubles.
void SegmentArena::note_forced_unmap() {
  const int64_t since_peak = allocations_ - allocations_at_peak_;
  if (since_peak > allocations_at_peak_ && room_shift_ > 0) --room_shift_;
}

// The smallest free chunk of `size` bytes or more, split when the rest would be worth a chunk of its own.
SegmentArena::Chunk* SegmentArena::take_best_fit(size_t size) {
  auto it = free_chunks_.lower_bound(size);
  if (it == free_chunks_.end()) return nullptr;
  Chunk* chunk = *it;
  free_chunks_.erase(it);
  chunk->free = false;
  if (chunk->size - size >= kMinBytes) {
    auto* rest = new Chunk{chunk->data + size, chunk->size - size, true, chunk, chunk->next};
    if (chunk->next) chunk->next->prev = rest;
    chunk->next = rest;
    chunk->size = size;
    free_chunks_.insert(rest);
  }
  return chunk;
}

// Frees `chunk`, merged with whichever neighbours are free.
void SegmentArena::mark_free(Chunk* chunk) {
  chunk->free = true;
  if (chunk->next && chunk->next->free) absorb_next(chunk);
  if (Chunk* prev = chunk->prev; prev && prev->free) {
    free_chunks_.erase(prev);  // its size, the set's key, is about to change
    absorb_next(prev);
    chunk = prev;
  }
  free_chunks_.insert(chunk);
}

// Merges the free chunk after `chunk` into it; `chunk` is not in free_chunks_.
void SegmentArena::absorb_next(Chunk* chunk) {
  Chunk* next = chunk->next;
  free_chunks_.erase(next);  // a no-op for the chunk mark_free is freeing
  chunk->size += next->size;
  chunk->next = next->next;
  if (chunk->next) chunk->next->prev = chunk;
  delete next;
}

// Takes free chunks out of the arena, the largest first, while the free bytes are above the
// first bound or the mapped bytes above the second (-1: no bound); the caller unmaps them.
std::vector<SegmentArena::Range> SegmentArena::detach_free_chunks(int64_t while_free_above,
                                                                      int64_t while_mapped_above) {
  auto over = [&] {
    return (while_free_above >= 0 && mapped_ - in_use_ > while_free_above) ||
           (while_mapped_above >= 0 && mapped_ > while_mapped_above);
  };
  std::vector<Range> detached;
  for (auto it = free_chunks_.end(); it != free_chunks_.begin() && over();) {
    Chunk* chunk = *--it;
    if (chunk->prev) chunk->prev->next = nullptr;
    if (chunk->next) chunk->next->prev = nullptr;
    detached.push_back({chunk->data, chunk->size});
    mapped_ -= static_cast<int64_t>(chunk->size);
    it = free_chunks_.erase(it);
    delete chunk;
  }
  update_free_bytes();
  return detached;
}

void SegmentArena::update_free_bytes() { free_bytes_.store(mapped_ - in_use_, std::memory_order_relaxed); }

}  // namespace cohort::detail
