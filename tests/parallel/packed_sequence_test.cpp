// PackedSequence through plan, scatter, gather and nn::DataParallel: whole sequences per replica,
// the timesteps rule, outputs gathered in the batch's order, and the pack -> LSTM -> unpack module
// of PyTorch's DataParallel notes, whose replicas pad to different lengths, equal to one device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include <cohort/cohort.h>
#include <cohort/parallel/data_parallel.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
using namespace cohort::nn::utils::rnn;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

// PyTorch's pattern: padded input and lengths in, pack, LSTM, unpack without total_length.
struct PackLSTMUnpack : nn::Cloneable<PackLSTMUnpack> {
  explicit PackLSTMUnpack(double padding = 0) : padding_value(padding) { reset(); }
  void reset() override {
    lstm = register_module("lstm", nn::LSTM(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true)));
  }
  Tensor forward(const Tensor& padded, const Tensor& lengths) {
    auto packed = pack_padded_sequence(padded, lengths, /*batch_first=*/true, /*enforce_sorted=*/false);
    auto [out, state] = lstm->forward_with_packed_input(packed);
    return std::get<0>(pad_packed_sequence(out, /*batch_first=*/true, padding_value));
  }
  nn::LSTM lstm{nullptr};
  double padding_value;
};

// Takes and returns a PackedSequence.
struct PackedGRU : nn::Cloneable<PackedGRU> {
  PackedGRU() { reset(); }
  void reset() override { gru = register_module("gru", nn::GRU(nn::GRUOptions(3, 4).bidirectional(true))); }
  PackedSequence forward(const PackedSequence& x) { return std::get<0>(gru->forward_with_packed_input(x)); }
  nn::GRU gru{nullptr};
};

// Unpacks, then a Linear: its padded rows are the Linear's bias, which gather cannot pad.
struct UnpackThenLinear : nn::Cloneable<UnpackThenLinear> {
  UnpackThenLinear() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(3, 2)); }
  Tensor forward(const PackedSequence& x) { return fc(std::get<0>(pad_packed_sequence(x, true))); }
  nn::Linear fc{nullptr};
};

class PackedDataParallel : public cohort::testing::WithDevices<3> {
 protected:
  void SetUp() override {
    WithDevices::SetUp();
    manual_seed(7);
  }
};

std::vector<Tensor> grads_of(nn::Module& m) {
  std::vector<Tensor> g;
  for (const auto& p : m.parameters()) g.push_back(p.grad().clone());
  return g;
}

}  // namespace

TEST_F(PackedDataParallel, PlanSplitsWholeSequencesAndPrintsIt) {
  Tensor x = randn({6, 6, 3});  // [T, N, 3]
  PackedSequence p = pack_padded_sequence(x, tensor({6, 1, 2, 5, 3, 4}), false, false);
  Tensor labels = randn({6, 2});
  parallel::Plan plan = parallel::plan(first(2), {}, p, labels);
  EXPECT_EQ(plan.batch, 6);
  EXPECT_EQ(plan.chunk_sizes, (std::vector<int64_t>{3, 3}));
  std::ostringstream os;
  os << plan;
  EXPECT_THAT(os.str(), HasSubstr("argument 0: PackedSequence of 6 sequences, data [21, 3] -> 3 (9 steps), 3 (12 steps)"));
  EXPECT_THAT(os.str(), HasSubstr("note: sequences go whole to one replica each; an output of pad_packed_sequence"));

  // The timesteps rule: 21 steps, boundaries nearest 10.5 -> after sample 2 (9) or 3 (14): 9.
  parallel::Plan by_steps = parallel::plan(first(2), parallel::ScatterOptions().rule(parallel::kTimesteps), p, labels);
  EXPECT_EQ(by_steps.chunk_sizes, (std::vector<int64_t>{3, 3}));
  PackedSequence skewed = pack_sequence({randn({9, 3}), randn({1, 3}), randn({1, 3}), randn({1, 3})}, false);
  parallel::Plan skewed_plan = parallel::plan(first(2), parallel::ScatterOptions().rule(parallel::kTimesteps), skewed);
  EXPECT_EQ(skewed_plan.chunk_sizes, (std::vector<int64_t>{1, 3}));  // 9 steps against 3
  EXPECT_EQ(parallel::plan(first(2), {}, skewed).chunk_sizes, (std::vector<int64_t>{2, 2}));

  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, p, randn({4, 2})); }),
              HasSubstr("argument 1 of shape [4, 2] has size 4 along dim 0, but the batch is 6 (set by argument 0, a "
                        "PackedSequence of 6 sequences)"));
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, randn({4, 2}), p); }),
              HasSubstr("argument 1 is a PackedSequence of 6 sequences, but the batch is 4"));
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), parallel::ScatterOptions().rule(parallel::kTimesteps), x); }),
              HasSubstr("the kTimesteps rule balances the replicas' timesteps by the lengths of a PackedSequence"));
}

