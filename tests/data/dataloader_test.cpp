// DataLoader: batching, shuffling, the epoch cursor and resume, determinism across worker counts,
// worker errors, prompt teardown, bounded prefetch and argument errors.
#include <algorithm>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <thread>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/threads.h"
#include "cohort/data/dataloader.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "support/error_of.h"

using namespace cohort;
using namespace cohort::data;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

// n rows [i*3, i*3+1, i*3+2] (float) with targets i (int64).
std::shared_ptr<TensorDataset> rows(int64_t n) {
  return std::make_shared<TensorDataset>(arange(0, 3 * n, 1, TensorOptions(kFloat32)).view({n, 3}), arange(n));
}

// Counts get() calls; can sleep in get() to provoke races, throw at one index, or give one
// index a different shape.
struct ProbeDataset : IndexedDataset {
  explicit ProbeDataset(int64_t n) : n(n) {}
  int64_t size() const override { return n; }
  Example<> get(int64_t i) const override {
    ++started;
    int64_t now = ++in_flight, seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {}
    struct Leave { std::atomic<int64_t>& c; ~Leave() { --c; } } leave{in_flight};
    std::this_thread::sleep_for(delay);
    if (i == fail_at) throw std::runtime_error("disk on fire");
    return {full({i == odd_shape_at ? 3 : 2}, static_cast<double>(i)), scalar_tensor(i, TensorOptions(kInt64))};
  }
  int64_t n, fail_at = -1, odd_shape_at = -1;
  std::chrono::milliseconds delay{0};
  mutable std::atomic<int64_t> started{0}, in_flight{0}, max_in_flight{0};
};

// The batches of the loader's current epoch (from its cursor on).
std::vector<Batch> run_epoch(DataLoader& loader) {
  std::vector<Batch> out;
  for (const Batch& b : loader) out.push_back(b);
  return out;
}

void expect_same(const std::vector<Batch>& a, const std::vector<Batch>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].indices, b[k].indices) << what << ", batch " << k;
    EXPECT_TRUE(equal(a[k].data, b[k].data)) << what << ", batch " << k;
    EXPECT_TRUE(equal(a[k].target, b[k].target)) << what << ", batch " << k;
  }
}

std::string at(const DataLoader& loader) {
  return "epoch " + std::to_string(loader.state().epoch) + " batch " + std::to_string(loader.state().batch);
}

// Adds uniform noise drawn from the sample's generator.
Tensor add_noise(const Tensor& x, Generator& gen) { return x + rand(x.sizes(), gen); }

}  // namespace

TEST(DataLoaderTest, BatchCountsAndShapesWithAndWithoutDropLast) {
  DataLoader loader(rows(10), DataLoaderOptions(3));
  EXPECT_EQ(loader.num_batches(), 4);
  std::vector<Batch> batches = run_epoch(loader);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0].data.sizes(), IntArrayRef({3, 3}));
  EXPECT_EQ(batches[0].target.sizes(), IntArrayRef({3}));
  EXPECT_EQ(batches[3].size(), 1);
  EXPECT_EQ(batches[3].indices, std::vector<int64_t>{9});
  EXPECT_TRUE(equal(batches[1].data, arange(9, 18, 1, TensorOptions(kFloat32)).view({3, 3})));
  EXPECT_TRUE(equal(batches[1].target, arange(3, 6)));

  DataLoader dropping(rows(10), DataLoaderOptions(3).drop_last(true));
  EXPECT_EQ(dropping.num_batches(), 3);
  EXPECT_EQ(run_epoch(dropping).size(), 3u);
  EXPECT_EQ(DataLoader(rows(9), DataLoaderOptions(3)).num_batches(), 3);
  EXPECT_EQ(DataLoader(rows(9), DataLoaderOptions(3).drop_last(true)).num_batches(), 3);
  EXPECT_EQ(DataLoader(rows(10)).num_batches(), 10) << "the default batch_size is 1, as in libtorch";
}

