// LBFGS against PyTorch (tests/fixtures/optim.json, "lbfgs"): 4 closure-driven steps on the optimizer
// fixtures' quadratic and on the Rosenbrock function, with fixed steps and with the strong-Wolfe line
// search; its state and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"
#include "support/pytorch_fixture.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/optim/lbfgs.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

using Params = std::vector<Tensor>;
using optim::LBFGS;
using optim::LBFGSOptions;

// The cohort side of every case of LBFGS_CASES in generate_optim.py, by name.
const std::map<std::string, LBFGSOptions>& cases() {
  static const std::map<std::string, LBFGSOptions> m = {
      {"lbfgs", LBFGSOptions(0.5).max_iter(3).history_size(2)},
      {"lbfgs_strong_wolfe", LBFGSOptions(1).max_iter(3).line_search_fn("strong_wolfe")},
      {"lbfgs_rosenbrock", LBFGSOptions(0.02).max_iter(4).history_size(3)},
      {"lbfgs_rosenbrock_strong_wolfe",
       LBFGSOptions(1).max_iter(8).max_eval(12).history_size(5).line_search_fn("strong_wolfe")},
  };
  return m;
}

// Looser than the other optimizers' 1e-10: Rosenbrock's narrow valley amplifies the last-bit
// differences of the dot products over some 30 closure calls (1.1e-10 by the fourth step).
constexpr double kTolerance = 1e-9;

const json& fixture() { return cohort::testing::load_fixture("optim.json"); }

Tensor from_json(const json& values, Shape shape) { return tensor(values.get<std::vector<double>>()).reshape(shape); }

// The parameters and loss of one fixture problem.
struct Problem {
  Params params;
  std::function<Tensor()> loss;
};

Problem problem(const std::string& name) {
  if (name == "rosenbrock") {
    Tensor xy = tensor(std::vector<double>{-1.5, 2.0}).requires_grad_();
    return {{xy}, [xy] {
              Tensor x = xy[0], y = xy[1];
              return (1 - x).pow(2) + 100 * (y - x.pow(2)).pow(2);
            }};
  }
  const json& init = fixture()["init"];
  Tensor W = from_json(init["W"], {2, 3}).requires_grad_(), b = from_json(init["b"], {2}).requires_grad_();
  Tensor X = from_json(init["X"], {4, 3}), Y = from_json(init["Y"], {4, 2});
  return {{W, b}, [=] { return (matmul(X, W.t()) + b - Y).pow(2).sum({1}).mean() + 0.1 * b.pow(2).sum(); }};
}

}  // namespace

TEST(LBFGSFixture, EveryCaseHasACohortSide) {
  std::set<std::string> fixture_names, table_names;
  for (const auto& [name, _] : fixture()["lbfgs"].items()) fixture_names.insert(name);
  for (const auto& [name, _] : cases()) table_names.insert(name);
  EXPECT_EQ(fixture_names, table_names);
}

TEST(LBFGSFixture, TrajectoriesMatchPyTorch) {
  for (const auto& [name, options] : cases()) {
    SCOPED_TRACE(name);
    const json& c = fixture()["lbfgs"][name];
    Problem p = problem(c["problem"].get<std::string>());
    LBFGS opt(p.params, options);
    auto closure = [&] {
      opt.zero_grad();
      Tensor loss = p.loss();
      loss.backward();
      return loss;
    };
    for (size_t s = 0; s < c["steps"].size(); ++s) {
      const json& expected = c["steps"][s];
      Tensor loss = opt.step(closure);
      EXPECT_NEAR(loss.item<double>(), expected["loss"].get<double>(), kTolerance) << "loss of step " << s + 1;
      for (size_t i = 0; i < p.params.size(); ++i) {
        Tensor got = p.params[i].detach().reshape({-1});
        const auto want = expected["params"][i].get<std::vector<double>>();
        ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
        for (size_t k = 0; k < want.size(); ++k)
          EXPECT_NEAR(got[static_cast<int64_t>(k)].item<double>(), want[k], kTolerance)
              << "parameter " << i << " element " << k << " after step " << s + 1;
      }
    }
  }
}

TEST(LBFGS, StateUnderPyTorchNames) {
  Problem p = problem("quadratic");
  LBFGS opt(p.params, LBFGSOptions(1).max_iter(6).history_size(2));
  opt.step([&] {
    opt.zero_grad();
    Tensor loss = p.loss();
    loss.backward();
    return loss;
  });
  optim::OptimizerState s = opt.state_dict();
  // Six iterations, each evaluating the closure once except the last.
  EXPECT_EQ(s.scalars.at("state.0.n_iter"), 6);
  EXPECT_EQ(s.scalars.at("state.0.func_evals"), 6);
  EXPECT_EQ(s.tensors.at("state.0.d").sizes(), IntArrayRef({8}));  // flat over W [2, 3] and b [2]
  EXPECT_TRUE(s.tensors.count("state.0.prev_flat_grad"));
  EXPECT_TRUE(s.tensors.count("state.0.old_dirs.1"));  // history_size pairs kept
  EXPECT_FALSE(s.tensors.count("state.0.old_dirs.2"));
  EXPECT_TRUE(s.scalars.count("state.0.ro.0"));
  EXPECT_TRUE(s.scalars.count("state.0.H_diag"));
  EXPECT_EQ(s.scalars.at("param_groups.0.max_eval"), 7);  // max_iter * 5 / 4
}

TEST(LBFGS, Errors) {
  Params p{zeros({2}, kFloat64).requires_grad_()};
  EXPECT_THAT(error_of([&] { LBFGS o(p, LBFGSOptions(-1)); }), HasSubstr("LBFGS: learning rate must be non-negative, got -1"));
  EXPECT_THAT(error_of([&] { LBFGS o(p, LBFGSOptions().max_iter(0)); }), HasSubstr("LBFGS: max_iter must be at least 1, got 0"));
  EXPECT_THAT(error_of([&] { LBFGS o(p, LBFGSOptions().history_size(0)); }), HasSubstr("history_size must be at least 1"));
  EXPECT_THAT(error_of([&] { LBFGS o(p, LBFGSOptions().tolerance_grad(-1)); }), HasSubstr("tolerance_grad must be non-negative"));
  EXPECT_THAT(error_of([&] { LBFGS o(p, LBFGSOptions().line_search_fn("backtracking")); }),
              HasSubstr("LBFGS: line_search_fn must be \"strong_wolfe\" or unset, got \"backtracking\""));
  std::vector<optim::OptimizerParamGroup> groups{p, Params{zeros({1}).requires_grad_()}};
  EXPECT_THAT(error_of([&] { LBFGS o(groups); }), HasSubstr("LBFGS: expected exactly one parameter group, got 2"));
  LBFGS opt(p);
  optim::Optimizer& base = opt;
  EXPECT_THAT(error_of([&] { base.step(); }), HasSubstr("LBFGS: step needs a closure"));
}
