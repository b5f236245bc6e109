// PackedSequence through plan, scatter and gather (Note [PackedSequence across replicas] and
// Note [Padded outputs on gather] in cohort/parallel/packed_sequence_rules.h).
#include "cohort/parallel/packed_sequence_rules.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <sstream>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"
#include "cohort/parallel/gather.h"
#include "cohort/parallel/plan.h"

namespace cohort::parallel::detail {

using Packed = nn::utils::rnn::PackedSequence;

void ArgRules<Packed>::collect(const Packed& x, const std::string& path, bool, std::vector<Leaf>& out) {
  COHORT_CHECK(x.defined(), "parallel::plan: ", path, " is an empty PackedSequence; hint: make it with "
               "nn::utils::rnn::pack_padded_sequence or pack_sequence");
  Leaf leaf{LeafKind::kPacked, path, x.data().sizes().vec(), x.batch(), {}, {}};
  leaf.lengths = x.lengths();
  leaf.requires_grad = x.data().requires_grad();
  if (x.sorted_indices().defined()) {
    Tensor order = x.sorted_indices().to(Device(kCPU, 0)).to(kInt64).contiguous();
    leaf.order.assign(order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel());
  }
  out.push_back(std::move(leaf));
}

Packed ArgRules<Packed>::scatter(const Packed& x, const ReplicaChunk& chunk) {
  if (chunk.size == x.batch()) return x.to(chunk.device);
  std::vector<int64_t> samples(static_cast<size_t>(chunk.size));
  std::iota(samples.begin(), samples.end(), chunk.offset);
  return nn::utils::rnn::detail::select_sequences(x, samples).to(chunk.device);
}

Packed ArgRules<Packed>::gather(const std::vector<Packed>& parts, const std::string& path, Device device,
                                const GatherOptions& o) {
  std::vector<int64_t> lengths;
  auto trailing = [](const Packed& p) {
    Shape s = p.data().sizes().vec();
    return Shape(s.begin() + 1, s.end());
  };
  for (size_t r = 0; r < parts.size(); ++r) {
    COHORT_CHECK(parts[r].defined(), "parallel::gather: replica ", r, "'s ", path, " is an empty PackedSequence");
    COHORT_CHECK(parts[r].data().dtype() == parts[0].data().dtype() &&
                     trailing(parts[r]) == trailing(parts[0]),
                 "parallel::gather: replica ", r, "'s ", path, " is a PackedSequence of ", parts[r].data().dtype(),
                 " data ", parts[r].data().sizes(), " but replica 0's has ", parts[0].data().dtype(), " data ",
                 parts[0].data().sizes(), "; they may differ only in their first (steps) dim");
    for (int64_t len : parts[r].lengths()) lengths.push_back(len);
  }
  const bool same = lengths == o.sequence_lengths();
  return nn::utils::rnn::detail::join_sequences(parts, device, same ? o.sequence_order() : std::vector<int64_t>{});
}

void check_sequences_join_batch(const Leaf& leaf, int64_t batch, const Leaf& source) {
  COHORT_CHECK(leaf.items == batch, "parallel::plan: ", leaf.path, " is a PackedSequence of ", leaf.items,
               " sequences, but the batch is ", batch, " (set by ", source.path, "); hint: a PackedSequence "
               "holds one sample per sequence, so it needs as many sequences as the batch has samples");
}

const Leaf* sequence_source(const std::vector<Leaf>& leaves, bool timesteps) {
  const Leaf* packed = nullptr;
  for (const Leaf& leaf : leaves)
    if (leaf.kind == LeafKind::kPacked && !packed) packed = &leaf;
  COHORT_CHECK(!timesteps || packed, "parallel::plan: the kTimesteps rule balances the "
               "replicas' timesteps by the lengths of a PackedSequence argument, and there is none; hint: pass the "
               "batch packed (nn::utils::rnn::pack_padded_sequence), or use the kBalanced rule");
  return packed;
}

std::vector<int64_t> timestep_chunks(int64_t n, size_t device_count, const std::vector<int64_t>& lengths) {
  const auto k = static_cast<int64_t>(device_count);
  std::vector<int64_t> sizes(device_count, 0);
  std::vector<int64_t> cum{0};
  for (int64_t len : lengths) cum.push_back(cum.back() + len);
  int64_t previous = 0;
  for (int64_t i = 0; i < k; ++i) {
    int64_t boundary = n;
    if (i < k - 1) {
      const double target = static_cast<double>(cum.back()) * static_cast<double>(i + 1) / static_cast<double>(k);
      boundary = previous;
      for (int64_t b = previous + 1; b <= n; ++b)
        if (std::abs(static_cast<double>(cum[static_cast<size_t>(b)]) - target) <
            std::abs(static_cast<double>(cum[static_cast<size_t>(boundary)]) - target))
          boundary = b;
    }
    sizes[static_cast<size_t>(i)] = boundary - previous;
    previous = boundary;
  }
  return sizes;
}

std::string sequences_note() {
  return "sequences go whole to one replica each; an output of pad_packed_sequence (padded to its "
         "replica's longest sequence) is padded on gather to the whole batch's longest sequence, "
         "with its padding value; other outputs whose sizes differ beyond the batch dim are an error";
}

Shape packed_replica_shape(const Leaf& leaf, int64_t offset, int64_t size) {
  int64_t steps = 0;
  for (int64_t i = offset; i < offset + size; ++i) steps += leaf.lengths[static_cast<size_t>(i)];
  Shape s = leaf.shape;
  s[0] = steps;
  return s;
}

std::string describe_packed(const ArgumentPlan& a, const Plan& p) {
  using cohort::operator<<;  // Shape's, hidden by the operator<< of cohort::parallel
  std::ostringstream os;
  os << "PackedSequence of " << p.batch << " sequences, data " << a.shape << " ->";
  for (size_t r = 0; r < a.replica_shapes.size(); ++r)
    os << (r ? ", " : " ") << p.chunk_sizes[r] << " (" << a.replica_shapes[r][0] << " steps)";
  return os.str();
}

std::vector<Tensor> pad_unpacked_outputs(const std::vector<Tensor>& parts, std::vector<Tensor> moved, int64_t d,
                                         const std::string& path, const GatherOptions& o, size_t differing_replica) {
  const auto& records = o.padded_outputs();
  std::optional<double> value;
  bool recorded = records.size() == parts.size();
  for (size_t r = 0; r < parts.size() && recorded; ++r) {
    auto it = std::find_if(records[r].begin(), records[r].end(), [&](const nn::utils::rnn::detail::PadRecord& rec) {
      return rec.padded.is_same(parts[r]) && rec.time_dim == d;
    });
    recorded = it != records[r].end() && (!value || *value == it->padding_value);
    if (recorded) value = it->padding_value;
  }
  const Tensor& first = parts[0];
  const Tensor& other = parts[differing_replica];
  COHORT_CHECK(recorded, "parallel::gather: ", replica_name(differing_replica, other), "'s ", path, " has shape ",
               other.sizes(), " but replica 0's has ", first.sizes(), "; the replicas' outputs may differ only along "
               "dim ", o.dim(), ", or along the time dim of a tensor pad_packed_sequence returned unchanged in each "
               "replica; hint: if dim ", d, " is a sequence length that each replica padded to its own longest "
               "sequence, pass total_length (the whole batch's length, e.g. the padded input's size) to "
               "pad_packed_sequence, or return its output unchanged so gather pads it");
  int64_t target = 0;
  for (const Tensor& t : moved) target = std::max(target, t.size(d));
  for (Tensor& t : moved) {
    if (t.size(d) == target) continue;
    Shape pad = t.sizes().vec();
    pad[static_cast<size_t>(d)] = target - t.size(d);
    t = cat({t, full(pad, *value, t.options())}, d);
  }
  return moved;
}

}  // namespace cohort::parallel::detail
