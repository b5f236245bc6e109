// Storage: a block from the device allocator (allocator.cpp), or memory the caller owns.
#include "cohort/core/storage.h"

#include <string>

#include "allocator.h"
#include "cohort/core/error.h"

namespace cohort {

namespace {

// Beyond this, an allocation is treated as a mistake rather than attempted (no machine has it).
constexpr size_t kMaxBytes = size_t{1} << 46;  // 64 TiB

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
  data_ = detail::device_allocate(device, nbytes);
  COHORT_CHECK_AS(OutOfMemoryError, data_ != nullptr, "empty: out of memory allocating ", human_bytes(nbytes),
                  " on ", device, " (", human_bytes(static_cast<size_t>(memory_stats(device).allocated_bytes)),
                  " already in use)");
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)), owned_(false) {}

// Note [Storage aliases]
// cohort's CPU devices are partitions of one machine's cores and share its address space, so a
// tensor of cpu:0 can be read from cpu:1 where it lies. An alias storage is that view: it carries
// its own device (so ops, device checks and autograd see a tensor of that device) and points into
// its base's bytes, which stay counted against the base's device and are freed by it. The version
// counter is the base's, so a saved tensor read through an alias still notices an in-place write
// made through the base, as autograd requires. DataParallel uses aliases for what replicas only
// read (the master's parameters) and for gradients travelling back to the master, where a real
// device would need copies.
StorageImpl::StorageImpl(std::shared_ptr<StorageImpl> base, Device device)
    : data_(base->data()), nbytes_(base->nbytes()), device_(device), owned_(false), base_(std::move(base)) {}

StorageImpl::~StorageImpl() {
  if (owned_) {
    if (data_) {
      detail::device_free(device_, data_, nbytes_);
    }
  } else if (deleter_) {
    deleter_(data_);
  }
}

}  // namespace cohort
