// io::load_pytorch_state_dict on files PyTorch 1.13 wrote (tests/fixtures/generate_pytorch_weights.py):
// the zoo's architectures built in PyTorch, loaded into cohort's models, give PyTorch's outputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/tensor_impl.h"
#include "cohort/io/onnx.h"
#include "cohort/io/serialize.h"
#include "cohort/io/torch_file.h"
#include "cohort/models/model.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"
#include "io/io_test_util.h"
#include "io/onnx_test_util.h"
#include "support/error_of.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace cohort::testing {
namespace {

using ::testing::HasSubstr;

fs::path torch_fixture(const std::string& name) { return fs::path(cohort::testing::fixtures_dir()) / "torch" / name; }

class PytorchWeights : public ScratchDir {};

struct Case {
  std::string model, stem;
  int64_t in_channels, image_size;
};

// Loads `dir`/<stem>.pt into a fresh cohort model and compares its output with PyTorch's.
double max_diff_to_pytorch(const Case& c, const fs::path& dir) {
  auto net = models::create(c.model, models::ModelOptions().in_channels(c.in_channels).image_size(c.image_size));
  net->load_state_dict(io::load_pytorch_state_dict(dir / (c.stem + ".pt")));
  net->eval();
  const auto io = io::read_torch_state_dict(dir / (c.stem + "_io.pt"));
  NoGradGuard no_grad;
  Tensor y = net->forward(io["input"]);
  const Tensor& expected = io["output"];
  EXPECT_EQ(y.sizes(), expected.sizes());
  return (y.to(kFloat64) - expected.to(kFloat64)).abs().max().item<double>();
}

TEST_F(PytorchWeights, ZooModelsGivePytorchsOutputs) {
  for (const Case& c : {Case{"lenet", "pytorch_lenet", 1, 28}, Case{"blitz-cnn", "pytorch_blitz_cnn", 3, 32},
                        Case{"mlp", "pytorch_mlp", 1, 8}}) {
    const double diff = max_diff_to_pytorch(c, torch_fixture(""));
    std::cout << c.model << ": max |cohort - PyTorch| = " << diff << "\n";
    EXPECT_LT(diff, 1e-5) << c.model;
  }
}

TEST_F(PytorchWeights, KeepsSharedStoragesViewsAndDtypes) {
  const auto mlp = io::load_pytorch_state_dict(torch_fixture("pytorch_mlp.pt"));
  // fc1.bias and fc2.bias are two views of one storage, as PyTorch saved them.
  EXPECT_EQ(mlp["fc1.bias"].unsafe_impl()->storage(), mlp["fc2.bias"].unsafe_impl()->storage());
  EXPECT_EQ(mlp["fc2.bias"].storage_offset(), 256);
  EXPECT_FALSE(mlp["fc3.weight"].is_contiguous());
  EXPECT_EQ(mlp["fc3.weight"].strides().vec(), (std::vector<int64_t>{1, 10}));

  const auto blitz = io::load_pytorch_state_dict(torch_fixture("pytorch_blitz_cnn.pt"));
  EXPECT_EQ(blitz["conv1.weight"].dtype(), kFloat64);
  // load_state_dict converts to the model's float32.
  auto net = models::create("blitz-cnn");
  net->load_state_dict(blitz);
  EXPECT_EQ(net->named_parameters()["conv1.weight"].dtype(), kFloat32);
  EXPECT_TRUE(net->named_parameters()["conv1.weight"].equal(blitz["conv1.weight"].to(kFloat32)));
}

TEST_F(PytorchWeights, Resnet18FromPytorch) {
  const Finished probe = run_process({"/usr/bin/python3", "-c", "import torch"}, dir_, "probe",
                                     std::chrono::seconds(120));
  if (probe.exit_code != 0) GTEST_SKIP() << "/usr/bin/python3 has no torch: " << probe.err;
  const Finished gen = run_process({"/usr/bin/python3", cohort::testing::fixtures_dir() + "/generate_pytorch_weights.py",
                                    "--out", dir_.string(), "--only", "resnet18"},
                                   dir_, "generate", std::chrono::seconds(300));
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  const auto state = io::load_pytorch_state_dict(dir_ / "pytorch_resnet18.pt");
  EXPECT_EQ(state["bn1.num_batches_tracked"].dtype(), kInt64);
  EXPECT_EQ(state["bn1.num_batches_tracked"].item<int64_t>(), 3);
  const double diff = max_diff_to_pytorch(Case{"resnet18", "pytorch_resnet18", 3, 32}, dir_);
  std::cout << "resnet18: max |cohort - PyTorch| = " << diff << "\n";
  EXPECT_LT(diff, 1e-4);
}

// The README's "weights from PyTorch" snippet, as written, on torchvision's own resnet18.
TEST_F(PytorchWeights, ReadmeSnippetOnTorchvisionsResnet18) {
  const Finished probe = run_process({"/usr/bin/python3", "-c", "import torchvision"}, dir_, "probe",
                                     std::chrono::seconds(120));
  if (probe.exit_code != 0) GTEST_SKIP() << "/usr/bin/python3 has no torchvision: " << probe.err;
  const Finished gen = run_process({"/usr/bin/python3", cohort::testing::fixtures_dir() + "/generate_pytorch_weights.py",
                                    "--out", dir_.string(), "--only", "torchvision-resnet18"},
                                   dir_, "generate", std::chrono::seconds(300));
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  fs::rename(dir_ / "pytorch_torchvision_resnet18.pt", dir_ / "resnet18.pt");
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  {
    // The README's lines.
    auto net = models::create("resnet18", models::ModelOptions().image_size(224).num_classes(1000));
    net->load_state_dict(io::load_pytorch_state_dict("resnet18.pt"));
    net->eval();
    io::export_onnx(net, randn({2, 3, 224, 224}), "resnet18.onnx");  // input "input" [N, 3, 224, 224]

    const auto io = io::read_torch_state_dict("pytorch_torchvision_resnet18_io.pt");
    NoGradGuard no_grad;
    const Tensor y = net->forward(io["input"]);
    ASSERT_EQ(y.sizes(), io["output"].sizes());
    const double diff = (y.to(kFloat64) - io["output"].to(kFloat64)).abs().max().item<double>();
    std::cout << "torchvision resnet18: max |cohort - PyTorch| = " << diff << "\n";
    EXPECT_LT(diff, 1e-4);
    EXPECT_TRUE(y.argmax(1).equal(io["output"].argmax(1)));
    check_in_onnxruntime_if_available(dir_, dir_ / "resnet18.onnx", io["input"], y, {"--argmax"});
  }
  fs::current_path(cwd);
}

TEST_F(PytorchWeights, StripsTheModulePrefixOfADataParallelModelAndSaysSo) {
  // torch.save(nn.DataParallel(net).state_dict()): every key starts with "module.".
  std::string stripped = "unset";
  const auto state = io::load_pytorch_state_dict(torch_fixture("pytorch_data_parallel.pt"), &stripped);
  EXPECT_EQ(stripped, "module.");
  std::vector<std::string> keys;
  for (const auto& item : state) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"fc.weight", "fc.bias", "bn.weight", "bn.bias", "bn.running_mean",
                                            "bn.running_var", "bn.num_batches_tracked"}));
  // The values are the wrapped model's (the generator fills each parameter with 0, 1, 2, ...).
  EXPECT_EQ(state["fc.weight"].sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(state["fc.weight"][1][2].item<float>(), 5.f);
  EXPECT_EQ(state["bn.bias"][1].item<float>(), 1.f);
  EXPECT_EQ(state["bn.num_batches_tracked"].dtype(), kInt64);

  // A file whose keys do not all have the prefix is left as it is, and says nothing was stripped.
  const auto plain = io::load_pytorch_state_dict(torch_fixture("pytorch_lenet.pt"), &stripped);
  EXPECT_EQ(stripped, "");
  EXPECT_TRUE(plain.contains("conv1.weight"));
  io::write_torch_file(path("mixed.pt"), io::PyValue::dict({{"module.fc.weight", ones({2})}, {"fc.bias", ones({2})}}));
  const auto mixed = io::load_pytorch_state_dict(path("mixed.pt"), &stripped);
  EXPECT_EQ(stripped, "");
  EXPECT_TRUE(mixed.contains("module.fc.weight"));
}

