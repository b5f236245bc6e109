// The optimizers that follow PyTorch 2.x (Adamax, Adadelta, NAdam, RAdam) saved as Python's
// optimizer.state_dict(): 2.x's option names and order, betas as a tuple, flags as bools, "step" and
// NAdam's "mu_product" as 0-d tensors; and a save/load through a stream resumes the same trajectory.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>

#include "cohort/io/serialize.h"
#include "cohort/io/torch_file.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/optim/adadelta.h"
#include "cohort/optim/adamax.h"
#include "cohort/optim/nadam.h"
#include "cohort/optim/radam.h"

using namespace cohort;

namespace {

using Make = std::function<std::unique_ptr<optim::Optimizer>(const std::vector<Tensor>&)>;

struct Case {
  const char* name;
  Make make;
  std::vector<std::string> options;  // PyTorch 2.x's param_groups keys, in order
};

std::vector<Case> cases() {
  using namespace optim;
  return {
      {"Adamax", [](const auto& p) { return std::make_unique<Adamax>(p, AdamaxOptions(0.05).weight_decay(0.1)); },
       {"lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable", "capturable", "params"}},
      {"Adadelta", [](const auto& p) { return std::make_unique<Adadelta>(p, AdadeltaOptions(0.5).rho(0.8)); },
       {"lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach", "differentiable", "params"}},
      {"NAdam",
       [](const auto& p) {
         return std::make_unique<NAdam>(p, NAdamOptions(0.02).weight_decay(0.1).decoupled_weight_decay(true));
       },
       {"lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize", "foreach",
        "capturable", "differentiable", "params"}},
      {"RAdam",
       [](const auto& p) {
         return std::make_unique<RAdam>(p, RAdamOptions(0.02).betas({0.9, 0.9}).decoupled_weight_decay(true));
       },
       {"lr", "betas", "eps", "weight_decay", "maximize", "foreach", "capturable", "decoupled_weight_decay",
        "differentiable", "params"}},
  };
}

// A quadratic bowl with an off-centre minimum; float64 so that equal trajectories are equal bits.
void step(optim::Optimizer& opt, const Tensor& w) {
  opt.zero_grad();
  (w - tensor(std::vector<double>{1.0, -2.0, 0.5})).pow(2).sum().backward();
  opt.step();
}

Tensor start() { return tensor(std::vector<double>{0.3, 0.1, -0.4}).requires_grad_(); }

}  // namespace

TEST(OptimTorchFile, PyTorch2Layout) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Tensor w = start();
    auto opt = c.make({w});
    step(*opt, w);
    std::stringstream file;
    cohort::save(*opt, file);
    io::PyValue v = io::read_torch_stream(file);
    const io::PyValue& group = v.find("param_groups")->items().at(0);
    std::vector<std::string> keys;
    for (const auto& [key, _] : group.dict_items()) keys.push_back(key.to_string());
    EXPECT_EQ(keys, c.options);
    if (const io::PyValue* betas = group.find("betas")) EXPECT_TRUE(betas->is_tuple());
    if (const io::PyValue* flag = group.find("decoupled_weight_decay")) {
      ASSERT_TRUE(flag->is_bool());
      EXPECT_TRUE(flag->to_bool());
    }
    const io::PyValue& state = v.find("state")->dict_items().at(0).second;
    ASSERT_TRUE(state.find("step"));
    EXPECT_TRUE(state.find("step")->is_tensor());
    if (std::string(c.name) == "NAdam") {
      ASSERT_TRUE(state.find("mu_product"));
      EXPECT_TRUE(state.find("mu_product")->is_tensor());
    }
  }
}

TEST(OptimTorchFile, SaveLoadResumesTheTrajectory) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Tensor a = start(), b = start();
    auto uninterrupted = c.make({a});
    auto interrupted = c.make({b});
    for (int s = 0; s < 2; ++s) {
      step(*uninterrupted, a);
      step(*interrupted, b);
    }
    std::stringstream file;
    cohort::save(*interrupted, file);
    auto resumed = c.make({b});
    cohort::load(*resumed, file);
    for (int s = 0; s < 6; ++s) {
      step(*uninterrupted, a);
      step(*resumed, b);
    }
    EXPECT_TRUE(equal(a.detach(), b.detach()));
  }
}
