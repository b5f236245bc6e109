// parallel::plan: the batch, the chunk rules, per-replica shapes, notes, printing, and every error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include <cohort/cohort.h>
#include <cohort/core/storage.h>
#include <cohort/parallel/plan.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// Eight virtual CPU devices, whatever the machine has.
using ParallelPlan = cohort::testing::WithDevices<8>;

struct Config {
  int heads = 4;
};

}  // namespace

TEST_F(ParallelPlan, BalancedNineOnEightUsesEveryDevice) {
  parallel::Plan p = parallel::plan(parallel::all_devices(), {}, randn({9, 3}));
  EXPECT_EQ(p.batch, 9);
  EXPECT_EQ(p.replicas(), 8u);
  EXPECT_THAT(p.chunk_sizes, ElementsAre(2, 1, 1, 1, 1, 1, 1, 1));
  EXPECT_THAT(p.offsets, ElementsAre(0, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_TRUE(p.notes.empty());
}

TEST_F(ParallelPlan, BalancedTenOnThree) {
  parallel::Plan p = parallel::plan(first(3), {}, randn({10, 5}));
  EXPECT_THAT(p.chunk_sizes, ElementsAre(4, 3, 3));
  EXPECT_THAT(p.offsets, ElementsAre(0, 4, 7));
  EXPECT_THAT(p.devices, ElementsAre(Device("cpu:0"), Device("cpu:1"), Device("cpu:2")));
}

TEST_F(ParallelPlan, FewerSamplesThanDevicesUsesOneDevicePerSampleAndSaysSo) {
  parallel::Plan p = parallel::plan(parallel::all_devices(), {}, randn({3, 2}));
  EXPECT_THAT(p.chunk_sizes, ElementsAre(1, 1, 1));
  EXPECT_THAT(p.devices, ElementsAre(Device("cpu:0"), Device("cpu:1"), Device("cpu:2")));
  EXPECT_THAT(p.notes, ElementsAre("batch 3 is smaller than 8 devices: using 3"));
}

TEST_F(ParallelPlan, ChunkRuleIsPyTorchsAndMayLeaveDevicesIdle) {
  auto chunk = parallel::ScatterOptions().rule(parallel::kChunk);
  parallel::Plan p = parallel::plan(parallel::all_devices(), chunk, randn({9, 3}));
  EXPECT_THAT(p.chunk_sizes, ElementsAre(2, 2, 2, 2, 1));
  EXPECT_EQ(p.replicas(), 5u);
  EXPECT_THAT(p.notes, ElementsAre("the chunk rule (2 samples per chunk) makes 5 chunks for 8 devices: using 5"));
  EXPECT_THAT(parallel::plan(first(3), chunk, randn({10})).chunk_sizes, ElementsAre(4, 4, 2));
  EXPECT_THAT(parallel::plan(first(8), chunk, randn({3})).notes, ElementsAre("batch 3 is smaller than 8 devices: using 3"));
}

TEST_F(ParallelPlan, WeightedRuleFollowsTheWeightsAndDropsDevicesWithoutSamples) {
  auto p = parallel::plan(first(3), parallel::ScatterOptions().weights({2, 1, 1}), randn({10}));
  EXPECT_EQ(p.rule, parallel::kWeighted);  // weights() implies the rule
  EXPECT_THAT(p.chunk_sizes, ElementsAre(5, 3, 2));
  EXPECT_THAT(parallel::plan(first(3), parallel::ScatterOptions().weights({1, 1, 1}), randn({12})).chunk_sizes,
              ElementsAre(4, 4, 4));
  auto q = parallel::plan(first(3), parallel::ScatterOptions().weights({1, 0, 3}), randn({8}));
  EXPECT_THAT(q.chunk_sizes, ElementsAre(2, 6));
  EXPECT_THAT(q.devices, ElementsAre(Device("cpu:0"), Device("cpu:2")));
  EXPECT_THAT(q.offsets, ElementsAre(0, 2));
  EXPECT_THAT(q.notes, ElementsAre("the weights give no samples to 1 of 3 devices: using 2"));
}

TEST_F(ParallelPlan, WeightErrorsNameTheFix) {
  Tensor x = randn({4});
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), parallel::ScatterOptions().weights({1, 2, 3}), x); }),
              HasSubstr("parallel::plan: the weighted rule needs one weight per device, got 3 weights for 2 devices"));
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), parallel::ScatterOptions().weights({1, -1}), x); }),
              HasSubstr("weights must be finite and non-negative, got -1"));
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), parallel::ScatterOptions().weights({0, 0}), x); }),
              HasSubstr("the weights sum to 0, so they cannot share out the samples"));
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), parallel::ScatterOptions().rule(parallel::kWeighted), x); }),
              HasSubstr("got 0 weights for 2 devices; hint: ScatterOptions().weights({...})"));
  auto contradictory = parallel::ScatterOptions().weights({1, 1}).rule(parallel::kChunk);
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), contradictory, x); }),
              HasSubstr("weights are given but the rule is chunk; hint: weights are used by the kWeighted rule only"));
}

