// The CPU device allocator and its per-device counters.
#include "allocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/core/profiling.h"
#include "cohort/core/storage.h"
#include "pages.h"
#include "segment_arena.h"

namespace cohort::detail {

// Note [Caching allocator]
// Training allocates the same large activations and gradients every step. Handed back to glibc, a
// block above its mmap threshold is unmapped, and the next step faults it in again a page at a time:
// the blitz CNN at batch 256 took 300k page faults per 40 steps, and the kernel serialises the faults
// of one process, so two DataParallel devices stalled each other (their backward was 35% slower than
// one device with two threads). So blocks of at least kCacheMinBytes are kept, per device, when freed
// and handed out again for a request they fit without wasting more than an eighth of themselves;
// from a megabyte on, blocks are chunks of the allocator's own mappings that split and merge instead
// (Note [Segments] in segment_arena.cpp), so that the pool follows the step's peak rather than every
// size it asked for.
// Smaller blocks are kept too, in power-of-two size classes from 64 bytes (a free list each): left
// to glibc, the few hundred small tensors of a step freed together made its heap top shrink by
// brk() and grow back page by page every step (the blitz CNN at batch 4 spent 4% of its step in
// page faults and 2% in brk, and as much again in malloc_consolidate).
// The cache holds at most a limit (a quarter of the RAM, at most 4 GiB; $COHORT_ALLOCATOR_CACHE_MB,
// 0 turns caching off); a failed allocation empties every device's cache and tries once more.
// Under AddressSanitizer the cache is off by default, so a use after free is still caught.
//
// Every block carries its capacity in a 64-byte header in front of the data, so freeing needs no
// lookup. memory_stats() counts the bytes tensors asked for (like PyTorch's "allocated");
// cached_bytes is what the cache holds on top.

namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kCacheMinBytes = size_t{64} << 10;  // from here on: large blocks
constexpr int kSmallClasses = 11;                      // 64 B, 128 B, ..., 64 KiB
constexpr int kMaxDevices = 4096;  // set_device_count's limit

struct DeviceMemory {
  std::atomic<int64_t> allocated{0}, peak{0}, count{0}, cached{0};
  std::mutex mutex;                    // guards free_blocks and small_blocks
  std::multimap<size_t, void*> free_blocks;  // large: capacity -> block (header address)
  std::array<std::vector<void*>, kSmallClasses> small_blocks;  // small: per size class
  SegmentArena segments;  // a megabyte and more, while caching is on
};

// One slot per device index, filled on first use. Never destroyed: tensors freed by worker threads
// while the process exits still count here.
std::atomic<DeviceMemory*>* table() {
  static auto* slots = new std::atomic<DeviceMemory*>[kMaxDevices]();
  return slots;
}

DeviceMemory& memory(Device d) {
  COHORT_CHECK_AS(DeviceError, d.index() >= 0 && d.index() < kMaxDevices, "allocate: device ", d,
                  " is out of range (at most ", kMaxDevices, " CPU devices)");
  std::atomic<DeviceMemory*>& slot = table()[d.index()];
  DeviceMemory* m = slot.load(std::memory_order_acquire);
  if (m) return *m;
  auto* fresh = new DeviceMemory;
  if (slot.compare_exchange_strong(m, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread created it first
  return *m;
}

int64_t default_cache_limit() {
  if (const char* env = std::getenv("COHORT_ALLOCATOR_CACHE_MB")) return static_cast<int64_t>(std::atoll(env)) << 20;
#if defined(__SANITIZE_ADDRESS__)
  return 0;
#else
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  int64_t ram = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
  return std::min<int64_t>(ram / 4, int64_t{4} << 30);
#endif
}

std::atomic<int64_t>& limit() {
  static std::atomic<int64_t> bytes{default_cache_limit()};
  return bytes;
}

int64_t cache_limit() { return limit().load(std::memory_order_relaxed); }

// Note [Huge pages for large blocks]
// A block of several megabytes (a batch's activations, a layer's weights) is read in full by most
// ops, and with 4 KiB pages each pass takes a TLB miss every 4 KiB. A kernel whose transparent huge
// pages are in "madvise" mode backs anonymous memory with 2 MiB pages only where asked, so blocks of
// kHugeMinBytes and more (and every mapping of Note [Segments]) start on a 2 MiB boundary and
// advise huge pages for the 2 MiB pages they fill; the partial page at the end stays small, so no
// memory is added. ResNet-18 training at batch 256 ran 2-3% faster for it (BENCHMARKS.md); models of
// small tensors are unchanged. Where the kernel has transparent huge pages off, the advice fails and
// is ignored.
constexpr size_t kHugeMinBytes = size_t{4} << 20;

void* system_allocate(size_t bytes) {
  if (bytes < kHugeMinBytes) return std::aligned_alloc(kAlignment, round_up(bytes, kAlignment));
  void* p = std::aligned_alloc(kHugePage, round_up(bytes, kHugePage));
  if (p) advise_huge_pages(p, bytes);
  return p;
}

size_t capacity_of(void* header) { return *static_cast<size_t*>(header); }

// Frees every cached block of `m`.
void release(DeviceMemory& m) {
  m.segments.release();
  std::multimap<size_t, void*> blocks;
  std::array<std::vector<void*>, kSmallClasses> small;
  {
    std::lock_guard<std::mutex> l(m.mutex);
    blocks.swap(m.free_blocks);
    small.swap(m.small_blocks);
  }
  for (auto& [capacity, header] : blocks) {
    m.cached.fetch_sub(static_cast<int64_t>(capacity));
    std::free(header);
  }
  for (auto& list : small)
    for (void* header : list) {
      m.cached.fetch_sub(static_cast<int64_t>(capacity_of(header)));
      std::free(header);
    }
}

// A fresh block with its header; nullptr when the system has no memory.
void* new_block(size_t capacity) {
  void* header = system_allocate(kAlignment + capacity);
  if (header) *static_cast<size_t*>(header) = capacity;
  return header;
}

// The size class of a small request: capacity 64 << k.
int small_class(size_t nbytes) { return std::bit_width((std::max(nbytes, kAlignment) - 1) / kAlignment); }

// With caching off (the default under AddressSanitizer) a block is as small as the alignment allows,
// so that ASan still sees an overrun past the tensor's end rather than into its size class.
void* allocate_small(DeviceMemory& m, size_t nbytes) {
  if (cache_limit() <= 0) {
    void* header = new_block(round_up(std::max<size_t>(nbytes, 1), kAlignment));
    return header ? static_cast<char*>(header) + kAlignment : nullptr;
  }
  const int k = small_class(nbytes);
  void* header = nullptr;
  {
    std::lock_guard<std::mutex> l(m.mutex);
    auto& list = m.small_blocks[k];
    if (!list.empty()) {
      header = list.back();
      list.pop_back();
      m.cached.fetch_sub(static_cast<int64_t>(capacity_of(header)));
    }
  }
  if (!header) header = new_block(kAlignment << k);
  return header ? static_cast<char*>(header) + kAlignment : nullptr;
}

void* take_cached(DeviceMemory& m, size_t capacity) {
  std::lock_guard<std::mutex> l(m.mutex);
  auto it = m.free_blocks.lower_bound(capacity);
  if (it == m.free_blocks.end() || it->first > capacity + capacity / 8) return nullptr;
  void* header = it->second;
  m.cached.fetch_sub(static_cast<int64_t>(it->first));
  m.free_blocks.erase(it);
  return header;
}

void* allocate_large(DeviceMemory& m, size_t nbytes) {
  const size_t capacity = round_up(nbytes, kPage);
  void* header = cache_limit() > 0 ? take_cached(m, capacity) : nullptr;
  if (!header) header = new_block(capacity);
  return header ? static_cast<char*>(header) + kAlignment : nullptr;
}

// Keeps a freed block (small: from allocate_small) while the cache has room, frees it otherwise.
void free_block(DeviceMemory& m, void* data, bool small) {
  void* header = static_cast<char*>(data) - kAlignment;
  const size_t capacity = capacity_of(header);
  // A small block made while caching was off has no class size: it is not kept.
  const bool keep = !small || std::has_single_bit(capacity / kAlignment);
  if (keep && m.cached.load() + m.segments.free_bytes() + static_cast<int64_t>(capacity) <= cache_limit()) {
    std::lock_guard<std::mutex> l(m.mutex);
    if (small)
      m.small_blocks[std::countr_zero(capacity / kAlignment)].push_back(header);
    else
      m.free_blocks.emplace(capacity, header);
    m.cached.fetch_add(static_cast<int64_t>(capacity));
    return;
  }
  std::free(header);
}

void* allocate_once(DeviceMemory& m, size_t nbytes) {
  if (nbytes >= SegmentArena::kMinBytes && cache_limit() > 0) return m.segments.allocate(nbytes);
  return nbytes >= kCacheMinBytes ? allocate_large(m, nbytes) : allocate_small(m, nbytes);
}

}  // namespace

void* device_allocate(Device device, size_t nbytes) {
  DeviceMemory& m = memory(device);
  void* data = allocate_once(m, nbytes);
  if (!data) {
    empty_cache();
    data = allocate_once(m, nbytes);
    if (!data) return nullptr;
  }
  profiling::detail::count_allocation(static_cast<int64_t>(nbytes));
  int64_t now = m.allocated.fetch_add(static_cast<int64_t>(nbytes)) + static_cast<int64_t>(nbytes);
  m.count.fetch_add(1);
  int64_t peak = m.peak.load();
  while (now > peak && !m.peak.compare_exchange_weak(peak, now)) {
  }
  return data;
}

void device_free(Device device, void* data, size_t nbytes) {
  DeviceMemory& m = memory(device);
  // A block of a megabyte or more came from the segments unless caching was off when it was made.
  const bool from_segments =
      nbytes >= SegmentArena::kMinBytes && m.segments.deallocate(data, cache_limit() - m.cached.load());
  if (!from_segments) free_block(m, data, nbytes < kCacheMinBytes);
  m.allocated.fetch_sub(static_cast<int64_t>(nbytes));
  m.count.fetch_sub(1);
}

}  // namespace cohort::detail

namespace cohort {

MemoryStats memory_stats(Device device) {
  auto& m = detail::memory(device);
  return {m.allocated.load(), m.peak.load(), m.count.load(), m.cached.load() + m.segments.free_bytes()};
}

void reset_peak_memory_stats(Device device) {
  auto& m = detail::memory(device);
  m.peak.store(m.allocated.load());
}

void set_allocator_cache_limit(int64_t bytes) {
  COHORT_CHECK(bytes >= 0, "set_allocator_cache_limit: expected a limit of 0 bytes or more, got ", bytes);
  detail::limit().store(bytes);
  if (bytes == 0) empty_cache();
}

int64_t allocator_cache_limit() { return detail::cache_limit(); }

void empty_cache(Device device) { detail::release(detail::memory(device)); }

void empty_cache() {
  for (int i = 0; i < detail::kMaxDevices; ++i)
    if (detail::DeviceMemory* m = detail::table()[i].load(std::memory_order_acquire)) detail::release(*m);
}

}  // namespace cohort
