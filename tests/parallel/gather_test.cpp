// parallel::gather: concatenation on the output device, nested outputs, the reduction of 0-d
// outputs (sample-weighted mean, sum, stack), gradients, and every mismatch error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <cohort/cohort.h>
#include <cohort/parallel/gather.h>
#include <cohort/parallel/scatter.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

// Eight virtual CPU devices, whatever the machine has.
using ParallelGather = cohort::testing::WithDevices<8>;

// One tensor per replica r, of the given shape, on cpu:r.
std::vector<Tensor> per_replica(const std::vector<Shape>& shapes, DType dtype = kFloat32) {
  std::vector<Tensor> out;
  for (size_t r = 0; r < shapes.size(); ++r)
    out.push_back(randn(shapes[r], TensorOptions(dtype).device(Device(kCPU, static_cast<int>(r)))));
  return out;
}

}  // namespace

TEST_F(ParallelGather, ConcatenatesAlongDimOnTheOutputDevice) {
  std::vector<Tensor> parts = per_replica({{4, 2}, {3, 2}, {3, 2}});
  Tensor y = parallel::gather(parts, "cpu:5");
  EXPECT_EQ(y.device(), Device("cpu:5"));
  EXPECT_TRUE(y.equal(cat({parts[0].to("cpu:5"), parts[1].to("cpu:5"), parts[2].to("cpu:5")})));
  std::vector<Tensor> columns = per_replica({{2, 1}, {2, 3}});
  EXPECT_EQ(parallel::gather(columns, "cpu:0", parallel::GatherOptions().dim(1)).sizes().vec(), (Shape{2, 4}));
}

TEST_F(ParallelGather, UndoesScatter) {
  Tensor x = randn({9, 2, 3});
  auto p = parallel::plan(parallel::all_devices(), parallel::ScatterOptions().dim(2), x);
  std::vector<Tensor> chunks;
  for (auto& [c] : parallel::scatter(p, x)) chunks.push_back(c);
  EXPECT_TRUE(parallel::gather(chunks, "cpu:0", p).equal(x));  // the plan's dim, 2
}

TEST_F(ParallelGather, NestedOutputsRecurse) {
  using Out = std::tuple<Tensor, std::vector<Tensor>, std::map<std::string, Tensor>>;
  std::vector<Out> outputs;
  for (int r = 0; r < 3; ++r) {
    auto on = TensorOptions().device(Device(kCPU, r));
    outputs.push_back({full({r + 1, 2}, r, on), {full({r + 1}, r, on), full({r + 1, 3}, r, on)},
                       {{"logits", full({r + 1, 5}, r, on)}, {"mask", ones({r + 1}, on)}}});
  }
  auto [a, list, named] = parallel::gather(outputs, "cpu:0");
  EXPECT_EQ(a.sizes().vec(), (Shape{6, 2}));
  EXPECT_EQ(list[1].sizes().vec(), (Shape{6, 3}));
  EXPECT_EQ(named.at("logits").sizes().vec(), (Shape{6, 5}));
  EXPECT_EQ(named.at("logits").device(), Device("cpu:0"));
  EXPECT_EQ(list[0][5].item<float>(), 2.0f);  // replica 2's rows come last
}

TEST_F(ParallelGather, ScalarMeanIsWeightedBySamplesAndEqualsTheFullBatchLoss) {
  // 10 samples on 3 devices: 4, 3, 3. Each replica averages its own chunk, as a loss in forward does.
  Tensor x = randn({10, 4}, kFloat64).requires_grad_();
  Tensor target = randn({10, 4}, kFloat64);
  auto loss_of = [](const Tensor& a, const Tensor& t) { return nn::functional::mse_loss(a, t); };
  Tensor full_loss = loss_of(x, target);
  full_loss.backward();
  Tensor want_grad = x.grad().clone();
  x.mutable_grad() = Tensor();

  auto p = parallel::plan(first(3), {}, x, target);
  std::vector<Tensor> losses;
  for (auto& [xs, ts] : parallel::scatter(p, x, target)) losses.push_back(loss_of(xs, ts));
  Tensor loss = parallel::gather(losses, "cpu:0", p);
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_NEAR(loss.item<double>(), full_loss.item<double>(), 1e-12);
  // The plain average of the replicas' losses (what PyTorch users compute) is not the batch loss.
  Tensor naive = parallel::gather(losses, "cpu:0", parallel::GatherOptions(p).scalars(parallel::kStack)).mean();
  EXPECT_GT(std::abs(naive.item<double>() - full_loss.item<double>()), 1e-6);
  loss.backward();
  EXPECT_TRUE(x.grad().allclose(want_grad, 1e-12, 1e-12));
}

TEST_F(ParallelGather, ScalarStackAndSum) {
  std::vector<Tensor> values;
  for (int r = 0; r < 3; ++r) values.push_back(scalar_tensor(r + 1.0, TensorOptions().device(Device(kCPU, r))));
  Tensor stacked = parallel::gather(values, "cpu:0", parallel::GatherOptions().scalars(parallel::kStack));
  EXPECT_TRUE(stacked.equal(tensor({1.0f, 2.0f, 3.0f})));  // PyTorch's vector of n values
  EXPECT_EQ(parallel::gather(values, "cpu:0", parallel::GatherOptions().scalars(kSum)).item<float>(), 6.0f);
  std::vector<Tensor> counts;
  for (int r = 0; r < 3; ++r)
    counts.push_back(scalar_tensor(int64_t{r}, TensorOptions(kInt64).device(Device(kCPU, r))));
  EXPECT_EQ(parallel::gather(counts, "cpu:0", parallel::GatherOptions().scalars(kSum)).item<int64_t>(), 3);
  EXPECT_THAT(error_of([&] { parallel::gather(counts, "cpu:0", parallel::GatherOptions().chunk_sizes({1, 1, 1})); }),
              HasSubstr("parallel::gather: output is a 0-d int64 tensor, which has no sample-weighted mean; hint: "
                        "GatherOptions(plan).scalars(kSum)"));
}

