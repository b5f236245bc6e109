// `cohort export --pytorch`: tiny runs' checkpoints written as PyTorch state dicts, loaded by Debian's
// PyTorch into the torch.nn module the command prints, and run against the checkpoint's model in
// cohort; the flag checks and the snippet of a model without a short twin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "apps/run_cohort.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/data/transforms.h"
#include "cohort/io/npy.h"
#include "cohort/io/torch_file.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/creation.h"
#include "support/subprocess.h"

#include "app/data_setup.h"
#include "app/pytorch_snippet.h"
#include "app/run_checkpoint.h"
#include "support/paths.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;
using ::testing::HasSubstr;

namespace cohort::testing {
namespace {

// Whether /usr/bin/python3 imports `modules` ("torch", "torch, torchvision"); the reason when not.
std::string missing_python(const fs::path& dir, const std::string& modules) {
  const Finished probe =
      run_process({"/usr/bin/python3", "-c", "import " + modules}, dir, "probe", std::chrono::seconds(120));
  return probe.exit_code == 0 ? "" : "/usr/bin/python3 cannot import " + modules + ": " + probe.err;
}

std::vector<std::string> train_args(const fs::path& run, const std::string& model, std::vector<std::string> data) {
  std::vector<std::string> args = {"train", "--model", model};
  args.insert(args.end(), data.begin(), data.end());
  for (const char* a : {"--epochs", "1", "--workers", "0", "--threads", "1", "--no-progress", "--out"}) args.push_back(a);
  args.push_back(run.string());
  return args;
}

// Trains `model` on `data` for one epoch, exports it with --pytorch, and has PyTorch run the printed
// module on inputs that cohort's model also ran: the outputs agree to 1e-4 and in argmax.
void check_round_trip(const std::string& model, const std::vector<std::string>& data, const std::string& modules,
                      const std::string& snippet_line) {
  const fs::path dir = fresh_test_dir("export-pytorch", model), run = dir / "run", file = dir / "state.pt";
  fs::create_directories(dir);
  std::vector<std::string> corpus_data = data;
  if (data.empty()) {  // a language model: a small corpus
    std::string text;
    for (int i = 0; i < 32; ++i) text += "the quick brown fox jumps over the lazy dog. ";
    std::ofstream(dir / "corpus.txt") << text;
    corpus_data = {"--dataset", "text:" + (dir / "corpus.txt").string(), "--seq-len", "16", "--batch-size", "8"};
  }
  auto [code, err] = run_cohort(train_args(run, model, corpus_data));
  ASSERT_EQ(code, 0) << err;
  const auto entries = [&] { return std::distance(fs::directory_iterator(dir), fs::directory_iterator()); };
  const auto before = entries();
  const Printed p = run_printing({"export", "--checkpoint", run.string(), "--pytorch", file.string()});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("-> " + file.string()));
  EXPECT_THAT(p.out, HasSubstr("the torch.nn model that loads it, in Python:"));
  EXPECT_THAT(p.out, HasSubstr(snippet_line));
  EXPECT_THAT(p.out, HasSubstr("model.load_state_dict(torch.load(\"" + file.string() + "\"))"));
  EXPECT_EQ(entries(), before + 1);  // the file, and no temporary file beside it

  // cohort reads back what it wrote: the checkpoint's state dict, name for name.
  const app::Checkpoint checkpoint = app::read_checkpoint(run, /*talk=*/false);
  auto net = app::create_model(checkpoint.config.model, *checkpoint.data);
  app::restore_checkpoint(checkpoint, *net, nullptr, nullptr);
  net->eval();
  const auto written = io::read_torch_state_dict(file);
  ASSERT_EQ(written.size(), net->state_dict().size());
  for (const auto& item : net->state_dict()) {
    ASSERT_NE(written.find(item.key()), nullptr) << item.key();
    EXPECT_TRUE(written[item.key()].equal(item.value())) << item.key();
  }

