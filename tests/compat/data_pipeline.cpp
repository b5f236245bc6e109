// The libtorch-port promise for the data API: a custom Dataset<Self>, .map() chains with Lambda,
// Normalize and Stack, a user's Stack specialisation and Collation, make_data_loader with sequential,
// random and distributed samplers, workers and drop_last (compat.h has the rules). Random orders
// differ between the libraries, so those checks are on sets and counts, never on order.
#include "compat.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

using namespace compat;

namespace {

// Example i: a [3, 2, 2] image filled with i, target i % 4 (an int64 0-d tensor).
class Squares : public torch::data::datasets::Dataset<Squares> {
 public:
  explicit Squares(size_t n) : n_(n) {}
  torch::data::Example<> get(size_t index) override {
    return {torch::full({3, 2, 2}, static_cast<double>(index)), torch::tensor(static_cast<int64_t>(index % 4))};
  }
  torch::optional<size_t> size() const override { return n_; }

 private:
  size_t n_;
};

// A dataset with its own example type, batched by a Stack specialisation below.
struct Pair {
  torch::Tensor left, right;
  int64_t id = 0;
};
class Pairs : public torch::data::Dataset<Pairs, Pair> {  // torch::data::Dataset is datasets::Dataset
 public:
  Pair get(size_t index) override {
    return {torch::full({2}, static_cast<double>(index)), torch::full({1}, -static_cast<double>(index)),
            static_cast<int64_t>(index)};
  }
  torch::optional<size_t> size() const override { return 7; }
};

// The stacked targets of one epoch.
template <typename Loader>
std::vector<int64_t> all_targets(Loader& loader, std::vector<int64_t>* batch_sizes = nullptr) {
  std::vector<int64_t> out;
  for (auto& batch : loader) {
    if (batch_sizes) batch_sizes->push_back(batch.data.size(0));
    for (int64_t i = 0; i < batch.target.size(0); ++i) out.push_back(batch.target[i].template item<int64_t>());
  }
  return out;
}

}  // namespace

// A user's Stack for their own example type. The qualified form, since with cohort `torch` is a
// namespace alias, which cannot be reopened (`namespace torch { ... }` works with libtorch only).
template <>
struct torch::data::transforms::Stack<Pair> : public torch::data::transforms::Collation<Pair> {
  Pair apply_batch(std::vector<Pair> pairs) override {
    std::vector<torch::Tensor> left, right;
    int64_t ids = 0;
    for (auto& p : pairs) {
      left.push_back(p.left);
      right.push_back(p.right);
      ids += p.id;
    }
    return {torch::stack(left), torch::cat(right), ids};
  }
};

namespace {

// ---------------------------------------------------------------------------------------------------
void sequential_batches() {
  auto dataset = Squares(10).map(torch::data::transforms::Stack<>());
  check(dataset.size().value() == 10, "MapDataset keeps the size");
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(4));
  check(loader->options().batch_size == 4 && loader->options().workers == 0 && !loader->options().drop_last,
        "loader->options()");
  int64_t batches = 0, first = 0;
  for (torch::data::Example<>& batch : *loader) {
    const int64_t rows = batches < 2 ? 4 : 2;
    check(has_sizes(batch.data, {rows, 3, 2, 2}), "sequential: data [B, 3, 2, 2]");
    check(has_sizes(batch.target, {rows}) && batch.target.scalar_type() == torch::kInt64, "sequential: target [B]");
    check(batch.data[0][0][0][0].item<float>() == static_cast<float>(first), "sequential: batch starts in order");
    check(batch.target[0].item<int64_t>() == first % 4, "sequential: targets follow the data");
    first += rows;
    ++batches;
  }
  check(batches == 3, "sequential: 10 examples in batches of 4 give 3 batches");
  int64_t again = 0;
  for (auto& batch : *loader) again += batch.data.size(0);
  check(again == 10, "sequential: a second loop is a whole new epoch");
}

