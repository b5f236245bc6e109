// Evaluation over a DataLoader, and its printed and JSON forms.
#include "app/evaluate.h"
#include "app/carried_state.h"
#include "app/json_text.h"

#include "cohort/models/char_lstm.h"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/io/file.h"
#include "cohort/nn/functional/loss.h"

namespace cohort::app {

int64_t EvalResult::class_count(size_t c) const {
  int64_t total = 0;
  for (int64_t n : confusion.at(c)) total += n;
  return total;
}

double EvalResult::class_accuracy(size_t c) const {
  const int64_t total = class_count(c);
  return total ? static_cast<double>(confusion[c][c]) / static_cast<double>(total) : 0.0;
}

EvalResult evaluate(models::Model& model, data::DataLoader& loader, int64_t num_classes, bool carry_state) {
  auto* lm = dynamic_cast<models::CharLSTM*>(&model);
  COHORT_CHECK(!carry_state || lm != nullptr, "evaluate: carrying the state needs the char-lstm model, got ",
               model.arch());
  std::vector<Tensor> state;  // h, c for the next batch
  const CarryingForward carrying = [lm](const Tensor& x, const Tensor& h, const Tensor& c) { return lm->forward(x, h, c); };
  auto forward = [&](const Tensor& x) { return carry_state ? forward_carrying(state, x, carrying) : model.forward(x); };
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  EvalResult r;
  r.confusion.assign(static_cast<size_t>(num_classes), std::vector<int64_t>(static_cast<size_t>(num_classes), 0));
  double loss_sum = 0;
  int64_t correct = 0;
  for (const data::Batch& batch : loader) {
    Tensor logits = forward(batch.data);
    // A language model predicts every position of a window: target [N, T], logits [N * T, V].
    Tensor truth = batch.target.reshape({-1}).contiguous();
    const int64_t n = truth.numel(), per_sample = n / std::max<int64_t>(batch.size(), 1);
    COHORT_CHECK(logits.dim() == 2 && logits.size(0) == n && logits.size(1) == num_classes,
                 "evaluate: the model must output [", n, ", ", num_classes, "] logits, got ", logits.sizes());
    loss_sum += nn::functional::cross_entropy(logits, truth).item<double>() * static_cast<double>(n);
    Tensor predicted = logits.argmax(1).contiguous();
    const int64_t* p = predicted.data_ptr<int64_t>();
    const int64_t* t = truth.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      COHORT_CHECK(t[i] >= 0 && t[i] < num_classes, "evaluate: target ", t[i], " of sample ",
                   batch.indices[static_cast<size_t>(i / per_sample)], " is not a class index in [0, ", num_classes, ")");
      ++r.confusion[t[i]][p[i]];
      correct += p[i] == t[i];
    }
    r.count += n;
  }
  if (was_training) model.train();
  if (r.count) {
    r.loss = loss_sum / static_cast<double>(r.count);
    r.accuracy = static_cast<double>(correct) / static_cast<double>(r.count);
  }
  return r;
}

nlohmann::json to_json(const EvalResult& r, const std::vector<std::string>& classes) {
  nlohmann::json per_class = nlohmann::json::array();
  for (size_t c = 0; c < r.confusion.size(); ++c) {
    per_class.push_back({{"name", c < classes.size() ? classes[c] : std::to_string(c)},
                         {"accuracy", r.class_accuracy(c)},
                         {"count", r.class_count(c)}});
  }
  return {{"count", r.count},     {"loss", r.loss},         {"accuracy", r.accuracy},
          {"classes", classes},   {"per_class", per_class}, {"confusion", r.confusion}};
}

void write_eval_json(const std::filesystem::path& path, const EvalResult& result,
                     const std::vector<std::string>& classes) {
  // A language model's classes are bytes, not all UTF-8 on their own: JSON gets U+FFFD for those.
  io::write_file(path, json_text(to_json(result, classes), 2) + "\n");
}

void print_eval(std::ostream& out, const EvalResult& r, const std::vector<std::string>& classes) {
  auto name = [&](size_t c) { return c < classes.size() ? classes[c] : std::to_string(c); };
  out << std::fixed << std::setprecision(1);
  out << "Accuracy of the network on the " << r.count << " test images: " << 100 * r.accuracy << " %\n";
  out << "Mean test loss: " << std::setprecision(4) << r.loss << std::setprecision(1) << "\n\n";
  for (size_t c = 0; c < r.confusion.size(); ++c)
    out << "Accuracy for class: " << std::left << std::setw(12) << name(c) << std::right << " is "
        << std::setw(5) << 100 * r.class_accuracy(c) << " %\n";

  size_t width = 6;
  for (size_t c = 0; c < r.confusion.size(); ++c) width = std::max(width, name(c).size() + 1);
  out << "\nConfusion matrix (rows: true class, columns: predicted)\n" << std::setw(static_cast<int>(width)) << "";
  for (size_t c = 0; c < r.confusion.size(); ++c) out << std::setw(6) << c;
  out << "\n";
  for (size_t c = 0; c < r.confusion.size(); ++c) {
    out << std::left << std::setw(static_cast<int>(width)) << name(c) << std::right;
    for (int64_t n : r.confusion[c]) out << std::setw(6) << n;
    out << "\n";
  }
}

}  // namespace cohort::app
