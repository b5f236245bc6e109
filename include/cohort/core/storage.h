// Storage: owns a tensor's bytes and knows its device. Tensors that are views of one another share
// one Storage; its version counter counts in-place writes (Note [Version counters] in autograd/saved.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>

#include "cohort/core/device.h"

namespace cohort {

class StorageImpl {
 public:
  using Deleter = std::function<void(void*)>;
  // Allocates nbytes on `device` (aligned to 64 bytes); throws OutOfMemoryError when that fails.
  StorageImpl(size_t nbytes, Device device);
  // Wraps memory the caller owns; `deleter` (may be empty) runs when the storage dies.
  StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter);
  // base's bytes seen from another device of the same address space (every CPU device: Note
  // [Storage aliases]). Keeps base alive; writes through either count on base's version counter.
  StorageImpl(std::shared_ptr<StorageImpl> base, Device device);
  ~StorageImpl();
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint32_t version() const { return base_ ? base_->version() : version_.load(std::memory_order_relaxed); }
  void bump_version() {
    if (base_)
      base_->bump_version();
    else
      version_.fetch_add(1, std::memory_order_relaxed);
  }
  // The storage this one is an alias of, or null.
  const std::shared_ptr<StorageImpl>& alias_base() const { return base_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Deleter deleter_;  // empty for memory from the device allocator
  bool owned_ = false;
  std::atomic<uint32_t> version_{0};
  std::shared_ptr<StorageImpl> base_;  // set for an alias: the storage that owns the bytes
};

using Storage = std::shared_ptr<StorageImpl>;

// Bytes in use and the peak on one device, as counted by its allocator. Freed blocks of 64 KiB and
// more are kept for reuse (Note [Caching allocator] in src/core/allocator.cpp): cached_bytes.
struct MemoryStats {
  int64_t allocated_bytes = 0;  // what live tensors asked for
  int64_t peak_bytes = 0;
  int64_t allocations = 0;  // live allocations
  int64_t cached_bytes = 0;  // free blocks the allocator keeps
};
MemoryStats memory_stats(Device device);
void reset_peak_memory_stats(Device device);
// Returns the cached free blocks of one device, or of every device, to the system.
void empty_cache(Device device);
void empty_cache();
// How many bytes of free blocks each device's cache may hold: a quarter of the RAM, at most 4 GiB,
// unless $COHORT_ALLOCATOR_CACHE_MB says otherwise (0 under AddressSanitizer). 0 turns caching off.
void set_allocator_cache_limit(int64_t bytes);
int64_t allocator_cache_limit();

}  // namespace cohort
