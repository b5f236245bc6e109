// utils::checkpoint and checkpoint_sequential: the same gradients as the unchecked run, bit for bit
// (dropout, convolutions, autocast, segments), parameters accumulated once, the recompute, errors,
// and a lower memory peak.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>

#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

// Bitwise comparisons need one summation order: one intra-op thread.
class ActivationCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    threads_ = get_num_threads();
    set_num_threads(1);
  }
  void TearDown() override { set_num_threads(threads_); }

 private:
  int threads_ = 1;
};

nn::Sequential mlp_with_dropout() {
  return nn::Sequential(nn::Linear(8, 16), nn::ReLU(), nn::Dropout(0.5), nn::Linear(16, 16), nn::Tanh(),
                        nn::Dropout(0.3), nn::Linear(16, 4));
}

nn::Sequential conv_net() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 6, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                        nn::Conv2d(6, 8, 3), nn::ReLU(), nn::Flatten(), nn::Linear(8 * 2 * 2, 5));
}

std::vector<Tensor> grads_of(const nn::Module& m) {
  std::vector<Tensor> out;
  for (const Tensor& p : m.parameters()) out.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  return out;
}

void zero_grads(const nn::Module& m) {
  for (const Tensor& p : m.parameters()) p.mutable_grad() = Tensor();
}

void expect_bitwise(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(got[i].defined() && want[i].defined()) << what << ": gradient " << i;
    EXPECT_TRUE(equal(got[i], want[i])) << what << ": gradient " << i << " differs";
  }
}

// Runs forward(x) then backward of sum(out^2), returning the output, the parameters' gradients and
// the next random number drawn after the pass (the generator must end where the unchecked run ends).
struct Pass {
  Tensor out;
  std::vector<Tensor> grads;
  Tensor x_grad;
  Tensor next_random;
};

template <class Forward>
Pass run(const nn::Module& m, const Tensor& x, Forward forward) {
  zero_grads(m);
  if (x.requires_grad()) x.mutable_grad() = Tensor();
  manual_seed(7);
  Tensor out = forward(x);
  out.pow(2).sum().backward();
  return Pass{out.detach(), grads_of(m), x.requires_grad() ? x.grad().clone() : Tensor(), rand({4})};
}

void expect_same(const Pass& got, const Pass& want, const std::string& what) {
  EXPECT_TRUE(equal(got.out, want.out)) << what << ": outputs differ";
  expect_bitwise(got.grads, want.grads, what);
  if (want.x_grad.defined()) {
    EXPECT_TRUE(equal(got.x_grad, want.x_grad)) << what << ": input gradients differ";
  }
  EXPECT_TRUE(equal(got.next_random, want.next_random)) << what << ": the generator ends elsewhere";
}

TEST_F(ActivationCheckpoint, MlpWithDropoutGivesTheUncheckedGradientsBitwise) {
  manual_seed(0);
  nn::Sequential seq = mlp_with_dropout();
  Tensor x = randn({5, 8}).requires_grad_();
  Pass want = run(*seq, x, [&](const Tensor& in) { return seq->forward(in); });
  Pass got = run(*seq, x, [&](const Tensor& in) {
    return utils::checkpoint([&](const Tensor& t) { return seq->forward(t); }, in);
  });
  expect_same(got, want, "checkpoint over the MLP");
  got = run(*seq, x, [&](const Tensor& in) { return utils::checkpoint(seq, in); });
  expect_same(got, want, "checkpoint(module)");
  got = run(*seq, x, [&](const Tensor& in) { return utils::checkpoint(seq.ptr(), in); });
  expect_same(got, want, "checkpoint(std::shared_ptr<module>)");
}

TEST_F(ActivationCheckpoint, ConvNetFromADataBatchThatNeedsNoGradient) {
  manual_seed(1);
  nn::Sequential seq = conv_net();
  Tensor x = randn({3, 3, 8, 8});  // a batch: only the parameters need gradients
  Pass want = run(*seq, x, [&](const Tensor& in) { return seq->forward(in); });
  for (int64_t segments : {2, 3}) {
    Pass got = run(*seq, x, [&](const Tensor& in) { return utils::checkpoint_sequential(seq, segments, in); });
    expect_same(got, want, "conv net, " + std::to_string(segments) + " segments");
  }
  Pass got = run(*seq, x, [&](const Tensor& in) {
    return utils::checkpoint([&](const Tensor& t) { return seq->forward(t); }, in);
  });
  expect_same(got, want, "checkpoint over the conv net");
}

TEST_F(ActivationCheckpoint, AutocastBFloat16) {
  manual_seed(2);
  nn::Sequential seq = mlp_with_dropout();
  Tensor x = randn({6, 8}).requires_grad_();
  auto in_region = [](auto forward) {
    return [forward](const Tensor& in) {
      autocast::AutocastGuard bf16(kBFloat16);
      return forward(in);
    };
  };
  Pass want = run(*seq, x, in_region([&](const Tensor& in) { return seq->forward(in); }));
  Pass got = run(*seq, x, in_region([&](const Tensor& in) { return utils::checkpoint_sequential(seq, 3, in); }));
  EXPECT_EQ(want.out.dtype(), kBFloat16);
  expect_same(got, want, "autocast, checkpoint_sequential");
  got = run(*seq, x, in_region([&](const Tensor& in) {
    return utils::checkpoint([&](const Tensor& t) { return seq->forward(t); }, in);
  }));
  expect_same(got, want, "autocast, checkpoint");
}

