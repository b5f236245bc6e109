// Core tensor behaviour: factories, dtypes and promotion, views sharing storage, from_blob,
// devices, memory statistics, and the messages of common misuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"

#include <cohort/cohort.h>

using namespace cohort;
using cohort::testing::error_of;
using indexing::Slice;
using ::testing::HasSubstr;

TEST(Tensor, FactoriesHaveTheRequestedShapeDtypeAndValues) {
  EXPECT_EQ(empty({5, 3}).sizes(), IntArrayRef({5, 3}));
  EXPECT_EQ(zeros({5, 3}, kLong).dtype(), kInt64);
  EXPECT_EQ(zeros({2}).sum().item<float>(), 0.0f);
  EXPECT_EQ(ones({2, 2}, kFloat64).sum().item<double>(), 4.0);
  EXPECT_EQ(full({3}, 7).dtype(), kInt64);
  EXPECT_EQ(full({3}, 7.5).dtype(), kFloat32);
  EXPECT_TRUE(arange(5).equal(tensor({0, 1, 2, 3, 4})));
  EXPECT_EQ(arange(5).dtype(), kInt64);
  EXPECT_EQ(arange(0, 1, 0.25).numel(), 4);
  EXPECT_EQ(arange(0, 1, 0.25).dtype(), kFloat32);
  EXPECT_TRUE(linspace(0, 1, 5).allclose(tensor({0.0, 0.25, 0.5, 0.75, 1.0}, kFloat32)));
  EXPECT_TRUE(eye(3).sum().item<float>() == 3.0f);
  EXPECT_EQ(tensor({5.5, 3.0}).dtype(), kFloat32);
  EXPECT_EQ(tensor({{1, 2}, {3, 4}}).sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  EXPECT_EQ(scalar_tensor(2.5).dim(), 0);
}

TEST(Tensor, RandomTensorsFollowTheSeed) {
  manual_seed(7);
  Tensor a = randn({100});
  manual_seed(7);
  Tensor b = randn({100});
  EXPECT_TRUE(a.equal(b));
  Tensor u = rand({10000});
  EXPECT_GE(u.min().item<float>(), 0.0f);
  EXPECT_LT(u.max().item<float>(), 1.0f);
  EXPECT_NEAR(u.mean().item<float>(), 0.5, 0.02);
  Tensor n = randn({20000}, kFloat64);
  EXPECT_NEAR(n.mean().item<double>(), 0.0, 0.03);
  EXPECT_NEAR(n.std().item<double>(), 1.0, 0.03);
  Tensor r = randint(3, 6, {1000});
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.min().item<int64_t>(), 3);
  EXPECT_EQ(r.max().item<int64_t>(), 5);
  Tensor p = randperm(10);
  EXPECT_TRUE(std::get<0>(p.to(kFloat64).max(0)).item<double>() == 9);
  EXPECT_EQ(p.sum().item<int64_t>(), 45);
}

TEST(Tensor, LikeAndNewFactoriesInheritOptions) {
  Tensor x = ones({5, 3}, kFloat64);
  Tensor y = x.new_ones({2, 2});
  EXPECT_EQ(y.dtype(), kFloat64);
  EXPECT_EQ(randn_like(x, kFloat32).dtype(), kFloat32);
  EXPECT_EQ(zeros_like(x).sizes(), x.sizes());
  EXPECT_EQ(x.new_zeros({4}, kInt32).dtype(), kInt32);
}