TEST(DataLoaderTest, EveryIndexOncePerEpochAndRowsMatchTheirIndex) {
  auto ds = rows(23);
  DataLoader loader(ds, DataLoaderOptions(4).shuffle(true).seed(1).num_workers(2));
  std::multiset<int64_t> all;
  for (int64_t i = 0; i < 23; ++i) all.insert(i);
  for (int64_t e = 0; e < 3; ++e) {
    std::multiset<int64_t> seen;
    for (const Batch& b : run_epoch(loader)) {
      for (int64_t j = 0; j < b.size(); ++j) {
        seen.insert(b.indices[j]);
        EXPECT_TRUE(equal(b.data.select(0, j), ds->get(b.indices[j]).data));
        EXPECT_EQ(b.target.select(0, j).item<int64_t>(), b.indices[j]);
      }
    }
    EXPECT_EQ(seen, all) << "epoch " << e;
  }
  EXPECT_EQ(loader.epoch(), 3);
}

TEST(DataLoaderTest, ShuffleDiffersBetweenEpochsAndIsReproduciblePerSeed) {
  auto order = [](uint64_t seed, int64_t epochs) {
    DataLoader loader(rows(40), DataLoaderOptions(40).shuffle(true).seed(seed));
    std::vector<std::vector<int64_t>> out;
    for (int64_t e = 0; e < epochs; ++e) out.push_back(run_epoch(loader)[0].indices);
    return out;
  };
  std::vector<std::vector<int64_t>> a = order(5, 2);
  EXPECT_NE(a[0], a[1]);
  EXPECT_EQ(a, order(5, 2));
  EXPECT_NE(a, order(6, 2));
  EXPECT_EQ(a[1], RandomSampler(40, 5).indices(1)) << "shuffle is RandomSampler(n, seed)";

  manual_seed(77);  // an unset seed is drawn from the default generator
  DataLoader x(rows(40), DataLoaderOptions(40).shuffle(true));
  manual_seed(77);
  DataLoader y(rows(40), DataLoaderOptions(40).shuffle(true));
  EXPECT_EQ(x.seed(), y.seed());
  EXPECT_EQ(run_epoch(x)[0].indices, run_epoch(y)[0].indices);
}

TEST(DataLoaderTest, IdenticalBatchesForZeroToThreeWorkersWithARandomTransform) {
  auto batches = [](int64_t workers, int64_t prefetch) {
    DataLoader loader(rows(37), DataLoaderOptions(5).shuffle(true).seed(9).transform(add_noise)
                                    .num_workers(workers).prefetch_factor(prefetch));
    std::vector<Batch> out = run_epoch(loader);
    for (const Batch& b : run_epoch(loader)) out.push_back(b);
    return out;
  };
  std::vector<Batch> reference = batches(0, 2);
  ASSERT_EQ(reference.size(), 16u);
  for (int64_t w = 1; w <= 3; ++w)
    for (int64_t p : {1, 2, 3}) expect_same(reference, batches(w, p), "workers " + std::to_string(w) + " prefetch " + std::to_string(p));

  // The transform of sample i in epoch e draws from Generator(sample_seed(seed, e, i)).
  auto ds = rows(37);
  const Batch& b = reference[9];  // epoch 1
  Generator gen(sample_seed(9, 1, b.indices[2]));
  EXPECT_TRUE(equal(b.data.select(0, 2), add_noise(ds->get(b.indices[2]).data, gen)));
  EXPECT_FALSE(equal(reference[0].data.select(0, 0), ds->get(reference[0].indices[0]).data));
}

TEST(DataLoaderTest, LoadingRunsWithoutGradAndWorkersWithOneIntraOpThread) {
  for (int64_t workers : {0, 3}) {
    std::atomic<int> grad_on{0}, many_threads{0};
    Transform probe = [&](const Tensor& x, Generator&) {
      if (GradMode::is_enabled()) ++grad_on;
      if (get_num_threads() != 1) ++many_threads;
      return x;
    };
    DataLoader loader(rows(12), DataLoaderOptions(2).num_workers(workers).transform(probe));
    EXPECT_EQ(run_epoch(loader).size(), 6u);
    EXPECT_EQ(grad_on.load(), 0) << "workers " << workers;
    if (workers > 0) EXPECT_EQ(many_threads.load(), 0) << "workers " << workers;
    EXPECT_TRUE(GradMode::is_enabled()) << "the caller's grad mode is untouched";
  }
}

