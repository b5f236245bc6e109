// One persistent worker thread per device for parallel_apply (not part of the public API).
#pragma once

#include <functional>

#include "cohort/core/device.h"

namespace cohort::parallel::detail {

// Queues `job` on the worker thread of `device` (started on first use, kept for the process).
// The job must not throw; it runs with the device's share of intra-op threads
// (Note [Threads per device] in src/core/threads.cpp).
void run_on_device_thread(Device device, std::function<void()> job);
// Whether the calling thread is one of those workers (a nested parallel_apply runs inline).
bool on_device_thread();

}  // namespace cohort::parallel::detail
