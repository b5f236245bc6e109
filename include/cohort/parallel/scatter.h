// parallel::scatter: the arguments of one call, cut into one std::tuple per replica by a Plan.
//
//   auto p = parallel::plan(devices, {}, x, parallel::Broadcast(w), parallel::Split(names));
//   auto inputs = parallel::scatter(p, x, parallel::Broadcast(w), parallel::Split(names));
//   // inputs[r] is std::tuple<Tensor, Tensor, std::vector<std::string>>: the replica on p.devices[r]
//
// What replica r receives (scattered_t<A> in markers.h):
//   Tensor        x.narrow(dim, offsets[r], chunk_sizes[r]).to(devices[r]): differentiable, so the
//                 replicas' gradients land in the matching rows of x.grad (on the device of r == x's
//                 device the chunk is a view of x, as it would be on a single device)
//   PackedSequence  the sequences of r's samples, packed again on their own (longest first, with
//                 their own sorted_indices when not already in order), data on devices[r]:
//                 differentiable (index_select, to)
//   Broadcast(x)  x.to(devices[r]): every replica's gradient sums into x.grad
//   Split(v)      std::vector of v's items for r's samples (Tensor items moved to devices[r])
//   Share(v)      const T& to the caller's v (it must outlive the use of the scattered tuples)
//   vector/tuple/map   the same container of the above; an undefined Tensor stays undefined
// Throws cohort::Error when the arguments do not match the plan (it was made for other arguments).
#pragma once

#include <tuple>
#include <vector>

#include "cohort/parallel/markers.h"
#include "cohort/parallel/plan.h"

namespace cohort::parallel {

namespace detail {

Tensor chunk_for(const Tensor& x, const Plan& plan, size_t replica);
nn::utils::rnn::PackedSequence packed_chunk_for(const nn::utils::rnn::PackedSequence& x, const Plan& plan,
                                                size_t replica);
Tensor item_to(const Tensor& x, Device device);
// Compares the leaves of the arguments with the ones the plan was made from.
void check_plan_matches(const Plan& plan, const std::vector<Leaf>& leaves);

// Ends the branch for a type already refused by a static_assert, so that it adds no error of its own.
[[noreturn]] inline void unreachable() { ::cohort::detail::internal_assert_fail("unreachable", __FILE__, __LINE__); }

// All of a Broadcast tree on one device.
template <class T>
T broadcast_to(const T& a, Device device) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return item_to(a, device);
  } else if constexpr (IsVector<T>::value || IsStringMap<T>::value) {
    T out;
    if constexpr (IsVector<T>::value) {
      out.reserve(a.size());
      for (const auto& e : a) out.push_back(broadcast_to(e, device));
    } else {
      for (const auto& [key, value] : a) out.emplace(key, broadcast_to(value, device));
    }
    return out;
  } else if constexpr (IsTuple<T>::value) {
    return std::apply([&](const auto&... e) { return T(broadcast_to(e, device)...); }, a);
  } else {
    unreachable();  // Broadcast<T> refused T at compile time, with the fix
  }
}

template <class A>
scattered_t<A> scatter_one(const A& a, const Plan& plan, size_t r) {
  if constexpr (std::is_same_v<A, Tensor>) {
    return chunk_for(a, plan, r);
  } else if constexpr (IsPacked<A>::value) {
    return packed_chunk_for(a, plan, r);
  } else if constexpr (IsBroadcast<A>::value) {
    return broadcast_to(a.value(), plan.devices[r]);
  } else if constexpr (IsSplit<A>::value) {
    const auto first = a.items().begin() + plan.offsets[r];
    scattered_t<A> items(first, first + plan.chunk_sizes[r]);
    if constexpr (std::is_same_v<typename scattered_t<A>::value_type, Tensor>)
      for (Tensor& t : items) t = item_to(t, plan.devices[r]);
    return items;
  } else if constexpr (IsShare<A>::value) {
    return a.value();
  } else if constexpr (IsVector<A>::value) {
    scattered_t<A> out;
    out.reserve(a.size());
    for (const auto& e : a) out.push_back(scatter_one(e, plan, r));
    return out;
  } else if constexpr (IsStringMap<A>::value) {
    scattered_t<A> out;
    for (const auto& [key, value] : a) out.emplace(key, scatter_one(value, plan, r));
    return out;
  } else if constexpr (IsTuple<A>::value) {
    return std::apply([&](const auto&... e) { return scattered_t<A>(scatter_one(e, plan, r)...); }, a);
  } else {
    unreachable();  // ScatterType<A> refused A at compile time, with the fix
  }
}

}  // namespace detail

// One tuple of arguments per replica of `plan` (replica r runs on plan.devices[r]); args must be
// the arguments the plan was made from (same structure and sizes). See the table above.
template <class... Args>
std::vector<std::tuple<scattered_t<Args>...>> scatter(const Plan& plan, const Args&... args) {
  detail::check_plan_matches(plan, detail::collect_arguments(args...));
  std::vector<std::tuple<scattered_t<Args>...>> out;
  out.reserve(plan.replicas());
  for (size_t r = 0; r < plan.replicas(); ++r) out.emplace_back(detail::scatter_one(args, plan, r)...);
  return out;
}

}  // namespace cohort::parallel
