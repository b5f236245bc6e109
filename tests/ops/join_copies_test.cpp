// cat and stack copy contiguous parts of the output's dtype as blocks of bytes and anything else
// element by element (copy_parts in src/ops/join.cpp). These tests mix both kinds of part in one
// call, along the first, a middle and the last dim, and check every element against its source.
#include <gtest/gtest.h>

#include <vector>

#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"

namespace cohort::testing {
namespace {

// Parts of shape [2, k, 3] along dim 1: contiguous ones (copied as bytes) between a transposed
// one, one of another dtype, a slice with an offset into its storage and an empty one.
std::vector<Tensor> mixed_parts() {
  return {arange(6, kFloat32).reshape({2, 1, 3}),
          arange(12, kFloat32).add(100).reshape({2, 3, 2}).transpose(1, 2),
          arange(12, kFloat32).add(400).reshape({2, 2, 3}),
          arange(6, kInt64).add(200).reshape({2, 1, 3}),
          arange(18, kFloat32).add(300).reshape({2, 3, 3}).narrow(1, 1, 2),
          zeros({2, 0, 3}),
          arange(6, kFloat32).add(500).reshape({2, 1, 3})};
}

TEST(JoinCopies, CatMixesByteCopiesAndStridedCopiesAlongEveryDim) {
  const std::vector<Tensor> parts = mixed_parts();
  const Tensor out = cat(parts, 1);
  ASSERT_EQ(out.dtype(), kFloat32);
  ASSERT_EQ(out.sizes(), Shape({2, 9, 3}));
  int64_t start = 0;
  for (const Tensor& p : parts) {
    EXPECT_TRUE(out.narrow(1, start, p.size(1)).equal(p.to(kFloat32))) << "the part at " << start;
    start += p.size(1);
  }
  // The same parts moved to dim 0 and to the last dim, the contiguous ones still contiguous.
  for (int64_t dim : {0, 2}) {
    std::vector<Tensor> moved;
    for (const Tensor& p : parts)
      moved.push_back(p.is_contiguous() ? p.transpose(1, dim).contiguous() : p.transpose(1, dim));
    const Tensor o = cat(moved, dim);
    EXPECT_TRUE(o.equal(out.transpose(1, dim))) << "dim " << dim;
  }
}

TEST(JoinCopies, StackMixesByteCopiesAndStridedCopiesAlongEveryDim) {
  const std::vector<Tensor> parts = {arange(6, kFloat32).reshape({2, 3}),
                                     arange(6, kFloat32).add(10).reshape({3, 2}).t(),
                                     arange(6, kFloat32).add(40).reshape({2, 3}),
                                     arange(6, kInt32).add(20).reshape({2, 3}),
                                     arange(12, kFloat32).add(30).reshape({2, 6}).narrow(1, 2, 3),
                                     arange(6, kFloat32).add(50).reshape({2, 3})};
  for (int64_t dim : {0, 1, 2, -1}) {
    const Tensor out = stack(parts, dim);
    ASSERT_EQ(out.dtype(), kFloat32);
    ASSERT_EQ(out.dim(), 3);
    const int64_t d = dim < 0 ? dim + 3 : dim;
    for (size_t i = 0; i < parts.size(); ++i)
      EXPECT_TRUE(out.select(d, static_cast<int64_t>(i)).equal(parts[i].to(kFloat32))) << "dim " << dim << " part " << i;
  }
  // 0-d parts (a DataLoader's labels) and parts with no elements.
  EXPECT_TRUE(stack({tensor(int64_t{3}), tensor(int64_t{5})}).equal(tensor(std::vector<int64_t>{3, 5})));
  EXPECT_EQ(stack({zeros({0, 2}), zeros({0, 2})}, 1).sizes(), Shape({0, 2, 2}));
}

}  // namespace
}  // namespace cohort::testing
