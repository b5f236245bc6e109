// sgd_step_: the fused loop (contiguous parameters) against the composed in-place ops (the same values
// laid out non-contiguously), bit for bit over several steps and every combination of options; and
// its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cohort/core/generator.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/optimizer_step.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using testing::error_of;

struct Options {
  double momentum, dampening, weight_decay;
  bool nesterov;
};

TEST(SgdStep, FusedLoopEqualsComposedOpsBitForBit) {
  manual_seed(41);
  const std::vector<Options> cases = {{0, 0, 0, false},   {0, 0, 1e-2, false}, {0.9, 0, 0, false},
                                      {0.9, 0.1, 5e-4, false}, {0.9, 0, 5e-4, true}, {0.5, 0, 0, true}};
  for (DType dtype : {kFloat32, kFloat64})
    for (const Options& o : cases) {
      SCOPED_TRACE(::testing::Message() << dtype << " momentum " << o.momentum << " dampening " << o.dampening
                                        << " weight_decay " << o.weight_decay << " nesterov " << o.nesterov);
      // 70000 elements: several parallel chunks and a vector remainder.
      Tensor fused = randn({70001}, dtype), composed = testing::make_noncontiguous(fused);
      Tensor fused_buf, composed_buf;
      for (int step = 0; step < 3; ++step) {
        // Tiny gradients too: momentum buffers then decay through denormal numbers.
        Tensor grad = randn({70001}, dtype) * (step == 2 ? 1e-38 : 1.0);
        sgd_step_(fused, grad, fused_buf, 0.1, o.momentum, o.dampening, o.weight_decay, o.nesterov);
        sgd_step_(composed, testing::make_noncontiguous(grad), composed_buf, 0.1, o.momentum, o.dampening,
                  o.weight_decay, o.nesterov);
        EXPECT_TRUE(equal(fused, composed)) << "parameter after step " << step;
        EXPECT_EQ(fused_buf.defined(), o.momentum != 0);
        if (o.momentum != 0) {
          EXPECT_TRUE(composed_buf.is_contiguous());  // created from the gradient's values on the first step
          EXPECT_TRUE(equal(fused_buf, composed_buf)) << "momentum buffer after step " << step;
        }
      }
    }
}

TEST(SgdStep, PlainStepIsParamMinusLrGrad) {
  Tensor p = tensor({1.0, 2.0, 3.0}, kFloat64), g = tensor({0.5, -1.0, 2.0}, kFloat64), buf;
  sgd_step_(p, g, buf, 0.5, 0, 0, 0, false);
  EXPECT_TRUE(equal(p, tensor({0.75, 2.5, 2.0}, kFloat64)));
  EXPECT_FALSE(buf.defined());
}

TEST(SgdStep, ErrorsNameTheShapes) {
  Tensor p = zeros({2, 3}), buf;
  EXPECT_THAT(error_of([&] { sgd_step_(p, zeros({3, 2}), buf, 0.1, 0, 0, 0, false); }),
              HasSubstr("sgd_step_: expected a gradient of the parameter's shape [2, 3], got [3, 2]"));
  Tensor wrong = zeros({6});
  EXPECT_THAT(error_of([&] { sgd_step_(p, zeros({2, 3}), wrong, 0.1, 0.9, 0, 0, false); }),
              HasSubstr("sgd_step_: expected a momentum buffer of the parameter's shape [2, 3], got [6]"));
}

}  // namespace
}  // namespace cohort
