// The profile guard, libtorch's RecordProfile, and the Chrome trace (see cohort/profiler/profiler.h).
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "cohort/io/file.h"
#include "cohort/profiler/profiler.h"

namespace cohort::profiler {

Profile::Profile() { profiling::start(); }

Profile::~Profile() {
  if (running_) profiling::stop();
}

void Profile::stop() {
  if (!running_) return;
  events_ = profiling::stop();
  running_ = false;
}

const std::vector<Event>& Profile::events() {
  stop();
  return events_;
}

std::vector<KeyAverage> Profile::key_averages() { return profiler::key_averages(events()); }

std::string Profile::table(size_t max_rows) { return format_table(key_averages(), max_rows); }

void Profile::export_chrome_trace(const std::filesystem::path& path) { write_chrome_trace(events(), path); }

// Note [Chrome trace]
// The JSON object format of the Trace Event Format: one complete event ("ph": "X") per range with
// its start ("ts") and duration ("dur") in microseconds since the profile started, the process and a
// thread number, "cat" the range's kind, and "args" its inputs' shapes, dtype, device and bytes.
// Thread names are metadata events ("ph": "M"). chrome://tracing and Perfetto nest a thread's
// complete events by their times, as the ranges nest.
void write_chrome_trace(const std::vector<Event>& events, std::ostream& out) {
  using nlohmann::json;
  const int pid = static_cast<int>(::getpid());
  json trace_events = json::array();
  int threads = 0;
  for (const Event& e : events) threads = std::max(threads, e.thread + 1);
  for (int t = 0; t < threads; ++t) {
    const std::string name = t == 0 ? std::string("profiling thread") : "thread " + std::to_string(t);
    trace_events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", t}, {"args", {{"name", name}}}});
  }
  for (const Event& e : events) {
    json args = {{"bytes", e.bytes}};
    if (!e.input_shapes.empty()) args["input_shapes"] = e.input_shapes;
    if (!e.dtype.empty()) args["dtype"] = e.dtype;
    if (!e.device.empty()) args["device"] = e.device;
    trace_events.push_back({{"name", e.name},
                            {"cat", profiling::kind_name(e.kind)},
                            {"ph", "X"},
                            {"ts", static_cast<double>(e.start_ns) / 1e3},
                            {"dur", static_cast<double>(e.end_ns - e.start_ns) / 1e3},
                            {"pid", pid},
                            {"tid", e.thread},
                            {"args", std::move(args)}});
  }
  // Invalid UTF-8 in a name (a user's scope) is replaced, not thrown at the end of a run.
  out << json{{"traceEvents", std::move(trace_events)}, {"displayTimeUnit", "ms"}}.dump(
             -1, ' ', false, json::error_handler_t::replace);
}

void write_chrome_trace(const std::vector<Event>& events, const std::filesystem::path& path) {
  std::ostringstream text;
  write_chrome_trace(events, text);
  io::write_file(path, text.str());
}

RecordProfile::RecordProfile(const std::string& path) : path_(path), profile_(std::make_unique<Profile>()) {}

RecordProfile::~RecordProfile() {
  try {
    profile_->export_chrome_trace(path_);
  } catch (const std::exception& e) {
    std::cerr << "cohort: RecordProfile could not write its trace: " << e.what() << '\n';
  }
}

}  // namespace cohort::profiler
