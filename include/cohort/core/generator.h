// The seeded random generator behind rand/randn/randint, dropout and shuffling.
// One default generator per process; manual_seed resets it. Streams are deterministic for a seed.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>

namespace cohort {

class Generator {
 public:
  explicit Generator(uint64_t seed = 5489u) : engine_(seed), seed_(seed) {}
  void manual_seed(uint64_t seed) { engine_.seed(seed); seed_ = seed; }
  uint64_t initial_seed() const { return seed_; }
  std::mt19937_64& engine() { return engine_; }
  // Generators are shared across threads; hold this while drawing.
  std::mutex& mutex() { return mutex_; }
  // A 64-bit draw, e.g. to seed a child generator.
  uint64_t next_u64() { std::lock_guard<std::mutex> l(mutex_); return engine_(); }

  // The full engine state as text (the seed and mt19937_64's 312 words), for checkpoints:
  // set_state(get_state()) continues the stream exactly where it was.
  std::string get_state();
  // Throws cohort::Error if `state` was not produced by get_state().
  void set_state(const std::string& state);

 private:
  std::mt19937_64 engine_;
  uint64_t seed_;
  std::mutex mutex_;
};

// The calling thread's default generator: the process-wide one, unless a ThreadGeneratorScope is
// active on this thread.
Generator& default_generator();
void manual_seed(uint64_t seed);

// While alive, default_generator() on the constructing thread is a generator of its own, created on
// first use from seed() (so a thread that draws nothing costs nothing). Data-parallel replica threads
// use it: Note [Replica RNG] in src/parallel/parallel_apply.cpp. Not copyable; must die on its thread.
class ThreadGeneratorScope {
 public:
  explicit ThreadGeneratorScope(std::function<uint64_t()> seed);
  ~ThreadGeneratorScope();
  ThreadGeneratorScope(const ThreadGeneratorScope&) = delete;
  ThreadGeneratorScope& operator=(const ThreadGeneratorScope&) = delete;
  Generator& get();
  bool used() const { return generator_.has_value(); }

 private:
  std::function<uint64_t()> seed_;
  std::optional<Generator> generator_;
  ThreadGeneratorScope* previous_;
};

}  // namespace cohort
