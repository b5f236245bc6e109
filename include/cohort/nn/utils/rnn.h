// Packed sequences, as libtorch's torch::nn::utils::rnn: a batch of sequences of different lengths
// stored without padding, so a recurrent layer runs each sequence for its own number of steps.
//
//   Tensor x = randn({7, 3, 10});                           // [T, N, *], sequences of 7, 5 and 2 steps
//   auto packed = nn::utils::rnn::pack_padded_sequence(x, torch::tensor({5, 7, 2}), false,
//                                                      /*enforce_sorted=*/false);
//   auto [out, state] = lstm->forward_with_packed_input(packed);
//   auto [padded, lengths] = nn::utils::rnn::pad_packed_sequence(out);  // [7, 3, H], lengths {5, 7, 2}
//
// Layout (PyTorch's): the sequences sorted by decreasing length; data [sum of lengths, *] holds step
// 0 of every sequence, then step 1 of every sequence still running, and so on; batch_sizes[t] (int64,
// on the CPU) is how many sequences have a step t. sorted_indices[j] is the original index of the
// j-th longest sequence (undefined when the input was already sorted, enforce_sorted=true);
// unsorted_indices is its inverse. Every function here is differentiable with respect to the
// sequences' values (one index_select each way), to any order. Errors name the function, what it
// expected and what it got.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "cohort/core/array_ref.h"
#include "cohort/core/tensor.h"

namespace cohort::nn::utils::rnn {

// The inverse of a permutation of 0..n-1 (undefined for undefined).
Tensor invert_permutation(const Tensor& permutation);

class PackedSequence {
 public:
  PackedSequence() = default;
  // unsorted_indices defaults to the inverse of sorted_indices. Made by the functions below; built
  // by hand only from the same layout.
  explicit PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices = {}, Tensor unsorted_indices = {});

  const Tensor& data() const { return data_; }
  const Tensor& batch_sizes() const { return batch_sizes_; }
  const Tensor& sorted_indices() const { return sorted_indices_; }
  const Tensor& unsorted_indices() const { return unsorted_indices_; }
  bool defined() const { return data_.defined(); }

  // data and the indices moved or converted; batch_sizes stays on the CPU.
  PackedSequence to(const TensorOptions& options) const;
  PackedSequence to(Device device) const;
  PackedSequence to(DType dtype) const;
  PackedSequence cpu() const { return to(Device(kCPU, 0)); }
  bool is_pinned() const { return false; }

  // How many sequences, and each one's length in the original (unsorted) order. Read from
  // batch_sizes and sorted_indices, never from data.
  int64_t batch() const;
  std::vector<int64_t> lengths() const;

 private:
  Tensor data_, batch_sizes_, sorted_indices_, unsorted_indices_;
};

// Packs input [T, N, *] ([N, T, *] with batch_first) whose sequence i has lengths[i] steps
// (1 <= lengths[i] <= T; lengths: a 1-d integer tensor of N values). enforce_sorted=true requires
// non-increasing lengths; false sorts them (stable, longest first) and records the permutation.
PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first = false, bool enforce_sorted = true);

// The inverse: (padded [T, N, *] or [N, T, *], lengths [N] int64), sequences in the original order,
// padded with padding_value to the longest sequence, or to total_length (which must be at least
// that long). T = total_length is what a data-parallel replica needs to return equal lengths; see
// parallel/packed_sequence_rules.h for what DataParallel does when it is not given.
std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first = false,
                                               double padding_value = 0.0,
                                               std::optional<int64_t> total_length = std::nullopt);

// Sequences [L_i, *] (same trailing shape, dtype and device) padded into [max L, N, *] ([N, max L, *]).
Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first = false, double padding_value = 0);

// pack_padded_sequence(pad_sequence(sequences), their lengths, false, enforce_sorted).
PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted = true);

namespace detail {

// pad_packed_sequence's results, recorded on this thread while a PadRecorder lives. DataParallel
// records each replica's forward, so gather can tell a tensor that pad_packed_sequence padded to
// its replica's longest sequence (and pad it to the whole batch's) from any other tensor whose
// size differs between replicas (an error). Note [Padded outputs on gather] in parallel/packed_sequence_rules.h.
struct PadRecord {
  Tensor padded;  // the tensor pad_packed_sequence returned
  int64_t time_dim = 0;
  double padding_value = 0;
};

class PadRecorder {
 public:
  PadRecorder();
  ~PadRecorder();
  PadRecorder(const PadRecorder&) = delete;
  PadRecorder& operator=(const PadRecorder&) = delete;
  void record(PadRecord r) { records_.push_back(std::move(r)); }
  std::vector<PadRecord> take();  // what was recorded so far, in call order
  // The recorder of this thread, or nullptr.
  static PadRecorder* current();

 private:
  std::vector<PadRecord> records_;
  PadRecorder* previous_;
};

// The sequences `samples` (original indices, kept in that order as the new batch) packed on their own:
// a differentiable index_select of seq's data rows. The result has sorted_indices when seq has them
// or when the samples are not already longest first.
PackedSequence select_sequences(const PackedSequence& seq, const std::vector<int64_t>& samples);
// The inverse for a batch cut into consecutive parts: part 0's sequences first, then part 1's...,
// on device. The result's order is `sorted_indices` when given (it must sort the joined lengths
// longest first), else a stable sort of the lengths. Differentiable (cat, index_select).
PackedSequence join_sequences(const std::vector<PackedSequence>& parts, Device device,
                              const std::vector<int64_t>& sorted_indices = {});

// Indices of `lengths` sorted longest first, ties in their order.
std::vector<int64_t> sort_by_length(const std::vector<int64_t>& lengths);

}  // namespace detail

}  // namespace cohort::nn::utils::rnn
