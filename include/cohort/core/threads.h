// Intra-op threads: how many threads one op may use (OpenMP underneath, shared with oneDNN).
//
//   cohort::set_num_threads(1);   // like torch::set_num_threads
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cohort/core/device.h"

namespace cohort {

// The most threads cohort starts for one purpose: intra-op threads (set_num_threads) and a
// DataLoader's workers (num_workers). A fixed number rather than a multiple of the cores, so that a
// configuration valid on one machine is valid on all: it is above the hardware threads of today's
// largest servers (2 sockets x 192 cores x 2 = 768), past which threads only compete for cores,
// and far below the counts at which the system refuses threads (libgomp then crashes the process
// rather than report it).
constexpr int kMaxThreads = 1024;

// The number of intra-op threads ops started from the calling thread may use (what set_num_threads
// set; OMP_NUM_THREADS or one per core by default). usable_threads() is how many they use now.
int get_num_threads();
// Sets it for the calling thread (and the threads it starts later). 1 <= n <= kMaxThreads; throws
// cohort::Error otherwise. More threads than cores is allowed but slow: cohort warns once.
void set_num_threads(int n);

// The threads an op started now on the calling thread uses: get_num_threads(), fewer while other
// processes keep some of this process's cores busy (Note [Threads on a busy machine] in
// src/core/free_cores.cpp). Equal to get_num_threads() when adaptive threads are off.
int usable_threads();
// The cores this process can use now: core_count() less the cores that other processes kept busy
// over the last quarter of a second or so (at least 1).
int free_cores();
// Whether usable_threads() follows the machine's load: on by default, off when the environment sets
// COHORT_ADAPTIVE_THREADS=0 (or off, false, no). Off, every op uses get_num_threads() threads.
void set_adaptive_threads(bool on);
bool adaptive_threads();

// std::thread(f), except that the system's refusal to start a thread (std::system_error: the thread
// limit of the user or the machine, no memory for its stack) throws a cohort::Error that names
// `what`: "could not start DataLoader worker 7 of 900: Resource temporarily unavailable; ...".
std::thread start_thread(const std::string& what, std::function<void()> f);

// Per-device intra-op threads (Note [Threads per device] in src/core/threads.cpp): the share of the
// cores that work running for `device` uses while several devices run at once. Read by each device's
// executor thread, which runs that device's data-parallel replicas and backward nodes.
int device_num_threads(Device device);
// Divides core_count() among `devices` (the ones about to run at once) and records each share.
void divide_threads_among(const std::vector<Device>& devices);

// Runs jobs[i] for devices[i], all at once: the first on the calling thread, every other on its
// device's executor thread (Note [Device executor] in src/core/device_executor.cpp), the threads
// that also run those devices' backward nodes; each with its device's share of the cores (the
// shares are divided among `devices` first). Returns when every job has returned. Called on an
// executor's thread (a nested call), it runs the jobs there, one after the other: that thread is
// busy running the caller. Jobs must not throw (catch inside them). Throws DeviceError for an
// invalid device and Error when the sizes differ.
void run_on_devices(const std::vector<Device>& devices, const std::vector<std::function<void()>>& jobs);
// Whether the calling thread is a device's executor thread (inside one of its jobs).
bool on_device_thread();

}  // namespace cohort
