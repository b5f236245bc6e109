// Sampling text from a character-level language model (see generate.h).
#include "app/generate.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "app/config.h"
#include "app/data_setup.h"
#include "app/run_checkpoint.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"

namespace cohort::app {

std::string generate_text(models::Model& model, const data::CharVocab& vocab, const std::string& prompt,
                          int64_t length, double temperature, uint64_t seed, int64_t context) {
  COHORT_CHECK(!prompt.empty(), "generate: the prompt is empty; hint: give at least one character");
  COHORT_CHECK(length >= 0, "generate: length must be at least 0, got ", length);
  COHORT_CHECK(std::isfinite(temperature) && temperature >= 0, "generate: temperature must be a finite number at least 0, got ",
               temperature);
  COHORT_CHECK(context >= 1, "generate: context must be at least 1, got ", context);
  Tensor ids = vocab.encode(prompt);
  std::vector<int64_t> text(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  const bool was_training = model.is_training();
  model.eval();
  NoGradGuard no_grad;
  Generator gen(seed);
  for (int64_t i = 0; i < length; ++i) {
    const auto n = std::min<int64_t>(context, static_cast<int64_t>(text.size()));
    std::vector<int64_t> window(text.end() - n, text.end());
    Tensor logits = model.forward(tensor(window).view({1, n}));
    Tensor last = logits[n - 1];
    int64_t next;
    if (temperature == 0) {
      next = last.argmax().item<int64_t>();
    } else {
      next = multinomial(softmax(last / temperature, 0), 1, false, gen).item<int64_t>();
    }
    text.push_back(next);
  }
  if (was_training) model.train();
  return vocab.decode(tensor(text));
}

int run_generate(const GenerateOptions& o, std::ostream& out) {
  if (o.length < 0) throw UsageError(cohort::detail::str("cohort generate: --length must be at least 0, got ", o.length));
  if (!(std::isfinite(o.temperature) && o.temperature >= 0))
    throw UsageError(cohort::detail::str("cohort generate: --temperature must be a finite number at least 0, got ",
                                         o.temperature));
  if (o.prompt.empty()) throw UsageError("cohort generate: --prompt is empty; hint: give at least one character");
  Checkpoint checkpoint = read_checkpoint(o.checkpoint);
  const TrainConfig& config = checkpoint.config;
  COHORT_CHECK(config.dataset == "text", "cohort generate: ", escape_text(checkpoint.path.string()),
               " is a ", config.model, " trained on ", config.dataset,
               ", not a language model; hint: train one with --model char-lstm --dataset text:FILE");
  const DataSpec data = stored_or_loaded_spec(checkpoint.data, config, "cohort generate");
  auto model = create_model(config.model, data);
  restore_checkpoint(checkpoint, *model, nullptr, nullptr);
  const data::CharVocab vocab(data.classes);
  // The text as it is, but for control characters other than line breaks and tabs (a corpus may hold
  // terminal escapes) and bytes that are not UTF-8, which are escaped.
  const std::string text = generate_text(*model, vocab, o.prompt, o.length, o.temperature, o.seed, config.seq_len);
  size_t start = 0;
  for (size_t tab = text.find('\t'); ; tab = text.find('\t', start)) {
    out << escape_text(std::string_view(text).substr(start, tab - start), /*keep_newlines=*/true);
    if (tab == std::string::npos) break;
    out << '\t';
    start = tab + 1;
  }
  out << "\n";
  return 0;
}

}  // namespace cohort::app