  // Inputs as the user has them (pixels in [0, 1], a table's raw rows [N, F], character ids) and
  // cohort's logits for them; a table model takes standardised rows shaped [N, F, 1, 1].
  const app::DataSpec& spec = *checkpoint.data;
  const bool text = spec.kind == app::DataKind::kText, table = spec.kind == app::DataKind::kTable;
  const Tensor x = text    ? randint(0, static_cast<int64_t>(spec.classes.size()), {3, 16})
                   : table ? rand({5, spec.channels}) * 4 - 2
                           : rand({5, spec.channels, spec.image_size, spec.image_size});
  Tensor y;
  {
    NoGradGuard no_grad;
    if (text) {
      y = net->forward(x);
    } else {
      data::transforms::Normalize<> normalize(spec.mean, spec.std);
      y = net->forward(normalize(table ? x.view({-1, spec.channels, 1, 1}) : x));
    }
  }
  const std::string missing = missing_python(dir, modules);
  if (!missing.empty()) GTEST_SKIP() << missing;
  io::save_npy(dir / "x.npy", x);
  io::save_npy(dir / "y.npy", y);
  std::ofstream(dir / "printed.txt") << p.out;
  const Finished check =
      run_process({"/usr/bin/python3", cohort::testing::fixtures_dir() + "/check_pytorch_export.py",
                   (dir / "printed.txt").string(), file.string(), (dir / "x.npy").string(), (dir / "y.npy").string()},
                  dir, "check", std::chrono::seconds(300));
  EXPECT_EQ(check.exit_code, 0) << p.out << check.out << check.err;
  std::cout << check.out;
  fs::remove_all(dir);
}

const std::vector<std::string> kSynthetic = {"--dataset", "synthetic", "--limit", "64", "--batch-size", "32"};

TEST(ExportPytorch, LeNetLoadsIntoTheClassItPrints) {
  check_round_trip("lenet", kSynthetic, "torch", "self.conv1 = nn.Conv2d(1, 6, 5)");
}

TEST(ExportPytorch, BlitzCnnLoadsIntoTheClassItPrints) {
  check_round_trip("blitz-cnn", kSynthetic, "torch", "self.pool = nn.MaxPool2d(2, 2)");
}

TEST(ExportPytorch, MlpLoadsIntoTheClassItPrints) {
  check_round_trip("mlp", kSynthetic, "torch", "self.fc1 = nn.Linear(784, 256)");
}

TEST(ExportPytorch, TableMlpTakesStandardisedRowsAsThePrintedLinesSay) {
  const fs::path dir = fresh_test_dir("export-pytorch", "table-data");
  fs::create_directories(dir);
  std::ofstream csv(dir / "rows.csv");
  csv << "a,label,b\n";
  for (int i = 0; i < 64; ++i) csv << (i % 7) * 100 << "," << (i % 3 == 0 ? "yes" : "no") << "," << 50 + i % 5 << "\n";
  csv.close();
  check_round_trip("mlp", {"--dataset", "csv:" + (dir / "rows.csv").string(), "--target", "label", "--batch-size", "16"},
                   "torch", "mean, std = torch.tensor([");
  fs::remove_all(dir);
}

TEST(ExportPytorch, ResNet18WithTheCifarStemIsTorchvisionsWithTwoModulesReplaced) {
  check_round_trip("resnet18", {"--dataset", "synthetic", "--limit", "16", "--batch-size", "16"},
                   "torch, torchvision", "model.maxpool = nn.Identity()");
}

// BasicBlocks of another depth, then Bottlenecks: the printed torchvision constructor and the keys of
// their downsample shortcuts.
TEST(ExportPytorch, ResNet34WithTheCifarStemIsTorchvisionsWithTwoModulesReplaced) {
  check_round_trip("resnet34", {"--dataset", "synthetic", "--limit", "16", "--batch-size", "16"},
                   "torch, torchvision", "torchvision.models.resnet34(");
}

TEST(ExportPytorch, ResNet50WithTheCifarStemIsTorchvisionsWithTwoModulesReplaced) {
  check_round_trip("resnet50", {"--dataset", "synthetic", "--limit", "16", "--batch-size", "16"},
                   "torch, torchvision", "torchvision.models.resnet50(");
}

TEST(ExportPytorch, CharLstmLoadsIntoTheClassItPrints) {
  check_round_trip("char-lstm", {}, "torch", "nn.LSTM(64, 256, num_layers=2, batch_first=True)");
}

TEST(ExportPytorch, CharTransformerLoadsIntoTheClassItPrints) {
  check_round_trip("char-transformer", {}, "torch", "norm_first=True");
}

TEST(ExportPytorch, FlagsAreCheckedBeforeAnyWorkAndFilesReplacedWhole) {
  const fs::path dir = fresh_test_dir("export-pytorch", "flags"), run = dir / "run";
  fs::create_directories(dir);
  auto [code, err] = run_cohort(train_args(run, "mlp", kSynthetic));
  ASSERT_EQ(code, 0) << err;

  Printed p = run_printing({"export", "--checkpoint", run.string()});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort export: give --onnx FILE, --pytorch FILE or both, got neither"));
  p = run_printing({"export", "--checkpoint", run.string(), "--onnx", (dir / "m").string(), "--pytorch",
                    (dir / "m").string()});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("--onnx and --pytorch must name two files, got " + (dir / "m").string() + " for both"));
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  p = run_printing({"export", "--checkpoint", run.string(), "--pytorch", fifo.string()});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort export: --pytorch " + fifo.string() + " is a FIFO, not a regular file"));
  EXPECT_EQ(p.out, "");
  p = run_printing({"export", "--checkpoint", run.string(), "--pytorch", (dir / "no" / "such" / "m.pt").string()});
  EXPECT_EQ(p.code, 1);
  EXPECT_THAT(p.err, HasSubstr((dir / "no" / "such" / "m.pt").string()));

