// The parts of free_cores.cpp that other core files and the tests use (not public API).
#pragma once

#include <string>
#include <vector>

namespace cohort::detail {

// Whether other processes kept some of this process's cores busy at the last look.
bool cores_taken_by_others();
// The cores counted as taken by other processes after a look that measured `others` cores busy,
// when `taken` were counted before (Note [Threads on a busy machine]: rounding with hysteresis).
int cores_taken_after(double others, int taken);
// The idle time (idle and iowait) of `cpus` in /proc/stat's text, in seconds.
double idle_seconds(const std::string& proc_stat, const std::vector<int>& cpus, long ticks_per_second);
// The tasks runnable now (the procs_running line of /proc/stat's text; 0 when missing).
int procs_running(const std::string& proc_stat);

}  // namespace cohort::detail
