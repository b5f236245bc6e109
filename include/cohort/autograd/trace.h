// Tracing, a seam of the tensor layer: while a Tracer is active on a thread, the ops that know how to
// describe themselves report each call (name, input and output tensors, attributes) to it.
// io::export_onnx is the user; a profiler or another exporter would be one more Tracer.
//
// Note [Tracing ops]
// A traced op opens an OpScope on entry and, when the scope says it is recording, reports its
// inputs, output and attributes before it returns:
//
//   Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
//     trace::OpScope trace("linear");
//     ...
//     if (trace) trace.record({input, weight, bias}, out);
//     return out;
//   }
//
// Only the outermost traced op on the thread records: linear's own addmm and t() run inside its
// scope and are not recorded a second time. An op that does not report stays invisible, which
// would bake its result into the trace as a constant; the autograd seam prevents that: the traced
// forward runs with gradients on (the example input requires grad), so every differentiable op on
// a value that depends on the input or the weights records an autograd node, and autograd::attach
// calls trace::on_autograd_node, which, outside every traced op, throws naming that node
// ("ExpBackward0"). Non-differentiable ops (comparisons, argmax, integer maths) are not caught.
// Without an active tracer every call here is one thread-local load.
//
// An OpScope is also the op's profiling range (Note [Profiling ranges] in cohort/core/profiling.h):
// while a profile is taken, the scope is true for every traced op, nested ones included, and
// record() gives the profiler the inputs' shapes; only the tracer is limited to the outermost op.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cohort/core/profiling.h"
#include "cohort/core/tensor.h"

namespace cohort::trace {

// One attribute of a traced call: an integer, a float, a string or a list of integers.
struct Attr {
  std::string name;
  std::variant<int64_t, double, std::string, std::vector<int64_t>> value;
};

struct Record {
  std::string op;  // the op's cohort name: "conv2d", "add", "max_pool2d", ...
  std::vector<Tensor> inputs;  // undefined for an absent optional input (a conv without bias)
  Tensor output;
  std::vector<Attr> attrs;
  // Outputs after the first, for an op that returns several (a recurrent layer's final states); the
  // exporter names them where the forward returns them.
  std::vector<Tensor> extra_outputs;

  // The attribute named `name`; throws (naming the op) when it is missing or of another type.
  int64_t int_attr(const std::string& name) const;
  double float_attr(const std::string& name) const;
  const std::string& string_attr(const std::string& name) const;
  const std::vector<int64_t>& ints_attr(const std::string& name) const;
  bool has(const std::string& name) const;
};

class Tracer {
 public:
  virtual ~Tracer() = default;
  virtual void record(Record record) = 0;
  // A differentiable op that does not report ran outside every traced op; `node` is its autograd
  // node's name. Expected to throw.
  virtual void untraced(const char* node) = 0;
};

// Makes `tracer` the active tracer of this thread for the guard's lifetime (tracers do not nest).
class TracerGuard {
 public:
  explicit TracerGuard(Tracer& tracer);
  ~TracerGuard();
  TracerGuard(const TracerGuard&) = delete;
  TracerGuard& operator=(const TracerGuard&) = delete;
};

// Opened by a traced op on entry (Note [Tracing ops]). True when this call is to be recorded.
class OpScope {
 public:
  explicit OpScope(const char* op) noexcept;
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  // True when this call is to be recorded: by the tracer, or by a profile being taken.
  explicit operator bool() const { return tracer_ != nullptr || static_cast<bool>(profile_); }
  void record(std::vector<Tensor> inputs, const Tensor& output, std::vector<Attr> attrs = {},
              std::vector<Tensor> extra_outputs = {});
  // Throws cohort::Error "<op>: cannot be traced <why>" (an op called in a mode the trace cannot
  // represent, e.g. dropout in training mode) when this call is being recorded.
  void refuse_if(bool condition, const std::string& why) const;

 private:
  const char* op_;
  Tracer* tracer_ = nullptr;
  bool entered_ = false;
  profiling::Scope profile_;
};

// A list attribute from any range of integers (std::array, ExpandingArray, IntArrayRef).
template <class Range>
std::vector<int64_t> ints(const Range& r) {
  return std::vector<int64_t>(r.begin(), r.end());
}

// Called by autograd::attach for every node it attaches (Note [Tracing ops]).
void on_autograd_node(const char* node);

}  // namespace cohort::trace
