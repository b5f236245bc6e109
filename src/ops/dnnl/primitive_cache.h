// A per-thread cache of prepared oneDNN primitives, least recently used out first. Building a
// primitive JIT-compiles a kernel (hundreds of microseconds), so every kernel entry keeps the ones
// it built, keyed by what determines them: shapes, strides, options. Per thread, because each thread
// has its own oneDNN stream and a primitive is not shared between concurrent calls. The OpenMP thread
// count is always part of the key: oneDNN sizes a primitive's work split for the count at creation,
// and DataParallel's replicas and set_num_threads change it between calls.
#pragma once

#include <omp.h>

#include <array>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <utility>

namespace cohort::kernel {

template <size_t N, class Value>
class PrimitiveCache {
 public:
  using Key = std::array<int64_t, N>;

  explicit PrimitiveCache(size_t capacity) : capacity_(capacity) {}

  // The entry for `key` and the current thread count, made by make() on a miss.
  template <class Make>
  Value& get(const Key& key, Make&& make) {
    const FullKey k{key, omp_get_max_threads()};
    auto it = index_.find(k);
    if (it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
    entries_.emplace_front(k, make());
    index_[k] = entries_.begin();
    if (entries_.size() > capacity_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return entries_.front().second;
  }

 private:
  using FullKey = std::pair<Key, int>;
  struct Hash {
    size_t operator()(const FullKey& k) const {
      size_t h = static_cast<size_t>(k.second);
      for (int64_t x : k.first) h = h * 1000003u ^ static_cast<size_t>(x);
      return h;
    }
  };
  size_t capacity_;
  std::list<std::pair<FullKey, Value>> entries_;
  std::unordered_map<FullKey, typename std::list<std::pair<FullKey, Value>>::iterator, Hash> index_;
};

}  // namespace cohort::kernel
