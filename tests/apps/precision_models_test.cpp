// Every model `cohort train` can make trains a step under every precision it offers: a layer whose
// autocast handling is missing (a float32 mask against a narrowed query, say) fails at step 0, and
// the models are many.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cohort/models/model.h"
#include "run_cohort.h"

namespace {

namespace fs = std::filesystem;
using cohort::testing::fresh_test_dir;
using cohort::testing::run_cohort;

TEST(PrecisionModels, EveryModelTrainsAStepUnderEveryPrecision) {
  const fs::path dir = fresh_test_dir("precision-models", "all");
  fs::create_directories(dir / "corpus");
  {
    std::ofstream out(dir / "corpus" / "lines");
    for (int i = 0; i < 40; ++i) out << "the cat sat on the mat.\n";
  }
  for (const std::string& model : cohort::models::names()) {
    const bool language = model.rfind("char-", 0) == 0;
    for (const char* precision : {"f32", "bf16", "f16"}) {
      std::vector<std::string> args{"train", "--model", model, "--epochs", "1", "--batch-size", "8", "--limit", "8",
                                    "--threads", "1", "--precision", precision, "--no-progress", "--overwrite",
                                    "--out", (dir / "run").string()};
      const std::vector<std::string> data = language ? std::vector<std::string>{"--dataset", "text:" + (dir / "corpus").string(),
                                                                                "--seq-len", "16"}
                                                     : std::vector<std::string>{"--dataset", "synthetic"};
      args.insert(args.end(), data.begin(), data.end());
      auto [code, err] = run_cohort(args);
      EXPECT_EQ(code, 0) << model << " under " << precision << ":\n" << err;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
