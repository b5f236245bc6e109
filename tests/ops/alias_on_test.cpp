// alias_on: a tensor's memory seen from another CPU device (Note [Storage aliases]).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>
#include <cohort/ops/copy.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

using AliasOn = cohort::testing::WithDevices<3>;

TEST_F(AliasOn, SeesTheSameBytesAsATensorOfTheOtherDevice) {
  Tensor x = arange(12, kFloat32).reshape({3, 4}).t();  // strided, to keep the layout
  Tensor a = alias_on(x, "cpu:1");
  EXPECT_EQ(a.device(), Device("cpu:1"));
  EXPECT_EQ(a.data_ptr(), x.data_ptr());
  EXPECT_EQ(a.sizes(), x.sizes());
  EXPECT_EQ(a.strides(), x.strides());
  EXPECT_FALSE(a.requires_grad());
  // A write through either is a write to both, counted on one version counter.
  const uint32_t before = x._version();
  a.add_(1.0);
  EXPECT_TRUE(equal(x, arange(12, kFloat32).reshape({3, 4}).t() + 1));
  EXPECT_EQ(x._version(), before + 1);
  x.mul_(2.0);
  EXPECT_EQ(a._version(), x._version());
  // Ops on the alias run on its device.
  EXPECT_EQ((a * 3).device(), Device("cpu:1"));
}

TEST_F(AliasOn, CostsTheOtherDeviceNoMemory) {
  Tensor x = zeros({1024, 1024});
  const int64_t before = memory_stats("cpu:2").allocated_bytes;
  Tensor a = alias_on(x, "cpu:2");
  EXPECT_EQ(memory_stats("cpu:2").allocated_bytes, before);
  // The alias keeps the bytes alive after the original is gone.
  const void* bytes = x.data_ptr();
  x = Tensor();
  EXPECT_EQ(a.data_ptr(), bytes);
  EXPECT_EQ(a.sum().item<float>(), 0.0f);
}

TEST_F(AliasOn, AnAliasOfAnAliasPointsAtTheOwner) {
  Tensor x = randn({5});
  Tensor on1 = alias_on(x, "cpu:1");
  Tensor on2 = alias_on(on1, "cpu:2");
  EXPECT_EQ(on2.unsafe_impl()->storage()->alias_base(), x.unsafe_impl()->storage());
  // Back on the owner's device: the owner's own storage, no alias.
  Tensor back = alias_on(on2, "cpu:0");
  EXPECT_EQ(back.unsafe_impl()->storage(), x.unsafe_impl()->storage());
  EXPECT_TRUE(alias_on(x, "cpu:0").is_same(x));
}

TEST_F(AliasOn, ErrorsNameTheOp) {
  EXPECT_THAT(error_of([] { alias_on(Tensor(), "cpu:1"); }), HasSubstr("alias_on"));
  EXPECT_THAT(error_of([] { alias_on(ones({2}), "cpu:7"); }), HasSubstr("cpu:7"));
}

}  // namespace
