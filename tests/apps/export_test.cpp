// `cohort export`: a tiny run's checkpoint written as ONNX, read back, run by OpenCV's dnn against
// the checkpoint's model in cohort; the errors name the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/ring_table.h"
#include "apps/run_cohort.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/io/npy.h"
#include "cohort/io/onnx.h"
#include "cohort/data/csv.h"
#include "cohort/data/text.h"
#include "cohort/data/transforms.h"
#include "cohort/ops/shape.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/creation.h"
#include "support/subprocess.h"
#include "io/onnx_test_util.h"

#include "app/data_setup.h"
#include "app/data_spec.h"
#include "app/predict.h"
#include "app/run_checkpoint.h"
#include "support/paths.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;
using ::testing::HasSubstr;

namespace cohort::testing {
namespace {


class Export : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new fs::path(fresh_test_dir("export", "run"));
    auto [code, err] = run_cohort({"train", "--dataset", "synthetic", "--limit", "64", "--batch-size", "32", "--epochs",
                                   "1", "--workers", "0", "--threads", "1", "--no-progress", "--out", run_->string()});
    ASSERT_EQ(code, 0) << err;
  }
  static void TearDownTestSuite() {
    fs::remove_all(run_->parent_path());
    delete run_;
  }
  static fs::path* run_;
};
fs::path* Export::run_ = nullptr;

TEST_F(Export, WritesTheCheckpointsModel) {
  const fs::path dir = fresh_test_dir("export", "out");
  fs::create_directories(dir);
  const fs::path file = dir / "model.onnx";
  const Printed p = run_printing({"export", "--checkpoint", run_->string(), "--onnx", file.string()});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("-> " + file.string()));
  EXPECT_THAT(p.out, HasSubstr("ONNX opset 13"));

  // What the consumer must still do: the image's size and scale; the normalisation is in the graph.
  EXPECT_THAT(p.out, HasSubstr("the consumer must: resize each image to 28x28"));
  EXPECT_THAT(p.out, HasSubstr("NCHW float32 [N, 1, 28, 28], grey, pixels in [0, 1] (byte / 255); normalisation "
                               "(x - mean) / std with mean [0.5] and std [0.25] per channel is inside the graph"));

  const io::OnnxSummary s = io::read_onnx_summary(file);
  EXPECT_EQ(s.inputs.at(0).dims, (std::vector<std::string>{"N", "1", "28", "28"}));
  EXPECT_EQ(s.outputs.at(0).dims, (std::vector<std::string>{"N", "10"}));
  ASSERT_GE(s.ops.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(s.ops.begin(), s.ops.begin() + 3), (std::vector<std::string>{"Sub", "Div", "Conv"}));
  std::vector<std::string> names;
  for (const auto& init : s.initializers) names.push_back(init.name);
  EXPECT_THAT(names, ::testing::Contains("conv1.weight"));
  EXPECT_THAT(names, ::testing::Contains("fc3.bias"));
  EXPECT_THAT(names, ::testing::Contains("input_mean"));
  ASSERT_NE(s.find_metadata("classes"), nullptr);
  EXPECT_THAT(*s.find_metadata("classes"), HasSubstr("[\"pattern 0\",\"pattern 1\","));
  ASSERT_NE(s.find_metadata("image_resize"), nullptr);
  ASSERT_NE(s.find_metadata("input_normalization"), nullptr);
  EXPECT_THAT(*s.find_metadata("input_normalization"), HasSubstr("\"inside_graph\": true"));
  EXPECT_EQ(s.find_metadata("feature_columns"), nullptr);  // images have none
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no temp file left

  // The same model in cohort, from the same checkpoint, against OpenCV's run of the file: the file
  // takes pixels in [0, 1] and normalises them as cohort's inference transform does.
  const app::Checkpoint checkpoint = app::read_checkpoint(*run_, /*talk=*/false);
  auto model = app::create_model(checkpoint.config.model, *checkpoint.data);
  app::restore_checkpoint(checkpoint, *model, nullptr, nullptr);
  model->eval();
  Tensor x = rand({5, 1, 28, 28});
  Tensor y;
  {
    NoGradGuard no_grad;
    data::transforms::Normalize<> normalize(checkpoint.data->mean, checkpoint.data->std);
    y = model->forward(normalize(x));
  }
  check_in_onnxruntime_if_available(dir, file, x, y, {"--argmax"});
  const Finished probe =
      run_process({"/usr/bin/python3", "-c", "import onnx, cv2"}, dir, "probe", std::chrono::seconds(120));
  if (probe.exit_code != 0) GTEST_SKIP() << "/usr/bin/python3 lacks onnx or cv2: " << probe.err;
  io::save_npy(dir / "x.npy", x);
  io::save_npy(dir / "y.npy", y);
  const Finished check = run_process({"/usr/bin/python3", cohort::testing::fixtures_dir() + "/check_onnx.py",
                                      file.string(), (dir / "x.npy").string(), (dir / "y.npy").string()},
                                     dir, "check", std::chrono::seconds(300));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  fs::remove_all(dir);
}

