// `cohort train` end to end on the synthetic dataset: outputs, exact resume (after an epoch and in
// the middle of one), bad flags and a diverging loss.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

#include "cohort/io/safetensors.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "support/error_of.h"
#include "support/run_metrics.h"

#include "app/cli.h"
#include "app/config.h"
#include "app/data_setup.h"
#include "app/run_checkpoint.h"
#include "apps/run_cohort.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;
using cohort::testing::metrics_of;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

fs::path fresh_dir(const std::string& name) {
  return cohort::testing::fresh_test_dir("trainer", name);
}

std::vector<std::string> base_flags(const fs::path& out) {
  return {"train", "--dataset", "synthetic", "--limit", "512", "--batch-size", "32", "--model", "lenet",
          "--lr", "0.05", "--workers", "2", "--threads", "1", "--log-every", "4", "--no-progress",
          "--out", out.string()};
}

std::vector<std::string> with(std::vector<std::string> flags, const std::vector<std::string>& more) {
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}


cohort::Tensor final_weight(const fs::path& dir) {
  auto all = cohort::app::list_checkpoints(dir);
  return cohort::io::load_safetensors(all.back())["model/fc3.weight"];
}

}  // namespace

TEST(Trainer, WritesMetricsCheckpointsReportAndSamples) {
  const fs::path out = fresh_dir("outputs");
  auto [code, err] = run_cohort(with(base_flags(out), {"--epochs", "2"}));
  ASSERT_EQ(code, 0) << err;
  for (const char* file : {"metrics.jsonl", "report.html", "samples.png", "eval.json"})
    EXPECT_TRUE(fs::exists(out / file)) << file;
  EXPECT_EQ(cohort::app::list_checkpoints(out).size(), 2u);

  auto records = metrics_of(out);
  int epochs = 0, steps = 0;
  for (const auto& r : records) (r["kind"] == "epoch" ? epochs : steps)++;
  EXPECT_EQ(epochs, 2);
  EXPECT_EQ(steps, 8);  // 16 steps per epoch, logged every 4
  // The synthetic classes are easy: two epochs learn them.
  EXPECT_GT(records.back()["test_acc"].get<double>(), 0.9) << records.back().dump();
}

