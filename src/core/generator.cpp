// The process-wide default generator.
#include "cohort/core/generator.h"

#include <sstream>

#include "cohort/core/error.h"

namespace cohort {

namespace {
thread_local ThreadGeneratorScope* t_scope = nullptr;
thread_local BatchSliceScope* t_slice = nullptr;
}

Generator::Generator(const Generator& other) {
  std::lock_guard<std::mutex> l(other.mutex_);
  engine_ = other.engine_;
  seed_ = other.seed_;
}

Generator& Generator::operator=(const Generator& other) {
  if (this == &other) return *this;
  std::scoped_lock l(mutex_, other.mutex_);
  engine_ = other.engine_;
  seed_ = other.seed_;
  return *this;
}

Generator& default_generator() {
  if (t_scope) return t_scope->get();
  static Generator gen(0);
  return gen;
}

ThreadGeneratorScope::ThreadGeneratorScope(Generator& parent) : parent_(parent), previous_(t_scope) {
  t_scope = this;
}

ThreadGeneratorScope::~ThreadGeneratorScope() { t_scope = previous_; }

Generator& ThreadGeneratorScope::get() {
  if (!generator_) generator_.emplace(parent_);
  return *generator_;
}

std::string Generator::get_state() {
  std::lock_guard<std::mutex> l(mutex_);
  std::ostringstream out;
  out << seed_ << ' ' << engine_;
  return out.str();
}

void Generator::set_state(const std::string& state) {
  std::istringstream in(state);
  uint64_t seed = 0;
  std::mt19937_64 engine;
  in >> seed >> engine;
  COHORT_CHECK(!in.fail(), "Generator::set_state: not a generator state (expected the text of get_state(), got ",
               state.size(), " characters starting with \"", state.substr(0, 32), "\")");
  std::lock_guard<std::mutex> l(mutex_);
  seed_ = seed;
  engine_ = engine;
}

BatchSliceScope::BatchSliceScope(const BatchSlice& slice) : slice_(slice), previous_(t_slice) { t_slice = this; }
BatchSliceScope::~BatchSliceScope() { t_slice = previous_; }
const BatchSlice* BatchSliceScope::current() { return t_slice ? &t_slice->slice_ : nullptr; }

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> l(default_generator().mutex());
  default_generator().manual_seed(seed);
}

}  // namespace cohort