TEST_F(PytorchWeights, RefusesAPickledModuleByName) {
  const std::string e = error_of([] { io::load_pytorch_state_dict(torch_fixture("pickled_module.pt")); });
  EXPECT_THAT(e, HasSubstr("load_pytorch_state_dict: " + torch_fixture("pickled_module.pt").string()));
  EXPECT_THAT(e, HasSubstr("__main__.Tiny"));
}

TEST_F(PytorchWeights, LoadingNamesMissingUnexpectedAndMisshapedKeys) {
  const auto lenet = io::load_pytorch_state_dict(torch_fixture("pytorch_lenet.pt"));
  auto seven = models::create("lenet", models::ModelOptions().in_channels(1).image_size(28).num_classes(7));
  EXPECT_THAT(error_of([&] { seven->load_state_dict(lenet); }),
              HasSubstr("size mismatch for: fc3.weight (checkpoint [10, 84], model [7, 84]), fc3.bias (checkpoint "
                        "[10], model [7])"));
  auto mlp = models::create("mlp", models::ModelOptions().in_channels(1).image_size(28));
  const std::string e = error_of([&] { mlp->load_state_dict(lenet); });
  EXPECT_THAT(e, HasSubstr("unexpected key(s): conv1.weight, conv1.bias, conv2.weight, conv2.bias"));
  EXPECT_THAT(e, HasSubstr("size mismatch for: fc1.weight (checkpoint [120, 256], model [256, 784])"));
}

}  // namespace
}  // namespace cohort::testing