TEST(Trainer, ResumeAfterAnEpochEqualsAnUninterruptedRun) {
  const fs::path whole = fresh_dir("whole"), split = fresh_dir("split");
  ASSERT_EQ(run_cohort(with(base_flags(whole), {"--epochs", "2"})).first, 0);
  ASSERT_EQ(run_cohort(with(base_flags(split), {"--epochs", "1"})).first, 0);
  // The thread count is not part of a run (it may change on resume), but oneDNN's results depend on it.
  auto [code, err] = run_cohort({"train", "--resume", split.string(), "--epochs", "2", "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  EXPECT_EQ(metrics_of(split), metrics_of(whole));
  EXPECT_TRUE(cohort::equal(final_weight(split), final_weight(whole)));
}

TEST(Trainer, ResumeInTheMiddleOfAnEpochEqualsAnUninterruptedRun) {
  const fs::path whole = fresh_dir("whole-mid"), cut = fresh_dir("cut");
  ASSERT_EQ(run_cohort(with(base_flags(whole), {"--epochs", "2"})).first, 0);
  // A run that checkpoints every 5 steps, "killed" after step 20 (epoch 2, batch 4): later
  // checkpoints are removed, and metrics.jsonl keeps lines the dead run wrote after step 20.
  ASSERT_EQ(run_cohort(with(base_flags(cut), {"--epochs", "2", "--checkpoint-every", "5", "--keep-checkpoints", "99"}))
                .first,
            0);
  for (const auto& path : cohort::app::list_checkpoints(cut))
    if (cohort::app::read_checkpoint(path).progress.step > 20) fs::remove(path);
  ASSERT_EQ(cohort::app::read_checkpoint(cut).progress.step, 20);
  auto [code, err] = run_cohort({"train", "--resume", cut.string(), "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  EXPECT_EQ(metrics_of(cut), metrics_of(whole));
  EXPECT_TRUE(cohort::equal(final_weight(cut), final_weight(whole)));
}

TEST(Trainer, BadFlagsAreClearErrors) {
  const fs::path out = fresh_dir("bad");
  auto unknown = run_cohort(with(base_flags(out), {"--model", "alexnet"}));
  EXPECT_EQ(unknown.first, 2);  // a usage error
  EXPECT_THAT(unknown.second, HasSubstr("--model 'alexnet' is not known; choose one of lenet, blitz-cnn"));
  auto zero = run_cohort(with(base_flags(out), {"--epochs", "0"}));
  EXPECT_THAT(zero.second, HasSubstr("--epochs must be at least 1, got 0"));
  auto not_a_number = run_cohort(with(base_flags(out), {"--lr", "fast"}));
  EXPECT_EQ(not_a_number.first, 2);  // CLI11's usage error
  auto no_run = run_cohort({"train", "--resume", (out / "nothing-here").string()});
  EXPECT_THAT(no_run.second, HasSubstr("nothing-here does not exist (expected a run directory"));
  fs::create_directories(out / "empty-run");
  auto empty = run_cohort({"train", "--resume", (out / "empty-run").string()});
  EXPECT_THAT(empty.second, HasSubstr("no checkpoint in"));
  auto missing = run_cohort(with(base_flags(out / "mnist"), {"--dataset", "mnist", "--data-dir", "/nonexistent/mnist"}));
  EXPECT_THAT(missing.second, HasSubstr("the MNIST directory /nonexistent/mnist does not exist"));
}

// Thread counts past cohort's limit (kMaxThreads, 1024) are refused with the limit before any thread
// starts: --threads 100000 crashed inside libgomp, --workers 100000 ended on an uncaught
// std::system_error, OMP_NUM_THREADS=999999 was accepted.
TEST(Trainer, ThreadCountsPastTheLimitAreClearErrors) {
  const fs::path out = fresh_dir("threads");
  auto threads = run_cohort(with(base_flags(out), {"--threads", "100000"}));
  EXPECT_EQ(threads.first, 2);
  EXPECT_THAT(threads.second, HasSubstr("cohort train: --threads must be at most 1024, got 100000"));
  auto workers = run_cohort(with(base_flags(out), {"--workers", "100000"}));
  EXPECT_EQ(workers.first, 2);
  EXPECT_THAT(workers.second, HasSubstr("cohort train: --workers must be at most 1024, got 100000"));
  {
    const char* old = std::getenv("OMP_NUM_THREADS");
    const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv("OMP_NUM_THREADS", "999999", 1);
    auto omp = run_cohort(with(base_flags(out), {"--threads", "0"}));  // 0: take $OMP_NUM_THREADS
    if (saved) ::setenv("OMP_NUM_THREADS", saved->c_str(), 1);
    else ::unsetenv("OMP_NUM_THREADS");
    EXPECT_EQ(omp.first, 1);
    EXPECT_THAT(omp.second, HasSubstr("$OMP_NUM_THREADS must be at most 1024 threads, got 999999"));
  }
  auto eval = run_cohort({"eval", "--checkpoint", (out / "none").string(), "--threads", "100000"});
  EXPECT_EQ(eval.first, 2);
  EXPECT_THAT(eval.second, HasSubstr("cohort eval: --threads must be from 0 to 1024"));
  // A checkpoint's configuration is read with the same bound (a resumed run takes its workers).
  nlohmann::json config = cohort::app::to_json(cohort::app::TrainConfig{});
  config["workers"] = 100000;
  EXPECT_THAT(cohort::testing::error_of([&] { cohort::app::train_config_from_json(config); }),
              HasSubstr("'workers' must be from 0 to 1024 (data-loading threads), got 100000"));
}

TEST(Trainer, ResumeRefusesAChangedRecipe) {
  const fs::path out = fresh_dir("recipe");
  ASSERT_EQ(run_cohort(with(base_flags(out), {"--epochs", "1"})).first, 0);
  auto [code, err] = run_cohort({"train", "--resume", out.string(), "--lr", "0.1"});
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("--lr 0.1 differs from the resumed run's 0.05"));
}

// --precision bf16: the forward pass under bfloat16 autocast learns as float32 does, the precision is
// recorded and printed, checkpoints stay float32, and a resumed run keeps it.
TEST(Trainer, Bfloat16PrecisionLearnsIsRecordedAndResumeKeepsIt) {
  const fs::path out = fresh_dir("bf16");
  auto [code, err] = run_cohort(with(base_flags(out), {"--epochs", "2", "--precision", "bf16"}));
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr(", bfloat16 autocast, output in"));
  EXPECT_THAT(cohort::testing::text_of(out / "metrics.jsonl"), HasSubstr("\"precision\":\"bf16\""));
  auto records = metrics_of(out);
  EXPECT_GT(records.back()["test_acc"].get<double>(), 0.9) << records.back().dump();
  const fs::path last = cohort::app::list_checkpoints(out).back();
  EXPECT_EQ(cohort::app::read_checkpoint(last).config.precision, "bf16");
  // The weights and optimizer state stay float32 (a safetensors header names every tensor's dtype).
  const std::string file = cohort::testing::text_of(last);
  EXPECT_EQ(file.find("\"BF16\""), std::string::npos);
  EXPECT_NE(file.find("\"F32\""), std::string::npos);
  auto [resumed, resume_err] = run_cohort({"train", "--resume", out.string(), "--precision", "f32"});
  EXPECT_EQ(resumed, 2);
  EXPECT_THAT(resume_err, HasSubstr("--precision \"f32\" differs from the resumed run's \"bf16\""));
  auto [bad, bad_err] = run_cohort(with(base_flags(fresh_dir("bf16-bad")), {"--precision", "fp8"}));
  EXPECT_EQ(bad, 2);
  EXPECT_THAT(bad_err, HasSubstr("--precision 'fp8' is not known; choose one of f32, bf16, f16"));
}

// --precision f16: float16 autocast with dynamic loss scaling learns, and a run resumed mid-epoch
// (the scaler's state is in the checkpoint) equals the uninterrupted one.
TEST(Trainer, Float16PrecisionScalesTheLossAndResumesExactly) {
  const fs::path whole = fresh_dir("f16-whole"), cut = fresh_dir("f16-cut");
  auto [code, err] = run_cohort(with(base_flags(whole), {"--epochs", "2", "--precision", "f16"}));
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr(", float16 autocast with loss scaling, output in"));
  EXPECT_GT(metrics_of(whole).back()["test_acc"].get<double>(), 0.9) << metrics_of(whole).back().dump();
  ASSERT_EQ(run_cohort(with(base_flags(cut), {"--epochs", "2", "--precision", "f16", "--checkpoint-every", "5",
                                              "--keep-checkpoints", "99"}))
                .first,
            0);
  for (const auto& path : cohort::app::list_checkpoints(cut))
    if (cohort::app::read_checkpoint(path).progress.step > 20) fs::remove(path);
  const cohort::app::Checkpoint at20 = cohort::app::read_checkpoint(cut);
  ASSERT_EQ(at20.progress.step, 20);
  ASSERT_EQ(at20.progress.grad_scaler.count("scale"), 1u);
  auto [resumed, resume_err] = run_cohort({"train", "--resume", cut.string(), "--threads", "1", "--no-progress"});
  ASSERT_EQ(resumed, 0) << resume_err;
  EXPECT_EQ(metrics_of(cut), metrics_of(whole));
  EXPECT_TRUE(cohort::equal(final_weight(cut), final_weight(whole)));
}

TEST(Trainer, DivergingLossStopsWithTheStepAndKeepsTheLastCheckpoint) {
  const fs::path out = fresh_dir("diverge");
  auto [code, err] = run_cohort(with(base_flags(out), {"--lr", "1e6", "--epochs", "2", "--checkpoint-every", "1"}));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("the loss is"));
  EXPECT_THAT(err, HasSubstr("training stopped"));
  // Whatever was checkpointed before the failure still loads.
  for (const auto& path : cohort::app::list_checkpoints(out)) EXPECT_NO_THROW(cohort::app::read_checkpoint(path));
}

