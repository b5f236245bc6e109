// A kind of argument added from outside the library: one ArgRules specialisation (walk.h), and
// plan, scatter and gather take it, inside containers too, with the library's checks and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include <cohort/cohort.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

// A batch's inputs and targets, split at the same samples.
struct Example {
  Tensor input, target;
};

}  // namespace

namespace cohort::parallel::detail {

template <>
struct ArgRules<Example> {
  static constexpr bool known = true;
  using scattered = Example;
  static void collect(const Example& a, const std::string& path, bool broadcast, std::vector<Leaf>& out) {
    ArgRules<Tensor>::collect(a.input, path + ".input", broadcast, out);
    ArgRules<Tensor>::collect(a.target, path + ".target", broadcast, out);
  }
  static Example scatter(const Example& a, const ReplicaChunk& chunk) {
    return {ArgRules<Tensor>::scatter(a.input, chunk), ArgRules<Tensor>::scatter(a.target, chunk)};
  }
  static Example gather(const std::vector<Example>& parts, const std::string& path, Device device,
                        const GatherOptions& options) {
    std::vector<Tensor> inputs, targets;
    for (const Example& e : parts) inputs.push_back(e.input), targets.push_back(e.target);
    return {ArgRules<Tensor>::gather(inputs, path + ".input", device, options),
            ArgRules<Tensor>::gather(targets, path + ".target", device, options)};
  }
};

}  // namespace cohort::parallel::detail

namespace {

using ParallelWalk = cohort::testing::WithDevices<2>;

static_assert(std::is_same_v<parallel::scattered_t<std::vector<Example>>, std::vector<Example>>);

}  // namespace

TEST_F(ParallelWalk, ANewKindIsPlannedScatteredAndGathered) {
  Tensor x = arange(12, kFloat32).view({6, 2});
  Tensor y = arange(6, kFloat32);
  Tensor z = ones({6, 3});
  const std::tuple<Example> wrapped{Example{x, y}};
  auto p = parallel::plan(first(2), {}, wrapped, z);
  EXPECT_EQ(p.batch, 6);
  ASSERT_EQ(p.arguments.size(), 3u);
  EXPECT_EQ(p.arguments[0].path, "argument 0[0].input");
  EXPECT_EQ(p.arguments[1].path, "argument 0[0].target");
  EXPECT_EQ(p.arguments[2].path, "argument 1");

  auto inputs = parallel::scatter(p, wrapped, z);
  ASSERT_EQ(inputs.size(), 2u);
  const Example& second = std::get<0>(std::get<0>(inputs[1]));
  EXPECT_EQ(second.input.device(), Device(kCPU, 1));
  EXPECT_TRUE(second.input.equal(x.narrow(0, 3, 3).to(Device(kCPU, 1))));
  EXPECT_TRUE(second.target.equal(y.narrow(0, 3, 3).to(Device(kCPU, 1))));

  std::vector<Example> outputs{std::get<0>(std::get<0>(inputs[0])), second};
  Example joined = parallel::gather(outputs, Device(kCPU, 0), p);
  EXPECT_TRUE(joined.input.equal(x));
  EXPECT_TRUE(joined.target.equal(y));
}

TEST_F(ParallelWalk, ANewKindGetsThePlansMessages) {
  Tensor x = ones({6, 2});
  Tensor y = ones({5});
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, Example{x, y}); }),
              HasSubstr("parallel::plan: argument 0.target of shape [5] has size 5 along dim 0, but the batch is 6 "
                        "(set by argument 0.input of shape [6, 2])"));
}
