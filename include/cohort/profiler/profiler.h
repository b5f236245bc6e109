// Seeing where the time goes: a profile of the ops, the backward nodes and the scopes a program names,
// as PyTorch's torch.profiler gives them, written as a Chrome trace (chrome://tracing, Perfetto) and
// summarised in a key_averages table.
//
//   {
//     profiler::Profile profile;                 // every thread's ops from here on
//     {
//       profiler::RecordFunction step("train_step");
//       auto loss = F::cross_entropy(model->forward(x), y);
//       loss.backward();
//     }
//     profile.stop();
//     profile.export_chrome_trace("trace.json");
//     std::cout << profile.table(20);            // by self time, as key_averages().table()
//   }
//
// What is recorded (Note [Profiling ranges] in cohort/core/profiling.h): each op's entry point with
// its inputs' shapes, dtype and device; each autograd node's backward, under its node name
// ("ConvolutionBackward0"); each RecordFunction. Time is wall time on the thread that ran it;
// "bytes" are what that thread's tensor allocations asked for during the range (children included;
// "self" without them). An op called by another op nests inside it; time in a range not spent in
// the ranges nested in it is its self time, so the self times of a thread add up to its top-level
// ranges. Kernels' OpenMP threads are not separate ranges: their time is the op's.
// Without a profile each op pays one relaxed atomic load; while one is taken, about 0.2 us per range.
//
// libtorch's spellings: torch::autograd::profiler::RecordProfile (writes a Chrome trace when it goes
// out of scope) and RECORD_FUNCTION / RECORD_USER_SCOPE.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "cohort/core/profiling.h"

namespace cohort::profiler {

using Kind = profiling::Kind;
using Event = profiling::Range;

// One row of key_averages(): the events of one name and kind together.
struct KeyAverage {
  std::string name;
  Kind kind = Kind::Op;
  int64_t calls = 0;
  int64_t self_ns = 0;   // time in the events, minus the events nested in them
  int64_t total_ns = 0;  // time in the events, nested ones included
  int64_t self_bytes = 0;
  int64_t total_bytes = 0;
};

// Each event's parent (the innermost range open on its thread when it opened) as an index into
// `events`, -1 for a top-level range.
std::vector<int64_t> parents(const std::vector<Event>& events);
// The events' self times (the same order): their time minus their children's.
std::vector<int64_t> self_times(const std::vector<Event>& events);
// Rows by name and kind, the largest self time first.
std::vector<KeyAverage> key_averages(const std::vector<Event>& events);
// The table of the first `rows` rows (0: all): name, self and total time with their share of all
// self time, calls, average, self bytes; and the total profiled time.
std::string format_table(const std::vector<KeyAverage>& rows, size_t max_rows = 0);
// The Chrome trace format's JSON ({"traceEvents": [...]}, complete events "X", times in
// microseconds), written atomically. Throws a cohort::Error naming the path when it cannot be written.
void write_chrome_trace(const std::vector<Event>& events, const std::filesystem::path& path);
void write_chrome_trace(const std::vector<Event>& events, std::ostream& out);

// Takes a profile from construction until stop() or destruction. One at a time in a process:
// a second throws a cohort::Error.
class Profile {
 public:
  Profile();
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  void stop();  // ends the profile; the accessors below stop it first if it is still running
  bool running() const { return running_; }
  const std::vector<Event>& events();
  std::vector<KeyAverage> key_averages();
  std::string table(size_t max_rows = 30);
  void export_chrome_trace(const std::filesystem::path& path);

 private:
  bool running_ = true;
  std::vector<Event> events_;
};

// A named range of the caller's own (the step, the data loading, an evaluation), recorded while a
// profile is taken; free otherwise.
class RecordFunction {
 public:
  explicit RecordFunction(const std::string& name) : scope_(name, Kind::User) {}
  explicit RecordFunction(const char* name) : scope_(std::string(name), Kind::User) {}

 private:
  profiling::Scope scope_;
};

// torch.profiler.record_function's spelling:  auto scope = profiler::record_function("data");
[[nodiscard]] inline RecordFunction record_function(const std::string& name) { return RecordFunction(name); }

// libtorch's guard: profiles until it goes out of scope, then writes the Chrome trace to `path`
// (an error writing it is printed to stderr: a destructor must not throw).
class RecordProfile {
 public:
  explicit RecordProfile(const std::string& path);
  ~RecordProfile();
  RecordProfile(const RecordProfile&) = delete;
  RecordProfile& operator=(const RecordProfile&) = delete;

 private:
  std::filesystem::path path_;
  std::unique_ptr<Profile> profile_;
};

}  // namespace cohort::profiler

namespace cohort::autograd::profiler {
using cohort::profiler::RecordProfile;
}  // namespace cohort::autograd::profiler

// libtorch's macros for a scope of one's own (the inputs, which libtorch may record, are ignored).
#define COHORT_PROFILER_CONCAT_(a, b) a##b
#define COHORT_PROFILER_NAME_(line) COHORT_PROFILER_CONCAT_(cohort_record_function_, line)
#define RECORD_FUNCTION(name, ...) ::cohort::profiler::RecordFunction COHORT_PROFILER_NAME_(__LINE__)(name)
#define RECORD_USER_SCOPE(name) ::cohort::profiler::RecordFunction COHORT_PROFILER_NAME_(__LINE__)(name)