// ---------------------------------------------------------------------------------------------------
void random_batches_with_workers() {
  torch::manual_seed(1);
  auto loader = torch::data::make_data_loader(
      Squares(22).map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(5).workers(2).drop_last(true));
  check(loader->options().workers == 2 && loader->options().max_jobs == 4 && loader->options().drop_last,
        "options with workers: max_jobs defaults to 2 * workers");
  std::vector<std::vector<float>> epochs;
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<float> seen;
    int64_t batches = 0;
    for (auto& batch : *loader) {
      check(has_sizes(batch.data, {5, 3, 2, 2}), "random: drop_last leaves only full batches");
      for (int64_t i = 0; i < 5; ++i) {
        const float v = batch.data[i][2][1][1].item<float>();
        seen.push_back(v);
        check(batch.target[i].item<int64_t>() == static_cast<int64_t>(v) % 4, "random: each target matches its data");
      }
      ++batches;
    }
    check(batches == 4, "random: 22 examples in full batches of 5 give 4");
    std::set<float> unique(seen.begin(), seen.end());
    check(unique.size() == 20 && *unique.rbegin() <= 21.0f, "random: 20 distinct examples of 22, none twice");
    epochs.push_back(seen);
  }
  check(epochs[0] != epochs[1], "random: every begin() draws a new order");
}

// ---------------------------------------------------------------------------------------------------
void batch_size_shorthand_and_vectors() {
  // No Stack: a batch is a std::vector of examples.
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(Squares(5), 2);
  std::vector<size_t> sizes;
  for (std::vector<torch::data::Example<>>& batch : *loader) sizes.push_back(batch.size());
  check(sizes == std::vector<size_t>({2, 2, 1}), "make_data_loader(dataset, 2): vectors of 2, 2, 1 examples");
  auto random = torch::data::make_data_loader(Squares(5), torch::data::DataLoaderOptions(5));
  std::set<int64_t> targets;
  for (auto& batch : *random)
    for (auto& example : batch) targets.insert(example.target.item<int64_t>());
  check(targets == std::set<int64_t>({0, 1, 2, 3}), "DataLoaderOptions(5) with the default RandomSampler");
}

// ---------------------------------------------------------------------------------------------------
void lambdas_and_normalize() {
  using torch::data::Example;
  namespace transforms = torch::data::transforms;
  auto dataset = Squares(8)
                     .map(transforms::Lambda<Example<>>([](Example<> e) {
                       return Example<>(e.data + 1, e.target * 10);
                     }))
                     .map(transforms::TensorLambda<>([](torch::Tensor x) { return x * 2; }))
                     .map(transforms::Normalize<>({1.0, 2.0, 3.0}, {2.0, 2.0, 2.0}))
                     .map(transforms::Stack<>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(8).workers(1));
  int64_t batches = 0;
  for (auto& batch : *loader) {
    ++batches;
    check(has_sizes(batch.data, {8, 3, 2, 2}), "lambdas: data keeps its shape");
    // Example 5: ((5 + 1) * 2 - mean[c]) / 2 for channel c.
    check(near(batch.data[5][0][0][0].item<float>(), (12.0 - 1.0) / 2.0) &&
              near(batch.data[5][2][1][0].item<float>(), (12.0 - 3.0) / 2.0),
          "lambdas: Lambda, TensorLambda, then per-channel Normalize");
    check(batch.target[5].item<int64_t>() == 10, "lambdas: the Lambda mapped the target");
  }
  check(batches == 1, "lambdas: one batch of 8");

  // BatchLambda on the whole batch, and Collate as a whole-batch function.
  auto summed = Squares(6).map(transforms::BatchLambda<std::vector<Example<>>, Example<>>([](std::vector<Example<>> v) {
    std::vector<torch::Tensor> sums, targets;
    for (auto& e : v) sums.push_back(e.data.sum()), targets.push_back(e.target);
    return Example<>(torch::stack(sums), torch::stack(targets));
  }));
  auto summed_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(summed), 6);
  for (auto& batch : *summed_loader)
    check(has_sizes(batch.data, {6}) && batch.data[4].item<float>() == 48.0f, "BatchLambda after Stack");

  auto firsts = Squares(6).map(transforms::Collate<Example<>>([](std::vector<Example<>> v) { return v.front(); }));
  auto firsts_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(firsts), 4);
  std::vector<float> heads;
  for (auto& example : *firsts_loader) heads.push_back(example.data[0][0][0].item<float>());
  check(heads == std::vector<float>({0.0f, 4.0f}), "Collate keeps each batch's first example");
}