TEST(DataLoaderTest, CursorStaysOnBreakAndMovesToTheNextEpochAtTheEnd) {
  DataLoader loader(rows(10), DataLoaderOptions(3).num_workers(2));
  EXPECT_EQ(loader.begin()->indices[0], 0);  // a loop that stops after one batch
  EXPECT_EQ(at(loader), "epoch 0 batch 1") << "one batch handed out";
  int64_t k = 1;
  for (const Batch& b : loader) {
    EXPECT_EQ(b.indices[0], 3 * k) << "the next loop goes on with the same epoch";
    EXPECT_EQ(at(loader), "epoch 0 batch " + std::to_string(++k)) << "inside the body, also the last one";
  }
  EXPECT_EQ(at(loader), "epoch 1 batch 0") << "the end of the loop moves to the next epoch";

  // A break in the last body: the next loop is empty and only moves the cursor on.
  for (const Batch& b : loader)
    if (b.size() == 1) break;
  EXPECT_EQ(at(loader), "epoch 1 batch 4");
  int64_t loops = 0, batches = 0;
  while (loader.epoch() < 3) {
    ++loops;
    for (const Batch& b : loader) batches += b.size() > 0;
  }
  EXPECT_EQ(loops, 2) << "epoch 1 (no batch left) and epoch 2";
  EXPECT_EQ(batches, 4);
  loader.set_epoch(5);
  EXPECT_EQ(at(loader), "epoch 5 batch 0");
}

TEST(DataLoaderTest, LoadStateResumesMidEpochWithTheSameBatches) {
  auto options = [] { return DataLoaderOptions(4).shuffle(true).seed(3).transform(add_noise).num_workers(2); };
  DataLoader full_run(rows(30), options());
  run_epoch(full_run);
  std::vector<Batch> reference = run_epoch(full_run);  // epoch 1

  DataLoader first(rows(30), options());
  run_epoch(first);
  std::vector<Batch> seen;
  for (const Batch& b : first) {
    seen.push_back(b);
    if (seen.size() == 3) break;
  }
  DataLoader::State saved = first.state();
  EXPECT_EQ(at(first), "epoch 1 batch 3");

  DataLoader resumed(rows(30), options().num_workers(3));
  resumed.load_state(saved);
  for (const Batch& b : resumed) seen.push_back(b);
  expect_same(reference, seen, "resumed in a new loader");
  EXPECT_EQ(at(resumed), "epoch 2 batch 0");

  expect_same(std::vector<Batch>(reference.begin() + 3, reference.end()), run_epoch(first), "the same loader");
}

TEST(DataLoaderTest, WorkerExceptionNamesSampleBatchAndEpoch) {
  for (int64_t workers : {0, 2}) {
    SCOPED_TRACE(::testing::Message() << "workers " << workers);
    auto ds = std::make_shared<ProbeDataset>(20);
    ds->fail_at = 13;
    DataLoader loader(ds, DataLoaderOptions(4).num_workers(workers));
    loader.set_epoch(2);
    std::vector<int64_t> firsts;
    std::string message = error_of([&] {
      for (const Batch& b : loader) firsts.push_back(b.indices[0]);
    });
    EXPECT_THAT(message, HasSubstr("DataLoader: loading sample 13 (batch 3 of epoch 2) failed: disk on fire"));
    EXPECT_EQ(firsts, (std::vector<int64_t>{0, 4, 8})) << "the batches before the failure are handed out";
    EXPECT_EQ(at(loader), "epoch 2 batch 3") << "the failed batch is not handed out";
    EXPECT_THAT(error_of([&] { run_epoch(loader); }), HasSubstr("sample 13 (batch 3 of epoch 2)"));
    EXPECT_EQ(ds->in_flight.load(), 0);
  }
}

