// replicate and ReplicaSync: deep copies on each device, copies only of what changed, gradients
// of every replica summed into the master's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>
#include <cohort/parallel/data_parallel.h>
#include <cohort/parallel/replicate.h>

#include "support/error_of.h"
#include "support/devices.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

using Replicate = cohort::testing::WithDevices<2>;

TEST_F(Replicate, CopiesOnEachDevice) {
  auto fc = std::make_shared<nn::LinearImpl>(3, 2);
  auto replicas = parallel::replicate(fc, {"cpu:0", "cpu:1"});
  ASSERT_EQ(replicas.size(), 2u);
  EXPECT_EQ(replicas[1]->weight.device(), Device("cpu:1"));
  EXPECT_TRUE(allclose(replicas[1]->weight.to("cpu:0"), fc->weight));
  EXPECT_NE(replicas[0]->weight.unsafe_impl(), fc->weight.unsafe_impl());
  EXPECT_THAT(error_of([&] { parallel::replicate(fc, {"cpu:5"}); }), HasSubstr("cpu:5 does not exist"));
}

// A float64 module replicates as float64 (reset() creates default-dtype tensors; the clone takes the
// source's dtypes before its values), and an int64 buffer stays int64.
struct Float64Net : nn::Cloneable<Float64Net> {
  Float64Net() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(3, 2));
    bn = register_module("bn", nn::BatchNorm1d(2));
  }
  Tensor forward(const Tensor& x) { return bn(fc(x)); }
  nn::Linear fc{nullptr};
  nn::BatchNorm1d bn{nullptr};
};

TEST_F(Replicate, AFloat64ModuleReplicatesAsFloat64) {
  auto net = std::make_shared<Float64Net>();
  net->to(kFloat64);
  auto clone = std::dynamic_pointer_cast<Float64Net>(net->clone());
  EXPECT_EQ(clone->fc->weight.dtype(), kFloat64);
  EXPECT_TRUE(equal(clone->fc->weight, net->fc->weight));
  auto replicas = parallel::replicate(net, {"cpu:0", "cpu:1"});
  for (const auto& r : replicas) {
    EXPECT_EQ(r->fc->weight.dtype(), kFloat64);
    EXPECT_EQ(r->bn->running_var.dtype(), kFloat64);
    EXPECT_EQ(r->bn->num_batches_tracked.dtype(), kInt64);
    EXPECT_TRUE(equal(r->fc->weight.to("cpu:0"), net->fc->weight));
  }
  nn::DataParallel<Float64Net> dp(net, {"cpu:0", "cpu:1"});
  Tensor x = randn({6, 3}, kFloat64);
  Tensor y = dp.forward(x);
  EXPECT_EQ(y.dtype(), kFloat64);
  y.sum().backward();
  EXPECT_EQ(net->fc->weight.grad().dtype(), kFloat64);
}

TEST_F(Replicate, SyncCopiesOnlyWhatChangedAndLinksGradients) {
  auto fc = std::make_shared<nn::LinearImpl>(3, 2);
  auto replicas = parallel::replicate(fc, {"cpu:0", "cpu:1"});
  parallel::ReplicaSync sync(fc, {replicas[0], replicas[1]});
  sync.synchronize({0, 1});
  EXPECT_EQ(sync.stats().parameters_copied, 2);  // replica 1's weight and bias; replica 0 shares memory
  EXPECT_EQ(replicas[0]->weight.unsafe_impl()->storage(), fc->weight.unsafe_impl()->storage());
  sync.synchronize({0, 1});
  EXPECT_EQ(sync.stats().parameters_copied, 2);  // nothing changed
  {
    NoGradGuard g;
    fc->weight.add_(1.0);
  }
  sync.synchronize({0, 1});
  EXPECT_EQ(sync.stats().parameters_copied, 3);  // the weight only
  EXPECT_TRUE(allclose(replicas[1]->weight.to("cpu:0"), fc->weight));

  Tensor x = randn({4, 3});
  Tensor y = replicas[0]->forward(x.narrow(0, 0, 2)).sum() + replicas[1]->forward(x.narrow(0, 2, 2).to("cpu:1")).sum().to("cpu:0");
  y.backward();
  Tensor expected = ones({2, 4}).matmul(x);  // d sum(x W^T) / dW
  EXPECT_TRUE(allclose(fc->weight.grad(), expected, 1e-5, 1e-5));
  EXPECT_FALSE(replicas[1]->weight.grad().defined());
}

}  // namespace
