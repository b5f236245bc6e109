// libtorch's data API end to end: a user's Dataset<Self>, .map() chains, make_data_loader with each
// sampler, drop_last, epochs, batches independent of the worker count, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "cohort/core/generator.h"
#include "cohort/data/stack.h"
#include "cohort/data/stateless_dataloader.h"
#include "cohort/data/tensor_dataset.h"
#include "cohort/data/transforms.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "io/io_test_util.h"
#include "support/error_of.h"

using namespace cohort;
using namespace cohort::data;
using cohort::testing::error_of;
using cohort::testing::same_tensor;
using ::testing::HasSubstr;

namespace {

// Example i: data [2] filled with i, target i. Optionally throws at one index, or draws noise
// from the default generator (to see which generator a worker uses).
struct Numbers : datasets::Dataset<Numbers> {
  explicit Numbers(size_t n, int64_t bad = -1, bool noisy = false) : n(n), bad(bad), noisy(noisy) {}
  Example<> get(size_t index) override {
    if (static_cast<int64_t>(index) == bad) throw std::runtime_error("no example here");
    Tensor x = full({2}, static_cast<double>(index));
    if (noisy) x = x + rand({2});
    return {x, tensor(static_cast<int64_t>(index))};
  }
  optional<size_t> size() const override { return n; }
  size_t n;
  int64_t bad;
  bool noisy;
};

// A dataset that does not know its size.
struct Endless : Dataset<Endless> {  // data::Dataset is libtorch's template too
  Example<> get(size_t i) override { return {zeros({1}), tensor(static_cast<int64_t>(i))}; }
  optional<size_t> size() const override { return nullopt; }
};

// The targets of every batch of one epoch.
template <class Loader>
std::vector<std::vector<int64_t>> epoch_targets(Loader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (auto& batch : loader) {
    std::vector<int64_t> t;
    for (int64_t i = 0; i < batch.target.size(0); ++i) t.push_back(batch.target[i].template item<int64_t>());
    out.push_back(t);
  }
  return out;
}

TEST(MakeDataLoader, SequentialBatchesOfAStackedDataset) {
  auto loader = make_data_loader<samplers::SequentialSampler>(Numbers(10).map(transforms::Stack<>()),
                                                                DataLoaderOptions().batch_size(4));
  EXPECT_EQ(loader->options().batch_size, 4u);
  EXPECT_EQ(loader->options().workers, 0u);
  size_t count = 0;
  for (Example<>& batch : *loader) {
    const int64_t rows = count < 2 ? 4 : 2;
    EXPECT_EQ(batch.data.sizes(), (std::vector<int64_t>{rows, 2}));
    EXPECT_TRUE(same_tensor(batch.target, arange(4 * static_cast<int64_t>(count), 4 * static_cast<int64_t>(count) + rows)));
    ++count;
  }
  EXPECT_EQ(count, 3u);
}

TEST(MakeDataLoader, WithoutStackABatchIsAVectorOfExamples) {
  auto loader = make_data_loader<samplers::SequentialSampler>(Numbers(5), 2);
  std::vector<size_t> sizes;
  for (std::vector<Example<>>& batch : *loader) sizes.push_back(batch.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 2, 1}));
}

TEST(MakeDataLoader, DropLastAndRandomOrderCoverTheDatasetEachEpoch) {
  manual_seed(0);
  auto loader = make_data_loader(Numbers(10).map(transforms::Stack<>()), DataLoaderOptions(3).drop_last(true));
  auto first = epoch_targets(*loader);
  ASSERT_EQ(first.size(), 3u) << "10 = 3 + 3 + 3 + 1, the last one dropped";
  std::set<int64_t> seen;
  for (auto& b : first) {
    EXPECT_EQ(b.size(), 3u);
    seen.insert(b.begin(), b.end());
  }
  EXPECT_EQ(seen.size(), 9u);
  auto second = epoch_targets(*loader);  // begin() again: a new epoch, a new permutation
  EXPECT_EQ(second.size(), 3u);
  EXPECT_NE(first, second);
}