TEST(Tensor, TypePromotionFollowsPyTorch) {
  Tensor i32 = ones({2}, kInt32), i64 = ones({2}, kInt64), u8 = ones({2}, kUInt8), b = ones({2}, kBool);
  Tensor f32 = ones({2}, kFloat32), f64 = ones({2}, kFloat64);
  EXPECT_EQ((i32 + 2).dtype(), kInt32);
  EXPECT_EQ((i32 + 2.5).dtype(), kFloat32);
  EXPECT_EQ((u8 + i64).dtype(), kInt64);
  EXPECT_EQ((b + b).dtype(), kBool);
  EXPECT_EQ((i64 / i64).dtype(), kFloat32);
  EXPECT_EQ((f32 + scalar_tensor(1.0, kFloat64)).dtype(), kFloat32);
  EXPECT_EQ((i64 + scalar_tensor(1.0, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((f32 + f64).dtype(), kFloat64);
  EXPECT_EQ((b + 1).dtype(), kInt64);
  EXPECT_EQ((f32 > 0).dtype(), kBool);
  EXPECT_EQ(i32.sum().dtype(), kInt64);
  EXPECT_THAT(error_of([&] { i64.add_(1.5); }), HasSubstr("result type float32 can't be cast to the desired output type int64"));
  EXPECT_THAT(error_of([&] { b - b; }), HasSubstr("subtraction of bool tensors"));
}

TEST(Tensor, IntegerArithmeticWrapsLikePyTorch) {
  Tensor big = full({1}, int64_t{9223372036854775807LL}, kInt64);
  EXPECT_EQ((big + 1).item<int64_t>(), std::numeric_limits<int64_t>::min());
  Tensor u = full({1}, 250, kUInt8);
  EXPECT_EQ((u + 10).item<int64_t>(), 4);
}

TEST(Tensor, ViewsShareStorage) {
  Tensor x = zeros({4, 4});
  Tensor row = x[1];
  row.fill_(1);
  EXPECT_EQ(x.sum().item<float>(), 4.0f);
  Tensor col = x.index({Slice(), 2});
  col.fill_(2);
  EXPECT_EQ(x.index({0, 2}).item<float>(), 2.0f);
  EXPECT_FALSE(col.is_contiguous());
  Tensor t = x.t();
  EXPECT_EQ(t.stride(0), 1);
  Tensor v = x.view({-1, 8});
  EXPECT_EQ(v.sizes(), IntArrayRef({2, 8}));
  v.zero_();
  EXPECT_EQ(x.sum().item<float>(), 0.0f);
  Tensor e = ones({3}).expand({2, 3});
  EXPECT_EQ(e.stride(0), 0);
  EXPECT_EQ(x.narrow(1, 1, 2).sizes(), IntArrayRef({4, 2}));
  EXPECT_EQ(x.unsqueeze(0).sizes(), IntArrayRef({1, 4, 4}));
  EXPECT_EQ(x.unsqueeze(0).squeeze().sizes(), IntArrayRef({4, 4}));
  EXPECT_EQ(x.reshape({2, 2, 4}).flatten(1).sizes(), IntArrayRef({2, 8}));
  EXPECT_EQ(x.permute({1, 0}).stride(1), 4);
}

TEST(Tensor, IndexingWithSlicesNoneEllipsisAndTensors) {
  Tensor x = arange(24).view({2, 3, 4});
  EXPECT_EQ(x.index({"...", 1}).sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(x.index({indexing::None}).sizes(), IntArrayRef({1, 2, 3, 4}));
  EXPECT_EQ(x.index({1, Slice(0, 2), Slice(indexing::None, indexing::None, 2)}).sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(x.index({1, 2, 3}).item<int64_t>(), 23);
  EXPECT_EQ(x.index({-1, -1, -1}).item<int64_t>(), 23);
  Tensor picked = x.index({Slice(), tensor({2, 0})});
  EXPECT_EQ(picked.sizes(), IntArrayRef({2, 2, 4}));
  EXPECT_EQ(picked.index({0, 0, 0}).item<int64_t>(), 8);
  Tensor flat = arange(6);
  EXPECT_TRUE(flat.index({flat > 3}).equal(tensor({4, 5})));
  Tensor y = zeros({3, 3});
  y.index_put_({Slice(), 1}, 5.0);
  EXPECT_EQ(y.sum().item<float>(), 15.0f);
  y.index_put_({tensor({0, 2})}, ones({3}));
  EXPECT_EQ(y.sum().item<float>(), 11.0f);  // rows 0 and 2 are ones, row 1 keeps its 5
  EXPECT_THAT(error_of([&] { x.index({0, 0, 0, 0}); }), HasSubstr("too many indices for tensor of dimension 3"));
  EXPECT_THAT(error_of([&] { x.index({5}); }), HasSubstr("index 5 is out of bounds for dimension 0 with size 2"));
}

// Several tensor indices in one index, as libtorch takes them: writes land where reads come from,
// the last write to a position repeated wins, and a value that does not fit is named.
TEST(Tensor, IndexPutWithSeveralTensorIndices) {
  Tensor x = zeros({2, 3, 4});
  x.index_put_({Slice(), tensor({0, 2}), tensor({1, -1})}, tensor({{1.0f, 2.0f}, {3.0f, 4.0f}}));
  EXPECT_EQ(x.index({Slice(), tensor({0, 2}), tensor({1, 3})}).sum().item<float>(), 10.0f);
  EXPECT_EQ(x.sum().item<float>(), 10.0f);
  Tensor y = zeros({2, 3, 4});
  y.index_put_({tensor({1, 0}), Slice(), tensor({3, 0})}, tensor({5.0f, 6.0f, 7.0f}));  // apart: [2, 3]
  EXPECT_TRUE(equal(y.index({tensor({1, 0}), Slice(), tensor({3, 0})}), tensor({5.0f, 6.0f, 7.0f}).expand({2, 3})));
  Tensor z = zeros({3});
  z.index_put_({tensor({1, 1})}, tensor({4.0f, 9.0f}));
  EXPECT_EQ(z[1].item<float>(), 9.0f);
  Tensor w = zeros({2, 3});
  w.index_put_({tensor({0, 1}), tensor({2, 2})}, 1.0);
  EXPECT_EQ(w.sum().item<float>(), 2.0f);
  EXPECT_THAT(error_of([&] { w.index_put_({tensor({0, 1}), tensor({0, 1})}, ones({3})); }),
              HasSubstr("index_put_: shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result "
                        "of shape [2]"));
  EXPECT_THAT(error_of([&] { (void)w.index({tensor({0, 1}), tensor({0, 1, 2})}); }),
              HasSubstr("index: the index tensors cannot be broadcast together: shapes [2], [3]"));
  EXPECT_THAT(error_of([&] { (void)w.index({tensor({0, -3}), tensor({0, 1})}); }),
              HasSubstr("index: index -3 is out of bounds for dimension 0 with size 2"));
}

TEST(Tensor, FromBlobSharesMemoryBothWays) {
  std::vector<float> data(5, 1.0f);
  Tensor a = from_blob(data.data(), {5});
  a.add_(1);
  EXPECT_EQ(data[0], 2.0f);
  data[4] = 10.0f;
  EXPECT_EQ(a[4].item<float>(), 10.0f);
  bool freed = false;
  {
    Tensor owned = from_blob(data.data(), {5}, [&](void*) { freed = true; });
  }
  EXPECT_TRUE(freed);
}

TEST(Tensor, SplittingAndJoining) {
  Tensor x = arange(10);
  auto chunks = x.chunk(3);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].numel(), 4);
  EXPECT_EQ(chunks[2].numel(), 2);
  EXPECT_EQ(x.split(4).size(), 3u);
  EXPECT_TRUE(cat(chunks).equal(x));
  EXPECT_EQ(stack({x, x}, 1).sizes(), IntArrayRef({10, 2}));
  EXPECT_TRUE(tensor({1, 2}).repeat({2, 2}).equal(tensor({{1, 2, 1, 2}, {1, 2, 1, 2}})));
  EXPECT_THAT(error_of([] { cat({ones({2, 3}), ones({2, 4})}); }),
              HasSubstr("Expected size 3 but got size 4 for tensor number 1"));
}

TEST(Tensor, ConversionsAndCopies) {
  Tensor x = tensor({1.7, -2.2});
  EXPECT_TRUE(x.to(kInt64).equal(tensor({1, -2})));
  Tensor c = x.clone();
  c.fill_(0);
  EXPECT_EQ(x[0].item<float>(), 1.7f);
  Tensor dst = zeros({2, 2});
  dst.copy_(tensor({1.0, 2.0}));
  EXPECT_EQ(dst.sum().item<float>(), 6.0f);
  EXPECT_EQ(x.to(x.dtype()).unsafe_impl(), x.unsafe_impl());  // no-op conversions don't copy
}

TEST(Tensor, ErrorMessagesNameTheOpAndTheShapes) {
  EXPECT_THAT(error_of([] { ones({2, 3}) + ones({4, 5}); }), HasSubstr("add: cannot broadcast [2, 3] with [4, 5]"));
  EXPECT_THAT(error_of([] { ones({2, 3}).view({4}); }), HasSubstr("view: shape [4] is invalid for input of size 6"));
  EXPECT_THAT(error_of([] { ones({2, 3}).t().view({6}); }), HasSubstr("use .reshape(...) instead"));
  EXPECT_THAT(error_of([] { ones({2, 3}).item<float>(); }), HasSubstr("a Tensor with 6 elements cannot be converted"));
  EXPECT_THAT(error_of([] { mm(ones({2, 3}), ones({4, 5})); }),
              HasSubstr("mm: cannot multiply [2, 3] by [4, 5] (inner dimensions 3 and 4 differ)"));
  EXPECT_THAT(error_of([] { ones({2}).size(3); }), HasSubstr("dimension out of range"));
  EXPECT_THAT(error_of([] { Tensor().sum(); }), HasSubstr("undefined"));
  EXPECT_THAT(error_of([] { ones({2}).data_ptr<double>(); }), HasSubstr("holds float32"));
  EXPECT_THAT(error_of([] { Device("gpu:0"); }), HasSubstr("expected \"cpu\" or \"cpu:<index>\""));
  EXPECT_THAT(error_of([] { ones({2}).to(Device("cpu:4095")); }), HasSubstr("device cpu:4095 does not exist"));
  EXPECT_THAT(error_of([] { ones({2}, requires_grad()).to(kInt64).requires_grad_(); }),
              HasSubstr("only floating-point tensors can require gradients"));
}

TEST(Tensor, AbsurdAllocationsAreErrorsNotAborts) {
  EXPECT_THROW(empty({int64_t{1} << 40, int64_t{1} << 40}), OutOfMemoryError);
  EXPECT_THROW(empty({int64_t{1} << 50}), OutOfMemoryError);
  EXPECT_THAT(error_of([] { empty({-1}); }), HasSubstr("sizes must be non-negative"));
}

TEST(Tensor, DevicesAndMemoryStatistics) {
  set_device_count(std::max(2, device_count()));
  EXPECT_EQ(Device("cpu"), Device(kCPU, 0));
  EXPECT_EQ(Device("cpu:1").index(), 1);
  Device d1("cpu:1");
  int64_t before = memory_stats(d1).allocated_bytes;
  {
    Tensor x = ones({1000}, TensorOptions(kFloat32).device(d1));
    EXPECT_EQ(x.device(), d1);
    EXPECT_EQ(memory_stats(d1).allocated_bytes, before + 4000);
    Tensor y = x.to(Device("cpu:0"));
    EXPECT_EQ(y.device(), Device("cpu:0"));
    EXPECT_THAT(error_of([&] { x + y; }), HasSubstr("expected all tensors on one device, got cpu:1 and cpu:0"));
  }
  EXPECT_EQ(memory_stats(d1).allocated_bytes, before);
  EXPECT_GE(memory_stats(d1).peak_bytes, before + 4000);
}

TEST(Tensor, ReductionsWithDimsAndKeepdim) {
  Tensor x = arange(6, kFloat32).view({2, 3});
  EXPECT_TRUE(x.sum(1).equal(tensor({3.0, 12.0}, kFloat32)));
  EXPECT_EQ(x.sum({0, 1}, true).sizes(), IntArrayRef({1, 1}));
  EXPECT_TRUE(x.mean(0).allclose(tensor({1.5, 2.5, 3.5}, kFloat32)));
  auto [values, indices] = x.max(1);
  EXPECT_TRUE(values.equal(tensor({2.0, 5.0}, kFloat32)));
  EXPECT_TRUE(indices.equal(tensor({2, 2})));
  EXPECT_EQ(x.argmax().item<int64_t>(), 5);
  EXPECT_NEAR(x.var().item<float>(), 3.5, 1e-6);
  EXPECT_NEAR(x.norm().item<float>(), std::sqrt(55.0), 1e-5);
  EXPECT_THAT(error_of([&] { x.sum(2); }), HasSubstr("dimension out of range (expected to be in range of [-2, 1], but got 2)"));
  EXPECT_THAT(error_of([&] { zeros({0}).max(); }), HasSubstr("dim 0 of size 0"));
}
