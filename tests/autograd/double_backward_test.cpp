// Double backward: gradgradcheck itself (it must pass a correct second derivative and name the element
// of a missing or wrong one), and the ops whose double backward is refused with a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"
#include "support/gradcheck.h"

#include <cohort/cohort.h>

using namespace cohort;
using cohort::testing::error_of;
using cohort::testing::gradcheck;
using cohort::testing::gradgradcheck;
using ::testing::HasSubstr;

namespace {

using In = std::vector<Tensor>;
using Out = std::vector<Tensor>;

// x^3 with a hand-written backward 3 x^2 g. second: how that backward is made differentiable.
enum class Second { Composed, Detached, WrongNode };

Out cube(const In& x, Second second) {
  Tensor out = x[0].detach() * x[0].detach() * x[0].detach();
  return Out{autograd::record("CubeBackward", out, {x[0]}, [x0 = x[0], second](const Tensor& g) {
    switch (second) {
      case Second::Composed:  // ops recorded under create_graph: correct second derivatives
        return std::vector<Tensor>{g * x0 * x0 * 3.0};
      case Second::Detached:  // a kernel-like backward that forgets x: no d/dx of the gradient
        return std::vector<Tensor>{g * x0.detach() * x0.detach() * 3.0};
      case Second::WrongNode: {  // its own double-backward node, with d/dx off by a factor
        Tensor gx;
        {
          NoGradGuard no_grad;
          gx = g * x0 * x0 * 3.0;
        }
        return std::vector<Tensor>{autograd::record("CubeBackwardBackward", gx, {g, x0}, [g, x0](const Tensor& gg) {
          return std::vector<Tensor>{gg * x0 * x0 * 3.0, gg * g * x0 * 5.0};  // should be 6 g x
        })};
      }
    }
    return std::vector<Tensor>{};
  })};
}

TEST(Gradgradcheck, PassesACorrectSecondDerivative) {
  Tensor x = tensor({{0.5, -1.0}, {1.5, 2.0}}, TensorOptions(kFloat64));
  EXPECT_TRUE(gradgradcheck([](const In& x) { return cube(x, Second::Composed); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const In& x) { return Out{x[0].tanh() * x[1], x[1].exp()}; },
                            {x, tensor({1.0, 2.0}, TensorOptions(kFloat64))}));
}

TEST(Gradgradcheck, FlagsABackwardThatIsNotDifferentiable) {
  Tensor x = tensor({{0.5, -1.0}, {1.5, 2.0}}, TensorOptions(kFloat64));
  auto detached = [](const In& x) { return cube(x, Second::Detached); };
  EXPECT_TRUE(gradcheck(detached, {x}));  // first derivatives are right
  ::testing::AssertionResult r = gradgradcheck(detached, {x}, 1e-6, 1e-5, 1e-3, "detached_cube");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr("detached_cube [double backward]"));
  // d(grad x)[0, 0] / d x[0, 0] = 6 x g; autograd reports 0.
  EXPECT_THAT(r.message(), HasSubstr("d(output 0)[0, 0] / d(input 0)[0, 0]"));
  EXPECT_THAT(r.message(), HasSubstr("got (autograd) 0"));
}

TEST(Gradgradcheck, FlagsAWrongSecondDerivative) {
  Tensor x = tensor({{0.5, -1.0}, {1.5, 2.0}}, TensorOptions(kFloat64));
  auto wrong = [](const In& x) { return cube(x, Second::WrongNode); };
  EXPECT_TRUE(gradcheck(wrong, {x}));
  ::testing::AssertionResult r = gradgradcheck(wrong, {x}, 1e-6, 1e-5, 1e-3, "wrong_cube");
  ASSERT_FALSE(r);
  // Only d/dx is wrong (4 diagonal entries); d/d(grad_output) is right.
  EXPECT_THAT(r.message(), HasSubstr("4 Jacobian entries differ"));
  EXPECT_THAT(r.message(), HasSubstr("/ d(input 0)[0, 0]"));
  EXPECT_THAT(r.message(), Not(HasSubstr("/ d(input 1)")));
}

}  // namespace
