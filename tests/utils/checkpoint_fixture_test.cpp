// utils::checkpoint against PyTorch 1.13's torch.utils.checkpoint (tests/fixtures/checkpoint.json,
// from generate_checkpoint.py): which modules checkpoint_sequential runs again, how often fn runs, and
// what an input without a gradient means (use_reentrant=False).
#include <gtest/gtest.h>

#include <cohort/cohort.h>

#include "support/pytorch_fixture.h"

using namespace cohort;

namespace {

TEST(CheckpointPyTorch, SequentialRunsTheModulesOfEveryButTheLastSegmentAgain) {
  const auto& fixture = cohort::testing::load_fixture("checkpoint.json");
  for (const auto& [segments, want] : fixture["sequential_calls"].items()) {
    nn::Sequential seq;
    std::vector<int> calls(7, 0);
    for (size_t i = 0; i < calls.size(); ++i) {
      nn::Linear fc(4, 4);
      fc->register_forward_hook([&calls, i](nn::Module&, const std::vector<Tensor>&, const Tensor&) {
        ++calls[i];
        return Tensor();
      });
      seq->push_back(fc);
    }
    Tensor x = randn({2, 4}).requires_grad_();
    utils::checkpoint_sequential(seq, std::stoll(segments), x).sum().backward();
    EXPECT_EQ(calls, want.get<std::vector<int>>()) << segments << " segments";
  }
}

TEST(CheckpointPyTorch, FnCallsAndAnInputWithoutGradient) {
  const auto& fixture = cohort::testing::load_fixture("checkpoint.json");
  nn::Linear fc(3, 2);
  int calls = 0;
  Tensor y = utils::checkpoint([&](const Tensor& t) { ++calls; return fc(t).tanh(); }, randn({4, 3}));
  EXPECT_EQ(calls, fixture["fn_calls"]["forward"].get<int>());
  EXPECT_EQ(y.requires_grad(), fixture["without_input_grad"]["output_requires_grad"].get<bool>());
  y.sum().backward();
  EXPECT_EQ(calls, fixture["fn_calls"]["after_backward"].get<int>());
  EXPECT_EQ(fc->weight.grad().defined(), fixture["without_input_grad"]["weight_grad_defined"].get<bool>());
  Tensor z = utils::checkpoint([](const Tensor& t) { return t.exp(); }, randn({2, 2}));
  EXPECT_EQ(z.requires_grad(), fixture["without_input_grad"]["nothing_requires_grad_output_requires_grad"].get<bool>());
}

}  // namespace
