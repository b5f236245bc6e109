// The seeded random generator behind rand/randn/randint, dropout and shuffling.
// One default generator per process; manual_seed resets it. Streams are deterministic for a seed.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>

namespace cohort {

class Generator {
 public:
  explicit Generator(uint64_t seed = 5489u) : engine_(seed), seed_(seed) {}
  // A copy continues the same stream independently.
  Generator(const Generator& other);
  Generator& operator=(const Generator& other);
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
  mutable std::mutex mutex_;
};

// The calling thread's default generator: the process-wide one, unless a ThreadGeneratorScope is
// active on this thread.
Generator& default_generator();
void manual_seed(uint64_t seed);

// While alive, default_generator() on the constructing thread is a generator of its own: on first use,
// a copy of `parent`'s state (so a thread that draws nothing costs nothing). Data-parallel replicas
// use it so that every replica draws what the caller would have drawn (Note [Replica RNG] in
// src/parallel/parallel_apply.cpp). Not copyable; must die on its thread.
class ThreadGeneratorScope {
 public:
  explicit ThreadGeneratorScope(Generator& parent);
  ~ThreadGeneratorScope();
  ThreadGeneratorScope(const ThreadGeneratorScope&) = delete;
  ThreadGeneratorScope& operator=(const ThreadGeneratorScope&) = delete;
  Generator& get();
  bool used() const { return generator_.has_value(); }

 private:
  Generator& parent_;
  std::optional<Generator> generator_;
  ThreadGeneratorScope* previous_;
};

// The part of a larger batch that this thread computes: samples [offset, offset + size) of `total`
// along `dim`. Data parallelism sets it for each replica, so that a random tensor with `size`
// entries along `dim` (a dropout mask, noise added in forward) holds the values that the whole
// batch's tensor would hold at those samples (Note [Counter-based random tensors] in
// src/ops/random.cpp): results do not depend on how the batch was split.
struct BatchSlice {
  int64_t dim = 0;
  int64_t offset = 0;
  int64_t size = 0;
  int64_t total = 0;
};

// Sets the calling thread's BatchSlice while alive; nests.
class BatchSliceScope {
 public:
  explicit BatchSliceScope(const BatchSlice& slice);
  ~BatchSliceScope();
  BatchSliceScope(const BatchSliceScope&) = delete;
  BatchSliceScope& operator=(const BatchSliceScope&) = delete;
  // The innermost slice set on this thread, or nullptr.
  static const BatchSlice* current();

 private:
  BatchSlice slice_;
  BatchSliceScope* previous_;
};

}  // namespace cohort
