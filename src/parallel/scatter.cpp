// parallel::scatter's non-template part: one replica's chunk of a tensor, and the check that the
// arguments are the ones the plan was made from.
#include "cohort/parallel/scatter.h"

#include <numeric>

#include "cohort/core/error.h"
#include "cohort/ops/shape.h"

namespace cohort::parallel::detail {

Tensor item_to(const Tensor& x, Device device) { return x.defined() ? x.to(device) : x; }

Tensor ArgRules<Tensor>::scatter(const Tensor& x, const ReplicaChunk& chunk) {
  if (!x.defined()) return x;
  const int64_t dim = wrap_dim(chunk.dim, x.dim(), "parallel::scatter");
  // narrow then to(): both record autograd nodes, so the chunk's gradient flows back into x's rows.
  return x.narrow(dim, chunk.offset, chunk.size).to(chunk.device);
}

namespace {
const char* kind_name(ArgumentPlan::Kind kind) {
  switch (kind) {
    case ArgumentPlan::Kind::kSplit: return "a tensor to split";
    case ArgumentPlan::Kind::kBroadcast: return "a Broadcast tensor";
    case ArgumentPlan::Kind::kUndefined: return "an undefined tensor";
    case ArgumentPlan::Kind::kSplitList: return "a Split list";
    case ArgumentPlan::Kind::kShare: return "a Share value";
    case ArgumentPlan::Kind::kPacked: return "a PackedSequence";
  }
  return "an unknown kind of argument";
}
}  // namespace

// A plan made for other arguments would cut them wrongly without a word (a larger batch would lose
// its last samples), so scatter compares every leaf: cheap, no tensor data is touched.
void check_plan_matches(const Plan& plan, const std::vector<Leaf>& leaves) {
  COHORT_CHECK(plan.replicas() > 0 && plan.chunk_sizes.size() == plan.replicas() &&
                   plan.offsets.size() == plan.replicas(),
               "parallel::scatter: the plan has no replicas; hint: make it with parallel::plan(devices, options, args...)");
  const std::string hint = "; hint: make the plan from the same arguments you scatter";
  COHORT_CHECK(leaves.size() == plan.arguments.size(), "parallel::scatter: the arguments hold ", leaves.size(),
               " tensors, Split lists and shared values, but the plan was made for ", plan.arguments.size(), hint);
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Leaf& got = leaves[i];
    const ArgumentPlan& want = plan.arguments[i];
    COHORT_CHECK(got.path == want.path && got.kind == want.kind, "parallel::scatter: found ", kind_name(got.kind),
                 " at ", got.path, " where the plan has ", kind_name(want.kind), " at ", want.path, hint);
    COHORT_CHECK(got.shape == want.shape, "parallel::scatter: ", got.path, " has shape ", got.shape,
                 " but the plan was made for shape ", want.shape, hint);
  }
}

}  // namespace cohort::parallel::detail
