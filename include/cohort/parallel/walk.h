// The kinds of argument DataParallel takes, and the one walk over them.
//
// An argument (or an output) is a tree: containers, std::vector, std::tuple and
// std::map<std::string, …>, whose leaves are of some kind: a Tensor (here), a marker (Broadcast,
// Split, Share: markers.h), a nn::utils::rnn::PackedSequence (packed_sequence_rules.h), or a plain
// value. The containers are walked here, once, for everything that goes over a tree:
//   walk(v, a, path)        every leaf of a, read-only, with its path "argument 0[2]['mask']"
//                           (plan's leaves, describe's "[10, 5], {…}")
//   map<R>(v, a)            a tree of type R with v(leaf) at each leaf (scatter, Broadcast's copies,
//                           forward_backward's detached results)
//   zip(v, parts, path)     one tree from one tree per replica, all of one shape (gather)
// What a kind means is ArgRules<Kind>, one specialisation per kind:
//   known = true; using scattered = …;            what one replica receives (scattered_t)
//   collect(a, path, broadcast, leaves)           what the plan records: Leaf entries (plan.h)
//   scatter(a, chunk) -> scattered                replica chunk.device's part
//   gather(parts, path, device, options) -> Kind  outputs only: the replicas' parts joined
// A new kind is one header with its ArgRules (and a .cpp if it has out-of-line code); markers.h
// includes the library's. A type without ArgRules is refused at compile time by ScatterType, with
// the fix (Note [Scatter plan] in plan.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/core/device.h"
#include "cohort/core/tensor.h"

