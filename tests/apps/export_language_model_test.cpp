// `cohort export` of the language models: char-lstm (any length, its states in and out) and
// char-transformer (the training window) written as ONNX, run by the numpy evaluator of the
// operators' equations and onnxruntime against the checkpoint's model in cohort; the vocabulary in the
// metadata; the next character's distribution as `cohort generate` draws it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "apps/run_cohort.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/data/text.h"
#include "cohort/io/npy.h"
#include "cohort/io/onnx.h"
#include "cohort/models/char_lstm.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "cohort/ops/softmax.h"
#include "io/onnx_test_util.h"
#include "support/subprocess.h"

#include "app/data_setup.h"
#include "app/run_checkpoint.h"
#include "support/paths.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;
using ::testing::HasSubstr;

namespace cohort::testing {
namespace {

// A tiny language model's run: `cohort train --model <model>` on a repeated sentence.
fs::path train_language_model(const fs::path& dir, const std::string& model) {
  std::string text;
  for (int i = 0; i < 64; ++i) text += "the quick brown fox jumps over the lazy dog. ";
  std::ofstream(dir / "corpus.txt") << text;
  const fs::path run = dir / ("run-" + model);
  auto [code, err] = run_cohort({"train", "--model", model, "--dataset", "text:" + (dir / "corpus.txt").string(),
                                 "--seq-len", "16", "--batch-size", "8", "--epochs", "1", "--workers", "0",
                                 "--threads", "1", "--no-progress", "--out", run.string()});
  EXPECT_EQ(code, 0) << err;
  return run;
}

// Runs check_onnx.py (onnx.checker, the numpy evaluator; OpenCV 4.6 refuses a language model) on
// `file` with int64 ids (and `states`, the other inputs) and cohort's `expected`; false when
// /usr/bin/python3 lacks onnx or cv2.
bool check_language_model(const fs::path& dir, const fs::path& file, const Tensor& ids, const Tensor& expected,
                          std::vector<std::string> flags, const std::vector<NamedTensor>& states = {}) {
  const Finished probe =
      run_process({"/usr/bin/python3", "-c", "import onnx, cv2"}, dir, "probe", std::chrono::seconds(120));
  if (probe.exit_code != 0) return false;
  io::save_npy(dir / "ids.npy", ids);
  io::save_npy(dir / "expected.npy", expected);
  std::vector<std::string> args{"/usr/bin/python3", cohort::testing::fixtures_dir() + "/check_onnx.py", file.string(),
                                (dir / "ids.npy").string(), (dir / "expected.npy").string(), "--numpy",
                                "--opencv-may-refuse", "--argmax"};
  args.insert(args.end(), flags.begin(), flags.end());
  for (const NamedTensor& s : states) {
    const fs::path npy = dir / (s.name + ".npy");
    io::save_npy(npy, s.value);
    args.insert(args.end(), {"--state", s.name + "=" + npy.string()});
  }
  const Finished check = run_process(args, dir, "check", std::chrono::seconds(300));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_THAT(check.out, HasSubstr("\"engine\": \"onnx_numpy (float64)\""));
  std::cout << check.out;
  return true;
}

TEST(ExportLanguageModel, CharLstmFileGivesTheModelsLogitsAndStatesAndGeneratesNextCharacterDistribution) {
  const fs::path dir = fresh_test_dir("export", "char-lstm"), file = dir / "lm.onnx";
  fs::create_directories(dir);
  const fs::path run = train_language_model(dir, "char-lstm");
  const Printed p = run_printing({"export", "--checkpoint", run.string(), "--onnx", file.string()});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("inputs \"input\" [N, T] int64 ids, \"h0\" and \"c0\" [N, 2, 256] float32 states; "
                               "outputs \"output\" [N*T, "));
  EXPECT_THAT(p.out, HasSubstr("\"h_n\" and \"c_n\" [N, 2, 256] float32 states"));
  EXPECT_THAT(p.out, HasSubstr("the consumer must: encode the text's bytes as their indices in 'vocabulary_bytes'"));
  EXPECT_THAT(p.out, HasSubstr("feed h0 and c0 as zeros [N, 2, 256] float32 for a new text, or the h_n and c_n"));

