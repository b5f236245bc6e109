// Test-set evaluation: loss, accuracy, per-class recall and precision, and the confusions (the
// whole matrix for up to kMaxConfusionMatrixClasses classes, the most frequent pairs always).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cohort/data/dataloader.h"
#include "cohort/models/model.h"

namespace cohort::app {

// Up to this many classes the printed results, eval.json and the report hold the confusion matrix;
// above it (a target with thousands of values, often an ID column chosen by mistake) the matrix
// would grow with the square of the class count, and they hold the kTopConfusions most frequent
// (true, predicted) pairs instead. Everything else is linear in the classes.
inline constexpr size_t kMaxConfusionMatrixClasses = 100;
inline constexpr size_t kTopConfusions = 20;

struct Confusion {
  int64_t truth = 0, predicted = 0, count = 0;
};

struct EvalResult {
  // What a sample is: "images", "rows" (a table) or "characters" (a language model, whose results are
  // bits per character and perplexity; its classes are bytes, so it has no per-class tables).
  std::string unit = "images";
  int64_t count = 0;
  double loss = 0;      // mean cross-entropy
  double accuracy = 0;  // fraction in [0, 1]
  std::vector<int64_t> true_counts;       // [class]: test samples of the class
  std::vector<int64_t> predicted_counts;  // [class]: test samples predicted as the class
  std::vector<int64_t> correct_counts;    // [class]: samples of the class predicted as it
  // (true, predicted) -> samples, for the wrong predictions only: at most one entry per sample.
  std::map<std::pair<int64_t, int64_t>, int64_t> mistakes;

  size_t num_classes() const { return true_counts.size(); }
  bool per_character() const { return unit == "characters"; }
  double bits_per_character() const;  // loss / ln 2
  double perplexity() const;          // exp(loss)
  int64_t class_count(size_t c) const;      // test samples of class c
  double class_accuracy(size_t c) const;    // recall: of class c's samples, the share predicted as c
  double class_precision(size_t c) const;   // of the samples predicted as c, the share that are c (0 if none)
  std::vector<std::vector<int64_t>> confusion_matrix() const;  // dense [true][predicted]: classes^2 numbers
  std::vector<Confusion> top_confusions(size_t k = kTopConfusions) const;  // most samples first
};

// One pass over the loader in eval mode without autograd; restores the model's mode. With
// carry_state (a char-lstm over data::CharStreams read in order, a batch per step of every stream),
// each batch starts from the LSTM state the batch before ended with, zeros for the first.
EvalResult evaluate(models::Model& model, data::DataLoader& loader, int64_t num_classes, bool carry_state = false);

// Keys "unit", "count", "loss", "accuracy", "classes", "per_class" [{name, accuracy, precision, count}],
// "top_confusions" [{true, predicted, count}], and "confusion" ([true][predicted]) for up to
// kMaxConfusionMatrixClasses classes; for characters "bits_per_character" and "perplexity" in place of
// the per-class keys.
nlohmann::json to_json(const EvalResult& result, const std::vector<std::string>& classes);

// Writes to_json(result, classes) to `path` (eval.json), atomically.
void write_eval_json(const std::filesystem::path& path, const EvalResult& result,
                     const std::vector<std::string>& classes);

// As the blitz prints it: "Accuracy of the network on the 10000 test images: 88 %", then
// "Accuracy for class: T-shirt/top is 84.1 %" per class, then the confusion matrix; above
// kMaxConfusionMatrixClasses classes, a table of recall and precision per class and the most
// frequent confusions. A language model's: bits per character, perplexity and accuracy.
void print_eval(std::ostream& out, const EvalResult& result, const std::vector<std::string>& classes);

}  // namespace cohort::app
