// Optimizers against PyTorch (tests/fixtures/optim.json, written by tests/fixtures/generate_optim.py):
// 5 steps of each configuration on a fixed float64 problem; state-dict round trips; parameter
// groups, zero_grad, closures; and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include "support/error_of.h"

#include <functional>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "cohort/autograd/grad_mode.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/optim/adadelta.h"
#include "cohort/optim/adagrad.h"
#include "cohort/optim/adam.h"
#include "cohort/optim/adamax.h"
#include "cohort/optim/nadam.h"
#include "cohort/optim/radam.h"
#include "cohort/optim/rmsprop.h"
#include "cohort/optim/sgd.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

using Params = std::vector<Tensor>;
using Factory = std::function<std::unique_ptr<optim::Optimizer>(const Params&)>;

template <class O>
optim::OptimizerParamGroup group(Params params, const O& options) {
  return optim::OptimizerParamGroup(std::move(params), std::make_unique<O>(options));
}

// The cohort side of every optimizer case in generate_optim.py, by name; params are {W, b}.
const std::map<std::string, Factory>& cases() {
  using namespace optim;
  static const std::map<std::string, Factory> m = {
      {"sgd", [](const Params& p) { return std::make_unique<SGD>(p, SGDOptions(0.05)); }},
      {"sgd_momentum", [](const Params& p) { return std::make_unique<SGD>(p, SGDOptions(0.05).momentum(0.9)); }},
      {"sgd_nesterov_wd",
       [](const Params& p) {
         return std::make_unique<SGD>(p, SGDOptions(0.05).momentum(0.8).nesterov(true).weight_decay(0.1));
       }},
      {"sgd_dampening",
       [](const Params& p) { return std::make_unique<SGD>(p, SGDOptions(0.05).momentum(0.9).dampening(0.3)); }},
      {"sgd_groups",
       [](const Params& p) {
         std::vector<OptimizerParamGroup> groups{group({p[0]}, SGDOptions(0.05).momentum(0.9)),
                                                 group({p[1]}, SGDOptions(0.02))};
         return std::make_unique<SGD>(groups, SGDOptions(0.05));
       }},
      {"adam", [](const Params& p) { return std::make_unique<Adam>(p, AdamOptions(0.01)); }},
      {"adam_amsgrad_wd",
       [](const Params& p) {
         return std::make_unique<Adam>(
             p, AdamOptions(0.02).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.05).amsgrad(true));
       }},
      {"adamw", [](const Params& p) { return std::make_unique<AdamW>(p, AdamWOptions(0.01).weight_decay(0.1)); }},
      {"adamw_amsgrad",
       [](const Params& p) { return std::make_unique<AdamW>(p, AdamWOptions(0.03).betas({0.5, 0.7}).amsgrad(true)); }},
      {"rmsprop", [](const Params& p) { return std::make_unique<RMSprop>(p, RMSpropOptions(0.01)); }},
      {"rmsprop_centered_momentum",
       [](const Params& p) {
         return std::make_unique<RMSprop>(
             p, RMSpropOptions(0.01).alpha(0.9).eps(1e-6).weight_decay(0.05).momentum(0.5).centered(true));
       }},
      {"adagrad", [](const Params& p) { return std::make_unique<Adagrad>(p, AdagradOptions(0.1)); }},
      {"adagrad_lr_decay",
       [](const Params& p) {
         return std::make_unique<Adagrad>(
             p, AdagradOptions(0.1).lr_decay(0.05).weight_decay(0.02).initial_accumulator_value(0.1).eps(1e-8));
       }},
      // PyTorch 2.x's optimizers (generate_optim.py's OPTIMIZERS_2X).
      {"adamax", [](const Params& p) { return std::make_unique<Adamax>(p, AdamaxOptions(0.02)); }},
      {"adamax_wd",
       [](const Params& p) {
         return std::make_unique<Adamax>(p, AdamaxOptions(0.05).betas({0.8, 0.95}).eps(1e-6).weight_decay(0.05));
       }},
      {"adadelta", [](const Params& p) { return std::make_unique<Adadelta>(p); }},
      {"adadelta_wd",
       [](const Params& p) {
         return std::make_unique<Adadelta>(p, AdadeltaOptions(0.5).rho(0.8).eps(1e-5).weight_decay(0.1));
       }},
      {"nadam", [](const Params& p) { return std::make_unique<NAdam>(p, NAdamOptions(0.01)); }},
      {"nadam_wd",
       [](const Params& p) {
         return std::make_unique<NAdam>(
             p, NAdamOptions(0.02).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.05).momentum_decay(0.01));
       }},
      {"nadam_decoupled",
       [](const Params& p) {
         return std::make_unique<NAdam>(p, NAdamOptions(0.02).weight_decay(0.1).decoupled_weight_decay(true));
       }},
      {"radam", [](const Params& p) { return std::make_unique<RAdam>(p, RAdamOptions(0.01).betas({0.9, 0.9})); }},
      {"radam_wd",
       [](const Params& p) {
         return std::make_unique<RAdam>(p, RAdamOptions(0.02).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.05));
       }},
      {"radam_decoupled",
       [](const Params& p) {
         return std::make_unique<RAdam>(
             p, RAdamOptions(0.02).betas({0.9, 0.9}).weight_decay(0.1).decoupled_weight_decay(true));
       }},
  };
  return m;
}