TEST_F(Export, ReplacesAFileAtomicallyAndNamesItInErrors) {
  const fs::path dir = fresh_test_dir("export", "errors");
  fs::create_directories(dir);
  const fs::path file = dir / "model.onnx";
  {
    std::ofstream(file) << "old";
  }
  ASSERT_EQ(run_printing({"export", "--checkpoint", run_->string(), "--onnx", file.string()}).code, 0);
  EXPECT_NE(text_of(file), "old");

  const fs::path missing_dir = dir / "no" / "such" / "model.onnx";
  Printed p = run_printing({"export", "--checkpoint", run_->string(), "--onnx", missing_dir.string()});
  EXPECT_EQ(p.code, 1);
  EXPECT_THAT(p.err, HasSubstr(missing_dir.string()));

  p = run_printing({"export", "--checkpoint", (dir / "nothing").string(), "--onnx", file.string()});
  EXPECT_EQ(p.code, 1);
  EXPECT_THAT(p.err, HasSubstr((dir / "nothing").string()));

  p = run_printing({"export", "--checkpoint", run_->string(), "--onnx", file.string(), "--opset", "11"});
  EXPECT_EQ(p.code, 2);
  p = run_printing({"export", "--checkpoint", run_->string()});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("--onnx"));
  fs::remove_all(dir);
}

TEST_F(Export, OutputFlagsRefuseAFifoOrADirectoryBeforeAnyWork) {
  // export --onnx and eval --json replace their file atomically: something that is not a regular
  // file is a usage error naming the flag and what the path is, and stays what it was.
  const fs::path dir = fresh_test_dir("export", "special-targets");
  fs::create_directories(dir / "folder");
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Printed p = run_printing({"export", "--checkpoint", run_->string(), "--onnx", fifo.string()});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort export: --onnx " + fifo.string() + " is a FIFO, not a regular file"));
  EXPECT_EQ(p.out, "");  // refused before the checkpoint was read
  p = run_printing({"eval", "--checkpoint", run_->string(), "--json", fifo.string()});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort eval: --json " + fifo.string() + " is a FIFO, not a regular file"));
  EXPECT_EQ(p.out, "");
  EXPECT_EQ(fs::symlink_status(fifo).type(), fs::file_type::fifo);
  p = run_printing({"eval", "--checkpoint", run_->string(), "--json", (dir / "folder").string()});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort eval: --json " + (dir / "folder").string() + " is a directory"));
  EXPECT_TRUE(fs::is_directory(dir / "folder"));

  // A symlink to a file: the file is replaced, the link stays.
  {
    std::ofstream(dir / "real.onnx") << "old";
  }
  fs::create_symlink(dir / "real.onnx", dir / "link.onnx");
  p = run_printing({"export", "--checkpoint", run_->string(), "--onnx", (dir / "link.onnx").string()});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.onnx"));
  EXPECT_NE(text_of(dir / "real.onnx"), "old");
  fs::remove_all(dir);
}

