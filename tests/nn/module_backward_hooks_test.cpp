// Module backward hooks against PyTorch 2.x (tests/fixtures/backward_hooks.json): what the pre-hooks
// and hooks see, what their replacements do to the gradients, a module without input gradients, two
// inputs, the order through a Sequential; and under DataParallel, removal, grad mode off, errors, and
// the autograd::hook_gradients node they are built on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cohort/autograd/gradient_hook.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/nn/activation.h"
#include "cohort/nn/container.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/module_holder.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/parallel/data_parallel.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const json& fixture() { return load_fixture("backward_hooks.json"); }

// What the hooks of one module saw.
struct Seen {
  std::vector<std::string> order;
  std::vector<Tensor> pre_grad_output, grad_input, grad_output;
};

nn::Linear linear_from(const json& c) {
  nn::Linear fc(nn::LinearOptions(4, 3));
  fc->to(kFloat64);
  NoGradGuard no_grad;
  fc->weight.copy_(decode_tensor(c["weight"]));
  fc->bias.copy_(decode_tensor(c["bias"]));
  return fc;
}

void expect_grads(const std::string& what, const std::vector<Tensor>& got, const json& want) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (want[i].is_null()) {
      EXPECT_FALSE(got[i].defined()) << what << " " << i;
    } else {
      ASSERT_TRUE(got[i].defined()) << what << " " << i;
      EXPECT_TRUE(matches_pytorch(what, got[i], want[i], 1e-12));
    }
  }
}

void run_linear_case(const std::string& name) {
  const json& c = fixture()[name];
  nn::Linear fc = linear_from(c);
  Tensor x = decode_tensor(c["x"]).set_requires_grad(c["input_grad"].get<bool>());
  Seen seen;
  const double pre_scale = c["pre_scale"].is_null() ? 0 : c["pre_scale"].get<double>();
  const double input_scale = c["input_scale"].is_null() ? 0 : c["input_scale"].get<double>();
  fc->register_full_backward_pre_hook([&](nn::Module&, const std::vector<Tensor>& grad_output) {
    seen.order.push_back("pre");
    seen.pre_grad_output = grad_output;
    std::vector<Tensor> out;
    if (pre_scale != 0)
      for (const Tensor& g : grad_output) out.push_back(g * pre_scale);
    return out;
  });
  fc->register_full_backward_hook(
      [&](nn::Module&, const std::vector<Tensor>& grad_input, const std::vector<Tensor>& grad_output) {
        seen.order.push_back("hook");
        seen.grad_input = grad_input;
        seen.grad_output = grad_output;
        std::vector<Tensor> out;
        if (input_scale != 0)
          for (const Tensor& g : grad_input) out.push_back(g.defined() ? g * input_scale : Tensor());
        return out;
      });
  fc(x).pow(2).sum().backward();
  std::vector<std::string> order;
  for (const auto& o : c["order"]) order.push_back(o);
  EXPECT_EQ(seen.order, order);
  expect_grads(name + " pre-hook's grad_output", seen.pre_grad_output, c["pre_grad_output"]);
  expect_grads(name + " grad_input", seen.grad_input, c["grad_input"]);
  expect_grads(name + " grad_output", seen.grad_output, c["grad_output"]);
  if (c["x_grad"].is_null())
    EXPECT_FALSE(x.grad().defined());
  else
    EXPECT_TRUE(matches_pytorch(name + " x.grad", x.grad(), c["x_grad"], 1e-12));
  EXPECT_TRUE(matches_pytorch(name + " weight.grad", fc->weight.grad(), c["weight_grad"], 1e-12));
  EXPECT_TRUE(matches_pytorch(name + " bias.grad", fc->bias.grad(), c["bias_grad"], 1e-12));
}

TEST(ModuleBackwardHooks, SeeTheGradientsPyTorchsSee) { run_linear_case("plain"); }
TEST(ModuleBackwardHooks, AHookReplacesGradInput) { run_linear_case("scaled_input"); }
TEST(ModuleBackwardHooks, APreHookReplacesGradOutput) { run_linear_case("scaled_output"); }
TEST(ModuleBackwardHooks, WithoutInputGradientsTheHookSeesNone) { run_linear_case("no_input_grad"); }

struct TwoInputsImpl : nn::Module {
  TwoInputsImpl() : Module("TwoInputs") {}
  Tensor forward(const Tensor& a, const Tensor& b) { return a * b + a; }
};
TORCH_MODULE(TwoInputs);

TEST(ModuleBackwardHooks, SeeEveryTensorInput) {
  const json& c = fixture()["two_inputs"];
  TwoInputs m;
  Tensor a = decode_tensor(c["a"]).set_requires_grad(true), b = decode_tensor(c["b"]).set_requires_grad(true);
  std::vector<Tensor> grad_input, grad_output;
  m->register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>& go) {
    grad_input = gi;
    grad_output = go;
    return std::vector<Tensor>{gi[0], gi[1] * -1};
  });
  m(a, b).pow(2).sum().backward();
  expect_grads("grad_input", grad_input, c["grad_input"]);
  expect_grads("grad_output", grad_output, c["grad_output"]);
  EXPECT_TRUE(matches_pytorch("a.grad", a.grad(), c["a_grad"], 1e-12));
  EXPECT_TRUE(matches_pytorch("b.grad", b.grad(), c["b_grad"], 1e-12));
}

