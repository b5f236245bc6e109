// Packed sequences (nn::utils::rnn) and the recurrent layers on them, against PyTorch
// (tests/fixtures/packed_rnn.json from tests/fixtures/generate_packed_rnn.py): the packing, the padded
// outputs, final states and gradients; the layout helpers, gradchecks and errors.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "support/error_of.h"
#include "support/gradcheck.h"
#include "support/pytorch_fixture.h"
#include "nn/rnn_fixture.h"

#include <cohort/cohort.h>
#include <nlohmann/json.hpp>

using namespace cohort;
using namespace cohort::nn::utils::rnn;
namespace rnn_detail = cohort::nn::utils::rnn::detail;
using json = nlohmann::json;
using ::testing::HasSubstr;

namespace {

std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = t.to(kInt64).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

// The layer of a fixture case, run on a PackedSequence: results [packed output, h_n(, c_n)].
struct PackedLayer {
  std::shared_ptr<nn::Module> module;
  std::function<std::pair<PackedSequence, std::vector<Tensor>>(const PackedSequence&, const std::vector<Tensor>&)> run;
};

PackedLayer build(const std::string& kind, const json& o) {
  int64_t in = o.at("input_size"), hid = o.at("hidden_size"), layers = o.value("num_layers", 1);
  bool bf = o.value("batch_first", false), bi = o.value("bidirectional", false);
  auto at = [](const std::vector<Tensor>& hx, size_t i) { return hx.size() > i ? hx[i] : Tensor(); };
  if (kind == "LSTM") {
    nn::LSTM m(nn::LSTMOptions(in, hid).num_layers(layers).batch_first(bf).bidirectional(bi).proj_size(
        o.value("proj_size", 0)));
    return {m.ptr(), [m](const PackedSequence& x, const std::vector<Tensor>& hx) mutable {
              auto [out, st] = hx.empty() ? m->forward_with_packed_input(x)
                                          : m->forward_with_packed_input(x, std::make_tuple(hx[0], hx[1]));
              return std::make_pair(out, std::vector<Tensor>{std::get<0>(st), std::get<1>(st)});
            }};
  }
  if (kind == "GRU") {
    nn::GRU m(nn::GRUOptions(in, hid).num_layers(layers).batch_first(bf).bidirectional(bi));
    return {m.ptr(), [m, at](const PackedSequence& x, const std::vector<Tensor>& hx) mutable {
              auto [out, h] = m->forward_with_packed_input(x, at(hx, 0));
              return std::make_pair(out, std::vector<Tensor>{h});
            }};
  }
  auto opts = nn::RNNOptions(in, hid).num_layers(layers).batch_first(bf).bidirectional(bi);
  if (o.value("nonlinearity", std::string("tanh")) == "relu") opts.nonlinearity(kReLU);
  nn::RNN m(opts);
  return {m.ptr(), [m, at](const PackedSequence& x, const std::vector<Tensor>& hx) mutable {
            auto [out, h] = m->forward_with_packed_input(x, at(hx, 0));
            return std::make_pair(out, std::vector<Tensor>{h});
          }};
}

}  // namespace