TEST(Trainer, AWeightThatIsNotFiniteStopsTrainingBeforeItIsCheckpointed) {
  const fs::path out = fresh_dir("inf-weights");
  // The first step's loss is finite, its update is not: the weights hold infinities or NaN after it.
  auto [code, err] = run_cohort(with(base_flags(out), {"--lr", "1e300", "--epochs", "1", "--checkpoint-every", "1"}));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("after step 1; training stopped without writing step-00000001.safetensors"));
  EXPECT_TRUE(cohort::app::list_checkpoints(out).empty());
}

TEST(Trainer, EvalPrintsAccuracyPerClassAndConfusion) {
  const fs::path out = fresh_dir("eval");
  ASSERT_EQ(run_cohort(with(base_flags(out), {"--epochs", "1"})).first, 0);
  ::testing::internal::CaptureStdout();
  auto [code, err] = run_cohort({"eval", "--checkpoint", out.string(), "--json", (out / "again.json").string()});
  const std::string printed = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(printed, HasSubstr("Accuracy of the network on the 512 test images:"));
  EXPECT_THAT(printed, HasSubstr("Accuracy for class: pattern 3"));
  EXPECT_THAT(printed, HasSubstr("Confusion matrix"));
  // The same numbers as the trainer's own evaluation at the end of the run.
  std::ifstream a(out / "eval.json"), b(out / "again.json");
  EXPECT_EQ(nlohmann::json::parse(a)["confusion"], nlohmann::json::parse(b)["confusion"]);
}

