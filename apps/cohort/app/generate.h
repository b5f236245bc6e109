// Text from a character-level language model: the per-epoch sample of `cohort train` on a text
// dataset, and `cohort generate`.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "cohort/data/text.h"
#include "cohort/models/model.h"

namespace cohort::app {

// `prompt` followed by `length` characters, each drawn from softmax(logits / temperature) of the
// model's last position, given the last `context` characters (temperature 0: the most likely one).
// Seeded by `seed` alone, so the same call gives the same text. Runs in eval mode without autograd
// and restores the model's mode. Throws cohort::Error for an empty prompt, a prompt character the
// vocabulary lacks, a negative length or temperature, or context < 1.
std::string generate_text(models::Model& model, const data::CharVocab& vocab, const std::string& prompt,
                          int64_t length, double temperature, uint64_t seed, int64_t context);

struct GenerateOptions {
  std::string checkpoint;  // a checkpoint file or a run directory (its newest checkpoint)
  std::string prompt = "\n";
  int64_t length = 500;
  double temperature = 0.8;
  uint64_t seed = 0;
  std::string data_dir;    // unused for text: the corpus path is in the checkpoint's configuration
};

// Prints the prompt and the generated text to `out`. Throws a UsageError for bad options and a
// cohort::Error when the checkpoint is not a language model's.
int run_generate(const GenerateOptions& options, std::ostream& out);

}  // namespace cohort::app
