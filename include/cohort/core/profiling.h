// Profiling, a seam of the tensor layer: while a profile is being taken (cohort::profiler::Profile,
// cohort/profiler/profiler.h), the ops, the autograd engine's backward nodes and the user's
// record_function scopes each report a timed range: name, thread, start and end, the bytes its
// thread allocated meanwhile and, for an op that describes its inputs, their shapes, dtype and device.
//
// Note [Profiling ranges]
// A range is a Scope on the stack; the ops open one through trace::OpScope (Note [Tracing ops]), and
// ops that are not traced open their own:
//
//   Tensor sum(const Tensor& self) {
//     profiling::Scope profile("sum");
//     if (profile) profile.inputs({self});
//     ...
//   }
//
// Every thread appends to a log of its own (one uncontended lock per range), so replicas on other
// threads (DataParallel, the autograd engine's device threads) are profiled too. Ranges nest by the
// order they open on their thread. Without a profile, a Scope costs one relaxed atomic load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::profiling {

enum class Kind : uint8_t {
  Op,        // an op's entry point (its name: "conv2d", "add")
  Backward,  // an autograd node's backward ("ConvolutionBackward0")
  User,      // a record_function scope
};
const char* kind_name(Kind kind);  // "op", "backward", "user"

struct Range {
  std::string name;
  Kind kind = Kind::Op;
  int thread = 0;          // 0: the thread that started the profile; others numbered as they first report
  int64_t order = 0;       // the range's opening order on its thread
  int depth = 0;           // ranges open on the thread when this one opened
  int64_t start_ns = 0;    // since the profile started
  int64_t end_ns = 0;      // a range still open when the profile stopped ends there
  int64_t bytes = 0;       // bytes the thread's tensor allocations asked for during the range, children included
  std::vector<std::vector<int64_t>> input_shapes;  // empty when the op did not describe its inputs
  std::string dtype;       // of the first defined input
  std::string device;
};

// Whether a profile is being taken (by any thread).
bool active() noexcept;

class Scope {
 public:
  explicit Scope(const char* name, Kind kind = Kind::Op) noexcept;
  Scope(const std::string& name, Kind kind);  // copies the name only while a profile is taken
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // True when this range is being recorded.
  explicit operator bool() const { return slot_ >= 0; }
  // Records the inputs' shapes, and the first defined input's dtype and device.
  void inputs(const std::vector<Tensor>& inputs);

 private:
  void open(std::string name, Kind kind);
  int64_t slot_ = -1;      // index in this thread's log
  uint64_t session_ = 0;   // the profile it belongs to
};

// Starting and stopping collection, for cohort::profiler::Profile. start() throws a cohort::Error
// when a profile is already being taken; stop() returns every thread's ranges, ordered by thread
// and then by opening order.
void start();
std::vector<Range> stop();

namespace detail {
// Called by the device allocator for every tensor allocation of this thread.
void count_allocation(int64_t bytes) noexcept;
}  // namespace detail

}  // namespace cohort::profiling
