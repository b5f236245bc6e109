// Intra-op threads: how many threads one op may use (OpenMP underneath, shared with oneDNN).
//
//   cohort::set_num_threads(1);   // like torch::set_num_threads
#pragma once

#include <vector>

#include "cohort/core/device.h"

namespace cohort {

// The number of intra-op threads ops started from the calling thread use.
int get_num_threads();
// Sets it for the calling thread (and the threads it starts later). n >= 1; throws otherwise.
// More threads than cores is allowed but slow: cohort warns once.
void set_num_threads(int n);

// Per-device intra-op threads (Note [Threads per device] in src/core/threads.cpp): the share of the
// cores that work running for `device` uses while several devices run at once. Read by each device's
// executor thread, which runs that device's data-parallel replicas and backward nodes.
int device_num_threads(Device device);
// Divides core_count() among `devices` (the ones about to run at once) and records each share.
void divide_threads_among(const std::vector<Device>& devices);

}  // namespace cohort