TEST(ModuleBackwardHooks, RunInPyTorchsOrderThroughASequential) {
  const json& c = fixture()["sequential"];
  nn::Sequential seq(nn::Linear(3, 3), nn::Tanh(), nn::Linear(3, 2));
  seq->to(kFloat64);
  {
    NoGradGuard no_grad;
    for (auto& p : seq->named_parameters()) p.value().copy_(decode_tensor(c["params"][p.key()]));
  }
  std::vector<std::string> order;
  auto hook_up = [&](nn::Module& m, const std::string& name) {
    m.register_full_backward_pre_hook([&order, name](nn::Module&, const std::vector<Tensor>&) {
      order.push_back("pre " + name);
      return std::vector<Tensor>{};
    });
    m.register_full_backward_hook([&order, name](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>&) {
      order.push_back("hook " + name);
      return std::vector<Tensor>{};
    });
  };
  hook_up(*seq, "seq");
  for (size_t i = 0; i < seq->size(); ++i) hook_up(*seq->ptr(i), std::to_string(i));
  Tensor x = decode_tensor(c["x"]).set_requires_grad(true);
  seq(x).pow(2).sum().backward();
  std::vector<std::string> want;
  for (const auto& o : c["order"]) want.push_back(o);
  EXPECT_EQ(order, want);
  EXPECT_TRUE(matches_pytorch("x.grad", x.grad(), c["x_grad"], 1e-12));
}

TEST(ModuleBackwardHooks, RunOnceUnderDataParallelWithTheWholeBatch) {
  nn::Linear fc(4, 2);
  Tensor x = randn({6, 4}).set_requires_grad(true);
  nn::Linear reference(4, 2);
  {
    NoGradGuard no_grad;
    reference->weight.copy_(fc->weight);
    reference->bias.copy_(fc->bias);
  }
  Tensor x_ref = x.detach().clone().set_requires_grad(true);
  reference(x_ref).pow(2).sum().backward();

  int calls = 0;
  std::vector<Tensor> grad_input;
  fc->register_full_backward_hook([&](nn::Module&, const std::vector<Tensor>& gi, const std::vector<Tensor>&) {
    ++calls;
    grad_input = gi;
    return std::vector<Tensor>{};
  });
  nn::DataParallel<nn::LinearImpl> dp(fc.ptr(), {Device(kCPU, 0), Device(kCPU, 1)});
  dp(x).pow(2).sum().backward();
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(grad_input.size(), 1u);
  EXPECT_EQ(grad_input[0].sizes(), x.sizes());
  EXPECT_LT(max_abs_diff(x.grad(), x_ref.grad()), 1e-6);
  EXPECT_LT(max_abs_diff(grad_input[0], x_ref.grad()), 1e-6);
}

TEST(ModuleBackwardHooks, RemovedHooksAndGradModeOffRunNothing) {
  nn::Linear fc(3, 2);
  int calls = 0;
  const unsigned pre = fc->register_full_backward_pre_hook([&](nn::Module&, const std::vector<Tensor>&) {
    ++calls;
    return std::vector<Tensor>{};
  });
  const unsigned post = fc->register_full_backward_hook(
      [&](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>&) {
        ++calls;
        return std::vector<Tensor>{};
      });
  Tensor x = randn({2, 3}).set_requires_grad(true);
  fc(x).sum().backward();
  EXPECT_EQ(calls, 2);
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(fc(x).requires_grad());
  }
  fc->remove_hook(pre);
  fc->remove_hook(post);
  fc(x).sum().backward();
  EXPECT_EQ(calls, 2);
}

TEST(ModuleBackwardHooks, AWrongGradientIsAnErrorNamingTheNode) {
  nn::Linear fc(3, 2);
  fc->register_full_backward_hook([](nn::Module&, const std::vector<Tensor>&, const std::vector<Tensor>&) {
    return std::vector<Tensor>{zeros({5})};
  });
  Tensor x = randn({2, 3}).set_requires_grad(true);
  EXPECT_THAT(error_of([&] { fc(x).sum().backward(); }),
              HasSubstr("BackwardHookFunctionBackward: the hook returned a gradient of shape [5] for tensor 0, which "
                        "has shape [2, 3]"));
  nn::Linear other(3, 2);
  other->register_full_backward_pre_hook([](nn::Module&, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0], g[0]};
  });
  EXPECT_THAT(error_of([&] { other(x).sum().backward(); }),
              HasSubstr("the hook returned 2 gradients for 1 tensors"));
}

TEST(HookGradients, SeesTheGradientsOfAPassTogether) {
  Tensor a = randn({3}).set_requires_grad(true), b = randn({2}).set_requires_grad(true), c = randn({2});
  int calls = 0;
  std::vector<Tensor> seen;
  auto out = autograd::hook_gradients({a, b, c}, [&](const std::vector<Tensor>& grads) {
    ++calls;
    seen = grads;
    return std::vector<Tensor>{grads[0] * 10, Tensor(), Tensor()};
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[2].is_same(c));  // needs no gradient: returned as it is
  EXPECT_TRUE(out[0].equal(a));
  (out[0].sum() * 2 + out[1].sum()).backward();
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_TRUE(seen[0].equal(full({3}, 2.0)));
  EXPECT_TRUE(seen[1].equal(ones({2})));
  EXPECT_FALSE(seen[2].defined());
  EXPECT_TRUE(a.grad().equal(full({3}, 20.0)));
  EXPECT_FALSE(b.grad().defined());  // the hook gave b no gradient
  // An alias nothing used gets an undefined gradient.
  auto unused = autograd::hook_gradients({a, b}, [&](const std::vector<Tensor>& grads) {
    seen = grads;
    return std::vector<Tensor>{};
  });
  unused[1].sum().backward();
  EXPECT_FALSE(seen[0].defined());
  EXPECT_TRUE(seen[1].equal(ones({2})));
}

}  // namespace
}  // namespace cohort::testing
