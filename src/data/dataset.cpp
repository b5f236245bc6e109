// TensorDataset: rows of two tensors.
#include "cohort/data/dataset.h"

#include "cohort/core/error.h"

namespace cohort::data {

TensorDataset::TensorDataset(Tensor inputs, Tensor targets, std::vector<std::string> classes)
    : inputs_(std::move(inputs)), targets_(std::move(targets)), classes_(std::move(classes)) {
  COHORT_CHECK(inputs_.defined() && targets_.defined(), "TensorDataset: inputs and targets must be defined tensors");
  COHORT_CHECK(inputs_.dim() >= 1 && targets_.dim() >= 1,
               "TensorDataset: inputs and targets need a first (sample) dimension, got shapes ", inputs_.sizes(),
               " and ", targets_.sizes());
  COHORT_CHECK(inputs_.size(0) == targets_.size(0), "TensorDataset: inputs have ", inputs_.size(0),
               " rows but targets have ", targets_.size(0), " (shapes ", inputs_.sizes(), " and ", targets_.sizes(),
               ")");
}

int64_t TensorDataset::size() const { return inputs_.size(0); }

Example<> TensorDataset::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), "TensorDataset::get: index ", index, " is out of range for a dataset of ",
               size(), " examples");
  return {inputs_.select(0, index), targets_.select(0, index)};
}

}  // namespace cohort::data
