// One device's blocks of a megabyte and more: chunks of mappings the allocator makes itself, split
// to fit a request and merged again when freed (Note [Segments] in segment_arena.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

namespace cohort::detail {

class SegmentArena {
 public:
  static constexpr size_t kMinBytes = size_t{1} << 20;  // smaller requests do not come here

  SegmentArena() = default;
  SegmentArena(const SegmentArena&) = delete;
  SegmentArena& operator=(const SegmentArena&) = delete;
  // Unmaps everything, blocks still handed out too: their owners must be gone. (A device's arena
  // lives as long as the process.)
  ~SegmentArena();

  // `nbytes` >= kMinBytes, page aligned (on 2 MiB where it was mapped afresh); nullptr when the system
  // has no memory left.
  void* allocate(size_t nbytes);
  // Takes `data` back if allocate handed it out (false otherwise), then unmaps free chunks while
  // more than `keep_at_most` bytes are free.
  bool deallocate(void* data, int64_t keep_at_most);
  // Unmaps every free chunk; the pool's bound starts again from the bytes in use.
  void release();
  // Bytes mapped and not handed out.
  int64_t free_bytes() const { return free_bytes_.load(std::memory_order_relaxed); }
  // Bytes mapped now, and how many mappings were ever made (for tests and diagnostics).
  int64_t mapped_bytes();
  int64_t mappings();

 private:
  // A piece of a mapping, handed out or free, with its mapped neighbours: the chunks that end where
  // it starts and start where it ends (nullptr at a mapping's edge).
  struct Chunk {
    char* data;
    size_t size;
    bool free = false;
    Chunk* prev = nullptr;
    Chunk* next = nullptr;
  };
  struct Range {
    void* base;
    size_t size;
  };
  // Free chunks by size, then address; a size alone finds the first chunk at least that large.
  struct BySize {
    using is_transparent = void;
    bool operator()(const Chunk* a, const Chunk* b) const {
      return a->size != b->size ? a->size < b->size : std::less<const char*>()(a->data, b->data);
    }
    bool operator()(const Chunk* a, size_t size) const { return a->size < size; }
    bool operator()(size_t size, const Chunk* b) const { return size < b->size; }
  };

  void* hand_out(Chunk* chunk);
  Chunk* take_best_fit(size_t size);
  void mark_free(Chunk* chunk);
  void absorb_next(Chunk* chunk);
  std::vector<Range> detach_free_chunks(int64_t while_free_above, int64_t while_mapped_above);
  void update_free_bytes();
  void note_forced_unmap();

  // The pool's room above the peak is peak >> room_shift_: a sixteenth at first, doubled where a
  // loop must unmap to stay within it after its peak has stood (Note [Segments]).
  static constexpr int kFirstRoomShift = 4;

  std::mutex mutex_;  // guards everything below but free_bytes_
  std::set<Chunk*, BySize> free_chunks_;
  std::unordered_map<void*, Chunk*> handed_out_;
  int64_t mapped_ = 0, in_use_ = 0, peak_in_use_ = 0, mappings_ = 0;
  int room_shift_ = kFirstRoomShift;
  // Blocks handed out, and how many had been when the peak last rose.
  int64_t allocations_ = 0, allocations_at_peak_ = 0;
  std::atomic<int64_t> free_bytes_{0};
};

}  // namespace cohort::detail
