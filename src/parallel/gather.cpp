// parallel::gather's non-template part: joining one tensor per replica, reducing 0-d outputs, and
// the messages for replicas whose outputs disagree.
#include "cohort/parallel/gather.h"

#include <sstream>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"

namespace cohort::parallel::detail {

std::string replica_name(size_t r, const Tensor& t) {
  return "replica " + std::to_string(r) + (t.defined() ? " (" + t.device().str() + ")" : "");
}

namespace {

std::string list_keys(const std::vector<std::string>& keys) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < keys.size(); ++i) os << (i ? ", '" : "'") << keys[i] << "'";
  return os.str() + "]";
}

// See gather.h for the three rules; kMean is the one that keeps DataParallel's loss equal to the
// single-device loss: each replica's mean covers chunk_r samples, so it weighs chunk_r / batch.
Tensor reduce_scalars(const std::vector<Tensor>& moved, const std::string& path, const GatherOptions& o) {
  if (o.scalars() == kStack) return stack(moved);
  if (moved.size() == 1) return moved[0];
  if (o.scalars() == kSum) return stack(moved).sum();
  const Tensor& first = moved[0];
  COHORT_CHECK(first.is_floating_point(), "parallel::gather: ", path, " is a 0-d ", first.dtype(),
               " tensor, which has no sample-weighted mean; hint: GatherOptions(plan).scalars(kSum) to add the "
               "replicas' values, or scalars(parallel::kStack) to keep them");
  const std::vector<int64_t>& chunks = o.chunk_sizes();
  COHORT_CHECK(chunks.size() == moved.size(), "parallel::gather: ", path, " is 0-d (a value computed inside "
               "forward, like a loss); its sample-weighted mean needs the number of samples of each of the ",
               moved.size(), " replicas, got ", chunks.size(), " chunk sizes; hint: gather(outputs, device, plan), "
               "or GatherOptions().chunk_sizes({...}), or scalars(kSum) / scalars(parallel::kStack)");
  Tensor w = tensor(sample_weights(chunks), TensorOptions(first.dtype()).device(first.device()));
  return (stack(moved) * w).sum();
}

}  // namespace

std::vector<double> sample_weights(const std::vector<int64_t>& chunk_sizes) {
  int64_t batch = 0;
  for (int64_t c : chunk_sizes) batch += c;
  COHORT_CHECK(batch > 0, "parallel::gather: the chunk sizes ", chunk_sizes, " hold no samples to average over");
  std::vector<double> weights;
  for (int64_t c : chunk_sizes) weights.push_back(static_cast<double>(c) / static_cast<double>(batch));
  return weights;
}

void check_outputs(size_t replicas, Device output_device, const GatherOptions& options) {
  COHORT_CHECK(replicas > 0, "parallel::gather: there are no outputs to gather (an empty list of replica outputs)");
  check_device(output_device, "parallel::gather");
  COHORT_CHECK(options.chunk_sizes().empty() || options.chunk_sizes().size() == replicas, "parallel::gather: got ",
               replicas, " replica outputs but the plan has ", options.chunk_sizes().size(),
               " replicas; hint: pass one output per replica, in the plan's order");
}

Tensor ArgRules<Tensor>::gather(const std::vector<Tensor>& parts, const std::string& path, Device device,
                               const GatherOptions& o) {
  const Tensor& first = parts[0];
  for (size_t r = 1; r < parts.size(); ++r) {
    const Tensor& t = parts[r];
    COHORT_CHECK(t.defined() == first.defined(), "parallel::gather: ", replica_name(r, t), "'s ", path, " is ",
                 t.defined() ? "a tensor" : "undefined", " but replica 0's is ", first.defined() ? "a tensor" : "undefined");
    if (!t.defined()) continue;
    COHORT_CHECK(t.dtype() == first.dtype(), "parallel::gather: ", replica_name(r, t), "'s ", path, " is ",
                 t.dtype(), " but replica 0's is ", first.dtype());
    COHORT_CHECK(t.dim() == first.dim(), "parallel::gather: ", replica_name(r, t), "'s ", path, " has shape ",
                 t.sizes(), " but replica 0's has ", first.sizes(), " (", t.dim(), " dims against ", first.dim(), ")");
  }
  if (!first.defined()) return first;
  std::vector<Tensor> moved;
  for (const Tensor& t : parts) moved.push_back(t.to(device));
  if (first.dim() == 0) return reduce_scalars(moved, path, o);
  COHORT_CHECK(o.dim() >= -first.dim() && o.dim() < first.dim(), "parallel::gather: ", path, " of shape ",
               first.sizes(), " has no dim ", o.dim(), " to concatenate along; hint: GatherOptions(plan).dim(...)");
  const int64_t dim = wrap_dim(o.dim(), first.dim(), "parallel::gather");
  std::vector<int64_t> differing;  // dims other than dim where some replica differs from replica 0
  size_t differing_replica = 0;
  for (int64_t d = 0; d < first.dim(); ++d)
    for (size_t r = 1; r < parts.size(); ++r)
      if (d != dim && parts[r].size(d) != first.size(d)) {
        if (differing.empty()) differing_replica = r;
        differing.push_back(d);
        break;
      }
  COHORT_CHECK(differing.size() <= 1, "parallel::gather: ", replica_name(differing_replica, parts[differing_replica]),
               "'s ", path, " has shape ", parts[differing_replica].sizes(), " but replica 0's has ", first.sizes(),
               "; the replicas' outputs may differ only along dim ", dim);
  if (!differing.empty()) moved = pad_unpacked_outputs(parts, moved, differing[0], path, o, differing_replica);
  return moved.size() == 1 ? moved[0] : cat(moved, dim);
}

void check_same_length(const std::vector<size_t>& lengths, const std::string& path) {
  for (size_t r = 1; r < lengths.size(); ++r)
    COHORT_CHECK(lengths[r] == lengths[0], "parallel::gather: replica ", r, "'s ", path, " has ", lengths[r],
                 " elements but replica 0's has ", lengths[0]);
}

void check_same_keys(const std::vector<std::vector<std::string>>& keys, const std::string& path) {
  for (size_t r = 1; r < keys.size(); ++r)
    COHORT_CHECK(keys[r] == keys[0], "parallel::gather: replica ", r, "'s ", path, " has keys ", list_keys(keys[r]),
                 " but replica 0's has ", list_keys(keys[0]));
}

}  // namespace cohort::parallel::detail