TEST_F(ParallelGather, ScalarMeanNeedsTheChunkSizes) {
  std::vector<Tensor> values = per_replica({{}, {}});
  EXPECT_THAT(error_of([&] { parallel::gather(values, "cpu:0"); }),
              HasSubstr("parallel::gather: output is 0-d (a value computed inside forward, like a loss); its "
                        "sample-weighted mean needs the number of samples of each of the 2 replicas, got 0 chunk "
                        "sizes; hint: gather(outputs, device, plan)"));
  EXPECT_THAT(error_of([&] { parallel::gather(values, "cpu:0", parallel::GatherOptions().chunk_sizes({0, 0})); }),
              HasSubstr("parallel::gather: the chunk sizes [0, 0] hold no samples to average over"));
  Tensor mean = parallel::gather(values, "cpu:0", parallel::GatherOptions().chunk_sizes({3, 1}));
  EXPECT_NEAR(mean.item<float>(), 0.75f * values[0].item<float>() + 0.25f * values[1].item<float>(), 1e-6);
}

TEST_F(ParallelGather, GradientsReachEveryReplicaOnItsDevice) {
  std::vector<Tensor> parts = per_replica({{2, 3}, {1, 3}});
  for (Tensor& t : parts) t.requires_grad_();
  (parallel::gather(parts, "cpu:1") * 3).sum().backward();
  for (const Tensor& t : parts) {
    EXPECT_EQ(t.grad().device(), t.device());
    EXPECT_TRUE(t.grad().equal(full_like(t, 3)));
  }
}

TEST_F(ParallelGather, UndefinedOutputsStayUndefined) {
  std::vector<std::tuple<Tensor, Tensor>> outputs = {{randn({1}), Tensor()}, {randn({2}), Tensor()}};
  auto [a, none] = parallel::gather(outputs, "cpu:0");
  EXPECT_EQ(a.size(0), 3);
  EXPECT_FALSE(none.defined());
}

TEST_F(ParallelGather, MismatchedReplicasAreErrorsNamingTheReplica) {
  std::vector<Tensor> shapes = per_replica({{2, 3}, {2, 3}, {2, 4}});
  EXPECT_THAT(error_of([&] { parallel::gather(shapes, "cpu:0"); }),
              HasSubstr("parallel::gather: replica 2 (cpu:2)'s output has shape [2, 4] but replica 0's has [2, 3]; "
                        "the replicas' outputs may differ only along dim 0"));
  std::vector<Tensor> ranks = {randn({2, 3}), randn({3})};
  EXPECT_THAT(error_of([&] { parallel::gather(ranks, "cpu:0"); }),
              HasSubstr("replica 1 (cpu:0)'s output has shape [3] but replica 0's has [2, 3] (1 dims against 2)"));
  std::vector<Tensor> dtypes = {randn({2}), randn({2}, kFloat64)};
  EXPECT_THAT(error_of([&] { parallel::gather(dtypes, "cpu:0"); }),
              HasSubstr("replica 1 (cpu:0)'s output is float64 but replica 0's is float32"));
  std::vector<Tensor> defined = {randn({2}), Tensor()};
  EXPECT_THAT(error_of([&] { parallel::gather(defined, "cpu:0"); }),
              HasSubstr("replica 1's output is undefined but replica 0's is a tensor"));
  std::vector<std::vector<Tensor>> lengths = {{randn({1}), randn({1})}, {randn({1})}};
  EXPECT_THAT(error_of([&] { parallel::gather(lengths, "cpu:0"); }),
              HasSubstr("parallel::gather: replica 1's output has 1 elements but replica 0's has 2"));
  std::vector<std::map<std::string, Tensor>> keys = {{{"a", randn({1})}, {"b", randn({1})}},
                                                     {{"a", randn({1})}, {"c", randn({1})}}};
  EXPECT_THAT(error_of([&] { parallel::gather(keys, "cpu:0"); }),
              HasSubstr("parallel::gather: replica 1's output has keys ['a', 'c'] but replica 0's has ['a', 'b']"));
  std::vector<std::tuple<Tensor, std::vector<Tensor>>> deep = {{randn({1}), {randn({1, 2})}},
                                                               {randn({1}), {randn({1, 5})}}};
  EXPECT_THAT(error_of([&] { parallel::gather(deep, "cpu:0"); }), HasSubstr("'s output[1][0] has shape [1, 5]"));
}

TEST_F(ParallelGather, ListAndDeviceErrors) {
  std::vector<Tensor> parts = per_replica({{2}, {2}});
  EXPECT_THAT(error_of([&] { parallel::gather(std::vector<Tensor>{}, "cpu:0"); }),
              HasSubstr("parallel::gather: there are no outputs to gather"));
  EXPECT_THAT(error_of([&] { parallel::gather(parts, "cpu:8"); }), HasSubstr("parallel::gather: device cpu:8 does not exist"));
  auto p = parallel::plan(first(3), {}, randn({3}));
  EXPECT_THAT(error_of([&] { parallel::gather(parts, "cpu:0", p); }),
              HasSubstr("parallel::gather: got 2 replica outputs but the plan has 3 replicas"));
  EXPECT_THAT(error_of([&] { parallel::gather(parts, "cpu:0", parallel::GatherOptions().dim(1)); }),
              HasSubstr("parallel::gather: output of shape [2] has no dim 1 to concatenate along"));
}
