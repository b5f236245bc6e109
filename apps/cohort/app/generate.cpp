// Sampling text from a character-level language model (see generate.h).
#include "app/generate.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <iostream>
#include <ostream>

#include "app/config.h"
#include "app/data_setup.h"
#include "app/flag_check.h"
#include "app/interrupt.h"
#include "app/run_checkpoint.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"

namespace cohort::app {

std::string generate_text(models::Model& model, const data::CharVocab& vocab, const std::string& prompt,
                          int64_t length, double temperature, uint64_t seed, int64_t context, const CharSink& each) {
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
  const std::vector<std::string> characters = vocab.characters();
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
    if (each && !each(characters[static_cast<size_t>(next)][0])) break;
  }
  if (was_training) model.train();
  return vocab.decode(tensor(text));
}

void TextPrinter::put(std::string_view bytes) {
  held_.append(bytes);
  // The last lead byte of a multi-byte character among the final three bytes waits for the rest.
  size_t ready = held_.size();
  for (size_t back = 1; back <= 3 && back <= held_.size(); ++back) {
    const auto c = static_cast<unsigned char>(held_[held_.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t expected = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (expected > back) ready = held_.size() - back;
    break;
  }
  print(std::string_view(held_).substr(0, ready));
  held_.erase(0, ready);
}

void TextPrinter::finish() {
  print(held_);
  held_.clear();
  out_.flush();
}

void TextPrinter::print(std::string_view bytes) {
  for (size_t start = 0; start < bytes.size();) {
    const size_t tab = std::min(bytes.find('\t', start), bytes.size());
    out_ << escape_text(bytes.substr(start, tab - start), /*keep_newlines=*/true);
    if (tab < bytes.size()) out_ << '\t';
    start = tab + 1;
  }
}

int run_generate(const GenerateOptions& o, std::ostream& out) {
  if (!(o.length >= 0 && o.length <= kMaxGenerateLength))
    throw UsageError(cohort::detail::str("cohort generate: --length must be from 0 to ", kMaxGenerateLength, ", got ",
                                         o.length));
  if (!(std::isfinite(o.temperature) && o.temperature >= 0))
    throw UsageError(cohort::detail::str("cohort generate: --temperature must be a finite number at least 0, got ",
                                         o.temperature));
  if (o.prompt.empty()) throw UsageError("cohort generate: --prompt is empty; hint: give at least one character");
  use_threads_flag(o.threads, "cohort generate");
  Checkpoint checkpoint = read_checkpoint(o.checkpoint);
  const TrainConfig& config = checkpoint.config;
  COHORT_CHECK(config.dataset == "text", "cohort generate: ", escape_text(checkpoint.path.string()),
               " is a ", config.model, " trained on ", config.dataset,
               ", not a language model; hint: train one with --model char-lstm --dataset text:FILE");
  const DataSpec data = stored_or_loaded_spec(checkpoint.data, config, "cohort generate");
  auto model = create_model(config.model, data);
  restore_weights(checkpoint, *model);
  const data::CharVocab vocab(data.classes);
  vocab.encode(o.prompt);  // a prompt the vocabulary cannot encode is refused before anything is printed

  TextPrinter printer(out);
  printer.put(o.prompt);
  out.flush();
  InterruptHandlers handlers;
  int64_t drawn = 0;
  generate_text(*model, vocab, o.prompt, o.length, o.temperature, o.seed, config.seq_len, [&](char c) {
    const char bytes[1] = {c};
    printer.put(std::string_view(bytes, 1));
    out.flush();  // each character as it is drawn: a forward pass costs far more than a write
    ++drawn;
    return interrupt_requested() == 0;
  });
  printer.finish();
  out << "\n";
  out.flush();
  if (const int signal = interrupt_requested()) {
    std::cerr << "cohort generate: stopped by " << (signal == SIGINT ? "Ctrl-C" : "SIGTERM") << " after " << drawn
              << " of " << o.length << " characters\n";
    return 128 + signal;
  }
  return 0;
}

}  // namespace cohort::app
