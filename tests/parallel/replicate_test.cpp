// replicate and ReplicaSync: deep copies on each device; replicas read the master's parameters
// without copies and copy buffers only when they changed; gradients of every replica summed into
// the master's.
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

TEST_F(Replicate, ReplicasReadTheMastersParametersWithoutCopiesAndLinkGradients) {
  auto fc = std::make_shared<nn::LinearImpl>(3, 2);
  auto replicas = parallel::replicate(fc, {"cpu:0", "cpu:1"});
  parallel::ReplicaSync sync(fc, {replicas[0], replicas[1]});
  sync.synchronize({0, 1});
  // Replica 0 shares the master's storage; replica 1 reads the same bytes as a tensor of cpu:1.
  EXPECT_EQ(replicas[0]->weight.unsafe_impl()->storage(), fc->weight.unsafe_impl()->storage());
  EXPECT_EQ(replicas[1]->weight.device(), Device("cpu:1"));
  EXPECT_EQ(replicas[1]->weight.data_ptr(), fc->weight.data_ptr());
  EXPECT_EQ(replicas[1]->bias.data_ptr(), fc->bias.data_ptr());
  {
    NoGradGuard g;
    fc->weight.add_(1.0);  // an optimizer step: the replicas see it without a copy
  }
  sync.synchronize({0, 1});
  EXPECT_EQ(replicas[1]->weight.data_ptr(), fc->weight.data_ptr());
  EXPECT_TRUE(equal(replicas[1]->weight.to("cpu:0"), fc->weight));
  EXPECT_EQ(sync.stats().buffers_copied, 0);
  EXPECT_EQ(sync.stats().bytes_copied, 0);
  fc->to(kFloat64);  // a master given new memory gets a new alias
  sync.synchronize({0, 1});
  EXPECT_EQ(replicas[1]->weight.dtype(), kFloat64);
  EXPECT_EQ(replicas[1]->weight.data_ptr(), fc->weight.data_ptr());
  fc->to(kFloat32);
  sync.synchronize({0, 1});

  Tensor x = randn({4, 3});
  Tensor y = replicas[0]->forward(x.narrow(0, 0, 2)).sum() + replicas[1]->forward(x.narrow(0, 2, 2).to("cpu:1")).sum().to("cpu:0");
  y.backward();
  Tensor expected = ones({2, 4}).matmul(x);  // d sum(x W^T) / dW
  EXPECT_TRUE(allclose(fc->weight.grad(), expected, 1e-5, 1e-5));
  EXPECT_FALSE(replicas[1]->weight.grad().defined());
}

// A replica reads the master's bytes, so a write to the master after a replica's forward must make
// that replica's backward fail as it would on one device, not compute with the new values.
TEST_F(Replicate, AnInPlaceWriteToTheMasterAfterForwardFailsTheReplicasBackward) {
  auto fc = std::make_shared<nn::LinearImpl>(3, 2);
  auto replicas = parallel::replicate(fc, {"cpu:0", "cpu:1"});
  parallel::ReplicaSync sync(fc, {replicas[0], replicas[1]});
  sync.synchronize({0, 1});
  Tensor x = randn({2, 3}, TensorOptions().device("cpu:1").requires_grad(true));
  Tensor y = replicas[1]->forward(x).sum();  // saves the weight for x's gradient
  {
    NoGradGuard g;
    fc->weight.mul_(2.0);
  }
  EXPECT_THAT(error_of([&] { y.backward(); }), HasSubstr("modified by an in-place operation"));
}

// Buffers are each replica's own and are copied only when they changed.
TEST_F(Replicate, BuffersAreCopiedOnlyWhenTheyChanged) {
  auto bn = std::make_shared<nn::BatchNorm1dImpl>(4);
  auto replicas = parallel::replicate(bn, {"cpu:0", "cpu:1"});
  parallel::ReplicaSync sync(bn, {replicas[0], replicas[1]});
  sync.synchronize({0, 1});
  const int64_t first = sync.stats().buffers_copied;
  EXPECT_EQ(first, 6);  // running_mean, running_var and num_batches_tracked into both replicas
  EXPECT_NE(replicas[1]->running_mean.data_ptr(), bn->running_mean.data_ptr());
  sync.synchronize({0, 1});
  EXPECT_EQ(sync.stats().buffers_copied, first);  // nothing changed
  {
    NoGradGuard g;
    bn->running_mean.add_(1.0);
  }
  sync.synchronize({0, 1});
  EXPECT_EQ(sync.stats().buffers_copied, first + 2);  // running_mean, into both replicas
  EXPECT_TRUE(equal(replicas[1]->running_mean.to("cpu:0"), bn->running_mean));
}

}  // namespace
