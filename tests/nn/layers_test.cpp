// Activation, container, dropout and loss modules: behaviour, printing and errors. Values against
// PyTorch are in tests/ops/fixture_test.cpp (the nn cases of tests/fixtures/generate.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"

#include <sstream>

#include <cohort/cohort.h>

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
namespace F = cohort::nn::functional;

namespace {
template <class M>
std::string repr(const M& m) {
  std::ostringstream os;
  os << *m;
  return os.str();
}
}  // namespace

TEST(Layers, SequentialChainsAndPrints) {
  manual_seed(0);
  nn::Sequential seq(nn::Linear(4, 8), nn::ReLU(), nn::Dropout(0.5), nn::Linear(8, 2));
  EXPECT_EQ(seq->size(), 4u);
  EXPECT_EQ(seq->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "3.weight", "3.bias"}));
  seq->eval();
  Tensor x = randn({3, 4});
  auto fc0 = seq->ptr<nn::LinearImpl>(0);
  auto fc3 = seq->ptr<nn::LinearImpl>(3);
  EXPECT_TRUE(seq->forward(x).allclose(fc3->forward(fc0->forward(x).relu())));
  EXPECT_EQ(repr(seq),
            "Sequential(\n"
            "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
            "  (1): ReLU()\n"
            "  (2): Dropout(p=0.5, inplace=False)\n"
            "  (3): Linear(in_features=8, out_features=2, bias=True)\n"
            ")");
  EXPECT_THAT(error_of([&] { seq->ptr<nn::ReLUImpl>(0); }), HasSubstr("module 0 is a Linear"));
  EXPECT_THAT(error_of([&] { (*seq)[9]; }), HasSubstr("index 9 is out of range for 4 modules"));
}

TEST(Layers, NamedSequentialAndDeepClone) {
  nn::Sequential seq({{"fc", nn::Linear(2, 2)}, {"act", nn::Tanh()}});
  EXPECT_EQ(seq->named_parameters().keys(), (std::vector<std::string>{"fc.weight", "fc.bias"}));
  auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(seq->clone());
  ASSERT_TRUE(copy);
  Tensor x = randn({1, 2});
  EXPECT_TRUE(copy->forward(x).allclose(seq->forward(x)));
  {
    NoGradGuard g;
    copy->ptr<nn::LinearImpl>(0)->weight.zero_();
  }
  EXPECT_FALSE(copy->forward(x).allclose(seq->forward(x)));
}

TEST(Layers, ModuleListAndDict) {
  nn::ModuleList list(nn::Linear(2, 3), nn::Linear(3, 1));
  EXPECT_EQ(list->size(), 2u);
  EXPECT_EQ(list->named_parameters().size(), 4u);
  Tensor y = list->ptr<nn::LinearImpl>(1)->forward(list->ptr<nn::LinearImpl>(0)->forward(ones({1, 2})));
  EXPECT_EQ(y.sizes(), IntArrayRef({1, 1}));
  nn::ModuleDict dict;
  dict->insert("head", nn::Linear(3, 3));
  EXPECT_TRUE(dict->contains("head"));
  EXPECT_EQ(dict->keys(), std::vector<std::string>{"head"});
  EXPECT_THAT(error_of([&] { (*dict)["tail"]; }), HasSubstr("no module named 'tail'"));
}

TEST(Layers, DropoutTrainsAndEvaluates) {
  manual_seed(1);
  nn::Dropout drop(0.25);
  Tensor x = ones({10000});
  Tensor y = drop(x);
  double kept = (y != 0).sum().item<int64_t>() / 10000.0;
  EXPECT_NEAR(kept, 0.75, 0.02);
  EXPECT_NEAR(y.max().item<float>(), 1.0 / 0.75, 1e-6);
  drop->eval();
  EXPECT_TRUE(drop(x).equal(x));
  EXPECT_THAT(error_of([] { nn::Dropout(1.5); }), HasSubstr("between 0 and 1"));
}

TEST(Layers, ActivationsPrintLikePyTorch) {
  EXPECT_EQ(repr(nn::ReLU()), "ReLU()");
  EXPECT_EQ(repr(nn::ReLU(nn::ReLUOptions(true))), "ReLU(inplace=True)");
  EXPECT_EQ(repr(nn::LeakyReLU()), "LeakyReLU(negative_slope=0.01)");
  EXPECT_EQ(repr(nn::GELU()), "GELU(approximate='none')");
  EXPECT_EQ(repr(nn::Softmax(1)), "Softmax(dim=1)");
  EXPECT_EQ(repr(nn::Flatten()), "Flatten(start_dim=1, end_dim=-1)");
  EXPECT_EQ(nn::Flatten()(ones({2, 3, 4})).sizes(), IntArrayRef({2, 12}));
  EXPECT_TRUE(nn::Identity()(ones({2})).equal(ones({2})));
  EXPECT_TRUE(nn::SiLU()(zeros({2})).equal(zeros({2})));
}

TEST(Layers, LossModulesAndTheirErrors) {
  Tensor logits = tensor({{2.0, 0.5, -1.0}, {0.1, 0.2, 3.0}});
  Tensor target = tensor({0, 2});
  nn::CrossEntropyLoss ce;
  Tensor loss = ce(logits, target);
  Tensor manual = -(logits.log_softmax(1).index({0, 0}) + logits.log_softmax(1).index({1, 2})) / 2;
  EXPECT_TRUE(loss.allclose(manual));
  EXPECT_THAT(error_of([&] { ce(logits, tensor({0, 3})); }), HasSubstr("target 3 is out of bounds for 3 classes"));
  EXPECT_THAT(error_of([&] { ce(logits, tensor({0, 1, 2})); }), HasSubstr("expected a target of shape [2]"));
  nn::MSELoss mse;
  EXPECT_THAT(error_of([&] { mse(ones({4, 1}), ones({4})); }), HasSubstr("PyTorch would broadcast them silently"));
  EXPECT_NEAR(mse(ones({4}), zeros({4})).item<float>(), 1.0, 1e-7);
  EXPECT_THAT(error_of([] { nn::BCELoss()(full({2}, 1.5), ones({2})); }), HasSubstr("between 0 and 1"));
  nn::BCEWithLogitsLoss bce;
  // Large logits stay finite (the naive log(sigmoid(x)) would overflow).
  EXPECT_TRUE(std::isfinite(bce(tensor({100.0f, -100.0f}), tensor({0.0f, 1.0f})).item<float>()));
  EXPECT_EQ(F::cross_entropy(logits, target, F::CrossEntropyOptions().reduction(kNone)).sizes(), IntArrayRef({2}));
  // ignore_index: an all-ignored batch gives NaN in mean reduction, as PyTorch (0 / 0).
  Tensor ignored = F::cross_entropy(logits, tensor({-100, -100}));
  EXPECT_TRUE(std::isnan(ignored.item<float>()));
}
