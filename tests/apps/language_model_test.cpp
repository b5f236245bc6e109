// A character-level language model end to end: `cohort train --model char-lstm --dataset text:PATH`
// (bits per character, perplexity and a generated sample per epoch, in the log, metrics.jsonl and the
// report), `cohort generate` from its checkpoint, and the flags' errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "app/generate.h"
#include "app/run_checkpoint.h"
#include "apps/same_run.h"
#include "cohort/io/safetensors.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/run_metrics.h"
#include "run_cohort.h"
#include "support/error_of.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using testing::error_of;
using testing::fresh_test_dir;
using testing::run_cohort;
using testing::text_of;
namespace fs = std::filesystem;

TEST(LanguageModel, TrainsOnTextAndGenerates) {
  const fs::path dir = fresh_test_dir("lm", "trains");
  fs::create_directories(dir / "corpus");
  {
    // A text with much to learn quickly: the same few lines over and over.
    std::ofstream out(dir / "corpus" / "lines");
    for (int i = 0; i < 200; ++i) out << "the cat sat on the mat.\nthe dog ate the log.\n";
  }
  const fs::path out = dir / "run";
  auto [code, err] = run_cohort({"train", "--model", "char-lstm", "--dataset", "text:" + (dir / "corpus").string(),
                                 "--seq-len", "32", "--epochs", "3", "--batch-size", "16", "--optimizer", "adam",
                                 "--lr", "0.01", "--out", out.string(), "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("test windows of 32 characters from " + (dir / "corpus").string()));

  std::vector<nlohmann::json> epochs;
  std::istringstream lines(text_of(out / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    auto record = nlohmann::json::parse(line);
    if (record.value("kind", "") == "epoch") epochs.push_back(record);
  }
  ASSERT_EQ(epochs.size(), 3u);
  const nlohmann::json& last = epochs.back();
  EXPECT_NEAR(last.at("test_bpc").get<double>(), last.at("test_loss").get<double>() / std::log(2.0), 1e-9);
  EXPECT_LT(last.at("test_bpc").get<double>(), 1.0);  // two repeated lines are nearly predictable
  const std::string corpus = text_of(dir / "corpus" / "lines");
  EXPECT_TRUE(last.at("sample").get<std::string>().starts_with(corpus.substr(corpus.size() - corpus.size() / 10, 16)))
      << "the sample continues the start of the validation text";
  EXPECT_THAT(text_of(out / "report.html"), HasSubstr("<h2>Generated text</h2>"));
  EXPECT_THAT(text_of(out / "report.html"), ::testing::Not(HasSubstr("http-equiv"))) << "a finished run's page stays";
  EXPECT_FALSE(fs::exists(out / "samples.png"));

  // eval reports what a language model is measured by, not a confusion matrix of bytes.
  const testing::Printed eval = testing::run_printing({"eval", "--checkpoint", out.string(), "--json",
                                                       (dir / "eval.json").string()});
  ASSERT_EQ(eval.code, 0) << eval.err;
  EXPECT_THAT(eval.out, HasSubstr("Bits per character on the "));
  EXPECT_THAT(eval.out, HasSubstr("(perplexity "));
  EXPECT_THAT(eval.out, ::testing::Not(HasSubstr("Confusion matrix")));
  const nlohmann::json eval_json = nlohmann::json::parse(text_of(dir / "eval.json"));
  EXPECT_EQ(eval_json.at("unit"), "characters");
  EXPECT_NEAR(eval_json.at("bits_per_character").get<double>(), last.at("test_bpc").get<double>(), 1e-6);
  EXPECT_NEAR(eval_json.at("perplexity").get<double>(), std::exp(eval_json.at("loss").get<double>()), 1e-9);
  EXPECT_FALSE(eval_json.contains("per_class"));

  app::GenerateOptions o;
  o.checkpoint = out.string();
  o.prompt = "the d";
  o.length = 40;
  o.temperature = 0;
  std::ostringstream a, b;
  app::run_generate(o, a);
  app::run_generate(o, b);
  EXPECT_EQ(a.str(), b.str());
  EXPECT_TRUE(a.str().starts_with("the dog ate the log.")) << a.str();

  // The vocabulary is in the checkpoint: generating needs no corpus.
  fs::remove_all(dir / "corpus");
  std::ostringstream without_corpus;
  app::run_generate(o, without_corpus);
  EXPECT_EQ(without_corpus.str(), a.str());

  o.prompt = "the Q";
  EXPECT_THAT(error_of([&] { app::run_generate(o, a); }), HasSubstr("'Q' (position 4) is not one of the"));

  // Characters arrive as they are drawn, and Ctrl-C keeps what was printed: the longest text allowed
  // would take minutes, so the first bytes on the log can only have been streamed.
  const fs::path log = dir / "generate.log";
  const pid_t child = testing::spawn_cohort({"generate", "--checkpoint", out.string(), "--prompt", "the ", "--length",
                                             std::to_string(app::kMaxGenerateLength), "--threads", "1"},
                                            log);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (text_of(log).size() < 64 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(child, SIGINT);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::string printed = text_of(log);
  ASSERT_TRUE(WIFEXITED(status)) << printed;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT) << printed;
  EXPECT_TRUE(printed.starts_with("the ")) << printed;
  const size_t said = printed.find("cohort generate: stopped by Ctrl-C after ");
  ASSERT_NE(said, std::string::npos) << printed;
  const int64_t drawn = std::stoll(printed.substr(said + 41));
  EXPECT_GE(drawn, 60);
  EXPECT_EQ(said, 4 + static_cast<size_t>(drawn) + 1) << "the prompt, every character drawn and a line break";
  EXPECT_THAT(printed, HasSubstr(" of " + std::to_string(app::kMaxGenerateLength) + " characters"));
  fs::remove_all(dir);
}

TEST(LanguageModel, GeneratedTextPrintsWholeCharactersAndEscapesTheRest) {
  std::ostringstream out;
  app::TextPrinter printer(out);
  const std::string text = "a\tb\nc\x1b[31m \xc3\xa9 \xe2\x9c\x93 \xff";
  for (const char c : text) printer.put(std::string_view(&c, 1));
  EXPECT_EQ(out.str(), "a\tb\nc\\x1b[31m \xc3\xa9 \xe2\x9c\x93 ") << "the last byte may still start a character";
  printer.finish();
  EXPECT_EQ(out.str(), "a\tb\nc\\x1b[31m \xc3\xa9 \xe2\x9c\x93 \\xff");
  // A character cut short is escaped once the next byte shows it will not be finished.
  std::ostringstream cut;
  app::TextPrinter cut_printer(cut);
  cut_printer.put("\xe2\x9c");
  EXPECT_EQ(cut.str(), "");
  cut_printer.put("x");
  cut_printer.finish();
  EXPECT_EQ(cut.str(), "\\xe2\\x9cx");
}

TEST(LanguageModel, GenerateRefusesSeedsAndLengthsItCannotHonour) {
  for (const std::string seed : {"-1", "18446744073709551616", "99999999999999999999999"}) {
    auto [code, err] = run_cohort({"generate", "--checkpoint", "nowhere", "--seed", seed});
    EXPECT_EQ(code, 2) << err;
    EXPECT_THAT(err, HasSubstr("--seed: must be an integer from 0 to 18446744073709551615, got '" + seed + "'"));
  }
  auto [code, err] = run_cohort({"train", "--seed", "18446744073709551616"});
  EXPECT_EQ(code, 2) << err;
  EXPECT_THAT(err, HasSubstr("got '18446744073709551616'"));
  std::tie(code, err) = run_cohort({"generate", "--checkpoint", "nowhere", "--length", "10000001"});
  EXPECT_EQ(code, 2) << err;
  EXPECT_THAT(err, HasSubstr("cohort generate: --length must be from 0 to 10000000, got 10000001"));
  std::tie(code, err) = run_cohort({"generate", "--checkpoint", "nowhere", "--threads", "-1"});
  EXPECT_EQ(code, 2) << err;
  EXPECT_THAT(err, HasSubstr("cohort generate: --threads must be from 0 to 1024"));
}

TEST(LanguageModel, TheTransformerTrainsToo) {
  const fs::path dir = fresh_test_dir("lm", "transformer");
  fs::create_directories(dir / "corpus");
  {
    std::ofstream out(dir / "corpus" / "lines");
    for (int i = 0; i < 200; ++i) out << "the cat sat on the mat.\nthe dog ate the log.\n";
  }
  const fs::path out = dir / "run";
  auto [code, err] = run_cohort({"train", "--model", "char-transformer", "--dataset", "text:" + (dir / "corpus").string(),
                                 "--seq-len", "32", "--epochs", "2", "--batch-size", "16", "--optimizer", "adam",
                                 "--lr", "0.003", "--out", out.string(), "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  const nlohmann::json eval = nlohmann::json::parse(text_of(out / "eval.json"));
  EXPECT_GT(eval.at("accuracy").get<double>(), 0.6);  // the next character of two repeated lines
  app::GenerateOptions o;
  o.checkpoint = out.string();
  o.prompt = "the c";
  o.length = 10;
  std::ostringstream text;
  app::run_generate(o, text);
  EXPECT_EQ(text.str().size(), 16u) << text.str();  // prompt + 10 characters + a line break
  fs::remove_all(dir);
}

// Note [Carried state]: the char-lstm's state crosses batches, so a run resumed from a checkpoint taken
// mid-epoch must restore it to repeat the uninterrupted run exactly; two devices and two processes
// carry each row's state with its row and give the run of one.
std::vector<std::string> carried_flags(const fs::path& corpus, const fs::path& out) {
  return {"train", "--model", "char-lstm", "--dataset", "text:" + corpus.string(), "--seq-len", "16",
          "--batch-size", "8", "--optimizer", "adam", "--lr", "0.01", "--threads", "1", "--workers", "0",
          "--log-every", "1", "--no-progress", "--out", out.string()};
}

fs::path small_corpus(const fs::path& dir) {
  fs::create_directories(dir / "corpus");
  std::ofstream out(dir / "corpus" / "lines");
  for (int i = 0; i < 40; ++i) out << "the cat sat on the mat " << i << ".\nthe dog ate the log.\n";
  return dir / "corpus";
}

std::vector<std::string> plus(std::vector<std::string> flags, const std::vector<std::string>& more) {
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

TEST(LanguageModel, CarriedStateResumesMidEpochExactly) {
  const fs::path dir = fresh_test_dir("lm", "carried-resume"), corpus = small_corpus(dir);
  const fs::path whole = dir / "whole", cut = dir / "cut";
  auto [code, err] = run_cohort(plus(carried_flags(corpus, whole), {"--epochs", "2"}));
  ASSERT_EQ(code, 0) << err;
  ASSERT_EQ(run_cohort(plus(carried_flags(corpus, cut), {"--epochs", "2", "--checkpoint-every", "3",
                                                          "--keep-checkpoints", "99"}))
                .first,
            0);
  // Killed after step 3, in the middle of the first epoch (its state is not zeros).
  for (const auto& path : app::list_checkpoints(cut))
    if (app::read_checkpoint(path).progress.step > 3) fs::remove(path);
  const app::Checkpoint at = app::read_checkpoint(cut);
  ASSERT_EQ(at.progress.step, 3);
  ASSERT_EQ(at.progress.carried.size(), 2u);
  EXPECT_EQ(at.progress.carried[0].sizes().vec(), (std::vector<int64_t>{8, 2, 256}));
  EXPECT_GT(at.progress.carried[1].abs().max().item<double>(), 0.0);
  auto [code2, err2] = run_cohort({"train", "--resume", cut.string(), "--threads", "1", "--no-progress"});
  ASSERT_EQ(code2, 0) << err2;
  EXPECT_EQ(testing::metrics_of(cut), testing::metrics_of(whole));
  auto last = [](const fs::path& run) { return io::load_safetensors(app::list_checkpoints(run).back())["model/fc.weight"]; };
  EXPECT_TRUE(equal(last(cut), last(whole)));
  fs::remove_all(dir);
}

TEST(LanguageModel, TwoDevicesCarryEachRowsState) {
  const fs::path dir = fresh_test_dir("lm", "carried-devices"), corpus = small_corpus(dir);
  const fs::path one = dir / "one", two = dir / "two";
  // SGD: Adam's normalised steps would magnify the float rounding of the split into visible differences.
  const std::vector<std::string> sgd = {"--epochs", "1", "--optimizer", "sgd", "--lr", "0.5"};
  ASSERT_EQ(run_cohort(plus(carried_flags(corpus, one), sgd)).first, 0);
  auto [code, err] = run_cohort(plus(plus(carried_flags(corpus, two), sgd), {"--devices", "cpu:0,cpu:1"}));
  ASSERT_EQ(code, 0) << err;
  testing::expect_same_run(one, two, 8 * 16);
  fs::remove_all(dir);
}

TEST(LanguageModel, FlagsThatDoNotFitAreUsageErrors) {
  const fs::path dir = fresh_test_dir("lm", "flags");
  fs::create_directories(dir);
  std::ofstream(dir / "t.txt") << "abc";
  auto expect_usage = [&](std::vector<std::string> args, const std::string& message) {
    testing::expect_train_usage_error(dir, std::move(args), message);
  };
  const std::string text = "text:" + (dir / "t.txt").string();
  expect_usage({"--model", "lenet", "--dataset", text}, "--model 'lenet' is not a language model");
  expect_usage({"--model", "char-lstm", "--dataset", "synthetic"}, "--model 'char-lstm' is a language model");
  expect_usage({"--model", "char-lstm", "--dataset", text, "--seq-len", "0"}, "--seq-len must be at least 1, got 0");
  auto [code, err] = run_cohort({"train", "--model", "char-lstm", "--dataset", text, "--out", (dir / "run").string(),
                                 "--no-progress"});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("a window needs seq_len + 1 = 65 characters, the text has 3"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cohort