TEST(MakeDataLoader, BatchesDoNotDependOnTheWorkerCount) {
  // Noise drawn inside get() comes from the per-batch default generator.
  auto run = [](int64_t workers) {
    auto loader = make_data_loader<samplers::SequentialSampler>(
        Numbers(23, -1, /*noisy=*/true).map(transforms::Stack<>()),
        DataLoaderOptions().batch_size(4).workers(workers).seed(7));
    std::vector<Tensor> out;
    for (int epoch = 0; epoch < 2; ++epoch)
      for (auto& b : *loader) out.push_back(b.data);
    return out;
  };
  std::vector<Tensor> reference = run(0);
  ASSERT_EQ(reference.size(), 12u);
  EXPECT_FALSE(same_tensor(reference[0], reference[6])) << "a new epoch draws new noise";
  for (int64_t w : {1, 2, 3}) {
    std::vector<Tensor> got = run(w);
    ASSERT_EQ(got.size(), reference.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(same_tensor(got[k], reference[k])) << w << " workers, batch " << k;
  }
}

TEST(MakeDataLoader, MapsChainAndTheLibtorchTransformsApply) {
  auto ds = Numbers(6)
                .map(transforms::Lambda<Example<>>([](Example<> e) { return Example<>{e.data + 1, e.target}; }))
                .map(transforms::Normalize<>(1.0, 2.0))
                .map(transforms::Stack<>());
  EXPECT_EQ(ds.size(), optional<size_t>(6));
  Example<> b = ds.get_batch(std::vector<size_t>{4, 5});
  // Normalize broadcasts a [2] tensor against its [1, 1, 1] mean to [1, 1, 2], as libtorch does.
  EXPECT_EQ(b.data.sizes(), (std::vector<int64_t>{2, 1, 1, 2}));
  EXPECT_TRUE(same_tensor(b.data.view({2, 2}), tensor({{2.0f, 2.0f}, {2.5f, 2.5f}})));
}

TEST(MakeDataLoader, ADistributedSamplerAndATensorDataset) {
  Tensor rows = arange(0, 12, 1, TensorOptions(kFloat32)).view({6, 2});
  std::multiset<float> seen;
  for (size_t rank = 0; rank < 2; ++rank) {
    auto loader = make_data_loader(datasets::TensorDataset(rows).map(transforms::Stack<TensorExample>()),
                                   samplers::DistributedSequentialSampler(6, 2, rank), DataLoaderOptions(2).workers(2));
    for (TensorExample& b : *loader)
      for (int64_t i = 0; i < b.data.size(0); ++i) seen.insert(b.data[i][0].item<float>());
  }
  EXPECT_EQ(seen, (std::multiset<float>{0, 2, 4, 6, 8, 10}));
}

TEST(MakeDataLoader, ABatchThatFailsIsNamedWhateverTheWorkerCount) {
  for (int64_t workers : {0, 2}) {
    auto loader = make_data_loader<samplers::SequentialSampler>(Numbers(10, /*bad=*/5).map(transforms::Stack<>()),
                                                                  DataLoaderOptions(2).workers(workers));
    int64_t batches = 0;
    std::string message;
    try {
      for (auto& b : *loader) batches += b.data.size(0) > 0;
    } catch (const Error& e) {
      message = e.what();
      EXPECT_THROW(std::rethrow_if_nested(e), std::runtime_error) << "the original exception is nested";
    }
    EXPECT_EQ(batches, 2) << workers;
    EXPECT_THAT(message, HasSubstr("DataLoader: loading batch 2 of epoch 0 (dataset indices [4, 5]) failed: "
                                   "no example here")) << workers;
    EXPECT_THAT(error_of([&] { epoch_targets(*loader); }), HasSubstr("loading batch 2 of epoch 1"))
        << "the next begin() is a new epoch";
  }
}

TEST(MakeDataLoader, ABreakThenBeginStartsANewEpoch) {
  auto loader = make_data_loader<samplers::SequentialSampler>(Numbers(40).map(transforms::Stack<>()),
                                                                DataLoaderOptions(2).workers(2));
  for (auto& b : *loader) {
    EXPECT_EQ(b.target[0].item<int64_t>(), 0);
    break;
  }
  EXPECT_EQ(epoch_targets(*loader).size(), 20u);
  loader->join();
  EXPECT_THAT(error_of([&] { loader->begin(); }), HasSubstr("join() was called"));
}

TEST(MakeDataLoader, ErrorsNameTheOptionAndTheFix) {
  EXPECT_THAT(error_of([] { make_data_loader(Numbers(4), DataLoaderOptions().batch_size(0)); }),
              HasSubstr("make_data_loader: batch_size must be at least 1, got 0"));
  EXPECT_THAT(error_of([] { make_data_loader(Endless()); }),
              HasSubstr("make_data_loader: the dataset's size() is nullopt, but the sampler is built from the "
                        "dataset's size"));
  EXPECT_THAT(error_of([] { make_data_loader(Numbers(4), DataLoaderOptions(2).shuffle(true)); }),
              HasSubstr("DataLoaderOptions::shuffle is an option of cohort's DataLoader"));
  EXPECT_THAT(error_of([] { make_data_loader(Numbers(4), DataLoaderOptions(2).workers(-1)); }),
              HasSubstr("make_data_loader: workers must be in [0, 1024], got -1"));
  // A sampler built for a larger dataset.
  auto loader = make_data_loader(Numbers(4), samplers::SequentialSampler(6), DataLoaderOptions(4));
  EXPECT_THAT(error_of([&] { loader->begin(); }),
              HasSubstr("DataLoader: the sampler gave index 4 in batch 1 of epoch 0 for a dataset of size 4; hint: "
                        "build the sampler with the dataset's size()"));
  // An unsized dataset works with a sampler given explicitly.
  auto endless = make_data_loader(Endless(), samplers::SequentialSampler(3), DataLoaderOptions(2));
  size_t n = 0;
  for (auto& b : *endless) n += b.size();
  EXPECT_EQ(n, 3u);
}

TEST(MakeDataLoader, TimeoutThrowsWhenAWorkerIsTooSlow) {
  struct Slow : Dataset<Slow> {
    Example<> get(size_t i) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(i == 0 ? 300 : 0));
      return {zeros({1}), tensor(static_cast<int64_t>(i))};
    }
    optional<size_t> size() const override { return 2; }
  };
  auto loader = make_data_loader<samplers::SequentialSampler>(
      Slow(), DataLoaderOptions(1).workers(1).timeout(std::chrono::milliseconds(20)));
  EXPECT_THAT(error_of([&] { for (auto& b : *loader) (void)b; }),
              HasSubstr("DataLoader: no batch within the timeout of 20 ms (waiting for batch 0 of epoch 0"));
}

}  // namespace
