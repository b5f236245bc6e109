// The command line of the cohort program: --version, unknown commands, `help <command>`, exit codes
// (2 for usage errors, 1 for failures while running), flags that must be finite or non-negative, and
// a stdout that cannot be written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "apps/run_cohort.h"
#include "support/paths.h"

namespace fs = std::filesystem;
using cohort::testing::Printed;
using cohort::testing::run_cohort;
using cohort::testing::run_printing;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

fs::path fresh_dir(const std::string& name) {
  return cohort::testing::fresh_test_dir("cli", name);
}

std::vector<std::string> train_flags(const fs::path& out, const std::vector<std::string>& more) {
  std::vector<std::string> flags = {"train", "--dataset", "synthetic", "--limit", "64", "--batch-size", "32",
                                    "--workers", "0", "--threads", "1", "--no-progress", "--out", out.string()};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}


// The program run by the shell with stdout sent to `target`: its exit status and stderr.
std::pair<int, std::string> run_with_stdout_to(const std::string& args, const std::string& target) {
  const fs::path err = fresh_dir("stdout") / "err";
  fs::create_directories(err.parent_path());
  const int status = std::system((cohort::testing::cohort_binary() + " " + args + " >" + target + " 2>" + err.string()).c_str());
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

}  // namespace

TEST(Cli, VersionPrintsTheProjectVersion) {
  Printed p = run_printing({"--version"});
  EXPECT_EQ(p.code, 0);
  EXPECT_TRUE(std::regex_match(p.out, std::regex("cohort [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << p.out;
}

TEST(Cli, AnUnknownCommandIsNamedWithTheCommands) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"frobnicate"}, {"help", "frobnicate"}}) {
    Printed p = run_printing(args);
    EXPECT_EQ(p.code, 2);
    EXPECT_THAT(p.err, HasSubstr("unknown command 'frobnicate'; the commands are train, eval, predict, generate, "
                                 "export, info, launch and help"));
  }
}

TEST(Cli, AnUnknownFlagGetsTheNearestKnownOne) {
  Printed p = run_printing({"train", "--epoch", "3"});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort train: unknown flag --epoch; did you mean --epochs? ('cohort help train' lists "
                               "the flags)"));
  p = run_printing({"eval", "--batchsize=8", "run"});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort eval: unknown flag --batchsize; did you mean --batch-size?"));
  p = run_printing({"train", "--frobnicate"});  // nothing near: no suggestion
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort train: unknown flag --frobnicate ('cohort help train' lists the flags)"));
}

TEST(Cli, ABareCommandLineListsTheCommands) {
  Printed p = run_printing({});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort: give a command: train, eval, predict, generate, export, info, launch or help"));
}

TEST(Cli, AFlagWithoutItsValueIsNamed) {
  Printed p = run_printing({"train", "--epochs"});
  EXPECT_EQ(p.code, 2);
  EXPECT_THAT(p.err, HasSubstr("cohort train: --epochs needs a value (INT)"));
}

TEST(Cli, HelpOfACommandIsItsHelpFlag) {
  Printed help = run_printing({"help", "train"}), flag = run_printing({"train", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, HasSubstr("--batch-size"));
  EXPECT_EQ(help.out, flag.out);
  Printed top = run_printing({"help"});
  EXPECT_EQ(top.code, 0);
  EXPECT_THAT(top.out, HasSubstr("launch"));
}

TEST(Cli, UsageErrorsExitTwoAndFailuresOne) {
  const fs::path out = fresh_dir("codes");
  EXPECT_EQ(run_cohort(train_flags(out, {"--epochs", "0"})).first, 2);
  EXPECT_EQ(run_cohort(train_flags(out, {"--model", "alexnet"})).first, 2);
  EXPECT_EQ(run_cohort(train_flags(out, {"--lr", "fast"})).first, 2);
  EXPECT_EQ(run_cohort({"train", "--resume", out.string(), "--overwrite"}).first, 2);
  auto eval = run_cohort({"eval", "--checkpoint", out.string(), "--threads", "-1"});
  EXPECT_EQ(eval.first, 2);
  EXPECT_THAT(eval.second, HasSubstr("cohort eval: --threads must be from 0 to 1024"));
  EXPECT_EQ(run_cohort({"launch", "--nproc-per-node", "0", "--", "true"}).first, 2);
  // Failures of a command line that was fine: 1.
  EXPECT_EQ(run_cohort({"train", "--resume", (out / "nothing").string()}).first, 1);
  EXPECT_EQ(run_cohort(train_flags(out, {"--dataset", "mnist", "--data-dir", (out / "none").string()})).first, 1);
}

// "-1" into an unsigned flag was 2^64 - 1; NaN and infinity passed the range checks of float flags.
TEST(Cli, NegativeUnsignedAndNonFiniteFloatFlagsAreUsageErrors) {
  const fs::path out = fresh_dir("numbers");
  auto seed = run_cohort(train_flags(out, {"--seed", "-1"}));
  EXPECT_EQ(seed.first, 2);
  EXPECT_THAT(seed.second, HasSubstr("--seed"));
  EXPECT_THAT(seed.second, HasSubstr("must be an integer from 0 to 18446744073709551615, got '-1'"));
  for (const char* lr : {"nan", "inf", "-inf"}) {
    auto bad = run_cohort(train_flags(out, {"--lr", lr}));
    EXPECT_EQ(bad.first, 2) << lr;
    EXPECT_THAT(bad.second, HasSubstr("cohort train: --lr must be a positive finite number, got ")) << lr;
  }
  EXPECT_THAT(run_cohort(train_flags(out, {"--weight-decay", "inf"})).second,
              HasSubstr("--weight-decay must be a finite number at least 0, got inf"));
  EXPECT_THAT(run_cohort(train_flags(out, {"--momentum", "nan"})).second, HasSubstr("--momentum must be in [0, 1), got nan"));
  for (const char* flag : {"--timeout", "--grace"}) {
    auto bad = run_cohort({"launch", "--nproc-per-node", "1", flag, "nan", "--", "true"});
    EXPECT_EQ(bad.first, 2) << flag;
    EXPECT_THAT(bad.second, HasSubstr(std::string(flag) + " must be a finite number")) << flag;
  }
  EXPECT_FALSE(fs::exists(out));
}

// cpu:1,cpu:0 passed validation and failed after loading the data with a library hint.
TEST(Cli, DevicesMustStartAtCpu0) {
  const fs::path out = fresh_dir("devices");
  auto [code, err] = run_cohort(train_flags(out, {"--devices", "cpu:1,cpu:0"}));
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("--devices 'cpu:1,cpu:0' starts with cpu:1, expected cpu:0 first"));
  EXPECT_THAT(err, Not(HasSubstr("module->to")));
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, AStdoutThatCannotBeWrittenIsAFailure) {
  for (const char* args : {"--help", "info", "--version"}) {
    auto [code, err] = run_with_stdout_to(args, "/dev/full");
    EXPECT_NE(code, 0) << args;
    EXPECT_THAT(err, HasSubstr("writing to stdout failed")) << args;
  }
  EXPECT_EQ(run_with_stdout_to("info", "/dev/null").first, 0);
}
