// The model zoo against PyTorch (tests/fixtures/models.json from tests/fixtures/generate_models.py):
// state-dict names and shapes, parameter counts, train- and eval-mode outputs, gradients and
// running statistics with every tensor set by the fixture's formula (and a gradient for every
// parameter); then clone(), hooks, printing and create()'s errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cohort/models/char_lstm.h"

#include <cmath>
#include <map>
#include <sstream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/generator.h"
#include "cohort/models/model.h"
#include "cohort/models/resnet.h"
#include "cohort/nn/container.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/backend.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::error_of;
using testing::matches_pytorch;

// float32 against PyTorch's float64: the fixture's inputs keep float32 within ~2e-6 of it.
constexpr double kTol = 1e-4;

// generate_models.py's uniform(): n values in [-1, 1) from splitmix64's finaliser, bit-identical.
Tensor uniform_values(int64_t n, uint64_t stream) {
  Tensor t = empty({n}, TensorOptions(kFloat64));
  double* p = t.data_ptr<double>();
  for (int64_t k = 0; k < n; ++k) {
    uint64_t h = (static_cast<uint64_t>(k) + 1) * 0x9E3779B97F4A7C15ull + stream * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 29;
    p[k] = static_cast<double>(h >> 11) * 0x1p-52 - 1;
  }
  return t;
}

Tensor uniform_like(IntArrayRef shape, uint64_t stream, ScalarType dtype = kFloat32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return uniform_values(n, stream).view(shape).to(dtype);
}

// generate_models.py's fill(), tensor j in PyTorch's state-dict order (the fixture's).
void fill_from_formula(models::Model& model, const json& c) {
  NoGradGuard no_grad;
  nn::StateDict state = model.state_dict();
  const json& entries = c.at("state_dict");
  for (size_t j = 0; j < entries.size(); ++j) {
    const std::string name = entries[j].at("name");
    Tensor& t = state[name];
    const std::string leaf = name.substr(name.rfind('.') + 1);
    if (leaf == "num_batches_tracked") {
      t.zero_();
      continue;
    }
    Tensor u = uniform_values(t.numel(), j).view(t.sizes());
    if (t.dim() >= 2) {
      t.copy_(u * std::sqrt(6.0 / static_cast<double>(t.numel() / t.size(0))));
    } else if (leaf == "weight") {
      t.copy_(u * 0.1 + 1);
    } else if (leaf == "running_var") {
      t.copy_(u * 0.2 + 1);
    } else {
      t.copy_(u * 0.1);
    }
  }
}

models::ModelOptions options_of(const json& c) {
  return models::ModelOptions()
      .in_channels(c.at("in_channels"))
      .num_classes(c.at("num_classes"))
      .image_size(c.at("image_size"));
}

// Building resnet18 draws 22M random numbers (about a second); tests that only read a model share one.
std::shared_ptr<models::Model> shared_model(const std::string& name, const models::ModelOptions& options = {}) {
  static std::map<std::string, std::shared_ptr<models::Model>> cache;
  std::ostringstream key;
  key << name << options;
  std::shared_ptr<models::Model>& model = cache[key.str()];
  if (!model) model = models::create(name, options);
  return model;
}

class ModelsMatchPyTorch : public ::testing::TestWithParam<std::string> {
 protected:
  const json& fixture() const { return testing::load_fixture("models.json").at("cases").at(GetParam()); }
};

TEST_P(ModelsMatchPyTorch, StateDictNamesShapesAndParameterCount) {
  const json& c = fixture();
  auto model = shared_model(c.at("model"), options_of(c));
  std::vector<std::string> want_params, want_buffers, want_all;
  for (const json& e : c.at("state_dict")) {
    (e.at("parameter") ? want_params : want_buffers).push_back(e.at("name"));
    want_all.push_back(e.at("name"));
  }
  EXPECT_EQ(model->named_parameters().keys(), want_params);
  EXPECT_EQ(model->named_buffers().keys(), want_buffers);
  nn::StateDict state = model->state_dict();
  // PyTorch's order too: module by module, parameters then buffers.
  EXPECT_EQ(state.keys(), want_all);
  for (const json& e : c.at("state_dict")) {
    const Tensor* t = state.find(e.at("name"));
    ASSERT_NE(t, nullptr) << e.at("name");
    EXPECT_EQ(t->sizes().vec(), e.at("shape").get<std::vector<int64_t>>()) << e.at("name");
  }
  int64_t count = 0;
  for (const Tensor& p : model->parameters()) count += p.numel();
  EXPECT_EQ(count, c.at("parameter_count").get<int64_t>());
}

