// The ranges of a profile: one log per thread, collected by stop() (Note [Profiling ranges]).
#include "cohort/core/profiling.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "cohort/core/error.h"

namespace cohort::profiling {

namespace {

using Clock = std::chrono::steady_clock;

// A range as a thread logs it: what is cheap to copy (the name's pointer, the dtype and device as
// values, the shapes in one vector: each input's rank, then its sizes; rank -1 for an undefined
// input). stop() turns it into a Range.
struct Logged {
  const char* name = "";  // a literal (the ops' names) or interned (interned() below): it outlives the profile
  Kind kind = Kind::Op;
  int depth = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t bytes = 0;
  std::vector<int64_t> shapes;
  bool described = false;  // inputs() was called with a defined input
  DType dtype = kFloat32;
  Device device;
};

struct ThreadLog {
  std::mutex mutex;  // taken by its thread per range, and by stop()
  std::atomic<uint64_t> session{0};  // read by its thread unlocked, reset by stop()
  int thread = 0;
  std::vector<Logged> ranges;
  std::vector<int64_t> open;  // indices in ranges, innermost last
};

// Names that are not literals (backward nodes', user scopes'), kept for the process: a profile holds
// pointers to them, and the set of distinct names a program uses is small.
const char* interned(const std::string& name) {
  static std::mutex mutex;
  static auto* names = new std::unordered_set<std::string>;
  std::lock_guard<std::mutex> l(mutex);
  return names->insert(name).first->c_str();
}

struct Registry {
  std::mutex mutex;
  uint64_t session = 0;  // the profile being taken, or the last one
  // When it started (steady clock, ns): atomic, since a range of the previous profile may still be
  // closing on another thread when the next one starts.
  std::atomic<int64_t> origin_ns{0};
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

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

int64_t since_origin() { return now_ns() - registry().origin_ns.load(std::memory_order_relaxed); }

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

namespace {

// Opens a range on this thread's log: its slot and session, or slot -1 when the profile stopped.
std::pair<int64_t, uint64_t> open_range(const char* name, Kind kind) {
  const uint64_t session = g_session.load(std::memory_order_acquire);
  ThreadLog* log = log_for(session);
  if (!log) return {-1, 0};
  std::lock_guard<std::mutex> l(log->mutex);
  Logged& range = log->ranges.emplace_back();
  range.name = name;
  range.kind = kind;
  range.depth = static_cast<int>(log->open.size());
  range.bytes = t_allocated;  // the count at the start until the range closes
  range.start_ns = since_origin();
  const int64_t slot = static_cast<int64_t>(log->ranges.size()) - 1;
  log->open.push_back(slot);
  return {slot, session};
}

// The range a scope opened (slot, session), or nullptr once that profile has stopped. Under log.mutex.
Logged* range_of(ThreadLog& log, int64_t slot, uint64_t session) {
  if (log.session != session || static_cast<size_t>(slot) >= log.ranges.size()) return nullptr;
  return &log.ranges[static_cast<size_t>(slot)];
}

}  // namespace

// The ops pass their names as literals (trace::OpScope's, the reduction table's), kept as pointers;
// other names are interned.
Scope::Scope(const char* name, Kind kind) noexcept {
  if (!active()) return;
  try {
    std::tie(slot_, session_) = open_range(name, kind);
  } catch (...) {  // out of memory for the log: this range goes unrecorded
    slot_ = -1;
  }
}

Scope::Scope(const std::string& name, Kind kind) {
  if (active()) open(name, kind);
}

void Scope::open(std::string name, Kind kind) { std::tie(slot_, session_) = open_range(interned(name), kind); }

void Scope::inputs(const std::vector<Tensor>& inputs) {
  if (slot_ < 0) return;
  std::vector<int64_t> shapes;
  shapes.reserve(inputs.size() * 5);
  const Tensor* first = nullptr;
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      shapes.push_back(-1);
      continue;
    }
    shapes.push_back(t.dim());
    for (int64_t d : t.sizes()) shapes.push_back(d);
    if (!first) first = &t;
  }
  ThreadLog& log = *t_log;
  std::lock_guard<std::mutex> l(log.mutex);
  Logged* range = range_of(log, slot_, session_);
  if (!range) return;
  range->shapes = std::move(shapes);
  if (first) {
    range->described = true;
    range->dtype = first->dtype();
    range->device = first->device();
  }
}

Scope::~Scope() {
  if (slot_ < 0) return;
  ThreadLog& log = *t_log;
  const int64_t end = since_origin();
  std::lock_guard<std::mutex> l(log.mutex);
  Logged* range = range_of(log, slot_, session_);
  if (!range) return;  // the profile stopped meanwhile
  range->end_ns = end;
  range->bytes = t_allocated - range->bytes;
  if (!log.open.empty() && log.open.back() == slot_) log.open.pop_back();
}

void start() {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> l(r.mutex);
    COHORT_CHECK(!g_active.load(), "profiler: a profile is already being taken (profiles do not nest)");
    ++r.session;
    r.logs.clear();
    r.origin_ns.store(now_ns(), std::memory_order_relaxed);
    g_session.store(r.session, std::memory_order_release);
  }
  log_for(r.session);  // the starting thread is thread 0
  g_active.store(true, std::memory_order_release);
}

namespace {

Range to_range(const Logged& logged, int thread, size_t order) {
  Range r;
  r.name = logged.name;
  r.kind = logged.kind;
  r.thread = thread;
  r.order = static_cast<int64_t>(order);
  r.depth = logged.depth;
  r.start_ns = logged.start_ns;
  r.end_ns = logged.end_ns;
  r.bytes = logged.bytes;
  for (size_t i = 0; i < logged.shapes.size();) {
    const int64_t rank = logged.shapes[i++];
    std::vector<int64_t>& shape = r.input_shapes.emplace_back();
    for (int64_t d = 0; d < rank; ++d) shape.push_back(logged.shapes[i++]);
  }
  if (logged.described) {
    r.dtype = dtype_name(logged.dtype);
    r.device = logged.device.str();
  }
  return r;
}

}  // namespace

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
    for (size_t i = 0; i < log->ranges.size(); ++i) all.push_back(to_range(log->ranges[i], log->thread, i));
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
