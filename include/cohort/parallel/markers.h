// Markers: how scatter treats an argument that is not simply "a batch of tensors to split".
//
//   parallel::Broadcast(x)   every replica gets all of x, copied to its device (gradients sum back)
//   parallel::Split(v)       a per-sample std::vector (strings, lengths, ragged tensors) cut at the
//                            same sample boundaries as the tensors
//   parallel::Share(cfg)     any value every replica reads through a const reference (never copied)
//
// A plain Tensor is split along the batch dim; a nn::utils::rnn::PackedSequence is split by whole
// sequences with the same samples (each replica gets a valid packed batch); std::vector, std::tuple and std::map<std::string, …>
// of any of these recurse. Anything else (an int, a std::string, a struct) does not compile: see
// ScatterType below and Note [Scatter plan] in plan.h for why there is no silent default.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/nn/utils/rnn.h"

namespace cohort::parallel {

namespace detail {

// std::remove_cvref_t is C++20; the public headers compile as C++17 (libtorch programs' flags).
template <class T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class T>
inline constexpr bool always_false = false;

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

// Which case an argument type is; scatter, plan and gather dispatch on these.
template <class T>
struct IsBroadcast : std::false_type {};
template <class T>
struct IsBroadcast<Broadcast<T>> : std::true_type {};
template <class T>
struct IsSplit : std::false_type {};
template <class T>
struct IsSplit<Split<T>> : std::true_type {};
template <class T>
struct IsShare : std::false_type {};
template <class T>
struct IsShare<Share<T>> : std::true_type {};
template <class T>
struct IsPacked : std::is_same<T, nn::utils::rnn::PackedSequence> {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsTuple : std::false_type {};
template <class... T>
struct IsTuple<std::tuple<T...>> : std::true_type {};
template <class T>
struct IsStringMap : std::false_type {};
template <class T>
struct IsStringMap<std::map<std::string, T>> : std::true_type {};

// ScatterType<A>::type is what one replica receives for an argument of type A. The primary
// template is every type scatter does not know: the one place that refuses them.
template <class A>
struct ScatterType {
  static_assert(always_false<A>,
                "parallel: this argument is neither a Tensor nor a marker, so scatter cannot know whether to "
                "split it or give it to every replica; wrap a value every replica reads in parallel::Share(x), "
                "or a per-sample std::vector in parallel::Split(v) (containers accepted: std::vector, std::tuple, "
                "std::map<std::string, ...>)");
  using type = A;
};
template <>
struct ScatterType<Tensor> {
  using type = Tensor;
};
template <>
struct ScatterType<nn::utils::rnn::PackedSequence> {
  using type = nn::utils::rnn::PackedSequence;
};
template <class T>
struct ScatterType<Broadcast<T>> {
  using type = T;
};
template <class T>
struct ScatterType<Split<T>> {
  using type = std::vector<T>;
};
template <class T>
struct ScatterType<Share<T>> {
  using type = const T&;
};
template <class A>
struct ScatterType<std::vector<A>> {
  static_assert(!IsShare<A>::value,
                "parallel::Share inside a std::vector or std::map: share the whole container instead, "
                "parallel::Share(container)");
  using type = std::vector<typename ScatterType<A>::type>;
};
template <class... A>
struct ScatterType<std::tuple<A...>> {
  using type = std::tuple<typename ScatterType<A>::type...>;
};
template <class A>
struct ScatterType<std::map<std::string, A>> {
  static_assert(!IsShare<A>::value,
                "parallel::Share inside a std::vector or std::map: share the whole container instead, "
                "parallel::Share(container)");
  using type = std::map<std::string, typename ScatterType<A>::type>;
};

}  // namespace detail

// What one replica receives for an argument of type A (a compile error names the fix for a bare value).
template <class A>
using scattered_t = typename detail::ScatterType<detail::remove_cvref_t<A>>::type;

}  // namespace cohort::parallel
