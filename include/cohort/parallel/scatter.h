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
//   nn::utils::rnn::PackedSequence  the sequences of r's samples, packed again on their own, data
//                 on devices[r] (packed_sequence_rules.h)
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

// Compares the leaves of the arguments with the ones the plan was made from.
void check_plan_matches(const Plan& plan, const std::vector<Leaf>& leaves);

// Each leaf's part for one replica, by its kind's rules (walk.h).
struct ScatterVisitor {
  ReplicaChunk chunk;
  template <class L>
  typename ArgRules<L>::scattered operator()(const L& a) const {
    if constexpr (ArgRules<L>::known) {
      return ArgRules<L>::scatter(a, chunk);
    } else {
      // Ends the branch for a type ScatterType already refused, with the fix, adding no error of its own.
      ::cohort::detail::internal_assert_fail("unreachable", __FILE__, __LINE__);
    }
  }
};

inline ScatterVisitor replica_visitor(const Plan& plan, size_t r) {
  return {{plan.devices[r], plan.dim, plan.offsets[r], plan.chunk_sizes[r]}};
}

}  // namespace detail

// One tuple of arguments per replica of `plan` (replica r runs on plan.devices[r]); args must be
// the arguments the plan was made from (same structure and sizes). See the table above.
template <class... Args>
std::vector<std::tuple<scattered_t<Args>...>> scatter(const Plan& plan, const Args&... args) {
  detail::check_plan_matches(plan, detail::collect_arguments(args...));
  std::vector<std::tuple<scattered_t<Args>...>> out;
  out.reserve(plan.replicas());
  for (size_t r = 0; r < plan.replicas(); ++r) {
    const detail::ScatterVisitor v = detail::replica_visitor(plan, r);
    out.emplace_back(detail::map<scattered_t<Args>>(v, args)...);
  }
  return out;
}

}  // namespace cohort::parallel