namespace cohort::parallel {

struct Plan;
struct GatherOptions;

namespace detail {

// std::remove_cvref_t is C++20; the public headers compile as C++17 (libtorch programs' flags).
template <class T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class T>
inline constexpr bool always_false = false;

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

// The kinds of plan leaf (ArgumentPlan::Kind in plan.h).
enum class LeafKind { kSplit, kBroadcast, kUndefined, kSplitList, kShare, kPacked };

// What plan() learns about one leaf of the arguments; tensors are described, never kept.
struct Leaf {
  LeafKind kind;
  std::string path;
  Shape shape;        // tensors; PackedSequence: its data
  int64_t items = 0;  // Split lists; PackedSequence: sequences
  std::vector<int64_t> lengths, order;  // PackedSequence: lengths and sorted_indices
  bool requires_grad = false;
};

// The samples of one replica: [offset, offset + size) along dim, on device.
struct ReplicaChunk {
  Device device;
  int64_t dim = 0, offset = 0, size = 0;
};

inline std::string index_path(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }
inline std::string key_path(const std::string& path, const std::string& key) { return path + "['" + key + "']"; }

// A kind's rules (see above). The primary template is every type that is not a kind.
template <class T>
struct ArgRules {
  static constexpr bool known = false;
  using scattered = T;
};

template <>
struct ArgRules<Tensor> {
  static constexpr bool known = true;
  using scattered = Tensor;
  // kSplit, kBroadcast inside a Broadcast, kUndefined for libtorch's "no tensor" (plan.cpp).
  static void collect(const Tensor& x, const std::string& path, bool broadcast, std::vector<Leaf>& out);
  // x.narrow(dim, offset, size).to(device): differentiable; undefined stays undefined (scatter.cpp).
  static Tensor scatter(const Tensor& x, const ReplicaChunk& chunk);
  // cat along dim, 0-d outputs reduced, unpacked outputs padded (gather.cpp).
  static Tensor gather(const std::vector<Tensor>& parts, const std::string& path, Device device,
                       const GatherOptions& options);
};

template <class T, class = void>
struct HasGather : std::false_type {};
template <class T>
struct HasGather<T, std::void_t<decltype(&ArgRules<T>::gather)>> : std::true_type {};

// ScatterType<A>::type is what one replica receives for an argument of type A: the containers of
// the leaves' ArgRules<…>::scattered. For a type that is no kind, the one place that refuses it.
template <class A>
struct ScatterType {
  static_assert(ArgRules<A>::known,
                "parallel: this argument is neither a Tensor nor a marker, so scatter cannot know whether to "
                "split it or give it to every replica; wrap a value every replica reads in parallel::Share(x), "
                "or a per-sample std::vector in parallel::Split(v) (containers accepted: std::vector, std::tuple, "
                "std::map<std::string, ...>)");
  using type = typename ArgRules<A>::scattered;
};
template <class T>
struct IsShareKind : std::false_type {};  // specialised for Share in markers.h
template <class A>
struct ScatterType<std::vector<A>> {
  static_assert(!IsShareKind<A>::value,
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
  static_assert(!IsShareKind<A>::value,
                "parallel::Share inside a std::vector or std::map: share the whole container instead, "
                "parallel::Share(container)");
  using type = std::map<std::string, typename ScatterType<A>::type>;
};

// The containers a walk goes through, for visitors that print the structure (describe).
enum class Container { kVector, kTuple, kMap };
struct TreeVisitor {
  void enter(Container) const {}
  // Before the i-th element; key is its key in a map, else null.
  void item(size_t, const std::string*) const {}
  void leave(Container) const {}
};

template <class V, class A>
void walk(const V& v, const A& a, const std::string& path);

template <class V, class A, size_t... I>
void walk_tuple(const V& v, const A& a, const std::string& path, std::index_sequence<I...>) {
  ((v.item(I, nullptr), walk(v, std::get<I>(a), index_path(path, I))), ...);
}

// v(leaf, path) for every leaf of a, in order: vectors by index, maps by key, tuples by position.
template <class V, class A>
void walk(const V& v, const A& a, const std::string& path) {
  if constexpr (IsVector<A>::value) {
    v.enter(Container::kVector);
    for (size_t i = 0; i < a.size(); ++i) v.item(i, nullptr), walk(v, a[i], index_path(path, i));
    v.leave(Container::kVector);
  } else if constexpr (IsStringMap<A>::value) {
    v.enter(Container::kMap);
    size_t i = 0;
    for (const auto& [key, value] : a) v.item(i++, &key), walk(v, value, key_path(path, key));
    v.leave(Container::kMap);
  } else if constexpr (IsTuple<A>::value) {
    v.enter(Container::kTuple);
    walk_tuple(v, a, path, std::make_index_sequence<std::tuple_size_v<A>>{});
    v.leave(Container::kTuple);
  } else {
    v(a, path);
  }
}

template <class R, class V, class A>
R map(const V& v, const A& a);

template <class R, class V, class A, size_t... I>
R map_tuple(const V& v, const A& a, std::index_sequence<I...>) {
  return R(map<std::tuple_element_t<I, R>>(v, std::get<I>(a))...);
}

// The tree a with every leaf replaced by v(leaf), as type R (the same containers; R may hold
// references, as scattered_t<Share<T>> does, which v then returns).
template <class R, class V, class A>
R map(const V& v, const A& a) {
  if constexpr (IsVector<A>::value) {
    R out;
    out.reserve(a.size());
    for (const auto& e : a) out.push_back(map<typename R::value_type>(v, e));
    return out;
  } else if constexpr (IsStringMap<A>::value) {
    R out;
    for (const auto& [key, value] : a) out.emplace(key, map<typename R::mapped_type>(v, value));
    return out;
  } else if constexpr (IsTuple<A>::value) {
    return map_tuple<R>(v, a, std::make_index_sequence<std::tuple_size_v<A>>{});
  } else {
    return v(a);
  }
}

template <class V, class A>
A zip(const V& v, const std::vector<const A*>& parts, const std::string& path);

template <class V, class A, size_t... I>
A zip_tuple(const V& v, const std::vector<const A*>& parts, const std::string& path, std::index_sequence<I...>) {
  auto column = [&](auto index) {
    std::vector<const std::tuple_element_t<decltype(index)::value, A>*> out;
    for (const A* p : parts) out.push_back(&std::get<decltype(index)::value>(*p));
    return out;
  };
  return A(zip(v, column(std::integral_constant<size_t, I>{}), index_path(path, I))...);
}

// One tree from parts[r], replica r's tree: v(leaves, path) joins the n leaves at each path. Before
// going into a container, v.same_length(lengths, path) or v.same_keys(keys, path) checks that the
// replicas' containers match.
template <class V, class A>
A zip(const V& v, const std::vector<const A*>& parts, const std::string& path) {
  if constexpr (IsVector<A>::value) {
    std::vector<size_t> lengths;
    for (const A* p : parts) lengths.push_back(p->size());
    v.same_length(lengths, path);
    A out;
    for (size_t i = 0; i < lengths[0]; ++i) {
      std::vector<const typename A::value_type*> column;
      for (const A* p : parts) column.push_back(&(*p)[i]);
      out.push_back(zip(v, column, index_path(path, i)));
    }
    return out;
  } else if constexpr (IsStringMap<A>::value) {
    std::vector<std::vector<std::string>> keys(parts.size());
    for (size_t r = 0; r < parts.size(); ++r)
      for (const auto& entry : *parts[r]) keys[r].push_back(entry.first);
    v.same_keys(keys, path);
    A out;
    for (const std::string& key : keys[0]) {
      std::vector<const typename A::mapped_type*> column;
      for (const A* p : parts) column.push_back(&p->at(key));
      out.emplace(key, zip(v, column, key_path(path, key)));
    }
    return out;
  } else if constexpr (IsTuple<A>::value) {
    return zip_tuple(v, parts, path, std::make_index_sequence<std::tuple_size_v<A>>{});
  } else {
    return v(parts, path);
  }
}

// plan's visitor: each leaf's Leaf entries (a type that is no kind adds none: ScatterType refuses it).
struct PlanVisitor : TreeVisitor {
  std::vector<Leaf>& out;
  bool broadcast;
  PlanVisitor(std::vector<Leaf>& leaves, bool in_broadcast) : out(leaves), broadcast(in_broadcast) {}
  template <class L>
  void operator()(const L& a, const std::string& path) const {
    if constexpr (ArgRules<L>::known) ArgRules<L>::collect(a, path, broadcast, out);
  }
};

}  // namespace detail

// What one replica receives for an argument of type A (a compile error names the fix for a bare value).
template <class A>
using scattered_t = typename detail::ScatterType<detail::remove_cvref_t<A>>::type;

}  // namespace cohort::parallel
