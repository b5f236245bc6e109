// cohort against values dumped from PyTorch (tests/fixtures/ops.json, written by
// tests/fixtures/generate.py): outputs and gradients of sum(output * weights) for ~90 ops in float64,
// and the result dtype and values of type-promotion cases.
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/padding.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/reorder.h"
#include "cohort/ops/scatter.h"
#include "cohort/ops/shape.h"
#include "cohort/ops/unique.h"
#include "cohort/nn/functional/activation.h"
#include "cohort/nn/functional/loss.h"
#include "cohort/nn/linear.h"

namespace cohort {
namespace {

using json = nlohmann::json;
namespace F = nn::functional;
using In = std::vector<Tensor>;
using Out = std::vector<Tensor>;
using Op = std::function<Out(const In&)>;

// The cohort side of every case in generate.py, by name.
const std::map<std::string, Op>& cases() {
  static const std::map<std::string, Op> m = {
      {"add_broadcast", [](const In& x) { return Out{x[0] + x[1]}; }},
      {"sub_alpha", [](const In& x) { return Out{sub(x[0], x[1], 0.5)}; }},
      {"mul_0d", [](const In& x) { return Out{x[0] * x[1]}; }},
      {"div", [](const In& x) { return Out{x[0] / x[1]}; }},
      {"pow_tensor", [](const In& x) { return Out{pow(x[0], x[1])}; }},
      {"pow_scalar", [](const In& x) { return Out{pow(x[0], 2.5)}; }},
      {"maximum", [](const In& x) { return Out{maximum(x[0], x[1])}; }},
      {"minimum", [](const In& x) { return Out{minimum(x[0], x[1])}; }},
      {"exp", [](const In& x) { return Out{exp(x[0])}; }},
      {"log", [](const In& x) { return Out{log(x[0])}; }},
      {"sqrt", [](const In& x) { return Out{sqrt(x[0])}; }},
      {"rsqrt", [](const In& x) { return Out{rsqrt(x[0])}; }},
      {"abs", [](const In& x) { return Out{abs(x[0])}; }},
      {"sigmoid", [](const In& x) { return Out{sigmoid(x[0])}; }},
      {"tanh", [](const In& x) { return Out{tanh(x[0])}; }},
      {"relu", [](const In& x) { return Out{relu(x[0])}; }},
      {"sin", [](const In& x) { return Out{sin(x[0])}; }},
      {"cos", [](const In& x) { return Out{cos(x[0])}; }},
      {"reciprocal", [](const In& x) { return Out{reciprocal(x[0])}; }},
      {"clamp", [](const In& x) { return Out{clamp(x[0], -0.5, 0.5)}; }},
      {"where", [](const In& x) { return Out{where(x[0], x[1], x[2])}; }},
      {"masked_fill", [](const In& x) { return Out{masked_fill(x[0], x[1], -2.0)}; }},
      {"sum_dims_keepdim", [](const In& x) { return Out{sum(x[0], {0, 2}, true)}; }},
      {"mean_dim", [](const In& x) { return Out{mean(x[0], {1})}; }},
      {"prod", [](const In& x) { return Out{prod(x[0])}; }},
      {"max_dim", [](const In& x) { auto [v, i] = max(x[0], 1); return Out{v, i}; }},
      {"amax", [](const In& x) { return Out{amax(x[0], {0, 2})}; }},
      {"norm_2", [](const In& x) { return Out{norm(x[0])}; }},
      {"norm_1_dim", [](const In& x) { return Out{norm(x[0], 1, {1})}; }},
      {"norm_inf", [](const In& x) { return Out{norm(x[0], INFINITY)}; }},
      // Shape{1}, not {1}: a braced {1} converts to the bool `unbiased` overload (var over all dims).
      {"var_dim", [](const In& x) { return Out{var(x[0], Shape{1})}; }},
      {"std_biased", [](const In& x) { return Out{std(x[0], false)}; }},
      {"softmax", [](const In& x) { return Out{softmax(x[0], 1)}; }},
      {"log_softmax", [](const In& x) { return Out{log_softmax(x[0], -1)}; }},
      {"logsumexp", [](const In& x) { return Out{logsumexp(x[0], {1})}; }},
      {"mm", [](const In& x) { return Out{mm(x[0], x[1])}; }},
      {"bmm", [](const In& x) { return Out{bmm(x[0], x[1])}; }},
      {"matmul_broadcast", [](const In& x) { return Out{matmul(x[0], x[1])}; }},
      {"matmul_matrix_vector", [](const In& x) { return Out{matmul(x[0], x[1])}; }},
      {"addmm", [](const In& x) { return Out{addmm(x[0], x[1], x[2], 0.5, 2.0)}; }},
      {"dot", [](const In& x) { return Out{dot(x[0], x[1])}; }},
      {"outer", [](const In& x) { return Out{outer(x[0], x[1])}; }},
      {"einsum_bgi_gio", [](const In& x) { return Out{einsum("bgi,gio->bgo", x)}; }},
      {"einsum_gik_gkj", [](const In& x) { return Out{einsum("gik,gkj->gij", x)}; }},
      {"erf", [](const In& x) { return Out{erf(x[0])}; }},
      {"log1p", [](const In& x) { return Out{log1p(x[0])}; }},
      {"linear", [](const In& x) { return Out{F::linear(x[0], x[1], x[2])}; }},
      {"gelu", [](const In& x) { return Out{F::gelu(x[0])}; }},
      {"gelu_tanh", [](const In& x) { return Out{F::gelu(x[0], "tanh")}; }},
      {"leaky_relu", [](const In& x) { return Out{F::leaky_relu(x[0], 0.2)}; }},
      {"silu", [](const In& x) { return Out{F::silu(x[0])}; }},
      {"mse_loss", [](const In& x) { return Out{F::mse_loss(x[0], x[1])}; }},
      {"l1_loss_sum", [](const In& x) { return Out{F::l1_loss(x[0], x[1], kSum)}; }},
      {"smooth_l1_loss", [](const In& x) { return Out{F::smooth_l1_loss(x[0], x[1], kMean, 0.5)}; }},
      {"cross_entropy", [](const In& x) { return Out{F::cross_entropy(x[0], x[1])}; }},
      {"cross_entropy_none",
       [](const In& x) { return Out{F::cross_entropy(x[0], x[1], F::CrossEntropyOptions().reduction(kNone))}; }},
      {"cross_entropy_weight_ignore",
       [](const In& x) { return Out{F::cross_entropy(x[0], x[1], F::CrossEntropyOptions().weight(x[2].detach()).ignore_index(1))}; }},
      {"cross_entropy_smoothing",
       [](const In& x) { return Out{F::cross_entropy(x[0], x[1], F::CrossEntropyOptions().label_smoothing(0.1))}; }},
      {"cross_entropy_smoothing_weight_ignore",
       [](const In& x) {
         return Out{F::cross_entropy(x[0], x[1], F::CrossEntropyOptions().weight(x[2].detach()).ignore_index(2).label_smoothing(0.2))};
       }},
      {"cross_entropy_probs",
       [](const In& x) { return Out{F::cross_entropy(x[0], x[1].softmax(1), F::CrossEntropyOptions().label_smoothing(0.1))}; }},
      {"cross_entropy_nd", [](const In& x) { return Out{F::cross_entropy(x[0], x[1])}; }},
      {"nll_loss_sum",
       [](const In& x) { return Out{F::nll_loss(x[0].log_softmax(1), x[1], F::NLLLossOptions().reduction(kSum))}; }},
      {"bce", [](const In& x) { return Out{F::binary_cross_entropy(x[0], x[1], x[2])}; }},
      {"bce_with_logits_pos_weight",
       [](const In& x) { return Out{F::binary_cross_entropy_with_logits(x[0], x[1], Tensor(), x[2])}; }},
      {"gather", [](const In& x) { return Out{gather(x[0], 1, x[1])}; }},
      {"index_select", [](const In& x) { return Out{index_select(x[0], 0, x[1])}; }},
      {"scatter_add", [](const In& x) { return Out{scatter_add(x[0], 1, x[1], x[2])}; }},
      {"index_tensor", [](const In& x) { return Out{x[0].index({x[1]})}; }},
      {"cat", [](const In& x) { return Out{cat(x, 1)}; }},
      {"stack", [](const In& x) { return Out{stack(x, -1)}; }},
      {"permute_reshape", [](const In& x) { return Out{x[0].permute({2, 0, 1}).reshape({4, 6})}; }},
      {"repeat", [](const In& x) { return Out{x[0].repeat({2, 1, 2})}; }},
      {"expand_mul", [](const In& x) { return Out{x[0].expand({2, 3, 4}) * x[1]}; }},
      {"flip", [](const In& x) { return Out{flip(x[0], {0, 2})}; }},
      {"roll", [](const In& x) { return Out{roll(x[0], {1, -2}, {0, 2})}; }},
      {"unfold", [](const In& x) { return Out{unfold(x[0], 1, 3, 2)}; }},
      {"repeat_interleave_tensor",
       [](const In& x) { return Out{repeat_interleave(x[0], tensor(std::vector<int64_t>{1, 0, 2}), 0)}; }},
      {"scatter", [](const In& x) { return Out{scatter(x[0], 1, x[1], x[2])}; }},
      {"scatter_value", [](const In& x) { return Out{scatter(x[0], 1, x[1], 0.5)}; }},
      {"index_add", [](const In& x) { return Out{index_add(x[0], 0, x[1], x[2], 2.0)}; }},
      {"masked_scatter", [](const In& x) { return Out{masked_scatter(x[0], x[1], x[2])}; }},
      {"nonzero", [](const In& x) { return Out{nonzero(x[0])}; }},
      {"unique", [](const In& x) { auto [v, i, c] = _unique2(x[0], true, true, true); return Out{v, i, c}; }},
      {"unique_dim", [](const In& x) { auto [v, i, c] = unique_dim(x[0], 1, true, true, true); return Out{v, i, c}; }},
      {"constant_pad_nd", [](const In& x) { return Out{constant_pad_nd(x[0], {-1, 2, 1, 0}, 0.5)}; }},
      {"reflection_pad1d", [](const In& x) { return Out{reflection_pad1d(x[0], {2, 3})}; }},
      {"reflection_pad2d", [](const In& x) { return Out{reflection_pad2d(x[0], {1, 2, 2, 1})}; }},
      {"replication_pad1d", [](const In& x) { return Out{replication_pad1d(x[0], {4, 1})}; }},
      {"replication_pad2d", [](const In& x) { return Out{replication_pad2d(x[0], {1, 0, 2, 3})}; }},
      {"reflection_pad3d", [](const In& x) { return Out{reflection_pad3d(x[0], {1, 2, 0, 1, 2, 1})}; }},
      {"replication_pad3d", [](const In& x) { return Out{replication_pad3d(x[0], {2, 0, 1, 1, 0, 3})}; }},
      {"pad_circular1d", [](const In& x) { return Out{pad(x[0], {2, 3}, "circular")}; }},
      {"pad_circular2d", [](const In& x) { return Out{pad(x[0], {1, 2, 3, 0}, "circular")}; }},
      {"pad_circular3d", [](const In& x) { return Out{pad(x[0], {1, 1, 2, 0, 0, 2}, "circular")}; }},
      // Promotion cases.
      {"int32_plus_2.5", [](const In& x) { return Out{x[0] + 2.5}; }},
      {"uint8_plus_int64", [](const In& x) { return Out{x[0] + x[1]}; }},
      {"bool_plus_bool", [](const In& x) { return Out{x[0] + x[1]}; }},
      {"int_div_int", [](const In& x) { return Out{x[0] / x[1]}; }},
      {"float32_plus_float64_0d", [](const In& x) { return Out{x[0] + x[1]}; }},
      {"int64_plus_float64_0d", [](const In& x) { return Out{x[0] + x[1]}; }},
      {"int32_plus_int64_0d", [](const In& x) { return Out{x[0] + x[1]}; }},
      {"uint8_times_int32", [](const In& x) { return Out{x[0] * x[1]}; }},
      {"int32_plus_float64", [](const In& x) { return Out{x[0] + x[1]}; }},
      {"bool_plus_1", [](const In& x) { return Out{x[0] + 1}; }},
      {"int64_sum", [](const In& x) { return Out{x[0].sum()}; }},
      {"bool_sum", [](const In& x) { return Out{x[0].sum()}; }},
      {"int_lt_float", [](const In& x) { return Out{x[0] < 1.5}; }},
  };
  return m;
}

const json& fixture() { return testing::load_fixture("ops.json"); }

std::string shapes_of(const In& xs) {
  std::ostringstream os;
  for (const Tensor& x : xs) os << " " << dtype_name(x.dtype()) << x.sizes();
  return os.str();
}

TEST(FixtureOps, MatchPyTorchValuesAndGradients) {
  int checked = 0;
  for (const json& c : fixture().at("ops")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    auto it = cases().find(name);
    if (it == cases().end()) {
      ADD_FAILURE() << "no cohort op for fixture case " << name << " (add it to cases())";
      continue;
    }
    In xs;
    std::vector<Tensor> wrt;
    for (const json& j : c.at("inputs")) {
      xs.push_back(testing::decode_tensor(j));
      if (xs.back().dtype() == kFloat64) wrt.push_back(xs.back().requires_grad_(true));
    }
    const std::string what = name + " with inputs" + shapes_of(xs);
    try {
      Out outs = it->second(xs);
      ASSERT_EQ(outs.size(), c.at("outputs").size()) << what;
      Tensor loss;
      for (size_t o = 0; o < outs.size(); ++o) {
        EXPECT_TRUE(testing::matches_pytorch(what + ", output " + std::to_string(o), outs[o], c.at("outputs")[o], 1e-10));
        if (c.at("weights")[o].is_null()) continue;
        Tensor term = (outs[o] * testing::decode_tensor(c.at("weights")[o])).sum();
        loss = loss.defined() ? loss + term : term;
      }
      if (!loss.defined()) {  // integer results only (nonzero, unique): nothing to differentiate
        ++checked;
        continue;
      }
      std::vector<Tensor> grads = autograd::grad({loss}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);
      size_t k = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        if (c.at("grads")[i].is_null()) continue;
        Tensor g = grads[k++];
        if (!g.defined()) g = zeros_like(xs[i]);
        EXPECT_TRUE(testing::matches_pytorch(what + ", gradient of input " + std::to_string(i), g, c.at("grads")[i], 1e-10));
      }
      ++checked;
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": threw " << e.what();
    }
  }
  std::cout << "[ fixtures ] " << checked << " of " << fixture().at("ops").size() << " PyTorch op cases ran\n";
}

TEST(FixturePromotion, ResultDtypesAndValuesMatchPyTorch) {
  for (const json& c : fixture().at("promotion")) {
    const std::string name = c.at("name");
    auto it = cases().find(name);
    ASSERT_NE(it, cases().end()) << "no cohort op for promotion case " << name;
    In xs;
    for (const json& j : c.at("inputs")) xs.push_back(testing::decode_tensor(j));
    try {
      EXPECT_TRUE(testing::matches_pytorch(name + " with inputs" + shapes_of(xs), it->second(xs)[0], c.at("output"), 1e-6));
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": threw " << e.what();
    }
  }
}

}  // namespace
}  // namespace cohort
