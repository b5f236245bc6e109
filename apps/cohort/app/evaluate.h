// Test-set evaluation: loss, accuracy, per-class accuracy and the confusion matrix.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cohort/data/dataloader.h"
#include "cohort/models/model.h"

namespace cohort::app {

struct EvalResult {
  int64_t count = 0;
  double loss = 0;      // mean cross-entropy
  double accuracy = 0;  // fraction in [0, 1]
  std::vector<std::vector<int64_t>> confusion;  // [true class][predicted class]
  int64_t class_count(size_t c) const;     // test samples of class c
  double class_accuracy(size_t c) const;
};

// One pass over the loader in eval mode without autograd; restores the model's mode. With
// carry_state (a char-lstm over data::CharStreams read in order, a batch per step of every stream),
// each batch starts from the LSTM state the batch before ended with, zeros for the first.
EvalResult evaluate(models::Model& model, data::DataLoader& loader, int64_t num_classes, bool carry_state = false);

// Keys "count", "loss", "accuracy", "classes", "per_class" [{name, accuracy, count}], "confusion".
nlohmann::json to_json(const EvalResult& result, const std::vector<std::string>& classes);

// Writes to_json(result, classes) to `path` (eval.json), atomically.
void write_eval_json(const std::filesystem::path& path, const EvalResult& result,
                     const std::vector<std::string>& classes);

// As the blitz prints it: "Accuracy of the network on the 10000 test images: 88 %", then
// "Accuracy for class: T-shirt/top is 84.1 %" per class, then the confusion matrix.
void print_eval(std::ostream& out, const EvalResult& result, const std::vector<std::string>& classes);

}  // namespace cohort::app