// ---------------------------------------------------------------------------------------------------
void user_stack_specialisation() {
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      Pairs().map(torch::data::transforms::Stack<Pair>()), torch::data::DataLoaderOptions().batch_size(3));
  std::vector<int64_t> ids;
  for (Pair& batch : *loader) {
    check(batch.left.dim() == 2 && batch.left.size(1) == 2 && batch.right.dim() == 1, "user Stack<Pair>: shapes");
    ids.push_back(batch.id);
  }
  check(ids == std::vector<int64_t>({0 + 1 + 2, 3 + 4 + 5, 6}), "user Stack<Pair>: batches of 3, 3, 1");
}

// ---------------------------------------------------------------------------------------------------
void tensor_dataset_and_distributed() {
  auto rows = torch::arange(0, 20, torch::kFloat32).view({10, 2});
  std::multiset<float> seen;
  for (size_t rank = 0; rank < 3; ++rank) {
    torch::data::samplers::DistributedSequentialSampler sampler(10, 3, rank, /*allow_duplicates=*/true);
    auto loader = torch::data::make_data_loader(
        torch::data::datasets::TensorDataset(rows).map(torch::data::transforms::Stack<torch::data::TensorExample>()),
        std::move(sampler), torch::data::DataLoaderOptions().batch_size(2));
    for (torch::data::TensorExample& batch : *loader)
      for (int64_t i = 0; i < batch.data.size(0); ++i) seen.insert(batch.data[i][0].item<float>());
  }
  check(seen.size() == 12 && seen.count(0.0f) == 2 && seen.count(2.0f) == 2 && seen.count(18.0f) == 1,
        "DistributedSequentialSampler: 3 ranks of ceil(10 / 3) = 4, the first two examples twice");

  std::multiset<size_t> indices;
  for (size_t rank = 0; rank < 4; ++rank) {
    torch::data::samplers::DistributedRandomSampler sampler(10, 4, rank, /*allow_duplicates=*/false);
    sampler.set_epoch(3);
    sampler.reset();
    while (auto batch = sampler.next(5)) indices.insert(batch->begin(), batch->end());
  }
  check(indices == std::multiset<size_t>({0, 1, 2, 3, 4, 5, 6, 7}),
        "DistributedRandomSampler without duplicates: 4 ranks of 2, examples 8 and 9 unused");

  torch::data::samplers::RandomSampler random(6);
  std::set<size_t> drawn;
  while (auto batch = random.next(4)) drawn.insert(batch->begin(), batch->end());
  check(drawn.size() == 6 && !random.next(4).has_value(), "RandomSampler: a permutation, then nullopt");
  random.reset(3);
  check(random.next(10).value().size() == 3, "RandomSampler::reset(new size)");
}

}  // namespace

int main() {
  section("sequential_batches", sequential_batches);
  section("random_batches_with_workers", random_batches_with_workers);
  section("batch_size_shorthand_and_vectors", batch_size_shorthand_and_vectors);
  section("lambdas_and_normalize", lambdas_and_normalize);
  section("user_stack_specialisation", user_stack_specialisation);
  section("tensor_dataset_and_distributed", tensor_dataset_and_distributed);
  return finish("data_pipeline");
}