TEST_F(PackedDataParallel, ScatterGivesEachReplicaAValidPackedBatchAndGatherRestoresTheOrder) {
  Tensor x = randn({7, 7, 3}, TensorOptions().requires_grad(true));  // batch_first
  std::vector<int64_t> len{2, 7, 4, 1, 5, 3, 6};
  PackedSequence p = pack_padded_sequence(x, tensor(len), true, false);
  parallel::Plan plan = parallel::plan(first(3), {}, p);
  auto inputs = parallel::scatter(plan, p);
  ASSERT_EQ(inputs.size(), 3u);
  Tensor padded = std::get<0>(pad_packed_sequence(p, true));
  for (size_t r = 0; r < 3; ++r) {
    const PackedSequence& part = std::get<0>(inputs[r]);
    EXPECT_EQ(part.data().device(), plan.devices[r]);
    std::vector<int64_t> want(len.begin() + plan.offsets[r], len.begin() + plan.offsets[r] + plan.chunk_sizes[r]);
    EXPECT_EQ(part.lengths(), want);
    Tensor mine = std::get<0>(pad_packed_sequence(part, true)).to(Device("cpu:0"));
    int64_t T = *std::max_element(want.begin(), want.end());
    EXPECT_TRUE(equal(mine, padded.narrow(0, plan.offsets[r], plan.chunk_sizes[r]).narrow(1, 0, T)));
  }
  std::vector<PackedSequence> outs;
  for (auto& in : inputs) outs.push_back(std::get<0>(in));
  PackedSequence back = parallel::gather(outs, Device("cpu:0"), plan);
  EXPECT_TRUE(equal(back.data(), p.data()));
  EXPECT_TRUE(equal(back.sorted_indices(), p.sorted_indices()));
  back.data().sum().backward();
  EXPECT_TRUE(equal(x.grad(), std::get<0>(pad_packed_sequence(pack_padded_sequence(ones_like(x), tensor(len), true, false), true, 0, 7))));
}

TEST_F(PackedDataParallel, PackLSTMUnpackEqualsOneDeviceOnTwoAndThreeDevices) {
  // Lengths such that every replica's longest sequence differs: [2, 3] and [3, 3, 2] cuts.
  Tensor x = randn({6, 7, 3}, TensorOptions(kFloat64));
  Tensor lengths = tensor({3, 7, 2, 5, 1, 4});
  auto single = std::make_shared<PackLSTMUnpack>();
  single->to(kFloat64);
  Tensor x1 = x.clone().requires_grad_();
  Tensor want = single->forward(x1, lengths);
  EXPECT_EQ(want.sizes(), (Shape{6, 7, 8}));
  Tensor upstream = randn(want.sizes(), TensorOptions(kFloat64));
  (want * upstream).sum().backward();
  std::vector<Tensor> want_grads = grads_of(*single);
  for (int devices : {2, 3}) {
    SCOPED_TRACE(devices);
    auto model = std::make_shared<PackLSTMUnpack>();
    model->to(kFloat64);
    model->load_state_dict(single->state_dict());
    nn::DataParallel<PackLSTMUnpack> dp(model, first(devices));
    Tensor xd = x.clone().requires_grad_();
    Tensor got = dp(xd, lengths);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(allclose(got, want, 1e-12, 1e-12));
    (got * upstream).sum().backward();
    EXPECT_TRUE(allclose(xd.grad(), x1.grad(), 1e-12, 1e-12));
    std::vector<Tensor> got_grads = grads_of(*model);
    ASSERT_EQ(got_grads.size(), want_grads.size());
    for (size_t i = 0; i < got_grads.size(); ++i) EXPECT_TRUE(allclose(got_grads[i], want_grads[i], 1e-10, 1e-12)) << i;
    // A second call reuses the replicas and still equals.
    EXPECT_TRUE(allclose(dp(x, lengths), want, 1e-12, 1e-12));
  }
}

TEST_F(PackedDataParallel, GatherPadsWithTheUnpackPaddingValue) {
  Tensor x = randn({4, 5, 3});
  Tensor lengths = tensor({1, 2, 5, 3});
  auto model = std::make_shared<PackLSTMUnpack>(-1.0);
  Tensor want = model->forward(x, lengths);
  nn::DataParallel<PackLSTMUnpack> dp(model, first(2));
  Tensor got = dp(x, lengths);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6));
  EXPECT_EQ(got.select(0, 0).narrow(0, 1, 4).eq(-1.0).all().item<bool>(), true);
}

TEST_F(PackedDataParallel, PackedInAndOutEqualsOneDeviceWithEitherRule) {
  auto single = std::make_shared<PackedGRU>();
  single->to(kFloat64);
  std::vector<Tensor> seqs;
  for (int64_t len : {4, 9, 1, 6, 2, 8, 3}) seqs.push_back(randn({len, 3}, TensorOptions(kFloat64)));
  PackedSequence p = pack_sequence(seqs, false);
  PackedSequence want = single->forward(p);
  for (parallel::SplitRule rule : {parallel::kBalanced, parallel::kTimesteps}) {
    auto model = std::make_shared<PackedGRU>();
    model->to(kFloat64);
    model->load_state_dict(single->state_dict());
    nn::DataParallel<PackedGRU> dp(model, first(3), parallel::DataParallelOptions().rule(rule));
    PackedSequence got = dp(p);
    EXPECT_TRUE(allclose(got.data(), want.data(), 1e-12, 1e-12)) << rule;
    EXPECT_TRUE(equal(got.batch_sizes(), want.batch_sizes()));
    EXPECT_TRUE(equal(got.unsorted_indices(), want.unsorted_indices()));
  }
}

TEST_F(PackedDataParallel, OutputsThatDifferInAnotherWayAreAnErrorNamingTotalLength) {
  auto model = std::make_shared<UnpackThenLinear>();
  PackedSequence p = pack_sequence({randn({5, 3}), randn({4, 3}), randn({2, 3}), randn({1, 3})});
  nn::DataParallel<UnpackThenLinear> dp(model, first(2));
  EXPECT_THAT(error_of([&] { dp(p); }),
              HasSubstr("replica 1 (cpu:1)'s output has shape [2, 2, 2] but replica 0's has [2, 5, 2]"));
  EXPECT_THAT(error_of([&] { dp(p); }), HasSubstr("hint: if dim 1 is a sequence length that each replica padded to "
                                                  "its own longest sequence, pass total_length"));
}