// A weight cast (and cached) by autocast before the checkpoint still gets its gradient through the
// checkpoint. Not bitwise: the unchecked run sums the weight's two uses in bfloat16 on its one cached
// cast, the checkpointed run casts again inside fn, as PyTorch's recompute does.
TEST_F(ActivationCheckpoint, AutocastWeightCastBeforeTheCheckpoint) {
  manual_seed(2);
  nn::Linear fc(8, 8);
  Tensor x = randn({6, 8});
  auto pass = [&](bool checkpointed) {
    zero_grads(*fc);
    {
      autocast::AutocastGuard bf16(kBFloat16);
      Tensor h = fc(x);
      Tensor y = checkpointed ? utils::checkpoint([&](const Tensor& t) { return fc(t); }, h) : fc(h);
      y.to(kFloat32).pow(2).sum().backward();
    }
    return grads_of(*fc);
  };
  std::vector<Tensor> want = pass(false), got = pass(true);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(got[i].defined());
    EXPECT_TRUE(allclose(got[i], want[i], 2e-2, 1e-2)) << "gradient " << i;
  }
}

TEST_F(ActivationCheckpoint, SequentialWithOneTwoAndEverySegment) {
  manual_seed(3);
  nn::Sequential seq = mlp_with_dropout();
  Tensor x = randn({4, 8}).requires_grad_();
  Pass want = run(*seq, x, [&](const Tensor& in) { return seq->forward(in); });
  for (int64_t segments : {int64_t{1}, int64_t{2}, static_cast<int64_t>(seq->size())}) {
    Pass got = run(*seq, x, [&](const Tensor& in) { return utils::checkpoint_sequential(seq, segments, in); });
    expect_same(got, want, std::to_string(segments) + " segments");
  }
}

// Each parameter's gradient is accumulated once, by the pass that reached the checkpoint, and its
// post-accumulate hooks (DDP's) run once.
TEST_F(ActivationCheckpoint, ParametersAccumulateOnceAndTheirHooksRunOnce) {
  manual_seed(4);
  nn::Sequential seq = mlp_with_dropout();
  std::vector<int> calls(seq->parameters().size(), 0);
  std::vector<unsigned> handles;
  for (size_t i = 0; i < calls.size(); ++i)
    handles.push_back(seq->parameters()[i].register_post_accumulate_grad_hook([&calls, i](const Tensor&) { ++calls[i]; }));
  Tensor x = randn({3, 8});
  manual_seed(9);
  seq->forward(x).sum().backward();
  std::vector<Tensor> once = grads_of(*seq);
  std::fill(calls.begin(), calls.end(), 0);
  zero_grads(*seq);
  manual_seed(9);
  utils::checkpoint_sequential(seq, 2, x).sum().backward();
  expect_bitwise(grads_of(*seq), once, "after one backward");
  for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], 1) << "parameter " << i;
  for (size_t i = 0; i < handles.size(); ++i) seq->parameters()[i].remove_hook(handles[i]);
}

TEST_F(ActivationCheckpoint, ForwardRunsFnOnceAndBackwardAgain) {
  nn::Linear fc(3, 2);
  int calls = 0;
  auto fn = [&](const Tensor& a, const Tensor& b) {
    ++calls;
    return fc(a) * b;
  };
  Tensor a = randn({4, 3}).requires_grad_(), b = randn({4, 2});
  Tensor y = utils::checkpoint(fn, a, b);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(y.requires_grad());
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "CheckpointOutputBackward");
  y.sum().backward();
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(allclose(a.grad(), matmul(b, fc->weight)));
  EXPECT_TRUE(allclose(fc->weight.grad(), matmul(b.t(), a.detach())));

  // With grad mode off checkpoint is a plain call; with nothing requiring grad there is no node.
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(utils::checkpoint(fn, a, b).requires_grad());
  }
  EXPECT_EQ(calls, 3);
  Tensor c = randn({2, 2});
  EXPECT_FALSE(utils::checkpoint([](const Tensor& t) { return t.exp(); }, c).requires_grad());
}

