// instance_norm (functional, and InstanceNorm1d/2d over training steps and eval), normalize,
// cosine_similarity, pairwise_distance and local_response_norm against PyTorch 1.13's values and
// gradients (tests/fixtures/norms.json, written by tests/fixtures/generate_norms.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/nn/functional/distance.h"
#include "cohort/nn/normalization.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/pytorch_fixture.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using json = nlohmann::json;
using testing::decode_tensor;
using testing::matches_pytorch;

const json& fixture() { return testing::load_fixture("norms.json"); }

double option(const json& o, const char* key, double fallback) { return o.contains(key) ? o.at(key).get<double>() : fallback; }

Tensor run(const json& c, const std::vector<Tensor>& in) {
  const json& o = c.at("options");
  const std::string op = o.at("op");
  if (op == "instance_norm") {
    auto opts = F::InstanceNormFuncOptions().eps(option(o, "eps", 1e-5));
    if (in.size() == 3) opts.weight(in[1]).bias(in[2]);
    return F::instance_norm(in[0], opts);
  }
  if (op == "normalize")
    return F::normalize(in[0], F::NormalizeFuncOptions()
                                   .p(option(o, "p", 2))
                                   .dim(static_cast<int64_t>(option(o, "dim", 1)))
                                   .eps(option(o, "eps", 1e-12)));
  if (op == "cosine_similarity")
    return F::cosine_similarity(in[0], in[1], F::CosineSimilarityFuncOptions()
                                                  .dim(static_cast<int64_t>(option(o, "dim", 1)))
                                                  .eps(option(o, "eps", 1e-8)));
  if (op == "pairwise_distance")
    return F::pairwise_distance(in[0], in[1], F::PairwiseDistanceFuncOptions()
                                                  .p(option(o, "p", 2))
                                                  .eps(option(o, "eps", 1e-6))
                                                  .keepdim(o.value("keepdim", false)));
  if (op == "local_response_norm")
    return F::local_response_norm(in[0], F::LocalResponseNormFuncOptions(static_cast<int64_t>(option(o, "size", 1)))
                                             .alpha(option(o, "alpha", 1e-4))
                                             .beta(option(o, "beta", 0.75))
                                             .k(option(o, "k", 1)));
  ADD_FAILURE() << "unknown op " << op;
  return {};
}

TEST(NormFixture, FunctionalFormsMatchPyTorch) {
  int checked = 0;
  for (const json& c : fixture().at("functional")) {
    if (!c.contains("options")) continue;
    const std::string name = c.at("name");
    std::vector<Tensor> in;
    for (const json& t : c.at("inputs")) in.push_back(decode_tensor(t).requires_grad_());
    Tensor out = run(c, in);
    EXPECT_TRUE(matches_pytorch(name + " output", out, c.at("output")));
    auto grads = autograd::grad({(out * decode_tensor(c.at("upstream"))).sum()}, in);
    for (size_t i = 0; i < grads.size(); ++i)
      EXPECT_TRUE(matches_pytorch(name + " grad " + std::to_string(i), grads[i], c.at("grads")[i], 1e-9));
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(NormFixture, InstanceNormRunningStatistics) {
  for (const json& c : fixture().at("functional")) {
    if (c.at("name") != "instance_norm_running") continue;
    Tensor x = decode_tensor(c.at("input"));
    Tensor mean = decode_tensor(c.at("running_mean")), var = decode_tensor(c.at("running_var"));
    Tensor y = F::instance_norm(x, F::InstanceNormFuncOptions().running_mean(mean).running_var(var).momentum(0.2));
    EXPECT_TRUE(matches_pytorch("instance_norm training output", y, c.at("output")));
    EXPECT_TRUE(matches_pytorch("instance_norm running_mean", mean, c.at("new_running_mean")));
    EXPECT_TRUE(matches_pytorch("instance_norm running_var", var, c.at("new_running_var")));
    Tensor eval = F::instance_norm(x, F::InstanceNormFuncOptions()
                                          .running_mean(decode_tensor(c.at("running_mean")))
                                          .running_var(decode_tensor(c.at("running_var")))
                                          .use_input_stats(false));
    EXPECT_TRUE(matches_pytorch("instance_norm eval output", eval, c.at("eval_output")));
    return;
  }
  FAIL() << "no instance_norm_running case";
}

template <class Impl>
void run_module_case(const json& c) {
  const std::string name = c.at("name");
  auto o = nn::InstanceNormOptions(c.at("num_features").get<int64_t>())
               .eps(c.at("eps").get<double>())
               .momentum(c.at("momentum").get<double>())
               .affine(c.at("affine").get<bool>())
               .track_running_stats(c.at("track_running_stats").get<bool>());
  auto m = std::make_shared<Impl>(o);
  m->to(kFloat64);
  if (o.affine()) {
    NoGradGuard no_grad;
    m->weight.copy_(decode_tensor(c.at("weight")));
    m->bias.copy_(decode_tensor(c.at("bias")));
  }
  int step = 0;
  for (const json& s : c.at("steps")) {
    const std::string what = name + " step " + std::to_string(++step);
    Tensor x = decode_tensor(s.at("input")).requires_grad_();
    Tensor y = m->forward(x);
    EXPECT_TRUE(matches_pytorch(what + " output", y, s.at("output")));
    std::vector<Tensor> wrt{x};
    if (o.affine()) wrt.push_back(m->weight), wrt.push_back(m->bias);
    auto g = autograd::grad({(y * decode_tensor(s.at("upstream"))).sum()}, wrt);
    for (size_t i = 0; i < g.size(); ++i)
      EXPECT_TRUE(matches_pytorch(what + " grad " + std::to_string(i), g[i], s.at("grads")[i], 1e-9));
  }
  if (o.track_running_stats()) {
    EXPECT_TRUE(matches_pytorch(name + " running_mean", m->running_mean, c.at("running_mean")));
    EXPECT_TRUE(matches_pytorch(name + " running_var", m->running_var, c.at("running_var")));
  } else {
    EXPECT_TRUE(c.at("running_mean").is_null()) << name;
    EXPECT_FALSE(m->running_mean.defined()) << name;
  }
  m->eval();
  EXPECT_TRUE(matches_pytorch(name + " eval output", m->forward(decode_tensor(c.at("eval").at("input"))),
                              c.at("eval").at("output")));
}

TEST(NormFixture, InstanceNormModulesOverTrainingAndEval) {
  int checked = 0;
  for (const json& c : fixture().at("modules")) {
    if (c.at("dims") == 1)
      run_module_case<nn::InstanceNorm1dImpl>(c);
    else
      run_module_case<nn::InstanceNorm2dImpl>(c);
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace cohort