TEST(Trainer, InfoNamesTheBuildAndTheIsa) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run_cohort({"info"}).first, 0);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(printed, HasSubstr("oneDNN:   "));
  EXPECT_THAT(printed, HasSubstr("ISA in use: "));
  EXPECT_THAT(printed, HasSubstr("devices:  "));
  // Whether bfloat16 has instructions of its own here, as /proc/cpuinfo's flags say. The sanitizer
  // builds have no ISA clones (cmake/CohortBuildType.cmake), so their conversions are portable loops
  // and only AMX's tiles count there.
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string flags{std::istreambuf_iterator<char>(cpuinfo), std::istreambuf_iterator<char>()};
#ifdef COHORT_NO_ISA_CLONES
  constexpr bool clones = false;
#else
  constexpr bool clones = true;
#endif
  const bool amx = flags.find(" amx_bf16") != std::string::npos,
             dot = clones && flags.find(" avx512_bf16") != std::string::npos;
  EXPECT_THAT(printed, HasSubstr(amx   ? "bfloat16: native (AMX tiles)"
                                 : dot ? "bfloat16: native (AVX512_BF16)"
                                       : "bfloat16: no native instructions"));
}

TEST(Trainer, TwoDevicesGiveTheMetricsOfOne) {
  const fs::path one = fresh_dir("one-device"), two = fresh_dir("two-devices");
  ASSERT_EQ(run_cohort(with(base_flags(one), {"--epochs", "2"})).first, 0);
  auto [code, err] = run_cohort(with(base_flags(two), {"--epochs", "2", "--devices", "cpu:0,cpu:1"}));
  ASSERT_EQ(code, 0) << err;
  cohort::testing::expect_same_metrics(one, two, 2.0 / 512);
}

TEST(Trainer, BadDevicesAreClearErrors) {
  const fs::path out = fresh_dir("bad-devices");
  EXPECT_THAT(run_cohort(with(base_flags(out), {"--devices", "cpu:0,cpu:0"})).second, HasSubstr("names cpu:0 twice"));
  EXPECT_THAT(run_cohort(with(base_flags(out), {"--devices", "cpu:99"})).second,
              HasSubstr("cpu:99 does not exist"));
  EXPECT_THAT(run_cohort(with(base_flags(out), {"--devices", "999"})).second, HasSubstr("asks for 999 devices"));
}

