// The trainer's checkpoint files: round trip, pruning, and a full disk during a save.
#include "app/run_checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/generator.h"
#include "cohort/io/checkpoint.h"
#include "cohort/io/safetensors.h"
#include "cohort/models/model.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/creation.h"
#include "cohort/optim/sgd.h"
#include "support/error_of.h"

namespace fs = std::filesystem;
using namespace cohort;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// The data description of the small image models these tests save.
app::DataSpec grey_images() {
  app::DataSpec spec;
  spec.classes = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  spec.image_size = 8, spec.mean = {0.5}, spec.std = {0.25};
  return spec;
}

struct ScratchRun {
  fs::path dir;
  app::TrainConfig config;
  std::shared_ptr<models::Model> model = models::create("mlp", models::ModelOptions().in_channels(1).image_size(8));
  optim::SGD optimizer{model->parameters(), optim::SGDOptions(0.1).momentum(0.9)};

  explicit ScratchRun(const std::string& name)
      : dir(fs::temp_directory_path() / ("cohort-ckpt-test-" + std::to_string(::getpid())) / name) {
    fs::remove_all(dir);
    config.keep_checkpoints = 2;
  }
  fs::path save(int64_t step) {
    app::TrainProgress p;
    p.step = step;
    p.loader = {step / 10, step % 10};
    p.loss_sum = 0.1 * static_cast<double>(step);
    return app::save_run_checkpoint(dir, "test-run", config, grey_images(), p, *model, optimizer, nullptr);
  }
};

// Makes every file write past `bytes` fail with EFBIG, as a full disk would, until destroyed.
struct FileSizeLimit {
  rlimit old{};
  explicit FileSizeLimit(rlim_t bytes) {
    std::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the process instead of failing the write
    getrlimit(RLIMIT_FSIZE, &old);
    rlimit limit = old;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &old); }
};

}  // namespace

TEST(RunCheckpoint, RoundTripsProgressConfigAndRng) {
  ScratchRun run("roundtrip");
  manual_seed(11);
  const std::string rng = default_generator().get_state();
  run.config.lr = 0.125;
  const fs::path path = run.save(37);
  EXPECT_EQ(path.filename(), "step-00000037.safetensors");
  app::Checkpoint c = app::read_checkpoint(run.dir);
  EXPECT_EQ(c.path, path);
  EXPECT_EQ(c.progress.step, 37);
  EXPECT_EQ(c.progress.loader.epoch, 3);
  EXPECT_EQ(c.progress.loader.batch, 7);
  EXPECT_EQ(c.progress.loss_sum, 0.1 * 37);  // exact: doubles round-trip through JSON
  EXPECT_EQ(c.config.lr, 0.125);

  ScratchRun other("roundtrip-other");
  default_generator().manual_seed(99);
  app::restore_checkpoint(c, *other.model, &other.optimizer, nullptr);
  EXPECT_EQ(default_generator().get_state(), rng);
  EXPECT_TRUE(equal(other.model->parameters()[0], run.model->parameters()[0]));
}

TEST(RunCheckpoint, KeepsOnlyTheNewest) {
  ScratchRun run("prune");
  for (int64_t step : {1, 2, 3, 4}) run.save(step);
  auto all = app::list_checkpoints(run.dir);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].filename(), "step-00000003.safetensors");
  EXPECT_EQ(all[1].filename(), "step-00000004.safetensors");
}

TEST(RunCheckpoint, AFullDiskFailsCleanlyAndKeepsThePreviousCheckpoint) {
  ScratchRun run("full-disk");
  const fs::path good = run.save(1);
  const auto size = fs::file_size(good);
  {
    FileSizeLimit limit(size / 2);
    std::string error = cohort::testing::error_of([&] { run.save(2); });
    EXPECT_THAT(error, HasSubstr("step-00000002.safetensors"));
    EXPECT_THAT(error, HasSubstr("File too large"));
  }
  auto all = app::list_checkpoints(run.dir);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], good);
  for (const auto& entry : fs::directory_iterator(run.dir / "checkpoints"))
    EXPECT_EQ(entry.path(), good) << "left behind: " << entry.path();
  ScratchRun fresh("full-disk-reader");
  EXPECT_NO_THROW(app::restore_checkpoint(app::read_checkpoint(run.dir), *fresh.model, &fresh.optimizer, nullptr));
}

TEST(RunCheckpoint, ErrorsNameTheFile) {
  ScratchRun run("errors");
  fs::create_directories(run.dir);
  const fs::path junk = run.dir / "junk.safetensors";
  { std::ofstream(junk) << "not a checkpoint"; }
  EXPECT_THAT(cohort::testing::error_of([&] { app::read_checkpoint(junk); }), HasSubstr(junk.string()));
  // A checkpoint of another model is refused before the optimizer is touched.
  run.save(5);
  auto lenet = models::create("lenet", models::ModelOptions().in_channels(1).image_size(28));
  const std::string other = cohort::testing::error_of(
      [&] { app::restore_checkpoint(app::read_checkpoint(run.dir), *lenet, nullptr, nullptr); });
  EXPECT_THAT(other, HasSubstr(app::list_checkpoints(run.dir).back().string() + " does not hold the weights of the "));
  EXPECT_THAT(other, HasSubstr("'conv1.weight' is missing"));
  EXPECT_THAT(other, Not(HasSubstr("strict=false")));  // a library option, not the program's
}

