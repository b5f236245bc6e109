// Storage and the per-device allocator statistics.
#include "cohort/core/storage.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

#include "cohort/core/error.h"

namespace cohort {

namespace {

constexpr size_t kAlignment = 64;
// Beyond this, an allocation is treated as a mistake rather than attempted (no machine has it).
constexpr size_t kMaxBytes = size_t{1} << 46;  // 64 TiB

struct DeviceCounters {
  std::atomic<int64_t> allocated{0};
  std::atomic<int64_t> peak{0};
  std::atomic<int64_t> count{0};
};

DeviceCounters& counters(Device d) {
  // Never destroyed: tensors freed by worker threads while the process exits still count here.
  static auto* m = new std::mutex;
  static auto* all = new std::unordered_map<int, DeviceCounters>;
  std::lock_guard<std::mutex> l(*m);
  return (*all)[d.index()];  // node-based map: references stay valid
}

void count_alloc(Device d, size_t n) {
  auto& c = counters(d);
  int64_t now = c.allocated.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
  c.count.fetch_add(1);
  int64_t peak = c.peak.load();
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
  }
}

void count_free(Device d, size_t n) {
  auto& c = counters(d);
  c.allocated.fetch_sub(static_cast<int64_t>(n));
  c.count.fetch_sub(1);
}

std::string human_bytes(size_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  return detail::str(static_cast<int64_t>(v * 10) / 10.0, " ", units[u]);
}

}  // namespace

StorageImpl::StorageImpl(size_t nbytes, Device device) : nbytes_(nbytes), device_(device), owned_(true) {
  if (nbytes == 0) return;
  COHORT_CHECK_AS(OutOfMemoryError, nbytes <= kMaxBytes, "empty: cannot allocate ", human_bytes(nbytes),
                  " (", nbytes, " bytes) on ", device, "; the request exceeds any machine's memory");
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  data_ = std::aligned_alloc(kAlignment, rounded);
  COHORT_CHECK_AS(OutOfMemoryError, data_ != nullptr, "empty: out of memory allocating ", human_bytes(nbytes),
                  " on ", device, " (", human_bytes(static_cast<size_t>(memory_stats(device).allocated_bytes)),
                  " already in use)");
  count_alloc(device, nbytes);
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)), owned_(false) {}

StorageImpl::~StorageImpl() {
  if (owned_) {
    if (data_) {
      std::free(data_);
      count_free(device_, nbytes_);
    }
  } else if (deleter_) {
    deleter_(data_);
  }
}

MemoryStats memory_stats(Device device) {
  auto& c = counters(device);
  return {c.allocated.load(), c.peak.load(), c.count.load()};
}

void reset_peak_memory_stats(Device device) {
  auto& c = counters(device);
  c.peak.store(c.allocated.load());
}

}  // namespace cohort
