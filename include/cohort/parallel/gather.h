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
//  - A nn::utils::rnn::PackedSequence: the replicas' sequences joined in the batch's order (replica
//    0's first), packed as the plan's PackedSequence argument was when the lengths are the same
//    (so the result equals one device's), else longest first (stable).
//  - A tensor whose size differs between replicas in a dim other than the gather dim: see
//    Note [Padded outputs on gather].
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
Tensor gather_tensors(const std::vector<Tensor>& parts, const std::string& path, Device device,
                      const GatherOptions& options);
nn::utils::rnn::PackedSequence gather_packed(const std::vector<nn::utils::rnn::PackedSequence>& parts,
                                             const std::string& path, Device device, const GatherOptions& options);
void check_same_length(const std::vector<size_t>& lengths, const std::string& path);
void check_same_keys(const std::vector<std::vector<std::string>>& keys, const std::string& path);

template <size_t I, class T>
std::vector<const std::tuple_element_t<I, T>*> tuple_column(const std::vector<const T*>& parts) {
  std::vector<const std::tuple_element_t<I, T>*> column;
  for (const T* p : parts) column.push_back(&std::get<I>(*p));
  return column;
}

template <class T>
T gather_node(const std::vector<const T*>& parts, const std::string& path, Device device, const GatherOptions& o);

template <class T, size_t... I>
T gather_tuple(const std::vector<const T*>& parts, const std::string& path, Device device, const GatherOptions& o,
               std::index_sequence<I...>) {
  return T(gather_node(tuple_column<I>(parts), index_path(path, I), device, o)...);
}

// parts[r] is replica r's value at `path`.
template <class T>
T gather_node(const std::vector<const T*>& parts, const std::string& path, Device device, const GatherOptions& o) {
  if constexpr (std::is_same_v<T, Tensor>) {
    std::vector<Tensor> tensors;
    for (const Tensor* p : parts) tensors.push_back(*p);
    return gather_tensors(tensors, path, device, o);
  } else if constexpr (IsPacked<T>::value) {
    std::vector<T> packed;
    for (const T* p : parts) packed.push_back(*p);
    return gather_packed(packed, path, device, o);
  } else if constexpr (IsVector<T>::value) {
    std::vector<size_t> lengths;
    for (const T* p : parts) lengths.push_back(p->size());
    check_same_length(lengths, path);
    T out;
    for (size_t i = 0; i < lengths[0]; ++i) {
      std::vector<const typename T::value_type*> column;
      for (const T* p : parts) column.push_back(&(*p)[i]);
      out.push_back(gather_node(column, index_path(path, i), device, o));
    }
    return out;
  } else if constexpr (IsStringMap<T>::value) {
    std::vector<std::vector<std::string>> keys(parts.size());
    for (size_t r = 0; r < parts.size(); ++r)
      for (const auto& entry : *parts[r]) keys[r].push_back(entry.first);
    check_same_keys(keys, path);
    T out;
    for (const std::string& key : keys[0]) {
      std::vector<const typename T::mapped_type*> column;
      for (const T* p : parts) column.push_back(&p->at(key));
      out.emplace(key, gather_node(column, key_path(path, key), device, o));
    }
    return out;
  } else if constexpr (IsTuple<T>::value) {
    return gather_tuple(parts, path, device, o, std::make_index_sequence<std::tuple_size_v<T>>{});
  } else {
    static_assert(always_false<T>,
                  "parallel::gather: a replica's output must be a Tensor, a PackedSequence, or a std::vector/"
                  "std::tuple/std::map<std::string, ...> of them");
  }
}

}  // namespace detail

// The replicas' outputs (outputs[r] from replica r) as one output on output_device; see above.
template <class T>
T gather(const std::vector<T>& outputs, Device output_device, const GatherOptions& options = {}) {
  detail::check_outputs(outputs.size(), output_device, options);
  std::vector<const T*> parts;
  for (const T& o : outputs) parts.push_back(&o);
  return detail::gather_node(parts, "output", output_device, options);
}

// The same with the plan's dim and chunk sizes, and 0-d outputs averaged by samples (kMean).
template <class T>
T gather(const std::vector<T>& outputs, Device output_device, const Plan& plan) {
  return gather(outputs, output_device, GatherOptions(plan));
}

}  // namespace cohort::parallel