const json& fixture() { return cohort::testing::load_fixture("optim.json"); }

Tensor from_json(const json& values, Shape shape) {
  return tensor(values.get<std::vector<double>>()).reshape(shape);
}

// The fixed problem: W [2, 3], b [2], loss = mean_rows(sum((X W^T + b - Y)^2)) + 0.1 sum(b^2).
struct Problem {
  Tensor W, b, X, Y;
  Problem() {
    const json& init = fixture()["init"];
    W = from_json(init["W"], {2, 3}).requires_grad_();
    b = from_json(init["b"], {2}).requires_grad_();
    X = from_json(init["X"], {4, 3});
    Y = from_json(init["Y"], {4, 2});
  }
  Params params() const { return {W, b}; }
  Tensor loss() const {
    return (matmul(X, W.t()) + b - Y).pow(2).sum({1}).mean() + 0.1 * b.pow(2).sum();
  }
  void step(optim::Optimizer& opt) const {
    opt.zero_grad();
    loss().backward();
    opt.step();
  }
};

void expect_values(const Tensor& t, const json& expected, const std::string& what) {
  Tensor flat = t.detach().contiguous().reshape({-1});
  ASSERT_EQ(flat.numel(), static_cast<int64_t>(expected.size())) << what;
  const double* d = flat.data_ptr<double>();
  for (int64_t i = 0; i < flat.numel(); ++i)
    EXPECT_NEAR(d[i], expected[i].get<double>(), 1e-10) << what << " element " << i;
}

}  // namespace

TEST(OptimFixture, EveryCaseHasACohortSide) {
  std::set<std::string> fixture_names, table_names;
  for (const auto& [name, _] : fixture()["optimizers"].items()) fixture_names.insert(name);
  for (const auto& [name, _] : cases()) table_names.insert(name);
  EXPECT_EQ(fixture_names, table_names);
}

TEST(OptimFixture, TrajectoriesMatchPyTorch) {
  for (const auto& [name, make] : cases()) {
    SCOPED_TRACE(name);
    Problem problem;
    auto opt = make(problem.params());
    const json& steps = fixture()["optimizers"][name];
    for (size_t s = 0; s < steps.size(); ++s) {
      problem.step(*opt);
      expect_values(problem.W, steps[s][0], name + " W after step " + std::to_string(s + 1));
      expect_values(problem.b, steps[s][1], name + " b after step " + std::to_string(s + 1));
    }
  }
}

TEST(OptimStateDict, RoundTripContinuesLikeUninterrupted) {
  for (const auto& [name, make] : cases()) {
    SCOPED_TRACE(name);
    Problem uninterrupted, interrupted;
    auto a = make(uninterrupted.params());
    auto b = make(interrupted.params());
    for (int s = 0; s < 2; ++s) {
      uninterrupted.step(*a);
      interrupted.step(*b);
    }
    optim::OptimizerState saved = b->state_dict();
    // A fresh problem and optimizer, with the parameter values copied in: a restart from a checkpoint.
    Problem resumed;
    {
      NoGradGuard no_grad;
      resumed.W.copy_(interrupted.W);
      resumed.b.copy_(interrupted.b);
    }
    auto c = make(resumed.params());
    c->load_state_dict(saved);
    for (int s = 0; s < 3; ++s) {
      uninterrupted.step(*a);
      resumed.step(*c);
    }
    EXPECT_TRUE(equal(uninterrupted.W.detach(), resumed.W.detach()));
    EXPECT_TRUE(equal(uninterrupted.b.detach(), resumed.b.detach()));
  }
}