TEST_F(ActivationCheckpoint, SeveralOutputsSomeUnused) {
  manual_seed(5);
  nn::Linear fc(4, 4);
  Tensor x = randn({2, 4}).requires_grad_();
  auto fn = [&](const Tensor& t) {
    Tensor h = fc(t);
    return std::vector<Tensor>{h.tanh(), h.sigmoid(), h.argmax(1)};
  };
  for (bool both : {true, false}) {
    auto loss_of = [&](const std::vector<Tensor>& out) {
      EXPECT_FALSE(out[2].requires_grad());
      return both ? (out[0] * out[1]).sum() : out[0].sum();
    };
    zero_grads(*fc);
    x.mutable_grad() = Tensor();
    loss_of(fn(x)).backward();
    Tensor wg = fc->weight.grad().clone(), xg = x.grad().clone();
    zero_grads(*fc);
    x.mutable_grad() = Tensor();
    loss_of(utils::checkpoint(fn, x)).backward();
    EXPECT_TRUE(equal(fc->weight.grad(), wg)) << "both " << both;
    EXPECT_TRUE(equal(x.grad(), xg)) << "both " << both;
  }
}

// A checkpoint inside a checkpointed function: the outer recompute records the inner one's node,
// whose backward runs within the outer's.
TEST_F(ActivationCheckpoint, Nested) {
  manual_seed(8);
  nn::Sequential seq = mlp_with_dropout();
  Tensor x = randn({5, 8}).requires_grad_();
  Pass want = run(*seq, x, [&](const Tensor& in) { return seq->forward(in); });
  Pass got = run(*seq, x, [&](const Tensor& in) {
    return utils::checkpoint([&](const Tensor& t) { return utils::checkpoint_sequential(seq, 2, t); }, in);
  });
  expect_same(got, want, "nested checkpoints");
}

TEST_F(ActivationCheckpoint, Errors) {
  nn::Linear fc(3, 3);
  Tensor x = randn({2, 3}).requires_grad_();
  Tensor outside = x * 2;  // history from outside fn, not passed as an input
  EXPECT_THAT(error_of([&] { utils::checkpoint([&](const Tensor& t) { return t + outside; }, x); }),
              HasSubstr("checkpoint: fn used a tensor that requires grad and was computed outside fn (its grad_fn "
                        "is MulBackward"));

  Tensor in = randn({2, 3});
  Tensor y = utils::checkpoint([&](const Tensor& t) { return fc(t); }, in);
  in.add_(1);
  EXPECT_THAT(error_of([&] { y.sum().backward(); }),
              HasSubstr("checkpoint: input 0 (shape [2, 3]) was modified in place after the checkpointed forward"));

  Tensor z = utils::checkpoint([&](const Tensor& t) { return fc(t).pow(2); }, x);
  EXPECT_THAT(error_of([&] { autograd::grad({z.sum()}, {x}, {}, true, /*create_graph=*/true); }),
              HasSubstr("checkpoint: backward with create_graph=true through a checkpointed function is not "
                        "supported"));

  EXPECT_THAT(error_of([&] { utils::checkpoint([](const Tensor&) { return Tensor(); }, x); }),
              HasSubstr("checkpoint: fn returned an undefined tensor as output 0 of 1"));
  EXPECT_THAT(error_of([&] { utils::checkpoint([](const Tensor&) { return std::vector<Tensor>{}; }, x); }),
              HasSubstr("checkpoint: fn returned no tensor, expected at least one"));

  nn::Sequential seq(nn::Linear(3, 3), nn::ReLU());
  EXPECT_THAT(error_of([&] { utils::checkpoint_sequential(seq, 3, x); }),
              HasSubstr("checkpoint_sequential: segments must be between 1 and the number of modules (2), got 3"));
  EXPECT_THAT(error_of([&] { utils::checkpoint_sequential(seq, 0, x); }), HasSubstr("got 0"));

  // A module member that requires grad and is not a parameter: its gradient would be lost.
  Tensor stray = randn({3}).requires_grad_();
  nn::Sequential with_stray(nn::Functional([stray](const Tensor& t) { return t * stray; }), nn::ReLU());
  Tensor w = utils::checkpoint_sequential(with_stray, 2, x);
  EXPECT_THAT(error_of([&] { w.sum().backward(); }),
              HasSubstr("is neither an input nor a parameter of the checkpointed modules"));
}

// Checkpointing a deep stack keeps a lower peak: the unchecked run holds every activation (32 of 1 MiB,
// against 4 MiB of weight gradients) until backward frees them.
TEST_F(ActivationCheckpoint, DeepStackKeepsALowerMemoryPeak) {
  manual_seed(6);
  nn::Sequential seq;
  for (int i = 0; i < 16; ++i) {
    seq->push_back(nn::Linear(256, 256));
    seq->push_back(nn::ReLU());
  }
  const Device cpu(kCPU, 0);
  auto peak = [&](int64_t segments) {
    zero_grads(*seq);
    Tensor x = randn({1024, 256});
    reset_peak_memory_stats(cpu);
    const int64_t before = memory_stats(cpu).allocated_bytes;
    Tensor out = segments ? utils::checkpoint_sequential(seq, segments, x) : seq->forward(x);
    out.sum().backward();
    return memory_stats(cpu).peak_bytes - before;
  };
  const int64_t unchecked = peak(0), checked = peak(6);
  EXPECT_LT(checked, unchecked) << "checkpointed peak " << checked << " bytes, unchecked " << unchecked;
}

}  // namespace