// The NaN stop gives advice the program accepts (a resume keeps --lr), says when no checkpoint was
// written, and is recorded in metrics.jsonl and the report.
TEST(Trainer, ADivergedRunSaysWhatCanBeDoneAndRecordsTheFailure) {
  const fs::path out = fresh_dir("diverged-advice");
  auto [code, err] = run_cohort(with(base_flags(out), {"--lr", "1e6", "--epochs", "1"}));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("the loss is"));
  EXPECT_THAT(err, HasSubstr("No checkpoint was written, so there is nothing to resume"));
  EXPECT_THAT(err, Not(HasSubstr("last good checkpoint")));
  EXPECT_THAT(err, HasSubstr("--resume keeps the run's --lr"));
  EXPECT_THAT(err, HasSubstr("--overwrite and a lower --lr (e.g. --lr 100000)"));
  const auto records = metrics_of(out);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back()["kind"], "failure");
  EXPECT_THAT(records.back()["error"].get<std::string>(), HasSubstr("the loss is"));
  std::ifstream report(out / "report.html");
  std::stringstream html;
  html << report.rdbuf();
  EXPECT_THAT(html.str(), HasSubstr("Training stopped"));
}

// Weights that are finite but overflow in the first forward after a resume: the checkpoint is the
// suspect, not --lr, and an earlier checkpoint is offered.
// A one-epoch run in `out` with checkpoints at steps 8 and 16 (oldest first).
std::vector<fs::path> run_with_two_checkpoints(const fs::path& out) {
  EXPECT_EQ(run_cohort(with(base_flags(out), {"--epochs", "1", "--checkpoint-every", "8", "--keep-checkpoints", "5"})).first, 0);
  return cohort::app::list_checkpoints(out);
}

// Rewrites a checkpoint's tensors with `change`, keeping its metadata and a checksum that holds: a
// file damaged in a way the checksum cannot see.
void rewrite_checkpoint(const fs::path& file, const std::function<void(std::map<std::string, cohort::Tensor>&)>& change) {
  std::map<std::string, cohort::Tensor> tensors;
  for (const auto& item : cohort::io::load_safetensors(file)) tensors[item.key()] = item.value();
  change(tensors);
  cohort::io::Metadata metadata = cohort::io::load_safetensors_metadata(file);
  metadata.erase(cohort::io::kChecksumKey);
  cohort::io::save_safetensors(file, tensors, metadata, /*checksum=*/true);
}

TEST(Trainer, ALossThatIsNotFiniteRightAfterAResumeBlamesTheCheckpoint) {
  const fs::path out = fresh_dir("diverged-resume");
  const auto checkpoints = run_with_two_checkpoints(out);
  ASSERT_EQ(checkpoints.size(), 2u);
  const fs::path newest = checkpoints.back();
  // Finite, but every logit overflows to infinity (the activations are not all zero), and inf - inf is NaN.
  rewrite_checkpoint(newest, [](auto& tensors) {
    for (const char* name : {"model/fc3.weight", "model/fc3.bias"}) tensors[name] = tensors[name] * 0 + 3e38;
  });

  auto [code, err] = run_cohort({"train", "--resume", out.string(), "--epochs", "2", "--threads", "1", "--no-progress"});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("The run fails at once from the checkpoint it resumed, " + newest.string()));
  EXPECT_THAT(err, HasSubstr("resume an earlier one with --resume " + checkpoints.front().string()));
  EXPECT_THAT(err, Not(HasSubstr("lower --lr")));

  // Resumed again, it fails at the same step, which metrics.jsonl now records: a resume repeats the
  // steps exactly, so the step itself is what diverges, and the advice is the learning rate's.
  std::tie(code, err) = run_cohort({"train", "--resume", out.string(), "--epochs", "2", "--threads", "1", "--no-progress"});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("The run failed at this same step before it was resumed from " + newest.string()));
  EXPECT_THAT(err, HasSubstr("--overwrite and a lower --lr"));
  EXPECT_THAT(err, Not(HasSubstr("resume an earlier one")));
}