namespace {

// Rewrites a checkpoint with `edit` applied to its tensors and its run state, with a fresh checksum:
// what a crafted file can hold.
template <class Edit>
void craft(const fs::path& file, Edit edit) {
  std::map<std::string, Tensor> tensors;
  for (const auto& item : io::load_safetensors(file)) tensors[item.key()] = item.value();
  io::Metadata metadata = io::load_safetensors_metadata(file);
  metadata.erase(io::kChecksumKey);
  nlohmann::json run = nlohmann::json::parse(metadata.at("cohort.run"));
  edit(tensors, run);
  metadata["cohort.run"] = run.dump();
  io::save_safetensors(file, tensors, metadata, /*checksum=*/true);
}

bool has_control_characters(const std::string& s) {
  for (char c : s)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) return true;
  return false;
}

}  // namespace

// Messages about a checkpoint's contents name the file and the field (not a flag the user never
// passed), and what they quote from the file is escaped: a tensor name cannot drive the terminal.
TEST(RunCheckpoint, MessagesAboutContentsNameTheFileAndEscapeIt) {
  ScratchRun run("crafted");
  const fs::path file = run.save(1);
  craft(file, [](auto&, nlohmann::json& state) { state["config"]["batch_size"] = 0; });
  std::string error = cohort::testing::error_of([&] { app::read_checkpoint(file); });
  EXPECT_THAT(error, HasSubstr(file.string() + ": the run configuration stored in this checkpoint is invalid: "
                                               "'batch_size' must be at least 1, got 0"));
  EXPECT_THAT(error, Not(HasSubstr("--batch-size")));

  const fs::path evil = run.save(2);
  craft(evil, [](std::map<std::string, Tensor>& tensors, nlohmann::json& state) {
    tensors["model/\x1b[2J\x1b]0;pwned\x07"] = full({2}, std::numeric_limits<float>::quiet_NaN());
    state["config"]["model"] = "mlp";
  });
  error = cohort::testing::error_of([&] { app::read_checkpoint(evil); });
  EXPECT_THAT(error, HasSubstr("tensor 'model/\\x1b[2J\\x1b]0;pwned\\x07' holds nan"));
  EXPECT_FALSE(has_control_characters(error)) << error;

  const fs::path extra = run.save(3);
  craft(extra, [](std::map<std::string, Tensor>& tensors, nlohmann::json&) {
    tensors["model/\x1b[31mred"] = zeros({2});
  });
  error = cohort::testing::error_of(
      [&] { app::restore_checkpoint(app::read_checkpoint(extra), *run.model, &run.optimizer, nullptr); });
  EXPECT_THAT(error, HasSubstr(extra.string() + " does not hold the weights of the lenet model"));
  EXPECT_THAT(error, HasSubstr("'\\x1b[31mred' is not in the model"));
  EXPECT_FALSE(has_control_characters(error)) << error;

  // The library's own readers escape too: a crafted header in safetensors.
  const fs::path header = run.dir / "header.safetensors";
  const std::string json = "{\"bad\\u001b[2J\":{\"dtype\":\"Q7\",\"shape\":[],\"data_offsets\":[0,0]}}";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  { std::ofstream(header, std::ios::binary) << bytes << json; }
  error = cohort::testing::error_of([&] { io::load_safetensors(header); });
  EXPECT_THAT(error, HasSubstr("bad\\x1b[2J"));
  EXPECT_FALSE(has_control_characters(error)) << error;
}

TEST(RunCheckpoint, ASaveRemovesOnlyTheTempFilesOfDeadProcesses) {
  ScratchRun run("temps");
  run.save(1);
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  // Another process's save in progress (its pid is alive: our parent's) and one a killed process left.
  const fs::path live_tmp = run.dir / "checkpoints" / ("step-00000002.safetensors.tmp." + std::to_string(::getppid()));
  const fs::path dead_tmp = run.dir / "checkpoints" / ("step-00000002.safetensors.tmp." + std::to_string(dead));
  std::ofstream(live_tmp) << "being written";
  std::ofstream(dead_tmp) << "torn";
  run.save(3);
  EXPECT_TRUE(fs::exists(live_tmp)) << "a live process's temp file was deleted (its rename would fail)";
  EXPECT_FALSE(fs::exists(dead_tmp));
}

TEST(RunCheckpoint, WeightsThatAreNotFiniteAreNeitherWrittenNorLoaded) {
  ScratchRun run("not-finite");
  const fs::path good = run.save(1);
  auto weight = run.model->named_parameters().begin()->value();
  const std::string name = run.model->named_parameters().begin()->key();
  {
    NoGradGuard no_grad;
    weight.view({-1}).narrow(0, 3, 1).fill_(std::numeric_limits<float>::quiet_NaN());
  }
  // Before writing: an error naming the tensor and the step, and no file.
  const std::string error = cohort::testing::error_of([&] { run.save(2); });
  EXPECT_THAT(error, HasSubstr("'" + name + "' holds nan (element 3) after step 2"));
  EXPECT_THAT(error, HasSubstr("training stopped without writing step-00000002.safetensors"));
  EXPECT_EQ(app::list_checkpoints(run.dir).size(), 1u);
  // On load: a checkpoint holding one (written behind the trainer's back) names the file and the tensor.
  io::save_checkpoint(good, *run.model, &run.optimizer,
                      {{"cohort.run", io::load_safetensors_metadata(good).at("cohort.run")}});
  const std::string load_error = cohort::testing::error_of([&] { app::read_checkpoint(good); });
  EXPECT_THAT(load_error, HasSubstr(good.string()));
  EXPECT_THAT(load_error, HasSubstr("tensor 'model/" + name + "' holds nan"));
  EXPECT_THAT(cohort::testing::error_of([&] { app::read_checkpoint(run.dir); }), HasSubstr("no intact checkpoint"));
}