TEST_P(ModelsMatchPyTorch, TrainForwardEveryGradientRunningStatsAndEvalForward) {
  // Direct convolution, PyTorch's: at batch 2, resnet18's deep batch norms see a few values per
  // channel and amplify Winograd's 1e-5 rounding to 1e-2 in conv1's gradient (a float32 ResNet on
  // random data lands 2e-2 from float64 with either algorithm; conv_test checks Winograd itself).
  struct DirectScope {
    ConvAlgorithm saved = conv_algorithm();
    DirectScope() { set_conv_algorithm(ConvAlgorithm::Direct); }
    ~DirectScope() { set_conv_algorithm(saved); }
  } direct;
  const json& c = fixture();
  auto model = models::create(c.at("model"), options_of(c));
  // ResNet-50's 2x2 layer4 maps leave its batch norms 8 values per channel at batch 2, which
  // amplify float32 rounding to 3e-3 in the gradients: that case runs in float64, as PyTorch did.
  const ScalarType dtype = c.value("float64", false) ? kFloat64 : kFloat32;
  model->to(dtype);
  fill_from_formula(*model, c);
  const Tensor x = uniform_like(c.at("input_shape").get<std::vector<int64_t>>(), 1000, dtype);

  model->train();
  Tensor out = model->forward(x);
  EXPECT_TRUE(matches_pytorch("train output", out, c.at("output_train"), kTol));
  (out * uniform_like(out.sizes(), 1001, dtype)).sum().backward();
  nn::StateDict params = model->named_parameters();
  for (const auto& [name, want] : c.at("grads").items())
    EXPECT_TRUE(matches_pytorch("grad of " + name, params[name].grad(), want, kTol));
  for (const auto& item : params) {  // every parameter takes part in the forward
    const Tensor& g = item.value().grad();
    ASSERT_TRUE(g.defined()) << item.key();
    EXPECT_EQ(g.sizes(), item.value().sizes()) << item.key();
    EXPECT_EQ(isfinite(g).logical_not().sum().item<int64_t>(), 0) << item.key();
    EXPECT_GT(g.abs().sum().item<float>(), 0) << item.key();
  }
  nn::StateDict buffers = model->named_buffers();
  for (const auto& [name, want] : c.at("running").items())
    EXPECT_TRUE(matches_pytorch(name, buffers[name], want, kTol));
  for (const auto& item : buffers)
    if (item.key().ends_with("num_batches_tracked")) EXPECT_EQ(item.value().item<int64_t>(), 1) << item.key();

  model->eval();
  NoGradGuard no_grad;
  EXPECT_TRUE(matches_pytorch("eval output", model->forward(x), c.at("output_eval"), kTol));
}

INSTANTIATE_TEST_SUITE_P(Cases, ModelsMatchPyTorch,
                         ::testing::Values("lenet_mnist", "lenet_cifar", "blitz_cnn", "resnet18", "mlp", "resnet34",
                                           "resnet18_imagenet", "resnet50_imagenet"),
                         [](const auto& info) { return info.param; });