// A newest checkpoint whose checksum holds but whose tensors do not fit the model its configuration
// names (damaged, or written by something else): a run directory falls back to the newest older one
// that fits, saying so; a file named on its own is refused.
TEST(Trainer, ANewestCheckpointThatDoesNotFitTheModelFallsBackToAnOlderOne) {
  const fs::path out = fresh_dir("unfit-newest");
  const auto checkpoints = run_with_two_checkpoints(out);
  ASSERT_EQ(checkpoints.size(), 2u);
  const fs::path newest = checkpoints.back();
  rewrite_checkpoint(newest, [](auto& tensors) { tensors["model/fc3.weight"] = cohort::zeros({3, 84}); });

  cohort::testing::Printed eval = cohort::testing::run_printing({"eval", "--checkpoint", out.string()});
  EXPECT_EQ(eval.code, 0) << eval.err;
  EXPECT_THAT(eval.err, HasSubstr(newest.string() + " does not hold the weights of the lenet model"));
  EXPECT_THAT(eval.err, HasSubstr("cohort: using " + checkpoints.front().string() + ", the newest checkpoint in " +
                                  out.string() + " that fits the model"));
  // Named on its own, the file is what was asked for: no other one stands in.
  auto [code, err] = run_cohort({"eval", "--checkpoint", newest.string()});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("does not hold the weights of the lenet model"));
  EXPECT_THAT(err, Not(HasSubstr("cohort: using")));
  // The run resumes from the older one and trains on past the damaged step.
  std::tie(code, err) = run_cohort({"train", "--resume", out.string(), "--epochs", "1", "--threads", "1", "--no-progress"});
  EXPECT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("cohort: resumed " + checkpoints.front().string()));
  EXPECT_NO_THROW(cohort::app::restore_checkpoint(cohort::app::read_checkpoint(newest, false), *cohort::app::create_model(
      "lenet", *cohort::app::read_checkpoint(newest, false).data), nullptr, nullptr)) << "rewritten by the resumed run";
}

TEST(Trainer, ResumingAFinishedRunSaysSoAndHowToTrainLonger) {
  const fs::path out = fresh_dir("finished");
  ASSERT_EQ(run_cohort(with(base_flags(out), {"--epochs", "1"})).first, 0);
  auto [code, err] = run_cohort({"train", "--resume", out.string(), "--threads", "1", "--no-progress"});
  EXPECT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("the run in " + out.string() + " finished at epoch 1 (step 16)"));
  EXPECT_THAT(err, HasSubstr("--resume " + out.string() + " --epochs 2"));
}

// A new run that fails before it trains leaves no directory it created behind, and nothing of its
// own in one that existed; the user's files stay.
TEST(Trainer, ANewRunThatCannotStartLeavesNothingBehind) {
  const fs::path base = fresh_dir("no-leftovers");
  const std::vector<std::string> missing_data = {"--dataset", "mnist", "--data-dir", (base / "none").string()};
  auto [code, err] = run_cohort(with(base_flags(base / "a" / "b"), missing_data));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("does not exist"));
  EXPECT_FALSE(fs::exists(base / "a"));
  fs::create_directories(base / "empty");
  EXPECT_EQ(run_cohort(with(base_flags(base / "empty"), missing_data)).first, 1);
  EXPECT_TRUE(fs::exists(base / "empty"));
  EXPECT_FALSE(fs::exists(base / "empty" / "run.json"));
  // A second attempt is not refused by what the first left.
  EXPECT_THAT(run_cohort(with(base_flags(base / "empty"), missing_data)).second, Not(HasSubstr("not empty")));
  fs::create_directories(base / "mine");
  std::ofstream(base / "mine" / "notes.txt") << "mine";
  EXPECT_EQ(run_cohort(with(base_flags(base / "mine" / "run"), missing_data)).first, 1);
  EXPECT_TRUE(fs::exists(base / "mine" / "notes.txt"));
  EXPECT_FALSE(fs::exists(base / "mine" / "run"));
}
