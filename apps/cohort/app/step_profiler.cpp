// Profiling a window of training steps (see step_profiler.h).
#include "app/step_profiler.h"

#include <charconv>
#include <iostream>

#include "app/config.h"
#include "cohort/io/file.h"

namespace cohort::app {

namespace {

int64_t parse_step(const std::string& text, const std::string& whole) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 1)
    throw UsageError("cohort train: --profile expects FIRST:LAST, the steps to profile counted from 1 (e.g. 10:20), "
                     "or one step N; got '" + escape_text(whole) + "'");
  return value;
}

}  // namespace

ProfileSteps parse_profile_steps(const std::string& text) {
  const size_t colon = text.find(':');
  ProfileSteps steps;
  steps.first = parse_step(text.substr(0, colon), text);
  steps.last = colon == std::string::npos ? steps.first : parse_step(text.substr(colon + 1), text);
  if (steps.last < steps.first)
    throw UsageError("cohort train: --profile " + escape_text(text) + " ends before it starts; hint: FIRST:LAST with "
                     "FIRST <= LAST, e.g. 10:20");
  return steps;
}

StepProfiler::StepProfiler(ProfileSteps steps, std::filesystem::path out, bool talk)
    : steps_(steps), out_(std::move(out)), talk_(talk) {
  if (steps_.first > 0) {
    io::check_output_file(out_ / "profile.json", "cohort train: --profile");
    io::check_output_file(out_ / "profile.txt", "cohort train: --profile");
  }
}

void StepProfiler::after_step(int64_t step) {
  if (steps_.first == 0) return;
  if (step == steps_.first - 1 && !profile_) profile_ = std::make_unique<profiler::Profile>();
  if (step == steps_.last && profile_ && profile_->running()) {
    profile_->stop();
    last_step_ = step;
  }
}

void StepProfiler::end_epoch() {
  if (profile_ && !profile_->running()) write();
}

void StepProfiler::finish(int64_t step) {
  if (!profile_) return;
  if (profile_->running()) {
    profile_->stop();
    last_step_ = step;
  }
  write();
}

void StepProfiler::write() {
  const int64_t last_step = last_step_;
  const std::string steps = steps_.first == last_step ? "step " + std::to_string(last_step)
                                                      : "steps " + std::to_string(steps_.first) + "-" +
                                                            std::to_string(last_step);
  profile_->export_chrome_trace(out_ / "profile.json");
  io::write_file(out_ / "profile.txt", "cohort train: profile of " + steps + "\n" + profile_->table(40));
  profile_.reset();
  if (talk_)
    std::cerr << "cohort: profile of " << steps << " in " << escape_text((out_ / "profile.json").string())
              << " (a Chrome trace: chrome://tracing or ui.perfetto.dev) and profile.txt\n";
}

}  // namespace cohort::app