TEST(OptimStateDict, KeysAndCopies) {
  Problem problem;
  optim::Adam opt(problem.params(), optim::AdamOptions(0.01).amsgrad(true));
  problem.step(opt);
  optim::OptimizerState s = opt.state_dict();
  EXPECT_EQ(s.scalars.at("param_groups.0.lr"), 0.01);
  EXPECT_EQ(s.scalars.at("param_groups.0.betas.1"), 0.999);
  EXPECT_EQ(s.scalars.at("param_groups.0.num_params"), 2);
  EXPECT_EQ(s.scalars.at("state.1.step"), 1);
  EXPECT_EQ(s.tensors.at("state.1.exp_avg").sizes(), IntArrayRef({2}));
  EXPECT_TRUE(s.tensors.count("state.0.max_exp_avg_sq"));
  // The saved tensors are copies: later steps do not change them.
  Tensor saved = s.tensors.at("state.0.exp_avg").clone();
  problem.step(opt);
  EXPECT_TRUE(equal(saved, s.tensors.at("state.0.exp_avg")));
}

TEST(OptimStateDict, MismatchesThrowAndLeaveTheOptimizerUnchanged) {
  Problem problem;
  optim::SGD sgd(problem.params(), optim::SGDOptions(0.05).momentum(0.9));
  problem.step(sgd);
  optim::OptimizerState good = sgd.state_dict();

  // Fewer parameters.
  optim::SGD one(Params{problem.W}, optim::SGDOptions(0.05).momentum(0.9));
  EXPECT_THAT(error_of([&] { one.load_state_dict(good); }), HasSubstr("group 0 has 2 parameters in the state, 1"));

  // A mis-shaped state tensor, named in the message.
  optim::OptimizerState bad = good;
  bad.tensors["state.1.momentum_buffer"] = zeros({3}, kFloat64);
  optim::SGD other(problem.params(), optim::SGDOptions(0.5));
  std::string e = error_of([&] { other.load_state_dict(bad); });
  EXPECT_THAT(e, HasSubstr("'state.1.momentum_buffer' has shape [3], parameter 1 has shape [2]"));
  EXPECT_EQ(other.get_lr(), 0.5);  // unchanged
  EXPECT_TRUE(other.state().empty());

  // Another optimizer's state.
  optim::Adam adam(problem.params());
  e = error_of([&] { adam.load_state_dict(good); });
  EXPECT_THAT(e, HasSubstr("Adam: load_state_dict"));
  EXPECT_THAT(e, HasSubstr("option 'momentum', unknown to Adam"));
  EXPECT_THAT(e, HasSubstr("lacks option 'betas.0'"));

  // Another group count.
  std::vector<optim::OptimizerParamGroup> groups{Params{problem.W}, Params{problem.b}};
  optim::SGD two(groups, optim::SGDOptions(0.05).momentum(0.9));
  EXPECT_THAT(error_of([&] { two.load_state_dict(good); }), HasSubstr("the state has 1 parameter groups"));

  // A state index past the parameters, and a stray key.
  bad = good;
  bad.scalars["state.7.step"] = 1;
  bad.scalars["lr"] = 1;
  e = error_of([&] { sgd.load_state_dict(bad); });
  EXPECT_THAT(e, HasSubstr("'state.7.step' names parameter 7, but the optimizer has 2"));
  EXPECT_THAT(e, HasSubstr("unexpected key 'lr'"));
}

TEST(OptimStateDict, LoadRestoresOptions) {
  Problem problem;
  optim::SGD a(problem.params(), optim::SGDOptions(0.05).momentum(0.9).nesterov(true));
  optim::SGD b(problem.params(), optim::SGDOptions(0.5));
  b.load_state_dict(a.state_dict());
  const auto& o = static_cast<const optim::SGDOptions&>(b.param_groups()[0].options());
  EXPECT_EQ(o.lr(), 0.05);
  EXPECT_EQ(o.momentum(), 0.9);
  EXPECT_TRUE(o.nesterov());
}

