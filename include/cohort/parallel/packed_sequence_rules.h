// How a nn::utils::rnn::PackedSequence goes through plan, scatter and gather: every rule about it
// is here and in src/parallel/packed_sequence_rules.cpp (the other files only call these).
//
// Note [PackedSequence across replicas]
// A PackedSequence holds one sample per sequence.
//  - plan: it is a leaf of its own (kPacked) that sets or joins the batch with its number of
//    sequences, in their original order; planning reads its batch_sizes and sorted_indices (a few
//    integers), never its data. The first one's lengths and order go into the Plan
//    (sequence_lengths, sequence_order); kTimesteps cuts the batch into consecutive chunks of about
//    equal total steps by those lengths (a replica's cost is its steps, not its samples).
//  - scatter: replica r gets its samples' sequences whole, packed again on their own (longest
//    first, with their own sorted_indices when not already in order), data on its device:
//    differentiable (index_select, to).
//  - gather, a PackedSequence output: the replicas' sequences joined in the batch's order (replica
//    0's first), packed as the plan's PackedSequence argument was when the lengths are the same (so
//    the result equals one device's), else longest first (stable).
//  - gather, the output of pack -> RNN -> unpack: Note [Padded outputs on gather].
//
// Note [Padded outputs on gather]
// Inside a data-parallel module, pad_packed_sequence pads each replica's output to the longest
// sequence of *its* samples, so replicas return [T_r, n_r, H] with different T_r, and PyTorch's
// gather fails unless the user passed total_length. Here a tensor that pad_packed_sequence returned
// in its replica (recorded by nn::utils::rnn::detail::PadRecorder, which DataParallel installs
// around each replica's forward) and that differs from the other replicas only in its time dim is
// padded, with the padding value it was unpacked with, to the longest T_r: exactly what one device
// returns, since the whole batch's longest sequence is the longest of some replica. Any other
// difference (a tensor computed from the padded output, say by a Linear, whose padded rows are not
// the padding value, or a dim that is not the time dim) is an error naming the fix, total_length;
// never a silent change of shape or values. Without a recorder (gather called on its own) the
// same outputs need GatherOptions::padded_outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cohort/nn/utils/rnn.h"
#include "cohort/parallel/walk.h"

namespace cohort::parallel {

struct ArgumentPlan;

namespace detail {

template <>
struct ArgRules<nn::utils::rnn::PackedSequence> {
  using Packed = nn::utils::rnn::PackedSequence;
  static constexpr bool known = true;
  using scattered = Packed;
  // A kPacked leaf: its sequences, lengths and order. Throws for an empty PackedSequence.
  static void collect(const Packed& x, const std::string& path, bool broadcast, std::vector<Leaf>& out);
  static Packed scatter(const Packed& x, const ReplicaChunk& chunk);
  static Packed gather(const std::vector<Packed>& parts, const std::string& path, Device device,
                       const GatherOptions& options);
};

// plan: a PackedSequence `leaf` after the batch was set (by `source`) must have batch sequences.
void check_sequences_join_batch(const Leaf& leaf, int64_t batch, const Leaf& source);
// plan: the first PackedSequence leaf, whose lengths and order the plan keeps (null if none);
// throws when the kTimesteps rule (`timesteps`) has none to balance by.
const Leaf* sequence_source(const std::vector<Leaf>& leaves, bool timesteps);
// plan: kTimesteps's samples per device, consecutive chunks whose boundaries fall nearest to i/k
// of the total steps (ties: earlier).
std::vector<int64_t> timestep_chunks(int64_t n, size_t device_count, const std::vector<int64_t>& lengths);
// plan: the note a plan with several replicas and a PackedSequence argument carries.
std::string sequences_note();
// plan: the shape of the data replica gets, [its steps, ...], for samples [offset, offset + size).
Shape packed_replica_shape(const Leaf& leaf, int64_t offset, int64_t size);
// The plan's line for a PackedSequence argument.
std::string describe_packed(const ArgumentPlan& a, const Plan& plan);
// gather: Note [Padded outputs on gather]. parts are the replicas' outputs at `path`, moved the
// same on the output device, and `differing_replica` the first whose size along `time_dim`
// differs; returns moved padded along time_dim to the longest, or throws naming the fix.
std::vector<Tensor> pad_unpacked_outputs(const std::vector<Tensor>& parts, std::vector<Tensor> moved,
                                         int64_t time_dim, const std::string& path, const GatherOptions& options,
                                         size_t differing_replica);

}  // namespace detail
}  // namespace cohort::parallel
