// Subset and random_split (see cohort/data/subset.h).
#include "cohort/data/subset.h"

#include <cmath>

#include "cohort/core/error.h"
#include "cohort/data/sampler.h"

namespace cohort::data {

Subset::Subset(std::shared_ptr<const IndexedDataset> base, std::vector<int64_t> indices)
    : base_(std::move(base)), indices_(std::move(indices)) {
  COHORT_CHECK(base_ != nullptr, "Subset: the base dataset is null");
  const int64_t n = base_->size();
  for (int64_t i : indices_)
    COHORT_CHECK(i >= 0 && i < n, "Subset: index ", i, " is out of range for a dataset of ", n, " examples");
}

Example<> Subset::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), "Subset::get: index ", index,
                  " is out of range for a subset of ", size(), " examples");
  return base_->get(indices_[static_cast<size_t>(index)]);
}

std::pair<std::shared_ptr<Subset>, std::shared_ptr<Subset>> random_split(std::shared_ptr<const IndexedDataset> base,
                                                                         double held_out_share, uint64_t seed) {
  COHORT_CHECK(base != nullptr, "random_split: the dataset is null");
  COHORT_CHECK(held_out_share > 0 && held_out_share < 1, "random_split: the held-out share must be in (0, 1), got ",
               held_out_share);
  const int64_t n = base->size();
  const auto held = static_cast<int64_t>(std::llround(held_out_share * static_cast<double>(n)));
  COHORT_CHECK(held >= 1 && held < n, "random_split: holding out ", held_out_share, " of ", n,
               " examples leaves ", n - held, " to train on and ", held, " held out; both need at least one");
  // The sampler's epoch-0 shuffle: a pure function of (n, seed).
  std::vector<int64_t> order = RandomSampler(n, seed).indices(0);
  std::vector<int64_t> rest(order.end() - held, order.end());
  order.resize(static_cast<size_t>(n - held));
  return {std::make_shared<Subset>(base, std::move(order)), std::make_shared<Subset>(base, std::move(rest))};
}

}  // namespace cohort::data