TEST(Optim, SkipsParametersWithoutGrad) {
  Problem problem;
  Tensor unused = ones({3}, kFloat64).requires_grad_();
  for (const auto& [name, make] : cases()) {
    if (name == "sgd_groups") continue;
    SCOPED_TRACE(name);
    auto opt = make({problem.W, problem.b, unused});
    problem.step(*opt);
    EXPECT_FALSE(unused.grad().defined());
    EXPECT_TRUE(equal(unused.detach(), ones({3}, kFloat64)));
    EXPECT_FALSE(opt->state().count(unused.unsafe_impl()));
    EXPECT_TRUE(problem.W.is_leaf());  // still a leaf after in-place updates
  }
}

TEST(Optim, ZeroGrad) {
  Problem problem;
  optim::SGD opt(problem.params(), optim::SGDOptions(0.1));
  problem.loss().backward();
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(problem.W.grad().defined());
  EXPECT_TRUE(equal(problem.W.grad(), zeros({2, 3}, kFloat64)));
  opt.zero_grad();
  EXPECT_FALSE(problem.W.grad().defined());
}

TEST(Optim, StepWithClosureReturnsTheLoss) {
  Problem problem, reference;
  optim::Adam opt(problem.params(), optim::AdamOptions(0.01));
  optim::Adam ref(reference.params(), optim::AdamOptions(0.01));
  NoGradGuard no_grad;  // the closure runs with grad mode on regardless
  Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = problem.loss();
    l.backward();
    return l;
  });
  ASSERT_TRUE(loss.defined());
  EXPECT_FALSE(opt.step().defined());  // no closure: no loss (and a second update)
  {
    EnableGradGuard grad_on;
    reference.step(ref);
    ref.step();  // the same stale grads as opt's second step
    EXPECT_NEAR(loss.item<double>(), Problem().loss().item<double>(), 1e-15);
  }
  EXPECT_TRUE(equal(problem.W.detach(), reference.W.detach()));
}

TEST(Optim, ParamGroupsAndLearningRates) {
  Problem problem;
  Tensor extra = zeros({2}, kFloat64).requires_grad_();
  std::vector<optim::OptimizerParamGroup> groups{Params{problem.W}, group({problem.b}, optim::SGDOptions(0.02))};
  optim::SGD opt(groups, optim::SGDOptions(0.1).momentum(0.9));
  // A group without options takes a copy of the defaults.
  auto& g0 = static_cast<optim::SGDOptions&>(opt.param_groups()[0].options());
  EXPECT_EQ(g0.lr(), 0.1);
  EXPECT_EQ(g0.momentum(), 0.9);
  EXPECT_EQ(static_cast<optim::SGDOptions&>(opt.param_groups()[1].options()).momentum(), 0);
  g0.lr(0.3);  // the libtorch way
  EXPECT_EQ(opt.get_lr(0), 0.3);
  EXPECT_EQ(opt.defaults().get_lr(), 0.1);  // a copy, not the defaults
  opt.set_lr(1, 0.04);
  EXPECT_EQ(opt.get_lr(1), 0.04);
  opt.set_lr(0.5);
  EXPECT_EQ(opt.get_lr(0), 0.5);
  EXPECT_EQ(opt.get_lr(1), 0.5);
  opt.add_param_group(Params{extra});
  EXPECT_EQ(opt.param_groups().size(), 3u);
  EXPECT_EQ(opt.size(), 3u);
  EXPECT_EQ(opt.parameters().size(), 3u);
  EXPECT_THROW(opt.get_lr(3), IndexError);
}

TEST(Optim, UpdatesAModuleInPlace) {
  nn::Linear fc(3, 2);
  optim::SGD opt(fc->parameters(), optim::SGDOptions(0.1));
  Tensor before = fc->weight.detach().clone();
  Tensor x = ones({4, 3});
  fc->forward(x).sum().backward();
  opt.step();
  // d(sum)/dW = 4 for every weight.
  EXPECT_TRUE(allclose(fc->weight.detach(), before - 0.4, 1e-6, 1e-6));
  EXPECT_TRUE(fc->weight.is_leaf());
}

