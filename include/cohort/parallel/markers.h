// Markers: how scatter treats an argument that is not simply "a batch of tensors to split".
//
//   parallel::Broadcast(x)   every replica gets all of x, copied to its device (gradients sum back)
//   parallel::Split(v)       a per-sample std::vector (strings, lengths, ragged tensors) cut at the
//                            same sample boundaries as the tensors
//   parallel::Share(cfg)     any value every replica reads through a const reference (never copied)
//
// A plain Tensor is split along the batch dim, a nn::utils::rnn::PackedSequence by whole sequences
// (packed_sequence_rules.h); std::vector, std::tuple and std::map<std::string, …> of any of these
// recurse (walk.h, which also says how to add a kind). Anything else (an int, a std::string, a
// struct) does not compile: see ScatterType in walk.h and Note [Scatter plan] in plan.h for why
// there is no silent default.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/parallel/packed_sequence_rules.h"
#include "cohort/parallel/walk.h"

namespace cohort::parallel {

namespace detail {

// A Tensor, or std::vector / std::tuple / std::map<std::string, …> of tensors.
template <class T>
struct IsTensorTree : std::false_type {};
template <>
struct IsTensorTree<Tensor> : std::true_type {};
template <class T>
struct IsTensorTree<std::vector<T>> : IsTensorTree<T> {};
template <class... T>
struct IsTensorTree<std::tuple<T...>> : std::bool_constant<(IsTensorTree<T>::value && ...)> {};
template <class T>
struct IsTensorTree<std::map<std::string, T>> : IsTensorTree<T> {};
}  // namespace detail

// Every replica gets the whole of `value` (a Tensor or a vector/tuple/map of tensors) on its own
// device, through to(device), so the gradients of all replicas sum into the original.
template <class T>
class Broadcast {
  static_assert(detail::IsTensorTree<T>::value,
                "parallel::Broadcast holds a Tensor or a std::vector/std::tuple/std::map<std::string, ...> of "
                "tensors; to give every replica a non-tensor value, use parallel::Share(x)");

 public:
  explicit Broadcast(T value) : value_(std::move(value)) {}
  const T& value() const { return value_; }

 private:
  T value_;  // tensors are handles: holding them by value copies no data
};

// A per-sample list: item i belongs to sample i, so replica r gets the items of its samples.
// Items that are Tensors (ragged per-sample data) are moved to the replica's device.
// The list is held by value, so a marker may be built ahead of the call; move it in to avoid a copy.
template <class T>
class Split {
 public:
  explicit Split(std::vector<T> items) : items_(std::move(items)) {}
  const std::vector<T>& items() const { return items_; }
  int64_t size() const { return static_cast<int64_t>(items_.size()); }

 private:
  std::vector<T> items_;
};

// A value every replica reads: each replica receives `const T&` to the caller's object. Not copied
// (it may be large: a vocabulary, a config) and const (replicas run in parallel threads, so reading
// is the only safe use). Share refers to its argument like std::cref, hence a temporary is refused.
template <class T>
class Share {
  static_assert(!std::is_same_v<T, Tensor>,
                "parallel::Share cannot hold a Tensor: a replica needs tensors on its own device; use "
                "parallel::Broadcast(x) for a tensor every replica sees whole");

 public:
  explicit Share(const T& value) : value_(&value) {}
  explicit Share(T&&) {
    static_assert(detail::always_false<T>,
                  "parallel::Share refers to its argument and the replicas read it after this expression; "
                  "keep the value in a named variable and pass that");
  }
  const T& value() const { return *value_; }

 private:
  const T* value_ = nullptr;
};

namespace detail {

Tensor item_to(const Tensor& x, Device device);  // undefined stays undefined (scatter.cpp)

// One Broadcast tree on one device.
struct ToDevice {
  Device device;
  Tensor operator()(const Tensor& x) const { return item_to(x, device); }
};

// The markers' rules (walk.h): a marker is a leaf of the walk that says how to treat what it holds.
template <class T>
struct ArgRules<Broadcast<T>> {
  static constexpr bool known = true;
  using scattered = T;
  static void collect(const Broadcast<T>& a, const std::string& path, bool, std::vector<Leaf>& out) {
    walk(PlanVisitor(out, /*broadcast=*/true), a.value(), path);
  }
  static T scatter(const Broadcast<T>& a, const ReplicaChunk& chunk) { return map<T>(ToDevice{chunk.device}, a.value()); }
};

template <class T>
struct ArgRules<Split<T>> {
  static constexpr bool known = true;
  using scattered = std::vector<T>;
  static void collect(const Split<T>& a, const std::string& path, bool, std::vector<Leaf>& out) {
    out.push_back({LeafKind::kSplitList, path, {a.size()}, a.size(), {}, {}});
  }
  static std::vector<T> scatter(const Split<T>& a, const ReplicaChunk& chunk) {
    const auto first = a.items().begin() + chunk.offset;
    std::vector<T> items(first, first + chunk.size);
    if constexpr (std::is_same_v<T, Tensor>)
      for (Tensor& t : items) t = item_to(t, chunk.device);
    return items;
  }
};

template <class T>
struct ArgRules<Share<T>> {
  static constexpr bool known = true;
  using scattered = const T&;
  static void collect(const Share<T>&, const std::string& path, bool, std::vector<Leaf>& out) {
    out.push_back({LeafKind::kShare, path, {}, 0, {}, {}});
  }
  static const T& scatter(const Share<T>& a, const ReplicaChunk&) { return a.value(); }
};
template <class T>
struct IsShareKind<Share<T>> : std::true_type {};

}  // namespace detail

}  // namespace cohort::parallel