  const io::OnnxSummary s = io::read_onnx_summary(file);
  ASSERT_EQ(s.inputs.size(), 3u);
  ASSERT_EQ(s.outputs.size(), 3u);
  EXPECT_EQ(s.inputs.at(0).elem_type, 7);
  EXPECT_EQ(s.inputs.at(0).dims, (std::vector<std::string>{"N", "T"}));
  for (size_t k : {1, 2}) {
    EXPECT_EQ(s.inputs[k].name, k == 1 ? "h0" : "c0");
    EXPECT_EQ(s.outputs[k].name, k == 1 ? "h_n" : "c_n");
    EXPECT_EQ(s.inputs[k].dims, (std::vector<std::string>{"N", "2", "256"}));
    EXPECT_EQ(s.outputs[k].dims, (std::vector<std::string>{"N", "2", "256"}));
  }
  EXPECT_EQ(s.outputs.at(0).dims.at(0), "N*T");
  EXPECT_THAT(s.ops, ::testing::Contains("LSTM"));
  ASSERT_NE(s.find_metadata("vocabulary"), nullptr);
  // The sentence's characters, sorted: the space first, then '.', then the letters.
  EXPECT_THAT(*s.find_metadata("vocabulary"), HasSubstr("[\" \",\".\",\"a\",\"b\",\"c\",\"d\",\"e\","));
  ASSERT_NE(s.find_metadata("vocabulary_bytes"), nullptr);
  EXPECT_THAT(*s.find_metadata("vocabulary_bytes"), HasSubstr("[32,46,97,98,"));
  ASSERT_NE(s.find_metadata("input_layout"), nullptr);
  EXPECT_THAT(*s.find_metadata("input_layout"), HasSubstr("int64 [N, T]"));

  // The checkpoint's model as `cohort generate` builds it.
  const app::Checkpoint checkpoint = app::read_checkpoint(run, /*talk=*/false);
  auto model = app::create_model(checkpoint.config.model, *checkpoint.data);
  app::restore_checkpoint(checkpoint, *model, nullptr, nullptr);
  model->eval();
  auto* lm = dynamic_cast<models::CharLSTM*>(model.get());
  ASSERT_NE(lm, nullptr);
  const data::CharVocab vocab(checkpoint.data->classes);

  // Every position's logits and the final states, for a batch of two windows of a length the trace
  // did not see, from zero states (a new text): the logits are the stateless forward's.
  const Tensor ids =
      cat({vocab.encode("the lazy dog. the").view({1, -1}), vocab.encode("quick brown fox j").view({1, -1})}, 0);
  const Tensor zero = zeros({2, 2, 256});
  Tensor logits, h, c;
  {
    NoGradGuard no_grad;
    std::tie(logits, h, c) = lm->forward(ids, zero, zero);
    EXPECT_TRUE(allclose(logits, model->forward(ids), 1e-5, 1e-6));
  }
  const std::vector<NamedTensor> fresh{{"h0", zero}, {"c0", zero}};
  check_in_onnxruntime_if_available(dir, file, ids, logits, {"--argmax"}, fresh, {{"h_n", h}, {"c_n", c}});
  if (!check_language_model(dir, file, ids, logits, {}, fresh)) GTEST_SKIP() << "/usr/bin/python3 lacks onnx or cv2";

  // The same text fed in two pieces, the second from the states the first returned, gives the whole
  // text's logits for the second piece's positions.
  const int64_t cut = 9, T = ids.size(1), V = logits.size(1);
  Tensor first_logits, h1, c1, second_logits, h2, c2;
  {
    NoGradGuard no_grad;
    std::tie(first_logits, h1, c1) = lm->forward(ids.slice(1, 0, cut).contiguous(), zero, zero);
    std::tie(second_logits, h2, c2) = lm->forward(ids.slice(1, cut, T).contiguous(), h1, c1);
  }
  EXPECT_TRUE(allclose(second_logits, logits.view({2, T, V}).slice(1, cut, T).reshape({-1, V}), 1e-5, 1e-5));
  check_in_onnxruntime_if_available(dir, file, ids.slice(1, cut, T).contiguous(), second_logits, {"--argmax"},
                                    {{"h0", h1}, {"c0", c1}}, {{"h_n", h2}, {"c_n", c2}});

  // The next character's distribution after a prompt: softmax of the last position's logits, as
  // `cohort generate` draws from; its most likely character is what generate picks at temperature 0.
  const std::string prompt = "the quick brown ";
  const Tensor prompt_ids = vocab.encode(prompt).view({1, -1});
  Tensor distribution;
  {
    NoGradGuard no_grad;
    const Tensor out = model->forward(prompt_ids);
    distribution = softmax(out[out.size(0) - 1], 0);
  }
  const Tensor one = zeros({1, 2, 256});
  check_language_model(dir, file, prompt_ids, distribution, {"--softmax-row", "-1"}, {{"h0", one}, {"c0", one}});
  const Printed g = run_printing({"generate", "--checkpoint", run.string(), "--prompt", prompt, "--length", "1",
                                  "--temperature", "0"});
  ASSERT_EQ(g.code, 0) << g.err;
  const int64_t best = distribution.argmax().item<int64_t>();
  EXPECT_THAT(g.out, HasSubstr(prompt + checkpoint.data->classes[static_cast<size_t>(best)]));
  fs::remove_all(dir);
}

// A vocabulary byte that is not ASCII (here the two bytes of each of é, è, û) is no string on its own:
// "\xHH" in 'vocabulary', its number in 'vocabulary_bytes'; a backslash stays one character.
TEST(ExportLanguageModel, VocabularyEscapesBytesThatAreNotAscii) {
  const fs::path dir = fresh_test_dir("export", "vocabulary"), file = dir / "lm.onnx";
  fs::create_directories(dir);
  std::string text;
  for (int i = 0; i < 64; ++i) text += "caf\xc3\xa9 cr\xc3\xa8me \"br\xc3\xbbl\xc3\xa9" "e\" \\ ok. ";
  std::ofstream(dir / "corpus.txt") << text;
  const fs::path run = dir / "run";
  auto [code, err] = run_cohort({"train", "--model", "char-lstm", "--dataset", "text:" + (dir / "corpus.txt").string(),
                                 "--seq-len", "16", "--batch-size", "8", "--epochs", "1", "--workers", "0",
                                 "--threads", "1", "--no-progress", "--out", run.string()});
  ASSERT_EQ(code, 0) << err;
  ASSERT_EQ(run_printing({"export", "--checkpoint", run.string(), "--onnx", file.string()}).code, 0);
  const io::OnnxSummary s = io::read_onnx_summary(file);
  ASSERT_NE(s.find_metadata("vocabulary"), nullptr);
  EXPECT_EQ(*s.find_metadata("vocabulary"),
            R"([" ","\"",".","\\","a","b","c","e","f","k","l","m","o","r","\\xa8","\\xa9","\\xbb","\\xc3"])");
  ASSERT_NE(s.find_metadata("vocabulary_bytes"), nullptr);
  EXPECT_EQ(*s.find_metadata("vocabulary_bytes"), "[32,34,46,92,97,98,99,101,102,107,108,109,111,114,168,169,187,195]");
  fs::remove_all(dir);
}

