// autograd::graph_leaves: the leaves a backward would accumulate into, as seen from outside autograd.
#include <gtest/gtest.h>

#include <cohort/autograd/graph.h>
#include <cohort/cohort.h>

using namespace cohort;

namespace {

bool holds(const std::vector<Tensor>& leaves, const Tensor& t) {
  int found = 0;
  for (const Tensor& l : leaves) found += l.is_same(t) ? 1 : 0;
  return found == 1;
}

}  // namespace

TEST(AutogradGraph, LeavesAreTheTensorsThatAccumulate) {
  Tensor a = randn({3}, requires_grad());
  Tensor b = randn({3}, requires_grad());
  Tensor c = randn({3});  // takes no gradient
  Tensor y = (a * b + c * a).sum();
  std::vector<Tensor> leaves = autograd::graph_leaves(y);
  ASSERT_EQ(leaves.size(), 2u);  // a is used twice and listed once
  EXPECT_TRUE(holds(leaves, a));
  EXPECT_TRUE(holds(leaves, b));
  EXPECT_FALSE(holds(leaves, c));
}

TEST(AutogradGraph, DepthFirstFromTheLastInput) {
  Tensor a = randn({2}, requires_grad());
  Tensor b = randn({2}, requires_grad());
  std::vector<Tensor> leaves = autograd::graph_leaves(a + b);
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_TRUE(leaves[0].is_same(b));
  EXPECT_TRUE(leaves[1].is_same(a));
}

TEST(AutogradGraph, ALeafIsItsOwnLeafAndNoGraphHasNone) {
  Tensor a = randn({2}, requires_grad());
  std::vector<Tensor> self = autograd::graph_leaves(a);
  ASSERT_EQ(self.size(), 1u);
  EXPECT_TRUE(self[0].is_same(a));
  EXPECT_TRUE(autograd::graph_leaves((a * 2).detach()).empty());
  EXPECT_TRUE(autograd::graph_leaves(randn({2})).empty());
  EXPECT_TRUE(autograd::graph_leaves(Tensor()).empty());
  {
    NoGradGuard no_grad;
    EXPECT_TRUE(autograd::graph_leaves(a * 2).empty());
  }
}

TEST(AutogradGraph, ReadsTheGraphWithoutReleasingIt) {
  Tensor a = randn({2}, requires_grad());
  Tensor y = (a * a).sum();
  EXPECT_EQ(autograd::graph_leaves(y).size(), 1u);
  y.backward();  // the graph is still whole
  EXPECT_TRUE(a.grad().allclose(2 * a.detach()));
}