TEST(ExportTable, RawCsvRowsThroughTheFileGivePredictsAnswers) {
  const fs::path dir = fresh_test_dir("export", "table"), run = dir / "run", file = dir / "table.onnx";
  const fs::path csv = write_ring_table(dir, 240, 7);
  auto [code, err] = run_cohort({"train", "--model", "mlp", "--dataset", "csv:" + csv.string(), "--target", "label",
                                 "--epochs", "3", "--optimizer", "adam", "--lr", "0.003", "--batch-size", "32",
                                 "--workers", "0", "--threads", "1", "--no-progress", "--out", run.string()});
  ASSERT_EQ(code, 0) << err;
  const Printed p = run_printing({"export", "--checkpoint", run.string(), "--onnx", file.string()});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("input \"input\" [N, 3] float32"));
  EXPECT_THAT(p.out, HasSubstr("the consumer must: feed raw rows as float32 [N, 3] in column order a, b, noise; "
                               "standardisation (x - mean) / std"));
  EXPECT_THAT(p.out, HasSubstr("per column is inside the graph"));

  // What the model knows of its data is in the file.
  const io::OnnxSummary s = io::read_onnx_summary(file);
  EXPECT_EQ(s.inputs.at(0).dims, (std::vector<std::string>{"N", "3"}));
  ASSERT_GE(s.ops.size(), 2u);
  EXPECT_EQ(s.ops[0], "Sub");
  EXPECT_EQ(s.ops[1], "Div");
  ASSERT_NE(s.find_metadata("classes"), nullptr);
  EXPECT_EQ(*s.find_metadata("classes"), "[\"inside\",\"outside\"]");
  ASSERT_NE(s.find_metadata("feature_columns"), nullptr);
  EXPECT_EQ(*s.find_metadata("feature_columns"), "[\"a\",\"b\",\"noise\"]");
  ASSERT_NE(s.find_metadata("input_layout"), nullptr);
  EXPECT_EQ(*s.find_metadata("input_layout"), "N x 3 float32: raw feature columns, in this order: a, b, noise");
  ASSERT_NE(s.find_metadata("model"), nullptr);
  EXPECT_EQ(*s.find_metadata("model"), "mlp");
  EXPECT_EQ(s.find_metadata("image_resize"), nullptr);

  // cohort predict's answers for the raw rows ...
  app::PredictOptions o;
  o.checkpoint = run.string();
  o.inputs = {csv.string()};
  o.top_k = 1;
  o.json = true;
  std::ostringstream printed;
  app::run_predict(o, printed);
  const auto predictions = nlohmann::json::parse(printed.str()).at("predictions");
  // ... and its logits: the checkpoint's model on the rows through predict's transform.
  const app::Checkpoint checkpoint = app::read_checkpoint(run, /*talk=*/false);
  auto model = app::create_model(checkpoint.config.model, *checkpoint.data);
  app::restore_checkpoint(checkpoint, *model, nullptr, nullptr);
  model->eval();
  const Tensor rows = data::read_csv_columns(csv.string(), checkpoint.data->features);
  ASSERT_EQ(static_cast<int64_t>(predictions.size()), rows.size(0));
  const data::Transform transform = app::inference_transform(*checkpoint.data);
  Generator gen(0);
  std::vector<Tensor> inputs;
  for (int64_t r = 0; r < rows.size(0); ++r) inputs.push_back(transform(rows[r], gen));
  Tensor logits;
  {
    NoGradGuard no_grad;
    logits = model->forward(stack(inputs, 0));
  }
  const Tensor classes = logits.argmax(1);
  for (int64_t r = 0; r < rows.size(0); ++r)
    ASSERT_EQ(predictions[static_cast<size_t>(r)].at("top")[0].at("index").get<int64_t>(), classes[r].item<int64_t>())
        << "row " << r;
  // onnxruntime on the raw rows predict read gives its logits and classes.
  check_in_onnxruntime_if_available(dir, file, rows, logits, {"--argmax"});

  // The file, run by other engines on the raw rows, gives the same logits and the same classes.
  const Finished probe =
      run_process({"/usr/bin/python3", "-c", "import onnx, cv2"}, dir, "probe", std::chrono::seconds(120));
  if (probe.exit_code != 0) GTEST_SKIP() << "/usr/bin/python3 lacks onnx or cv2: " << probe.err;
  io::save_npy(dir / "rows.npy", rows);
  io::save_npy(dir / "logits.npy", logits);
  const Finished check = run_process(
      {"/usr/bin/python3", cohort::testing::fixtures_dir() + "/check_onnx.py", file.string(),
       (dir / "rows.npy").string(), (dir / "logits.npy").string(), "--argmax", "--metadata",
       "classes=[\"inside\",\"outside\"]", "--metadata", "feature_columns=[\"a\",\"b\",\"noise\"]"},
      dir, "check", std::chrono::seconds(300));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  std::cout << check.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cohort::testing