  // Both files in one command; an old file is replaced whole and no temporary file is left.
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / "m.pt") << "old";
  p = run_printing({"export", "--checkpoint", run.string(), "--onnx", (dir / "out" / "m.onnx").string(), "--pytorch",
                    (dir / "out" / "m.pt").string()});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("ONNX opset 13"));
  EXPECT_THAT(p.out, HasSubstr("(mlp, 6 state dict tensors, "));
  EXPECT_LT(p.out.find("ONNX opset"), p.out.find("import torch"));  // the snippet comes last
  EXPECT_EQ(io::read_torch_state_dict(dir / "out" / "m.pt").size(), 6u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "out"), fs::directory_iterator()), 2);
  fs::remove_all(dir);
}

// A model the snippet writer does not know: its keys and shapes, no module.
class Unknown : public models::Model {
 public:
  Unknown() : Model("my-net", models::ModelOptions()) { fc = register_module("head", nn::Linear(3, 2)); }
  Tensor forward(const Tensor& x) override { return fc(x); }
  std::shared_ptr<models::Model> create_fresh() const override { return std::make_shared<Unknown>(); }
  nn::Linear fc{nullptr};
};

TEST(PytorchSnippet, NamesTheKeysOfAModelWithoutAShortTwin) {
  bool has_module = true;
  const std::string s = app::pytorch_snippet(Unknown(), app::DataSpec(), "dir/m\"x.pt", &has_module);
  EXPECT_FALSE(has_module);
  EXPECT_THAT(s, HasSubstr("# no few-line torch.nn equivalent of cohort's my-net is known here"));
  EXPECT_THAT(s, HasSubstr("#   head.weight [2, 3]\n#   head.bias [2]\n"));
  EXPECT_THAT(s, HasSubstr("state = torch.load(\"dir/m\\\"x.pt\")"));
  EXPECT_EQ(app::python_string("a\\b\n\"c\""), "\"a\\\\b\\x0a\\\"c\\\"\"");
}

}  // namespace
}  // namespace cohort::testing