TEST_F(ParallelPlan, DimOptionSplitsAnotherDimension) {
  auto p = parallel::plan(first(3), parallel::ScatterOptions().dim(1), randn({2, 10, 4}));
  EXPECT_EQ(p.batch, 10);
  EXPECT_THAT(p.arguments[0].replica_shapes, ElementsAre(Shape{2, 4, 4}, Shape{2, 3, 4}, Shape{2, 3, 4}));
  auto last = parallel::plan(first(2), parallel::ScatterOptions().dim(-1), randn({3, 5}), randn({5}));
  EXPECT_EQ(last.batch, 5);
  EXPECT_THAT(last.arguments[1].replica_shapes, ElementsAre(Shape{3}, Shape{2}));
}

TEST_F(ParallelPlan, RecordsEveryArgumentAndPrintsItself) {
  Config cfg;
  std::vector<std::string> names = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  auto p = parallel::plan(first(3), {}, randn({10, 5}), parallel::Broadcast(randn({1, 7})), parallel::Split(names),
                          parallel::Share(cfg), Tensor());
  using Kind = parallel::ArgumentPlan::Kind;
  ASSERT_EQ(p.arguments.size(), 5u);
  EXPECT_EQ(p.arguments[1].kind, Kind::kBroadcast);
  EXPECT_THAT(p.arguments[1].replica_shapes, ElementsAre(Shape{1, 7}, Shape{1, 7}, Shape{1, 7}));
  EXPECT_EQ(p.arguments[2].kind, Kind::kSplitList);
  EXPECT_THAT(p.arguments[2].replica_shapes, ElementsAre(Shape{4}, Shape{3}, Shape{3}));
  EXPECT_EQ(p.arguments[3].kind, Kind::kShare);
  EXPECT_EQ(p.arguments[4].kind, Kind::kUndefined);
  std::ostringstream os;
  os << p;
  EXPECT_EQ(os.str(),
            "parallel::Plan: batch 10 along dim 0, balanced over 3 devices\n"
            "  replica 0 on cpu:0: 4 samples [0, 4)\n"
            "  replica 1 on cpu:1: 3 samples [4, 7)\n"
            "  replica 2 on cpu:2: 3 samples [7, 10)\n"
            "  argument 0: split [10, 5] -> [4, 5], [3, 5], [3, 5]\n"
            "  argument 1: broadcast [1, 7] to every replica\n"
            "  argument 2: Split list of 10 items -> 4, 3, 3\n"
            "  argument 3: shared read-only\n"
            "  argument 4: undefined tensor, passed on undefined\n");
}

TEST_F(ParallelPlan, ComputesWithoutAllocatingAnything) {
  Tensor x = randn({64, 32});
  Tensor w = randn({32, 32});
  std::vector<int64_t> before;
  for (Device d : parallel::all_devices()) before.push_back(memory_stats(d).allocations);
  auto p = parallel::plan(parallel::all_devices(), {}, x, parallel::Broadcast(w));
  for (Device d : parallel::all_devices()) EXPECT_EQ(memory_stats(d).allocations, before[d.index()]) << d;
  EXPECT_EQ(p.replicas(), 8u);
}

TEST_F(ParallelPlan, SharedBatchOneInputIsAnErrorNamingBothSizesAndBroadcast) {
  // A batch-1 input shared by every sample: PyTorch's DataParallel zips 2 chunks of x1 with the single
  // chunk of x2 and silently returns half the batch.
  Tensor x1 = randn({4, 3, 8, 8});
  Tensor x2 = randn({1, 10, 20});
  std::string e = error_of([&] { parallel::plan(first(2), {}, x1, x2); });
  EXPECT_THAT(e, HasSubstr("parallel::plan: argument 1 of shape [1, 10, 20] has size 1 along dim 0, but the batch "
                           "is 4 (set by argument 0 of shape [4, 3, 8, 8])"));
  EXPECT_THAT(e, HasSubstr("hint: wrap it in parallel::Broadcast(x) if every replica should see all of it"));
  EXPECT_EQ(parallel::plan(first(2), {}, x1, parallel::Broadcast(x2)).batch, 4);
}

