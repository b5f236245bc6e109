// `cohort train --profile FIRST:LAST`: a profile (cohort/profiler/profiler.h) of the training steps
// FIRST to LAST, counted over the run from 1, with the data loading that feeds them. Written into the
// run directory at the end of the epoch of step LAST (or of the run, if it ends first) as profile.json, a Chrome trace
// (chrome://tracing, ui.perfetto.dev), and profile.txt, the key_averages table by self time.
// Rank 0 profiles; the other processes of a distributed run do not.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "cohort/profiler/profiler.h"

namespace cohort::app {

struct ProfileSteps {
  int64_t first = 0;  // 0: no profile
  int64_t last = 0;
};

// "10:20", or "7" for the one step 7. Throws a UsageError naming --profile for anything else.
ProfileSteps parse_profile_steps(const std::string& text);

class StepProfiler {
 public:
  StepProfiler(ProfileSteps steps, std::filesystem::path out, bool talk);
  // After the step numbered `step` has ended, and with the step reached so far before the first one
  // (0 for a new run): starts the profile before step FIRST's batch is loaded, stops it after LAST.
  void after_step(int64_t step);
  // After an epoch's last step: writes a profile that has stopped (at the epoch's end, so that the time
  // writing takes is not in the epoch's images/s).
  void end_epoch();
  // The run is ending: a profile still being taken is written with the steps it has.
  void finish(int64_t step);

 private:
  void write();
  ProfileSteps steps_;
  std::filesystem::path out_;
  bool talk_;
  std::unique_ptr<profiler::Profile> profile_;
  int64_t last_step_ = 0;
};

}  // namespace cohort::app
