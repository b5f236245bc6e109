// Module: registration, naming, state dicts, devices, cloning, hooks, printing; and Linear.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"

#include <sstream>

#include <cohort/cohort.h>

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

struct Net : nn::Module {
  Net() : fc1(nn::LinearOptions(4, 3)), fc2(3, 2) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    scale = register_parameter("scale", ones({1}));
    register_buffer("steps", zeros({1}, kInt64));
  }
  Tensor forward(const Tensor& x) { return fc2->forward(fc1->forward(x).relu()) * scale; }
  nn::Linear fc1, fc2;
  Tensor scale;
};

struct CloneableNet : nn::Cloneable<CloneableNet> {
  CloneableNet() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(2, 2));
    w = register_parameter("w", ones({2}));
  }
  nn::Linear fc{nullptr};
  Tensor w;
};

}  // namespace

TEST(Module, NamedParametersAreOrderedAndDotted) {
  auto net = std::make_shared<Net>();
  auto params = net->named_parameters();
  EXPECT_EQ(params.keys(), (std::vector<std::string>{"scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  EXPECT_TRUE(params.contains("fc1.weight"));
  EXPECT_EQ(params["fc1.weight"].sizes(), IntArrayRef({3, 4}));
  EXPECT_EQ(net->parameters().size(), 5u);
  EXPECT_EQ(net->parameters(false).size(), 1u);
  EXPECT_EQ(net->named_buffers().keys(), std::vector<std::string>{"steps"});
  EXPECT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->named_modules().keys(), (std::vector<std::string>{"", "fc1", "fc2"}));
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(net->name(), "Net");
  EXPECT_EQ(net->fc1->name(), "Linear");
}

TEST(Module, RegistrationErrors) {
  auto net = std::make_shared<Net>();
  EXPECT_THAT(error_of([&] { net->register_parameter("scale", ones({1})); }), HasSubstr("Parameter 'scale' already defined"));
  EXPECT_THAT(error_of([&] { net->register_parameter("a.b", ones({1})); }), HasSubstr("must not contain a dot"));
  nn::Linear empty_holder{nullptr};
  EXPECT_THAT(error_of([&] { empty_holder->forward(ones({1})); }), HasSubstr("empty"));
}

TEST(Module, ForwardBackwardAndZeroGrad) {
  manual_seed(0);
  auto net = std::make_shared<Net>();
  Tensor y = net->forward(randn({5, 4}));
  EXPECT_EQ(y.sizes(), IntArrayRef({5, 2}));
  y.sum().backward();
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.grad().defined());
  net->zero_grad(false);
  for (const Tensor& p : net->parameters()) EXPECT_EQ(p.grad().abs().sum().item<float>(), 0.0f);
  net->zero_grad();
  for (const Tensor& p : net->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(Module, TrainEvalReachesChildren) {
  auto net = std::make_shared<Net>();
  net->eval();
  EXPECT_FALSE(net->is_training());
  EXPECT_FALSE(net->fc1->is_training());
  net->train();
  EXPECT_TRUE(net->fc2->is_training());
}

TEST(Module, StateDictRoundTripAndStrictErrors) {
  manual_seed(1);
  auto a = std::make_shared<Net>();
  manual_seed(2);
  auto b = std::make_shared<Net>();
  EXPECT_FALSE(a->fc1->weight.equal(b->fc1->weight));
  auto state = a->state_dict();
  EXPECT_EQ(state.size(), 6u);  // 5 parameters + 1 buffer
  b->load_state_dict(state);
  EXPECT_TRUE(a->fc1->weight.equal(b->fc1->weight));
  EXPECT_TRUE(b->fc1->weight.requires_grad());

  nn::StateDict bad;
  for (const auto& item : state)
    if (item.key() != "fc2.bias") bad.insert(item.key(), item.value());
  bad["fc1.weight"] = ones({2, 2});
  bad.insert("extra", ones({1}));
  std::string msg = error_of([&] { b->load_state_dict(bad); });
  EXPECT_THAT(msg, HasSubstr("missing key(s): fc2.bias"));
  EXPECT_THAT(msg, HasSubstr("unexpected key(s): extra"));
  EXPECT_THAT(msg, HasSubstr("size mismatch for: fc1.weight (checkpoint [2, 2], model [3, 4])"));
  EXPECT_TRUE(a->fc1->weight.equal(b->fc1->weight));  // nothing copied on error
}

TEST(Module, ToDeviceKeepsHandlesValid) {
  set_device_count(std::max(2, device_count()));
  auto net = std::make_shared<Net>();
  Tensor handle = net->fc1->weight;
  net->to(Device("cpu:1"));
  EXPECT_EQ(handle.device(), Device("cpu:1"));
  for (const Tensor& p : net->parameters()) EXPECT_EQ(p.device(), Device("cpu:1"));
  EXPECT_EQ(net->forward(randn({2, 4}, TensorOptions().device(Device("cpu:1")))).device(), Device("cpu:1"));
  net->to(kFloat64);
  EXPECT_EQ(net->fc1->weight.dtype(), kFloat64);
  EXPECT_TRUE(net->fc1->weight.requires_grad());
}

TEST(Module, CloneIsDeep) {
  auto original = std::make_shared<CloneableNet>();
  auto copy = std::dynamic_pointer_cast<CloneableNet>(original->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->fc->weight.equal(original->fc->weight));
  EXPECT_FALSE(copy->fc->weight.is_same(original->fc->weight));
  {
    NoGradGuard no_grad;
    copy->fc->weight.fill_(0);
    copy->w.fill_(3);
  }
  EXPECT_NE(original->fc->weight.abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(original->w.sum().item<float>(), 2.0f);
  EXPECT_EQ(copy->named_parameters()["w"].sum().item<float>(), 6.0f);  // member and registry agree
  auto net = std::make_shared<Net>();
  EXPECT_THAT(error_of([&] { net->clone(); }), HasSubstr("derive it from nn::Cloneable<Net>"));
}

TEST(Module, ForwardHooksRunThroughTheHolder) {
  nn::Linear fc(2, 2);
  int pre = 0;
  fc->register_forward_pre_hook([&](nn::Module&, const std::vector<Tensor>& in) { pre += static_cast<int>(in.size()); });
  unsigned h = fc->register_forward_hook([](nn::Module&, const std::vector<Tensor>&, const Tensor& out) { return out * 0; });
  Tensor y = fc(ones({1, 2}));
  EXPECT_EQ(pre, 1);
  EXPECT_EQ(y.abs().sum().item<float>(), 0.0f);
  fc->remove_hook(h);
  EXPECT_NE(fc(ones({1, 2})).abs().sum().item<float>(), 0.0f);
}

TEST(Module, PrintsLikePyTorch) {
  auto net = std::make_shared<Net>();
  std::ostringstream os;
  os << *net;
  EXPECT_EQ(os.str(),
            "Net(\n"
            "  (fc1): Linear(in_features=4, out_features=3, bias=True)\n"
            "  (fc2): Linear(in_features=3, out_features=2, bias=True)\n"
            ")");
}

TEST(Linear, MatchesTheFormulaAndInitBounds) {
  manual_seed(3);
  nn::Linear fc(nn::LinearOptions(100, 7));
  double bound = 1.0 / std::sqrt(100.0);
  EXPECT_LE(fc->weight.abs().max().item<float>(), bound);
  EXPECT_LE(fc->bias.abs().max().item<float>(), bound);
  EXPECT_GT(fc->weight.abs().max().item<float>(), 0.8 * bound);
  Tensor x = randn({3, 100});
  EXPECT_TRUE(fc(x).allclose(matmul(x, fc->weight.t()) + fc->bias, 1e-5, 1e-6));
  Tensor x3 = randn({2, 3, 100});
  EXPECT_EQ(fc(x3).sizes(), IntArrayRef({2, 3, 7}));
  nn::Linear no_bias(nn::LinearOptions(4, 2).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(no_bias->parameters().size(), 1u);
  EXPECT_THAT(error_of([&] { fc(randn({3, 99})); }), HasSubstr("input of shape [3, 99] does not match in_features=100"));
}

// libtorch programs walk a Sequential with range-for and test a module's type with as<T>().
TEST(Module, SequentialIteratesAnyModulesAndAsFindsTheType) {
  nn::Sequential seq(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
  std::vector<int64_t> outs;
  for (const auto& m : *seq)
    if (auto* linear = m.ptr()->as<nn::Linear>()) outs.push_back(linear->weight.size(0));
  EXPECT_EQ(outs, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(seq->size(), 3u);
  EXPECT_NE(seq[1]->as<nn::ReLUImpl>(), nullptr);
  EXPECT_EQ(seq[1]->as<nn::LinearImpl>(), nullptr);
  const nn::Module& whole = *seq;
  EXPECT_EQ(whole.as<nn::Linear>(), nullptr);
  EXPECT_EQ(whole.as<nn::Sequential>(), seq.get());
  EXPECT_EQ((*seq->begin()).get<nn::LinearImpl>().weight.size(1), 3);
  EXPECT_THAT(error_of([&] { (void)(*seq->begin()).ptr<nn::ReLUImpl>(); }),
              HasSubstr("AnyModule: the module is a Linear, not the requested type"));
}