TEST(PackedRNNFixture, MatchesPyTorchPackingOutputsStatesAndGradients) {
  const json& fixture = cohort::testing::load_fixture("packed_rnn.json");
  int checked = 0;
  for (const json& c : fixture.at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    PackedLayer b = build(c.at("kind"), c.at("options"));
    cohort::testing::load_case_state(*b.module, c);
    const bool bf = c.at("options").value("batch_first", false);

    Tensor x = cohort::testing::decode_tensor(c.at("input")).requires_grad_();
    Tensor lengths = tensor(c.at("lengths").get<std::vector<int64_t>>());
    PackedSequence packed = pack_padded_sequence(x, lengths, bf, c.at("enforce_sorted").get<bool>());
    EXPECT_TRUE(cohort::testing::matches_pytorch(name + " packed data", packed.data(), c.at("packed").at("data")));
    EXPECT_EQ(ints(packed.batch_sizes()), c.at("packed").at("batch_sizes").get<std::vector<int64_t>>());
    if (c.at("packed").at("sorted_indices").is_null())
      EXPECT_FALSE(packed.sorted_indices().defined());
    else
      EXPECT_EQ(ints(packed.sorted_indices()), c.at("packed").at("sorted_indices").get<std::vector<int64_t>>());
    EXPECT_EQ(packed.lengths(), c.at("lengths").get<std::vector<int64_t>>());

    std::vector<std::string> wrt_names{"input"};
    std::vector<Tensor> hx = cohort::testing::initial_states(c, wrt_names);
    auto [out, states] = b.run(packed, hx);
    EXPECT_TRUE(cohort::testing::matches_pytorch(name + " output data", out.data(), c.at("packed").at("output_data")));
    auto [padded, out_lengths] = pad_packed_sequence(out, bf, 0.0, c.at("total_length").get<int64_t>());
    EXPECT_EQ(ints(out_lengths), c.at("out_lengths").get<std::vector<int64_t>>());
    std::vector<Tensor> results{padded};
    results.insert(results.end(), states.begin(), states.end());
    const std::vector<std::string> result_names{"output", "h_n", "c_n"};
    cohort::testing::expect_results_and_grads(name, c, results, result_names, x, hx, *b.module, wrt_names);
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(PackedSequence, PadSequenceAndPackSequenceLayout) {
  Tensor a = tensor({1.0, 2.0, 3.0}), b = tensor({4.0}), c = tensor({5.0, 6.0});
  Tensor padded = pad_sequence({a, b, c}, /*batch_first=*/true, /*padding_value=*/-1);
  EXPECT_EQ(padded.sizes(), (Shape{3, 3}));
  EXPECT_TRUE(allclose(padded, tensor({{1.0, 2.0, 3.0}, {4.0, -1.0, -1.0}, {5.0, 6.0, -1.0}})));
  EXPECT_EQ(pad_sequence({a, b, c}).sizes(), (Shape{3, 3}));  // [T, N]

  PackedSequence p = pack_sequence({a, b, c}, /*enforce_sorted=*/false);
  // Longest first: a (3), c (2), b (1); step 0 of all three, step 1 of a and c, step 2 of a.
  EXPECT_TRUE(allclose(p.data(), tensor({1.0, 5.0, 4.0, 2.0, 6.0, 3.0})));
  EXPECT_EQ(ints(p.batch_sizes()), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(ints(p.sorted_indices()), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(ints(p.unsorted_indices()), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(p.lengths(), (std::vector<int64_t>{3, 1, 2}));
  auto [back, lengths] = pad_packed_sequence(p, true, -1);
  EXPECT_TRUE(allclose(back, padded));
  EXPECT_EQ(ints(lengths), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_THAT(cohort::testing::error_of([&] { pack_sequence({a, b, c}); }),
              HasSubstr("pack_padded_sequence: lengths must be sorted longest first"));
}

TEST(PackedSequence, SelectAndJoinSequencesRoundTrip) {
  Tensor x = randn({5, 4, 2});
  PackedSequence p = pack_padded_sequence(x, tensor({2, 5, 3, 5}), false, false);
  auto first = rnn_detail::select_sequences(p, {0, 1}), second = rnn_detail::select_sequences(p, {2, 3});
  EXPECT_EQ(first.lengths(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(second.lengths(), (std::vector<int64_t>{3, 5}));
  PackedSequence joined = rnn_detail::join_sequences({first, second}, Device("cpu:0"), ints(p.sorted_indices()));
  EXPECT_TRUE(allclose(joined.data(), p.data()));
  EXPECT_EQ(ints(joined.batch_sizes()), ints(p.batch_sizes()));
  PackedSequence restable = rnn_detail::join_sequences({first, second}, Device("cpu:0"));
  EXPECT_TRUE(allclose(std::get<0>(pad_packed_sequence(restable)), std::get<0>(pad_packed_sequence(p))));
}

TEST(PackedSequence, ConversionsAreDifferentiable) {
  Tensor x = randn({4, 3, 2}, TensorOptions(kFloat64));
  Tensor lengths = tensor({2, 4, 1});
  EXPECT_TRUE(cohort::testing::gradcheck(
      [&](const std::vector<Tensor>& in) {
        auto packed = pack_padded_sequence(in[0], lengths, false, false);
        auto sub = rnn_detail::select_sequences(packed, {2, 0});
        return std::vector<Tensor>{std::get<0>(pad_packed_sequence(packed, true, 0.5)), sub.data()};
      },
      {x}));
  Tensor a = randn({3, 2}, TensorOptions(kFloat64)), b = randn({1, 2}, TensorOptions(kFloat64));
  EXPECT_TRUE(cohort::testing::gradcheck(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{pad_sequence({in[0], in[1]}, true)}; }, {a, b}));
}

TEST(PackedSequence, BidirectionalLSTMGradcheckWithUnsortedLengths) {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(2, 3).bidirectional(true).num_layers(2));
  lstm->to(kFloat64);
  Tensor x = randn({4, 3, 2}, TensorOptions(kFloat64)), h0 = randn({4, 3, 3}, TensorOptions(kFloat64));
  Tensor c0 = randn({4, 3, 3}, TensorOptions(kFloat64));
  Tensor lengths = tensor({2, 4, 3});
  EXPECT_TRUE(cohort::testing::gradcheck(
      [&](const std::vector<Tensor>& in) {
        auto packed = pack_padded_sequence(in[0], lengths, false, false);
        auto [out, st] = lstm->forward_with_packed_input(packed, std::make_tuple(in[1], in[2]));
        return std::vector<Tensor>{out.data(), std::get<0>(st), std::get<1>(st)};
      },
      {x, h0, c0}));
}

TEST(PackedSequence, EachSequenceEqualsItsOwnRun) {
  // A packed batch gives every sequence what running it alone, unpadded, gives.
  manual_seed(4);
  nn::GRU gru(nn::GRUOptions(2, 3).bidirectional(true).batch_first(true));
  Tensor x = randn({3, 5, 2});
  std::vector<int64_t> len{3, 5, 1};
  auto [out, h] = gru->forward_with_packed_input(pack_padded_sequence(x, tensor(len), true, false));
  auto [padded, lengths] = pad_packed_sequence(out, true);
  for (int64_t i = 0; i < 3; ++i) {
    auto [alone, h_alone] = gru->forward(x.narrow(0, i, 1).narrow(1, 0, len[static_cast<size_t>(i)]));
    EXPECT_TRUE(allclose(padded.narrow(0, i, 1).narrow(1, 0, len[static_cast<size_t>(i)]), alone, 1e-5, 1e-6)) << i;
    EXPECT_TRUE(allclose(h.narrow(1, i, 1), h_alone, 1e-5, 1e-6)) << i;
    if (len[static_cast<size_t>(i)] < 5)
      EXPECT_EQ(padded.narrow(0, i, 1).narrow(1, len[static_cast<size_t>(i)], 5 - len[static_cast<size_t>(i)]).abs().sum().item<float>(), 0.0f);
  }
}

TEST(PackedSequence, ErrorsNameTheFix) {
  Tensor x = randn({4, 2, 3});
  EXPECT_THAT(cohort::testing::error_of([&] { pack_padded_sequence(x, tensor({2, 3}), false, true); }),
              HasSubstr("hint: pass enforce_sorted=false"));
  EXPECT_THAT(cohort::testing::error_of([&] { pack_padded_sequence(x, tensor({5, 3}), false, false); }),
              HasSubstr("sequence 0 has length 5, expected 1 to 4"));
  EXPECT_THAT(cohort::testing::error_of([&] { pack_padded_sequence(x, tensor({2, 3, 1}), false, false); }),
              HasSubstr("got 3 lengths for a batch of 2 sequences"));
  auto p = pack_padded_sequence(x, tensor({4, 3}));
  EXPECT_THAT(cohort::testing::error_of([&] { pad_packed_sequence(p, false, 0, 3); }),
              HasSubstr("total_length=3 is shorter than the longest sequence, 4 steps"));
  nn::LSTM lstm(5, 2);
  EXPECT_THAT(cohort::testing::error_of([&] { lstm->forward_with_packed_input(p); }),
              HasSubstr("LSTM: expected input_size=5"));
}
