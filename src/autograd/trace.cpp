// The thread's active tracer and the depth of traced ops running on it (Note [Tracing ops]).
#include "cohort/autograd/trace.h"

#include "cohort/core/error.h"

namespace cohort::trace {

namespace {
thread_local Tracer* active_tracer = nullptr;
thread_local int traced_depth = 0;  // traced ops running on this thread, outermost included

template <class T>
const T& attr_of(const Record& r, const std::string& name, const char* kind) {
  for (const Attr& a : r.attrs)
    if (a.name == name) {
      const T* v = std::get_if<T>(&a.value);
      COHORT_CHECK(v, "trace: attribute '", name, "' of ", r.op, " is not ", kind, "; this is a bug");
      return *v;
    }
  throw Error(detail::str("trace: ", r.op, " has no attribute '", name, "'; this is a bug"));
}
}  // namespace

int64_t Record::int_attr(const std::string& name) const { return attr_of<int64_t>(*this, name, "an int"); }
double Record::float_attr(const std::string& name) const { return attr_of<double>(*this, name, "a float"); }
const std::string& Record::string_attr(const std::string& name) const {
  return attr_of<std::string>(*this, name, "a string");
}
const std::vector<int64_t>& Record::ints_attr(const std::string& name) const {
  return attr_of<std::vector<int64_t>>(*this, name, "a list of ints");
}
bool Record::has(const std::string& name) const {
  for (const Attr& a : attrs)
    if (a.name == name) return true;
  return false;
}

TracerGuard::TracerGuard(Tracer& tracer) {
  COHORT_CHECK(active_tracer == nullptr, "trace: a trace is already running on this thread (traces do not nest)");
  active_tracer = &tracer;
  traced_depth = 0;
}

TracerGuard::~TracerGuard() {
  active_tracer = nullptr;
  traced_depth = 0;
}

OpScope::OpScope(const char* op) noexcept : op_(op), profile_(op) {
  if (active_tracer == nullptr) return;
  entered_ = true;
  if (traced_depth++ == 0) tracer_ = active_tracer;
}

OpScope::~OpScope() {
  if (entered_) --traced_depth;
}

void OpScope::record(std::vector<Tensor> inputs, const Tensor& output, std::vector<Attr> attrs,
                     std::vector<Tensor> extra_outputs) {
  if (profile_) profile_.inputs(inputs);
  if (tracer_) tracer_->record(Record{op_, std::move(inputs), output, std::move(attrs), std::move(extra_outputs)});
}

void OpScope::refuse_if(bool condition, const std::string& why) const {
  if (tracer_ && condition) throw Error(detail::str(op_, ": cannot be traced ", why));
}

void on_autograd_node(const char* node) {
  if (active_tracer != nullptr && traced_depth == 0) active_tracer->untraced(node);
}

}  // namespace cohort::trace
