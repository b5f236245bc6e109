// MapDataset: a dataset whose batches are another dataset's batches passed through a transform
// (libtorch's datasets::MapDataset, made by .map()). Chains: MNIST(root).map(Normalize<>(m, s)).map(Stack<>()).
#pragma once

#include <type_traits>
#include <utility>

#include "cohort/data/batch_dataset.h"

namespace cohort::data::datasets {

namespace detail {
template <bool C, typename T>
using optional_if_t = std::conditional_t<C, std::optional<T>, T>;

// What a transform of the dataset's batches takes: the batch, or for a stateful dataset the type
// inside its optional. Lazy, so that a batch type without value_type (Example<> after Stack) maps.
template <typename DatasetType, bool = DatasetType::is_stateful>
struct transform_input {
  using type = typename DatasetType::BatchType;
};
template <typename DatasetType>
struct transform_input<DatasetType, true> {
  using type = typename DatasetType::BatchType::value_type;
};
}  // namespace detail

template <typename SourceDataset, typename AppliedTransform>
class MapDataset
    : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                          detail::optional_if_t<SourceDataset::is_stateful, typename AppliedTransform::OutputBatchType>,
                          typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType =
      detail::optional_if_t<SourceDataset::is_stateful, typename AppliedTransform::OutputBatchType>;

  MapDataset(DatasetType dataset, TransformType transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType indices) override {
    if constexpr (SourceDataset::is_stateful) {
      if (auto batch = dataset_.get_batch(std::move(indices))) return transform_.apply_batch(std::move(*batch));
      return nullopt;
    } else {
      return transform_.apply_batch(dataset_.get_batch(std::move(indices)));
    }
  }

  optional<size_t> size() const noexcept override { return dataset_.size(); }

  // Only for a source that has reset() (libtorch's stateful datasets).
  void reset() { dataset_.reset(); }

  const SourceDataset& dataset() noexcept { return dataset_; }
  const AppliedTransform& transform() noexcept { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform) {
  static_assert(std::is_same_v<typename detail::transform_input<DatasetType>::type,
                               typename TransformType::InputBatchType>,
                "map: the dataset's BatchType is not the transform's InputBatchType (e.g. Stack<>() after Stack<>(), "
                "or a Stack<Example<>> on a dataset of TensorExamples)");
  return {std::move(dataset), std::move(transform)};
}

}  // namespace cohort::data::datasets