// A batch's examples are got a few ahead of the one being transformed (so that their reads
// overlap), never the whole batch at once: large decoded images must not pile up.
TEST(DataLoaderTest, ExamplesAreGotAFewAheadOfTheTransformAndItsErrorsNameTheirSample) {
  auto ds = std::make_shared<ProbeDataset>(40);
  std::vector<int64_t> ahead;  // examples got but not yet transformed, at each transform
  auto probe = [&](const Tensor& x, Generator&) {
    ahead.push_back(ds->started.load() - static_cast<int64_t>(ahead.size()));
    if (x[0].item<double>() == 27) throw std::runtime_error("bad pixel");
    return x;
  };
  DataLoader loader(ds, DataLoaderOptions(32).transform(probe));
  const std::string message = error_of([&] { run_epoch(loader); });
  EXPECT_THAT(message, HasSubstr("DataLoader: loading sample 27 (batch 0 of epoch 0) failed: bad pixel"));
  ASSERT_EQ(ahead.size(), 28u);
  EXPECT_EQ(ahead.front(), 8) << "the first transform waits for 8 examples";
  EXPECT_EQ(*std::max_element(ahead.begin(), ahead.end()), 8) << "never more than 8 ahead";
}

TEST(DataLoaderTest, CollationNamesMismatchedSamplesAndKeepsUndefinedTargets) {
  auto ds = std::make_shared<ProbeDataset>(8);
  ds->odd_shape_at = 6;
  DataLoader loader(ds, DataLoaderOptions(4).num_workers(1));
  EXPECT_THAT(error_of([&] { run_epoch(loader); }),
              HasSubstr("DataLoader: cannot stack the inputs of batch 1 of epoch 0: sample 4 has float32 [2] but "
                        "sample 6 has float32 [3]"));

  struct Unlabelled : IndexedDataset {
    int64_t size() const override { return 4; }
    Example<> get(int64_t i) const override { return {full({2}, 1.0), Tensor()}; }
  };
  DataLoader unlabelled(std::make_shared<Unlabelled>(), DataLoaderOptions(4));
  Batch b = run_epoch(unlabelled).at(0);
  EXPECT_EQ(b.data.sizes(), IntArrayRef({4, 2}));
  EXPECT_FALSE(b.target.defined());
}

TEST(DataLoaderTest, EarlyBreakAndDestructionStopWorkersBlockedInGet) {
  auto ds = std::make_shared<ProbeDataset>(200);
  ds->delay = std::chrono::milliseconds(20);
  {
    DataLoader loader(ds, DataLoaderOptions(2).num_workers(3).prefetch_factor(4));
    for (const Batch& b : loader) {
      EXPECT_EQ(b.size(), 2);
      break;  // workers are inside get() now; leaving the loop must join them
    }
    EXPECT_EQ(ds->in_flight.load(), 0) << "no get() still running after the loop";
    EXPECT_EQ(ds.use_count(), 2) << "only the loader holds the dataset";

    // An exception mid-epoch destroys the iterator the same way.
    EXPECT_THROW(for (const Batch& b : loader) throw std::runtime_error(std::to_string(b.size())), std::runtime_error);
  }
  EXPECT_EQ(ds->in_flight.load(), 0);
  EXPECT_EQ(ds.use_count(), 1);

  // The loader destroyed before its iterator joins the workers and ends the loop.
  auto loader = std::make_unique<DataLoader>(ds, DataLoaderOptions(2).num_workers(2));
  auto it = loader->begin();
  EXPECT_EQ(it->size(), 2);
  loader.reset();
  EXPECT_EQ(ds->in_flight.load(), 0);
  EXPECT_TRUE(++it == DataLoader::End{});
}

TEST(DataLoaderTest, PrefetchIsBounded) {
  for (int64_t workers : {1, 3}) {
    for (int64_t prefetch : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << "workers " << workers << " prefetch " << prefetch);
      auto ds = std::make_shared<ProbeDataset>(120);
      DataLoader loader(ds, DataLoaderOptions(2).num_workers(workers).prefetch_factor(prefetch));
      const int64_t capacity = workers * prefetch;
      int64_t handed_out = 0;
      for (const Batch& b : loader) {
        ++handed_out;
        // A slow consumer lets the workers run ahead as far as they may.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        EXPECT_LE(ds->started.load(), (handed_out + capacity) * b.size()) << "after batch " << handed_out;
      }
      EXPECT_LE(ds->max_in_flight.load(), workers) << "one get() at a time per worker";
      EXPECT_EQ(ds->started.load(), 120);
    }
  }
}

