// The ranges of a profile: one log per thread, collected by stop() (Note [Profiling ranges]).
#include "cohort/core/profiling.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "cohort/core/error.h"

namespace cohort::profiling {

namespace {

using Clock = std::chrono::steady_clock;

struct ThreadLog {
  std::mutex mutex;  // taken by its thread per range, and by stop()
  uint64_t session = 0;
  int thread = 0;
  std::vector<Range> ranges;
  std::vector<int64_t> open;  // indices in ranges, innermost last
};

struct Registry {
  std::mutex mutex;
  uint64_t session = 0;  // the profile being taken, or the last one
  Clock::time_point origin;
  std::vector<std::shared_ptr<ThreadLog>> logs;  // the threads that reported in this session
};

std::atomic<bool> g_active{false};
// Raised by start() after the registry is ready: the session a scope opened now belongs to.
std::atomic<uint64_t> g_session{0};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may report while the process exits
  return *r;
}

// This thread's log, joined to the current session on first use in it. Owned by the registry too,
// so that the ranges of a thread that ends before the profile stops survive.
thread_local std::shared_ptr<ThreadLog> t_log;
thread_local int64_t t_allocated = 0;  // bytes this thread's allocations asked for, ever

ThreadLog* log_for(uint64_t session) {
  if (!t_log) t_log = std::make_shared<ThreadLog>();
  if (t_log->session == session) return t_log.get();
  Registry& r = registry();
  std::lock_guard<std::mutex> l(r.mutex);
  if (r.session != session) return nullptr;  // stopped in between
  std::lock_guard<std::mutex> ll(t_log->mutex);
  t_log->session = session;
  t_log->thread = static_cast<int>(r.logs.size());
  t_log->ranges.clear();
  t_log->open.clear();
  r.logs.push_back(t_log);
  return t_log.get();
}

int64_t since_origin() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - registry().origin).count();
}

}  // namespace

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Op: return "op";
    case Kind::Backward: return "backward";
    case Kind::User: return "user";
  }
  return "op";
}

bool active() noexcept { return g_active.load(std::memory_order_relaxed); }

Scope::Scope(const char* name, Kind kind) noexcept {
  if (!active()) return;
  try {
    open(name, kind);
  } catch (...) {  // out of memory for the log: this range goes unrecorded
    slot_ = -1;
  }
}

Scope::Scope(const std::string& name, Kind kind) {
  if (active()) open(name, kind);
}

void Scope::open(std::string name, Kind kind) {
  const uint64_t session = g_session.load(std::memory_order_acquire);
  ThreadLog* log = log_for(session);
  if (!log) return;
  std::lock_guard<std::mutex> l(log->mutex);
  Range range;
  range.name = std::move(name);
  range.kind = kind;
  range.thread = log->thread;
  range.order = static_cast<int64_t>(log->ranges.size());
  range.depth = static_cast<int>(log->open.size());
  range.bytes = t_allocated;  // the count at the start until the range closes
  range.start_ns = since_origin();
  log->ranges.push_back(std::move(range));
  slot_ = static_cast<int64_t>(log->ranges.size()) - 1;
  session_ = session;
  log->open.push_back(slot_);
}

Scope::~Scope() {
  if (slot_ < 0) return;
  ThreadLog& log = *t_log;
  const int64_t end = since_origin();
  std::lock_guard<std::mutex> l(log.mutex);
  if (log.session != session_ || log.ranges.empty()) return;  // the profile stopped meanwhile
  Range& range = log.ranges[static_cast<size_t>(slot_)];
  range.end_ns = end;
  range.bytes = t_allocated - range.bytes;
  if (!log.open.empty() && log.open.back() == slot_) log.open.pop_back();
}

void Scope::inputs(const std::vector<Tensor>& inputs) {
  if (slot_ < 0) return;
  std::vector<std::vector<int64_t>> shapes;
  std::string dtype, device;
  shapes.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      shapes.emplace_back();
      continue;
    }
    shapes.push_back(t.sizes().vec());
    if (dtype.empty()) {
      dtype = dtype_name(t.dtype());
      device = t.device().str();
    }
  }
  ThreadLog& log = *t_log;
  std::lock_guard<std::mutex> l(log.mutex);
  if (log.session != session_ || log.ranges.empty()) return;
  Range& range = log.ranges[static_cast<size_t>(slot_)];
  range.input_shapes = std::move(shapes);
  range.dtype = std::move(dtype);
  range.device = std::move(device);
}

void start() {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> l(r.mutex);
    COHORT_CHECK(!g_active.load(), "profiler: a profile is already being taken (profiles do not nest)");
    ++r.session;
    r.logs.clear();
    r.origin = Clock::now();
    g_session.store(r.session, std::memory_order_release);
  }
  log_for(r.session);  // the starting thread is thread 0
  g_active.store(true, std::memory_order_release);
}

std::vector<Range> stop() {
  Registry& r = registry();
  g_active.store(false, std::memory_order_release);
  const int64_t end = since_origin();
  std::vector<std::shared_ptr<ThreadLog>> logs;
  {
    std::lock_guard<std::mutex> l(r.mutex);
    ++r.session;  // scopes still open belong to no session now
    logs.swap(r.logs);
  }
  std::vector<Range> all;
  for (const auto& log : logs) {
    std::lock_guard<std::mutex> l(log->mutex);
    for (int64_t i : log->open) {
      log->ranges[static_cast<size_t>(i)].end_ns = end;
      log->ranges[static_cast<size_t>(i)].bytes = 0;
    }
    for (Range& range : log->ranges) all.push_back(std::move(range));
    log->ranges.clear();
    log->open.clear();
    log->session = 0;
  }
  return all;
}

namespace detail {
void count_allocation(int64_t bytes) noexcept { t_allocated += bytes; }
}  // namespace detail

}  // namespace cohort::profiling
