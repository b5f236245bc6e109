// Intra-op threads: how many threads one op may use (OpenMP underneath, shared with oneDNN).
//
//   cohort::set_num_threads(1);   // like torch::set_num_threads
#pragma once

namespace cohort {

// The number of intra-op threads ops started from the calling thread use.
int get_num_threads();
// Sets it for the calling thread (and the threads it starts later). n >= 1; throws otherwise.
// More threads than cores is allowed but slow: cohort warns once.
void set_num_threads(int n);

}  // namespace cohort
