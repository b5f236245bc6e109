// parallel::plan: which samples each device gets, decided once for all the arguments of a call,
// without running or copying anything. scatter() and gather() follow the plan.
//
//   auto p = parallel::plan(parallel::all_devices(), {}, x, parallel::Broadcast(bias));
//   std::cout << p;   // batch, devices used, chunk sizes, per-replica shapes, notes
//
// Note [Scatter plan]
// PyTorch's scatter splits every tensor on its own and zips the pieces, so a tensor with fewer
// samples (a shared batch-1 input) silently shortens the batch, and a non-tensor list reaches every
// replica whole. cohort decides everything up front, for all arguments together:
//  1. The batch. Every plain tensor must have the same size along `dim`: the first one sets the
//     batch, any other size is an error naming both arguments (by path, "argument 0[2]['mask']")
//     and the fix, Broadcast. A 0-d tensor has no dim to split: also an error naming Broadcast.
//     Without tensors, Split lists set the batch; every Split list must have batch items.
//  2. What is not split. Broadcast(x) goes whole to every replica; Share(v) is read through a const
//     reference; an undefined Tensor (libtorch's "no tensor") stays undefined. A bare non-tensor does
//     not compile (markers.h): scatter cannot guess between "per sample" and "for everyone".
//  3. The chunks. kBalanced (default) uses every device and gives sizes that differ by at most one
//     (10 on 3 -> 4,3,3; 9 on 8 -> 2,1,...,1). kChunk is PyTorch's rule, ceil(n/k) per chunk, which
//     may leave devices idle (9 on 8 -> 2,2,2,2,1). kWeighted gives device i about n*w_i/sum(w)
//     samples (cumulative rounding, so the sizes sum to n exactly).
//  4. No empty replica. A device without samples is left out (batch 3 on 8 devices uses 3), and the
//     plan says so in its notes: a replica with an empty batch breaks batch norm and means nothing.
//  5. Sequences. A nn::utils::rnn::PackedSequence holds one sample per sequence: it sets or joins the
//     batch like a tensor, by its number of sequences, and kTimesteps balances the replicas' steps
//     (Note [PackedSequence across replicas] in packed_sequence_rules.h).
//  6. Degenerate calls. No arguments at all run once on the first device (PyTorch runs a module
//     without inputs once); so does a batch of 0 samples. Arguments with nothing to split (only
//     Broadcast and Share) are an error: every replica would compute the same thing.
// gather uses the plan's chunk sizes to weight 0-d outputs (gather.h), so a loss averaged inside
// forward equals the single-device loss even with uneven chunks.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cohort/core/device.h"
#include "cohort/core/tensor.h"
#include "cohort/parallel/markers.h"

namespace cohort::parallel {

enum class SplitRule { kBalanced, kChunk, kWeighted, kTimesteps };
inline constexpr SplitRule kBalanced = SplitRule::kBalanced;  // sizes differ by at most 1, all devices
inline constexpr SplitRule kChunk = SplitRule::kChunk;        // PyTorch's chunk: ceil(n / devices) each
inline constexpr SplitRule kWeighted = SplitRule::kWeighted;  // proportional to per-device weights
inline constexpr SplitRule kTimesteps = SplitRule::kTimesteps;  // about equal steps of packed sequences
std::ostream& operator<<(std::ostream& os, SplitRule rule);

struct ScatterOptions {
  // The batch dimension of every split tensor (negative counts from each tensor's last dim).
  ScatterOptions& dim(int64_t d) { dim_ = d; return *this; }
  ScatterOptions& rule(SplitRule r) { rule_ = r; return *this; }
  // One non-negative weight per device in the list (e.g. its cores); implies rule(kWeighted).
  ScatterOptions& weights(std::vector<double> w) { weights_ = std::move(w); rule_ = kWeighted; return *this; }
  int64_t dim() const { return dim_; }
  SplitRule rule() const { return rule_; }
  const std::vector<double>& weights() const { return weights_; }

 private:
  int64_t dim_ = 0;
  SplitRule rule_ = kBalanced;
  std::vector<double> weights_;
};

// One leaf of the arguments: a tensor, a Split list or a shared value, found at `path`.
struct ArgumentPlan {
  using Kind = detail::LeafKind;  // kSplit, kBroadcast, kUndefined, kSplitList, kShare, kPacked
  std::string path;                   // "argument 1", "argument 0[2]['mask']"
  Kind kind = Kind::kSplit;
  Shape shape;                        // tensors: the whole tensor; Split lists: {items}
  std::vector<Shape> replica_shapes;  // what each replica gets (Split lists: {items}); empty for Share
                                      // (packed sequences: the shape of their data)
  bool requires_grad = false;         // a tensor (a packed sequence's data) that requires grad
};

struct Plan {
  int64_t batch = 0;                 // samples along dim
  int64_t dim = 0;                   // as given in ScatterOptions
  SplitRule rule = kBalanced;
  std::vector<Device> devices;       // the devices used, one replica each, in list order
  std::vector<int64_t> chunk_sizes;  // samples per replica (all > 0 unless batch is 0)
  std::vector<int64_t> offsets;      // first sample of each replica
  std::vector<ArgumentPlan> arguments;
  std::vector<std::string> notes;    // e.g. "batch 3 is smaller than 8 devices: using 3"
  // The first packed argument's lengths (original order) and sorted_indices (empty when it was
  // packed sorted): gather packs packed outputs of the same lengths in the same order.
  std::vector<int64_t> sequence_lengths, sequence_order;

  size_t replicas() const { return devices.size(); }
  // Whether some tensor argument requires grad (gradients must flow back out of the replicas).
  bool requires_grad() const {
    for (const ArgumentPlan& a : arguments)
      if (a.requires_grad) return true;
    return false;
  }
};
std::ostream& operator<<(std::ostream& os, const Plan& plan);

// cpu:0 .. cpu:n-1 for the current device_count().
std::vector<Device> all_devices();

namespace detail {

template <class... Args>
std::vector<Leaf> collect_arguments(const Args&... args) {
  std::vector<Leaf> leaves;
  size_t i = 0;
  (walk(PlanVisitor(leaves, false), args, "argument " + std::to_string(i++)), ...);
  return leaves;
}

Plan make_plan(const std::vector<Device>& devices, const ScatterOptions& options, const std::vector<Leaf>& leaves,
               size_t argument_count);

}  // namespace detail

// The plan for calling a module with `args` on `devices` (see Note [Scatter plan]). Throws
// cohort::Error for an empty or duplicated device list, a tensor or Split list whose size differs
// from the batch, a 0-d tensor, bad weights, or nothing to split; DeviceError for a missing device.
template <class... Args>
Plan plan(const std::vector<Device>& devices, const ScatterOptions& options, const Args&... args) {
  // Naming every scattered type makes a bare non-tensor fail to compile here, with the fix.
  static_assert(std::tuple_size_v<std::tuple<scattered_t<Args>...>> == sizeof...(Args));
  return detail::make_plan(devices, options, detail::collect_arguments(args...), sizeof...(Args));
}

}  // namespace cohort::parallel
