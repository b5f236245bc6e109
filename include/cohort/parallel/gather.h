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
// Throws cohort::Error naming the replica and the path ("output[1]['logits']") when replicas
// disagree in structure, definedness, dtype, or shape other than along dim; DeviceError when
// output_device does not exist.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "cohort/ops/reduction_mode.h"
#include "cohort/parallel/markers.h"
#include "cohort/parallel/plan.h"

namespace cohort::parallel {

inline constexpr Reduction kStack = Reduction::None;  // 0-d outputs as a vector of n values (PyTorch)

struct GatherOptions {
  GatherOptions() = default;
  // dim and chunk sizes from the plan the inputs were scattered with.
  explicit GatherOptions(const Plan& plan) : dim_(plan.dim), chunk_sizes_(plan.chunk_sizes) {}

  GatherOptions& dim(int64_t d) { dim_ = d; return *this; }
  GatherOptions& scalars(Reduction r) { scalars_ = r; return *this; }
  // Samples per replica, for the kMean of 0-d outputs; when set, there must be one output per entry.
  GatherOptions& chunk_sizes(std::vector<int64_t> sizes) { chunk_sizes_ = std::move(sizes); return *this; }
  int64_t dim() const { return dim_; }
  Reduction scalars() const { return scalars_; }
  const std::vector<int64_t>& chunk_sizes() const { return chunk_sizes_; }

 private:
  int64_t dim_ = 0;
  Reduction scalars_ = kMean;
  std::vector<int64_t> chunk_sizes_;
};

namespace detail {

void check_outputs(size_t replicas, Device output_device, const GatherOptions& options);
Tensor gather_tensors(const std::vector<Tensor>& parts, const std::string& path, Device device,
                      const GatherOptions& options);
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
                  "parallel::gather: a replica's output must be a Tensor or a std::vector/std::tuple/"
                  "std::map<std::string, ...> of tensors");
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
