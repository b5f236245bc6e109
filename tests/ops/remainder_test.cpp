// remainder's integer semantics and errors against PyTorch's (the op table checks the floats and the
// gradients): Python's modulo for negative operands, in-place, and the refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "support/error_of.h"

namespace cohort::testing {
namespace {

using ::testing::HasSubstr;

TEST(Remainder, IntegersTakeTheDivisorsSign) {
  // torch.remainder(torch.tensor([-7, -3, 0, 3, 7]), 5) and by -5.
  const Tensor a = tensor(std::vector<int64_t>{-7, -3, 0, 3, 7});
  EXPECT_TRUE((a % 5).equal(tensor(std::vector<int64_t>{3, 2, 0, 3, 2})));
  EXPECT_TRUE(remainder(a, -5).equal(tensor(std::vector<int64_t>{-2, -3, 0, -2, -3})));
  EXPECT_EQ((a % 5).dtype(), kInt64);
  EXPECT_EQ((tensor(std::vector<int32_t>{-1, 9}) % 4).dtype(), kInt32);
  EXPECT_TRUE((arange(6) % 4).equal(tensor(std::vector<int64_t>{0, 1, 2, 3, 0, 1})));
  Tensor b = tensor(std::vector<int64_t>{-4, 9});
  b.remainder_(3);
  EXPECT_TRUE(b.equal(tensor(std::vector<int64_t>{2, 0})));
  // An integer tensor by a float number is a float result, as in PyTorch.
  EXPECT_EQ((a % 2.5).dtype(), get_default_dtype());
}

TEST(Remainder, FloatsByZeroAreNaNIntegersAreAnError) {
  EXPECT_TRUE(std::isnan((tensor({1.0}) % 0.0).item<double>()));
  EXPECT_THAT(error_of([] { tensor(std::vector<int64_t>{1, 2}) % tensor(std::vector<int64_t>{1, 0}); }),
              HasSubstr("remainder: integer division by zero"));
  EXPECT_THAT(error_of([] { tensor({true, false}) % tensor({true, true}); }),
              HasSubstr("remainder: bool tensors are not supported"));
}

}  // namespace
}  // namespace cohort::testing
