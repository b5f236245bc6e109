// The CPU device allocator: 64-byte aligned blocks, large ones cached per device (Note [Caching
// allocator] in allocator.cpp), and the per-device counters behind memory_stats().
#pragma once

#include <cstddef>

#include "cohort/core/device.h"

namespace cohort::detail {

// `nbytes` > 0 bytes on `device`, aligned to 64 bytes; nullptr when the machine has no memory left
// even after the cache was emptied. The caller reports the error.
void* device_allocate(Device device, size_t nbytes);
// Gives back a block from device_allocate with the same `nbytes`.
void device_free(Device device, void* data, size_t nbytes);

}  // namespace cohort::detail
