// Generator state save/restore: the stream continues exactly.
#include "cohort/core/generator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"

using namespace cohort;
using ::testing::HasSubstr;

TEST(GeneratorState, SetStateContinuesTheStream) {
  Generator g(42);
  for (int i = 0; i < 100; ++i) g.next_u64();
  const std::string state = g.get_state();
  std::vector<uint64_t> expected;
  for (int i = 0; i < 10; ++i) expected.push_back(g.next_u64());

  Generator other(7);
  other.set_state(state);
  EXPECT_EQ(other.initial_seed(), 42u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(other.next_u64(), expected[i]) << "draw " << i;
}

TEST(GeneratorState, DefaultGeneratorRestoresRandomTensors) {
  manual_seed(3);
  randn({5});
  const std::string state = default_generator().get_state();
  Tensor a = randn({4, 4});
  default_generator().set_state(state);
  Tensor b = randn({4, 4});
  EXPECT_TRUE(equal(a, b));
}

TEST(GeneratorState, GarbageIsAClearError) {
  Generator g;
  EXPECT_THAT(cohort::testing::error_of([&] { g.set_state("not a state"); }),
              HasSubstr("Generator::set_state: not a generator state"));
  EXPECT_THAT(cohort::testing::error_of([&] { g.set_state(""); }), HasSubstr("got 0 characters"));
}