TEST(DataLoaderTest, Errors) {
  auto ds = rows(10);
  EXPECT_THAT(error_of([&] { DataLoader(ds, DataLoaderOptions(0)); }), HasSubstr("DataLoader: batch_size must be at least 1, got 0"));
  EXPECT_THAT(error_of([&] { DataLoader(rows(0)); }), HasSubstr("DataLoader: the dataset is empty, got size 0"));
  EXPECT_THAT(error_of([&] { DataLoader(nullptr); }), HasSubstr("DataLoader: the dataset is null"));
  EXPECT_THAT(error_of([&] { DataLoader(ds, DataLoaderOptions().num_workers(-1)); }), HasSubstr("num_workers must be non-negative, got -1"));
  EXPECT_THAT(error_of([&] { DataLoader(ds, DataLoaderOptions().num_workers(100000)); }),
              HasSubstr("DataLoader: num_workers must be at most 1024, got 100000"));
  EXPECT_THAT(error_of([&] { DataLoader(ds, DataLoaderOptions().prefetch_factor(0)); }), HasSubstr("prefetch_factor must be at least 1, got 0"));
  EXPECT_THAT(error_of([&] { DataLoader(ds, DataLoaderOptions().num_workers(2).max_jobs(0)); }),
              HasSubstr("DataLoader: max_jobs must be at least 1, got 0"));
  EXPECT_THAT(error_of([&] { DataLoader(ds, DataLoaderOptions(11).drop_last(true)); }),
              HasSubstr("DataLoader: no batch to load: the sampler gives 10 examples per epoch"));

  auto too_big = std::make_shared<SequentialSampler>(12);
  DataLoader wrong(ds, DataLoaderOptions(4).sampler(too_big));
  EXPECT_THAT(error_of([&] { run_epoch(wrong); }), HasSubstr("DataLoader: the sampler gave index 10 in epoch 0 for a dataset of 10 examples"));

  DataLoader loader(ds, DataLoaderOptions(4));
  EXPECT_THAT(error_of([&] { loader.load_state({0, 4}); }), HasSubstr("DataLoader::load_state: batch must be in [0, 3] for this loader's 3 batches per epoch, got 4"));
  EXPECT_THAT(error_of([&] { loader.set_epoch(-1); }), HasSubstr("epoch must be non-negative, got -1"));
  auto it = loader.begin();
  EXPECT_THAT(error_of([&] { loader.begin(); }), HasSubstr("DataLoader::begin: another loop over this loader is still running"));
  EXPECT_THAT(error_of([&] { loader.set_epoch(1); }), HasSubstr("DataLoader::load_state: a loop over this loader is running"));
}

// Workers the system refuses to start (here: no address space left for their stacks) are a
// cohort::Error naming the worker, and the workers already started are stopped and joined; not a
// std::system_error that ends the program. Run in a child process, whose address space is limited.
TEST(DataLoaderTest, WorkersThatCannotStartAreAnErrorNamingTheWorker) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers reserve address space, so it cannot be limited";
#endif
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    long pages = 0;
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    if (!statm || std::fscanf(statm, "%ld", &pages) != 1) ::_exit(4);
    std::fclose(statm);
    // 64 MB more than in use: a few thread stacks (8 MB each by default, 2 MB at least), not 1000.
    const rlim_t limit = static_cast<rlim_t>(pages) * ::sysconf(_SC_PAGESIZE) + (64 << 20);
    const rlimit r{limit, limit};
    if (::setrlimit(RLIMIT_AS, &r) != 0) ::_exit(4);
    try {
      DataLoader loader(rows(10), DataLoaderOptions(1).num_workers(1000));
      for (const Batch& b : loader) (void)b;
      ::_exit(1);
    } catch (const Error& e) {
      ::_exit(std::string(e.what()).rfind("could not start DataLoader worker ", 0) == 0 ? 0 : 2);
    } catch (...) {
      ::_exit(3);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: every worker started, 2: the message does not name the worker, 3: not a cohort::Error, 4: setup";
}
