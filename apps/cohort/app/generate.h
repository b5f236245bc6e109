// Text from a character-level language model: the per-epoch sample of `cohort train` on a text
// dataset, and `cohort generate`.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "cohort/data/text.h"
#include "cohort/models/model.h"

namespace cohort::app {

// `prompt` followed by `length` characters, each drawn from softmax(logits / temperature) of the
// model's last position, given the last `context` characters (temperature 0: the most likely one).
// Seeded by `seed` alone, so the same call gives the same text. Runs in eval mode without autograd
// and restores the model's mode. `each`, when given, sees every character as it is drawn, and
// returning false stops the text there. Throws cohort::Error for an empty prompt, a prompt character
// the vocabulary lacks, a negative length or temperature, or context < 1.
using CharSink = std::function<bool(char)>;
std::string generate_text(models::Model& model, const data::CharVocab& vocab, const std::string& prompt,
                          int64_t length, double temperature, uint64_t seed, int64_t context,
                          const CharSink& each = {});

// Generated text for a terminal, printed as it comes: escaped as escape_text does but for line breaks
// and tabs (a corpus may hold terminal escapes), with the bytes of a multi-byte UTF-8 character held
// until its last one arrives, so that a character is never escaped byte by byte.
class TextPrinter {
 public:
  explicit TextPrinter(std::ostream& out) : out_(out) {}
  void put(std::string_view bytes);
  // Prints what is held (an unfinished character, escaped) and flushes the stream.
  void finish();

 private:
  void print(std::string_view bytes);
  std::ostream& out_;
  std::string held_;
};

// Longest text `cohort generate` writes: its model runs once per character, so this is about an hour
// of a small model; a bigger request is a typo.
constexpr int64_t kMaxGenerateLength = 10'000'000;

struct GenerateOptions {
  std::string checkpoint;  // a checkpoint file or a run directory (its newest checkpoint)
  std::string prompt = "\n";
  int64_t length = 500;
  double temperature = 0.8;
  uint64_t seed = 0;
  int threads = 0;         // intra-op threads, 0: one per core
  std::string data_dir;    // unused for text: the corpus path is in the checkpoint's configuration
};

// Prints the prompt and the generated text to `out`, each character as it is drawn. Ctrl-C (or
// SIGTERM) stops it keeping what was printed; the return value is then 128 + the signal, else 0.
// Throws a UsageError for bad options and a cohort::Error when the checkpoint is not a language model's.
int run_generate(const GenerateOptions& options, std::ostream& out);

}  // namespace cohort::app