class ModelsByName : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelsByName, CloneToAnotherDeviceCopiesStateFlagsAndModeAndKeepsTheRandomStream) {
  manual_seed(2);
  auto model = models::create(GetParam());
  model->eval();
  model->parameters().back().requires_grad_(false);
  set_device_count(std::max(2, device_count()));
  const std::string before = default_generator().get_state();
  auto copy = std::dynamic_pointer_cast<models::Model>(model->clone(Device("cpu:1")));
  EXPECT_EQ(default_generator().get_state(), before);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->arch(), model->arch());
  EXPECT_FALSE(copy->is_training());
  EXPECT_FALSE(copy->parameters().back().requires_grad());
  EXPECT_TRUE(copy->parameters().front().requires_grad());
  nn::StateDict theirs = copy->state_dict();
  for (const auto& item : model->state_dict()) {
    EXPECT_EQ(theirs[item.key()].device(), Device("cpu:1")) << item.key();
    EXPECT_TRUE(theirs[item.key()].to(Device("cpu:0")).equal(item.value())) << item.key();
  }
  Tensor x = randn({2, 3, 32, 32});
  NoGradGuard no_grad;
  // Another device may split the work over other threads: equal up to rounding.
  EXPECT_TRUE(copy->forward(x.to(Device("cpu:1"))).to(Device("cpu:0")).allclose(model->forward(x), 1e-5, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Names, ModelsByName, ::testing::Values("lenet", "blitz-cnn", "resnet18", "mlp"),
                         [](const auto& info) { return info.param == "blitz-cnn" ? std::string("blitz_cnn") : info.param; });

TEST(ModelsRegistry, NamesAndOptions) {
  EXPECT_EQ(models::names(),
            (std::vector<std::string>{"lenet", "blitz-cnn", "resnet18", "resnet34", "resnet50", "mlp", "char-lstm",
                                      "char-transformer"}));
  auto mlp = models::create("mlp", models::ModelOptions().in_channels(1).image_size(28).num_classes(7));
  EXPECT_EQ(mlp->options().num_classes(), 7);
  EXPECT_EQ(mlp->forward(randn({3, 1, 28, 28})).sizes().vec(), (std::vector<int64_t>{3, 7}));
  std::ostringstream os;
  os << mlp->options();
  EXPECT_EQ(os.str(), "ModelOptions(in_channels=1, num_classes=7, image_size=28)");
  // The smallest LeNet input: a 1x1 feature map.
  auto small = models::create("lenet", models::ModelOptions().image_size(16));
  EXPECT_EQ(small->named_parameters()["fc1.weight"].sizes().vec(), (std::vector<int64_t>{120, 16}));
}

TEST(ModelsRegistry, CloneOwnsItsTensors) {
  auto model = models::create("lenet");
  model->to(kFloat64);
  auto copy = model->clone_model();
  EXPECT_EQ(copy->parameters().front().dtype(), kFloat64);
  Tensor x = randn({2, 3, 32, 32}, TensorOptions(kFloat64));
  NoGradGuard no_grad;
  EXPECT_TRUE(copy->forward(x).equal(model->forward(x)));
  copy->parameters().front().add_(1);
  EXPECT_FALSE(copy->parameters().front().equal(model->parameters().front()));
}

TEST(ModelsRegistry, ErrorsSayWhatToFix) {
  EXPECT_THAT(error_of([] { models::create("vgg16"); }),
              HasSubstr("models::create: unknown model name, got 'vgg16'; hint: the known models are lenet, "
                        "blitz-cnn, resnet18, resnet34, resnet50, mlp, char-lstm, char-transformer"));
  EXPECT_THAT(error_of([] { models::create("lenet", models::ModelOptions().image_size(15)); }),
              HasSubstr("lenet: image_size must be at least 16 (two 5x5 convolutions and two 2x2 max pools), got 15"));
  EXPECT_THAT(error_of([] { models::create("blitz-cnn", models::ModelOptions().image_size(8)); }),
              HasSubstr("blitz-cnn: image_size must be at least 16"));
  EXPECT_THAT(error_of([] { models::create("resnet18", models::ModelOptions().num_classes(0)); }),
              HasSubstr("resnet18: num_classes must be positive, got 0"));
  auto lenet = models::create("lenet", models::ModelOptions().in_channels(1).image_size(28));
  EXPECT_THAT(error_of([&] { lenet->forward(randn({2, 3, 32, 32})); }),
              HasSubstr("lenet: expected input [N, 1, 28, 28], got [2, 3, 32, 32]; hint: build it with "
                        "ModelOptions().in_channels(3).image_size(32) for such images"));
  EXPECT_THAT(error_of([&] { lenet->forward(randn({1, 28, 28})); }), HasSubstr("x.unsqueeze(0)"));
  auto resnet = shared_model("resnet18");
  EXPECT_THAT(error_of([&] { resnet->forward(randn({2, 1, 28, 28})); }),
              HasSubstr("resnet18: expected input [N, 3, H, W], got [2, 1, 28, 28]"));
}

TEST(ModelsRegistry, HooksAndSequentialSeeTheModel) {
  auto model = models::create("mlp");
  int calls = 0;
  model->register_forward_hook([&](nn::Module&, const std::vector<Tensor>&, const Tensor& out) {
    ++calls;
    return out * 2;
  });
  Tensor x = randn({2, 3, 32, 32});
  NoGradGuard no_grad;
  EXPECT_TRUE((*model)(x).allclose(model->forward(x) * 2));
  EXPECT_EQ(calls, 1);
  nn::Sequential seq(model, nn::Linear(10, 4));  // forward is virtual: Sequential calls the model's
  EXPECT_EQ(seq(x).sizes().vec(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(calls, 2);
}

TEST(ModelsRegistry, PrintsItsLayers) {
  std::ostringstream blitz, resnet;
  blitz << *shared_model("blitz-cnn");
  EXPECT_EQ(blitz.str(),
            "BlitzCNN(\n"
            "  (conv1): Conv2d(3, 6, kernel_size=(5, 5), stride=(1, 1))\n"
            "  (pool): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
            "  (conv2): Conv2d(6, 16, kernel_size=(5, 5), stride=(1, 1))\n"
            "  (fc1): Linear(in_features=400, out_features=120, bias=True)\n"
            "  (fc2): Linear(in_features=120, out_features=84, bias=True)\n"
            "  (fc3): Linear(in_features=84, out_features=10, bias=True)\n"
            ")");
  resnet << *shared_model("resnet18");
  EXPECT_THAT(resnet.str(), HasSubstr("ResNet(\n  (conv1): Conv2d(3, 64, kernel_size=(3, 3), stride=(1, 1), "
                                      "padding=(1, 1), bias=False)\n  (bn1): BatchNorm2d(64, eps=1e-05"));
  EXPECT_THAT(resnet.str(), HasSubstr("    (0): BasicBlock(\n      (conv1): Conv2d(128, 256, kernel_size=(3, 3), "
                                      "stride=(2, 2), padding=(1, 1), bias=False)"));
  EXPECT_THAT(resnet.str(), HasSubstr("      (downsample): Sequential(\n        (0): Conv2d(128, 256, "
                                      "kernel_size=(1, 1), stride=(2, 2), bias=False)"));
  EXPECT_THAT(resnet.str(), HasSubstr("  (avgpool): AdaptiveAvgPool2d(output_size=1)"));
}

TEST(ModelsRegistry, ResNetStemFollowsTheImageSizeUnlessForced) {
  // From 64 pixels up, torchvision's ImageNet stem: 224 -> 112 (conv) -> 56 (max pool) -> 7 (layer4).
  auto big = models::create("resnet50", models::ModelOptions().image_size(224).num_classes(5));
  auto* resnet = dynamic_cast<models::ResNet*>(big.get());
  ASSERT_NE(resnet, nullptr);
  EXPECT_EQ(resnet->stem(), models::ResNetStem::ImageNet);
  EXPECT_EQ(big->arch(), "resnet50");
  EXPECT_EQ(big->named_parameters()["conv1.weight"].sizes().vec(), (std::vector<int64_t>{64, 3, 7, 7}));
  EXPECT_EQ(big->named_parameters()["fc.weight"].sizes().vec(), (std::vector<int64_t>{5, 2048}));
  std::ostringstream printed;
  printed << *big;
  EXPECT_THAT(printed.str(), HasSubstr("  (maxpool): MaxPool2d(kernel_size=3, stride=2, padding=1"));
  EXPECT_THAT(printed.str(), HasSubstr("    (0): Bottleneck(\n      (conv1): Conv2d(1024, 512, kernel_size=(1, 1)"));
  big->eval();
  NoGradGuard no_grad;
  EXPECT_EQ(big->forward(randn({1, 3, 224, 224})).sizes().vec(), (std::vector<int64_t>{1, 5}));

  // Below 64, the CIFAR stem keeps the resolution; either stem can be forced.
  models::ResNet small(models::ModelOptions().image_size(32), {1, 1, 1, 1});
  EXPECT_EQ(small.stem(), models::ResNetStem::Cifar);
  EXPECT_EQ(small.arch(), "resnet10");
  models::ResNet forced(models::ModelOptions().image_size(32), {1, 1, 1, 1}, models::ResNetBlock::Basic,
                        models::ResNetStem::ImageNet);
  EXPECT_EQ(forced.named_parameters()["conv1.weight"].size(-1), 7);
  EXPECT_EQ(forced.create_fresh()->named_parameters()["conv1.weight"].size(-1), 7);
}

TEST(ModelsRegistry, LanguageModelsPredictEveryPositionFromThePastOnly) {
  for (const std::string name : {"char-lstm", "char-transformer"}) {
    SCOPED_TRACE(name);
    manual_seed(3);
    auto lm = models::create(name, models::ModelOptions().num_classes(20).image_size(16));
    lm->eval();
    NoGradGuard no_grad;
    Tensor x = randint(0, 20, {3, 16});
    Tensor logits = lm->forward(x);
    EXPECT_EQ(logits.sizes().vec(), (std::vector<int64_t>{48, 20}));
    // Position t sees positions <= t: changing the last character leaves the others' logits alone.
    Tensor y = x.clone();
    y.select(1, 15).fill_(int64_t{(x[0][15].item<int64_t>() + 1) % 20});
    Tensor changed = lm->forward(y).view({3, 16, 20});
    EXPECT_TRUE(changed.narrow(1, 0, 15).allclose(logits.view({3, 16, 20}).narrow(1, 0, 15), 1e-5, 1e-6));
    EXPECT_FALSE(changed.select(1, 15).allclose(logits.view({3, 16, 20}).select(1, 15)));
    EXPECT_THAT(error_of([&] { lm->forward(randn({2, 3, 32, 32})); }), HasSubstr("expected character indices int64 [N, T]"));
  }
  auto lm = models::create("char-transformer", models::ModelOptions().num_classes(20).image_size(16));
  EXPECT_THAT(error_of([&] { lm->forward(zeros({1, 17}, kInt64)); }), HasSubstr("with 1 <= T <= 16"));
}

// The char-lstm's forward from a state continues where the previous window stopped: two halves,
// the second from the first's final state, give the logits of the whole window from zeros.
TEST(ModelsRegistry, CharLSTMContinuesFromACarriedState) {
  manual_seed(4);
  models::CharLSTM lm(models::ModelOptions().num_classes(20));
  lm.eval();
  NoGradGuard no_grad;
  Tensor x = randint(0, 20, {3, 16});
  Tensor whole = lm.forward(x).view({3, 16, 20});
  const Shape state{3, models::CharLSTM::kLayers, models::CharLSTM::kHidden};
  auto [first, h, c] = lm.forward(x.narrow(1, 0, 10).contiguous(), zeros(state), zeros(state));
  EXPECT_EQ(h.sizes().vec(), state);
  auto [second, h2, c2] = lm.forward(x.narrow(1, 10, 6).contiguous(), h, c);
  EXPECT_TRUE(first.view({3, 10, 20}).allclose(whole.narrow(1, 0, 10), 1e-5, 1e-6));
  EXPECT_TRUE(second.view({3, 6, 20}).allclose(whole.narrow(1, 10, 6), 1e-5, 1e-6));
  EXPECT_THAT(error_of([&] { lm.forward(x, zeros({3, 2, 5}), zeros(state)); }),
              HasSubstr("expected states h and c of shape [3, 2, 256] (batch, layers, hidden)"));
}

}  // namespace
}  // namespace cohort
