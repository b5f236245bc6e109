// cohort's datasets: an indexable collection of examples. The DataLoader (data/dataloader.h) batches them.
//
//   data::TensorDataset ds(images, labels);      // images [N, ...], labels [N]
//   data::Example<> e = ds.get(7);               // {images[7], labels[7]}: e.data, e.target
//
// IndexedDataset is cohort's own interface (virtual, const, thread-safe get). The name Dataset belongs
// to libtorch's CRTP template, data::Dataset<Self> = data::datasets::Dataset<Self> (data/batch_dataset.h),
// which make_data_loader takes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"
#include "cohort/data/example.h"

namespace cohort::data {

// An indexable dataset of Example<>s: data is the network's input, target e.g. a 0-d int64 class
// index. get() must be safe to call from several threads at once (the DataLoader's workers do);
// datasets in cohort are immutable after construction.
class IndexedDataset {
 public:
  virtual ~IndexedDataset() = default;
  virtual int64_t size() const = 0;
  // Throws cohort::IndexError when index is outside [0, size()).
  virtual Example<> get(int64_t index) const = 0;
  // Class names, when the dataset has them (empty otherwise); used for reports and eval.
  virtual std::vector<std::string> classes() const { return {}; }
};

// Examples are rows of tensors that share their first dimension.
class TensorDataset : public IndexedDataset {
 public:
  // Throws when inputs and targets disagree on the number of rows.
  TensorDataset(Tensor inputs, Tensor targets, std::vector<std::string> classes = {});
  int64_t size() const override;
  Example<> get(int64_t index) const override;
  std::vector<std::string> classes() const override { return classes_; }
  const Tensor& inputs() const { return inputs_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor inputs_, targets_;
  std::vector<std::string> classes_;
};

// A per-sample transform of an example's data. Random transforms draw only from `gen`, which the
// DataLoader seeds per sample (from its seed, the epoch and the sample index), so an epoch's
// batches are the same whatever the number of workers. See data/transforms.h.
using Transform = std::function<Tensor(const Tensor& input, Generator& gen)>;

}  // namespace cohort::data
