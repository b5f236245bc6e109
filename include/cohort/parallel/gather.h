// parallel::gather: the replicas' outputs joined into one output on `output_device`.
//
//   auto out = parallel::gather(outputs, "cpu:0", plan);  // outputs[r] from the replica on plan.devices[r]
//
// outputs[r] are all of one type T: a Tensor or a std::vector / std::tuple / std::map<std::string, …>
// of them (recursively); the result is a T. Every step is differentiable (to(device), cat, stack).
//  - A tensor with dims: the replicas' tensors concatenated along dim, on output_device. Their
//    shapes must agree except along dim, and their dtypes must agree.
//  - A 0-d tensor (a loss or metric computed inside forward) is reduced, by GatherOptions::scalars:
//      kMean (default)  sum_r value_r * chunk_r / batch: the sample-weighted mean, which equals the
//                       single-device value of a mean over samples even when chunks are uneven
//                       (PyTorch users average the vector it returns, which is wrong for 10 on 3)
//      kSum             sum_r value_r (a loss summed over samples)
//      kStack / kNone   PyTorch's behaviour: a 1-d tensor of the n values
//    kMean needs the chunk sizes: pass the Plan, or GatherOptions().chunk_sizes(...).
//  - An undefined Tensor in every replica stays undefined.
//  - A nn::utils::rnn::PackedSequence: the replicas' sequences joined in the batch's order, packed
//    as one device's would be (Note [PackedSequence across replicas] in packed_sequence_rules.h).
//  - A tensor whose size differs between replicas in a dim other than the gather dim: allowed only
//    for what pad_packed_sequence returned, see Note [Padded outputs on gather] in
//    packed_sequence_rules.h.
// Throws cohort::Error naming the replica and the path ("output[1]['logits']") when replicas
// disagree in structure, definedness, dtype, or shape other than along dim; DeviceError when
// output_device does not exist.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "cohort/nn/utils/rnn.h"
#include "cohort/ops/reduction_mode.h"
#include "cohort/parallel/markers.h"
#include "cohort/parallel/plan.h"

namespace cohort::parallel {

inline constexpr Reduction kStack = Reduction::None;  // 0-d outputs as a vector of n values (PyTorch)

struct GatherOptions {
  GatherOptions() = default;
  // dim and chunk sizes from the plan the inputs were scattered with.
  explicit GatherOptions(const Plan& plan)
      : dim_(plan.dim), chunk_sizes_(plan.chunk_sizes), sequence_lengths_(plan.sequence_lengths),
        sequence_order_(plan.sequence_order) {}

  GatherOptions& dim(int64_t d) { dim_ = d; return *this; }
  GatherOptions& scalars(Reduction r) { scalars_ = r; return *this; }
  // Samples per replica, for the kMean of 0-d outputs; when set, there must be one output per entry.
  GatherOptions& chunk_sizes(std::vector<int64_t> sizes) { chunk_sizes_ = std::move(sizes); return *this; }
  // What pad_packed_sequence returned in each replica (Note [Padded outputs on gather]).
  GatherOptions& padded_outputs(std::vector<std::vector<nn::utils::rnn::detail::PadRecord>> records) {
    padded_outputs_ = std::move(records);
    return *this;
  }
  int64_t dim() const { return dim_; }
  Reduction scalars() const { return scalars_; }
  const std::vector<int64_t>& chunk_sizes() const { return chunk_sizes_; }
  const std::vector<int64_t>& sequence_lengths() const { return sequence_lengths_; }
  const std::vector<int64_t>& sequence_order() const { return sequence_order_; }
  const std::vector<std::vector<nn::utils::rnn::detail::PadRecord>>& padded_outputs() const { return padded_outputs_; }

 private:
  int64_t dim_ = 0;
  Reduction scalars_ = kMean;
  std::vector<int64_t> chunk_sizes_, sequence_lengths_, sequence_order_;
  std::vector<std::vector<nn::utils::rnn::detail::PadRecord>> padded_outputs_;
};

namespace detail {

// kMean's weight of each replica's 0-d output: chunk_r / batch, the share of the samples its mean
// covers (DataParallel::forward_backward scales each replica's backward by it too). Throws when
// the chunks hold no samples.
std::vector<double> sample_weights(const std::vector<int64_t>& chunk_sizes);

void check_outputs(size_t replicas, Device output_device, const GatherOptions& options);
void check_same_length(const std::vector<size_t>& lengths, const std::string& path);
void check_same_keys(const std::vector<std::vector<std::string>>& keys, const std::string& path);
// "replica 2 (cpu:2)": which replica, and where its tensor lives.
std::string replica_name(size_t r, const Tensor& t);

// The replicas' leaves at one path joined, by their kind's rules (walk.h).
struct GatherVisitor {
  Device device;
  const GatherOptions& options;
  template <class L>
  L operator()(const std::vector<const L*>& parts, const std::string& path) const {
    if constexpr (HasGather<L>::value) {
      std::vector<L> values;
      for (const L* p : parts) values.push_back(*p);
      return ArgRules<L>::gather(values, path, device, options);
    } else {
      static_assert(always_false<L>,
                    "parallel::gather: a replica's output must be a Tensor, a PackedSequence, or a std::vector/"
                    "std::tuple/std::map<std::string, ...> of them");
    }
  }
  void same_length(const std::vector<size_t>& lengths, const std::string& path) const {
    check_same_length(lengths, path);
  }
  void same_keys(const std::vector<std::vector<std::string>>& keys, const std::string& path) const {
    check_same_keys(keys, path);
  }
};

}  // namespace detail

// The replicas' outputs (outputs[r] from replica r) as one output on output_device; see above.
template <class T>
T gather(const std::vector<T>& outputs, Device output_device, const GatherOptions& options = {}) {
  detail::check_outputs(outputs.size(), output_device, options);
  std::vector<const T*> parts;
  for (const T& o : outputs) parts.push_back(&o);
  return detail::zip(detail::GatherVisitor{output_device, options}, parts, "output");
}

// The same with the plan's dim and chunk sizes, and 0-d outputs averaged by samples (kMean).
template <class T>
T gather(const std::vector<T>& outputs, Device output_device, const Plan& plan) {
  return gather(outputs, output_device, GatherOptions(plan));
}

}  // namespace cohort::parallel