TEST_F(ParallelPlan, MismatchInsideContainersNamesThePath) {
  std::vector<std::map<std::string, Tensor>> items(3, {{"x", randn({6, 2})}, {"mask", randn({6})}});
  items[2]["mask"] = randn({5});
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, randn({6, 1}), items); }),
              HasSubstr("argument 1[2]['mask'] of shape [5] has size 5 along dim 0, but the batch is 6"));
  // Ragged per-sample items (one tensor per sample) as a plain list: the hint names Split as well.
  std::vector<Tensor> ragged = {randn({3}), randn({1}), randn({2})};
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, randn({3, 4}), ragged); }),
              HasSubstr("argument 1[1] of shape [1] has size 1 along dim 0, but the batch is 3 (set by argument 0 of "
                        "shape [3, 4]); hint: wrap it in parallel::Broadcast(x) if every replica should see all of it; "
                        "if its list holds one tensor per sample, wrap the list in parallel::Split(v)"));
  auto nested = std::make_tuple(randn({6}), std::vector<Tensor>{randn({6}), randn({2})});
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, nested); }), HasSubstr("argument 0[1][1] of shape [2]"));
}

TEST_F(ParallelPlan, ZeroDimAndMissingDimAreErrorsNamingBroadcast) {
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, randn({4, 2}), scalar_tensor(0.5)); }),
              HasSubstr("parallel::plan: argument 1 is a 0-d tensor, which has no dim 0 to split; hint: wrap it in "
                        "parallel::Broadcast(x) so every replica gets it"));
  EXPECT_EQ(parallel::plan(first(2), {}, randn({4, 2}), parallel::Broadcast(scalar_tensor(0.5))).replicas(), 2u);
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), parallel::ScatterOptions().dim(1), randn({4, 2}), randn({4})); }),
              HasSubstr("argument 1 of shape [4] has no dim 1 to split; hint: wrap it in parallel::Broadcast(x)"));
}

TEST_F(ParallelPlan, SplitListsMustHaveOneItemPerSampleAndSetTheBatchAlone) {
  std::vector<int64_t> lengths = {3, 1, 4};
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, randn({4, 2}), parallel::Split(lengths)); }),
              HasSubstr("parallel::plan: argument 1 is a parallel::Split list of 3 items, but the batch is 4 (set by "
                        "argument 0); hint: a Split list needs one item per sample"));
  auto p = parallel::plan(first(2), {}, parallel::Split(lengths), parallel::Split(std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(p.batch, 3);
  EXPECT_THAT(p.chunk_sizes, ElementsAre(2, 1));
}

TEST_F(ParallelPlan, NothingToSplitIsAnErrorButNoArgumentsRunOnce) {
  Config cfg;
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, parallel::Broadcast(randn({3})), parallel::Share(cfg)); }),
              HasSubstr("parallel::plan: nothing to split: no plain tensor and no parallel::Split list among the 2 "
                        "arguments, so every replica would compute the same thing; hint: pass the batch as a plain tensor"));
  // PyTorch runs a module without inputs once, on the first device; so does cohort.
  auto none = parallel::plan(first(4), {});
  EXPECT_THAT(none.devices, ElementsAre(Device("cpu:0")));
  EXPECT_THAT(none.chunk_sizes, ElementsAre(0));
  EXPECT_THAT(none.notes, ElementsAre("no arguments: running once on cpu:0"));
  auto empty = parallel::plan(first(4), {}, randn({0, 3}));
  EXPECT_THAT(empty.devices, ElementsAre(Device("cpu:0")));
  EXPECT_THAT(empty.notes, ElementsAre("batch 0: running once on cpu:0"));
}

TEST_F(ParallelPlan, DeviceListErrors) {
  Tensor x = randn({4});
  EXPECT_THAT(error_of([&] { parallel::plan({}, {}, x); }),
              HasSubstr("parallel::plan: the device list is empty; hint: pass at least one device"));
  EXPECT_THAT(error_of([&] { parallel::plan({"cpu:0", "cpu:9"}, {}, x); }),
              HasSubstr("parallel::plan: device cpu:9 does not exist (8 CPU devices)"));
  EXPECT_THROW(parallel::plan({"cpu:0", "cpu:9"}, {}, x), DeviceError);
  EXPECT_THAT(error_of([&] { parallel::plan({"cpu:0", "cpu:1", "cpu:0"}, {}, x); }),
              HasSubstr("parallel::plan: device cpu:0 is listed twice (positions 0 and 2); hint: each replica needs a "
                        "device of its own"));
}

TEST_F(ParallelPlan, AllDevicesFollowsTheDeviceCount) {
  EXPECT_EQ(parallel::all_devices().size(), 8u);
  EXPECT_EQ(parallel::all_devices().back(), Device("cpu:7"));
}
