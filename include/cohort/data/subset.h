// A dataset of chosen examples of another, in the given order (torch.utils.data.Subset): how a
// table or an image folder is split into training and validation sets.
//
//   auto [train, val] = data::random_split(table, 0.2, seed);   // 80% / 20%, shuffled by seed
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "cohort/data/dataset.h"

namespace cohort::data {

class Subset : public IndexedDataset {
 public:
  // Throws cohort::Error when an index is outside [0, base->size()).
  Subset(std::shared_ptr<const IndexedDataset> base, std::vector<int64_t> indices);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  // base->get(indices()[index]). Throws cohort::IndexError outside [0, size()).
  Example<> get(int64_t index) const override;
  std::vector<std::string> classes() const override { return base_->classes(); }
  const std::vector<int64_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<const IndexedDataset> base_;
  std::vector<int64_t> indices_;
};

// {train, held_out}: a permutation of base's examples drawn from `seed` (the same for the same seed
// and size), its last round(held_out_share * size) examples held out. Throws cohort::Error unless
// 0 < held_out_share < 1 and both parts get at least one example.
std::pair<std::shared_ptr<Subset>, std::shared_ptr<Subset>> random_split(std::shared_ptr<const IndexedDataset> base,
                                                                         double held_out_share, uint64_t seed);

}  // namespace cohort::data