// char-transformer's file takes any length up to the training window (16 here): its position ids and
// causal mask, traced for 16, are sliced to the input's length in the graph; a prompt shorter than
// the window gives the distribution `cohort generate` draws from at its last character.
TEST(ExportLanguageModel, CharTransformerFileTakesAnyLengthUpToTheWindow) {
  const fs::path dir = fresh_test_dir("export", "char-transformer"), file = dir / "lm.onnx";
  fs::create_directories(dir);
  const fs::path run = train_language_model(dir, "char-transformer");
  const Printed p = run_printing({"export", "--checkpoint", run.string(), "--onnx", file.string()});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("input \"input\" [N, T] int64 ids, output \"output\" [N*T, "));
  EXPECT_THAT(p.out, HasSubstr("of a text longer than 16 characters feed the last 16"));
  const io::OnnxSummary s = io::read_onnx_summary(file);
  EXPECT_EQ(s.inputs.at(0).dims, (std::vector<std::string>{"N", "T"}));
  ASSERT_NE(s.find_metadata("input_layout"), nullptr);
  EXPECT_THAT(*s.find_metadata("input_layout"), HasSubstr("any N >= 1 and 1 <= T <= 16, the training window"));
  EXPECT_THAT(s.ops, ::testing::Contains("Softmax"));
  EXPECT_THAT(s.ops, ::testing::Contains("ReduceMean"));  // opset 13: layer norm decomposed
  EXPECT_THAT(s.ops, ::testing::Contains("Shape"));       // the input's length, for the slices

  const app::Checkpoint checkpoint = app::read_checkpoint(run, /*talk=*/false);
  auto model = app::create_model(checkpoint.config.model, *checkpoint.data);
  app::restore_checkpoint(checkpoint, *model, nullptr, nullptr);
  model->eval();
  const data::CharVocab vocab(checkpoint.data->classes);
  // The whole window, then shorter texts: every position's logits are cohort's.
  const Tensor ids = cat({vocab.encode("the lazy dog. th").view({1, -1}), vocab.encode("quick brown fox ").view({1, -1}),
                          vocab.encode("jumps over the l").view({1, -1})}, 0);
  for (int64_t T : {16, 5, 1}) {
    SCOPED_TRACE(T);
    const Tensor x = ids.slice(1, 0, T).contiguous();
    Tensor logits;
    {
      NoGradGuard no_grad;
      logits = model->forward(x);
    }
    check_in_onnxruntime_if_available(dir, file, x, logits, {"--argmax"});
    if (!check_language_model(dir, file, x, logits, {})) GTEST_SKIP() << "/usr/bin/python3 lacks onnx or cv2";
  }

  const std::string prompt = "the quick b";  // 11 characters
  const Tensor prompt_ids = vocab.encode(prompt).view({1, -1});
  Tensor distribution;
  {
    NoGradGuard no_grad;
    const Tensor out = model->forward(prompt_ids);
    distribution = softmax(out[out.size(0) - 1], 0);
  }
  check_language_model(dir, file, prompt_ids, distribution, {"--softmax-row", "-1"});
  const Printed g = run_printing({"generate", "--checkpoint", run.string(), "--prompt", prompt, "--length", "1",
                                  "--temperature", "0"});
  ASSERT_EQ(g.code, 0) << g.err;
  const int64_t best = distribution.argmax().item<int64_t>();
  EXPECT_THAT(g.out, HasSubstr(prompt + checkpoint.data->classes[static_cast<size_t>(best)]));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cohort::testing