TEST(OptimErrors, InvalidOptions) {
  Params p{zeros({2}).requires_grad_()};
  using namespace optim;
  EXPECT_THAT(error_of([&] { SGD o(p, SGDOptions(-0.1)); }), HasSubstr("SGD: learning rate must be non-negative, got -0.1"));
  EXPECT_THAT(error_of([&] { SGD o(p, SGDOptions(0.1).momentum(-1)); }), HasSubstr("momentum must be non-negative"));
  EXPECT_THAT(error_of([&] { SGD o(p, SGDOptions(0.1).nesterov(true)); }),
              HasSubstr("Nesterov momentum requires a momentum and zero dampening"));
  EXPECT_THAT(error_of([&] { SGD o(p, SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)); }),
              HasSubstr("dampening=0.1"));
  EXPECT_THAT(error_of([&] { Adam o(p, AdamOptions(-1)); }), HasSubstr("Adam: learning rate"));
  EXPECT_THAT(error_of([&] { Adam o(p, AdamOptions().betas({1.0, 0.9})); }), HasSubstr("betas[0] must be in [0, 1), got 1"));
  EXPECT_THAT(error_of([&] { AdamW o(p, AdamWOptions().eps(-1)); }), HasSubstr("AdamW: eps must be non-negative"));
  EXPECT_THAT(error_of([&] { RMSprop o(p, RMSpropOptions().alpha(-0.5)); }), HasSubstr("RMSprop: alpha"));
  EXPECT_THAT(error_of([&] { Adagrad o(p, AdagradOptions().lr_decay(-1)); }), HasSubstr("Adagrad: lr_decay"));
  EXPECT_THAT(error_of([&] { Adamax o(p, AdamaxOptions(-0.1)); }),
              HasSubstr("Adamax: learning rate must be non-negative, got -0.1"));
  EXPECT_THAT(error_of([&] { Adamax o(p, AdamaxOptions().betas({0.9, 1.0})); }),
              HasSubstr("Adamax: betas[1] must be in [0, 1), got 1"));
  EXPECT_THAT(error_of([&] { Adadelta o(p, AdadeltaOptions().rho(1.5)); }), HasSubstr("Adadelta: rho must be in [0, 1], got 1.5"));
  EXPECT_THAT(error_of([&] { Adadelta o(p, AdadeltaOptions().eps(-1)); }), HasSubstr("Adadelta: eps must be non-negative"));
  EXPECT_THAT(error_of([&] { NAdam o(p, NAdamOptions().momentum_decay(-1)); }),
              HasSubstr("NAdam: momentum_decay must be non-negative, got -1"));
  EXPECT_THAT(error_of([&] { NAdam o(p, NAdamOptions().betas({-0.1, 0.9})); }), HasSubstr("NAdam: betas[0] must be in [0, 1)"));
  EXPECT_THAT(error_of([&] { RAdam o(p, RAdamOptions().weight_decay(-1)); }),
              HasSubstr("RAdam: weight_decay must be non-negative, got -1"));
  // A group's own options are checked too.
  std::vector<OptimizerParamGroup> groups{group(p, SGDOptions(-2))};
  EXPECT_THAT(error_of([&] { SGD o(groups, SGDOptions(0.1)); }), HasSubstr("got -2"));
}

TEST(OptimErrors, BadParameters) {
  Tensor w = zeros({2}).requires_grad_();
  using namespace optim;
  EXPECT_THAT(error_of([&] { SGD o(Params{w, w}, SGDOptions(0.1)); }),
              HasSubstr("appears in more than one parameter group"));
  SGD opt(Params{w}, SGDOptions(0.1));
  EXPECT_THAT(error_of([&] { opt.add_param_group(Params{w}); }), HasSubstr("more than one parameter group"));
  Tensor non_leaf = w * 2;
  EXPECT_THAT(error_of([&] { SGD o(Params{non_leaf}, SGDOptions(0.1)); }), HasSubstr("can't optimize a non-leaf"));
  Adagrad ada(Params{zeros({1}).requires_grad_()});
  EXPECT_THAT(error_of([&] { ada.param_groups()[0].options().get_momentum(); }), HasSubstr("has no momentum"));
  OptimizerParamGroup bare(Params{w});
  EXPECT_THAT(error_of([&] { bare.options(); }), HasSubstr("has no options yet"));
}
