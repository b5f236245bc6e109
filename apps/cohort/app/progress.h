// A progress bar on stderr in tqdm's style:
//   epoch 1/3  45%|████▌     | 423/938 [00:05<00:06, 84.2 it/s, loss=0.512]
// On a terminal it redraws one line in place (at most 10 times a second). When stderr is not a
// terminal (a log file, CI) it prints a plain line every few seconds instead, so logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace cohort::app {

class ProgressBar {
 public:
  // `total` steps of which `start` are already done (a resumed epoch); `label` starts the line.
  // `enabled` false prints nothing.
  ProgressBar(std::string label, int64_t total, int64_t start, bool enabled, std::FILE* stream = stderr);
  ~ProgressBar();
  // Records that `done` of `total` steps are complete; `postfix` ("loss=0.512") ends the line.
  void update(int64_t done, const std::string& postfix);
  // Draws the final state and ends the line.
  void close();

  // The line for a state, without control characters (exposed for tests). The rate and the ETA
  // count `done_here`, the steps done by this process (a resumed epoch starts part-way).
  static std::string format(const std::string& label, int64_t done, int64_t total, int64_t done_here,
                            double elapsed_s, const std::string& postfix, int bar_width = 20);

 private:
  void draw(bool final);

  std::string label_;
  int64_t total_, start_, done_;
  bool enabled_, tty_, closed_ = false;
  std::FILE* stream_;
  std::string postfix_;
  std::chrono::steady_clock::time_point started_, last_draw_;
};

// "01:05" or "1:02:03".
std::string format_duration(double seconds);

}  // namespace cohort::app
