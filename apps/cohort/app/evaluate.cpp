// Evaluation over a DataLoader, and its printed and JSON forms.
#include "app/evaluate.h"
#include "app/carried_state.h"
#include "app/json_text.h"

#include "cohort/models/char_lstm.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/io/file.h"
#include "cohort/nn/functional/loss.h"

namespace cohort::app {

int64_t EvalResult::class_count(size_t c) const { return true_counts.at(c); }

double EvalResult::class_accuracy(size_t c) const {
  const int64_t total = class_count(c);
  return total ? static_cast<double>(correct_counts[c]) / static_cast<double>(total) : 0.0;
}

double EvalResult::class_precision(size_t c) const {
  const int64_t predicted = predicted_counts.at(c);
  return predicted ? static_cast<double>(correct_counts[c]) / static_cast<double>(predicted) : 0.0;
}

std::vector<std::vector<int64_t>> EvalResult::confusion_matrix() const {
  std::vector<std::vector<int64_t>> m(num_classes(), std::vector<int64_t>(num_classes(), 0));
  for (size_t c = 0; c < num_classes(); ++c) m[c][c] = correct_counts[c];
  for (const auto& [pair, n] : mistakes) m[static_cast<size_t>(pair.first)][static_cast<size_t>(pair.second)] = n;
  return m;
}

std::vector<Confusion> EvalResult::top_confusions(size_t k) const {
  std::vector<Confusion> all;
  all.reserve(mistakes.size());
  for (const auto& [pair, n] : mistakes) all.push_back({pair.first, pair.second, n});
  // Most samples first; ties in class order, so the list is the same on every run.
  auto more = [](const Confusion& a, const Confusion& b) {
    return a.count != b.count ? a.count > b.count : std::pair(a.truth, a.predicted) < std::pair(b.truth, b.predicted);
  };
  const size_t keep = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), more);
  all.resize(keep);
  return all;
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
  for (auto* counts : {&r.true_counts, &r.predicted_counts, &r.correct_counts})
    counts->assign(static_cast<size_t>(num_classes), 0);
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
      ++r.true_counts[t[i]];
      ++r.predicted_counts[p[i]];
      if (p[i] == t[i]) {
        ++r.correct_counts[t[i]];
        ++correct;
      } else {
        ++r.mistakes[{t[i], p[i]}];
      }
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

double EvalResult::bits_per_character() const { return loss / std::log(2.0); }
double EvalResult::perplexity() const { return std::exp(loss); }

nlohmann::json to_json(const EvalResult& r, const std::vector<std::string>& classes) {
  if (r.per_character())
    return {{"unit", r.unit},
            {"count", r.count},
            {"loss", r.loss},
            {"bits_per_character", r.bits_per_character()},
            {"perplexity", r.perplexity()},
            {"accuracy", r.accuracy},
            {"classes", classes}};
  auto name = [&](size_t c) { return c < classes.size() ? classes[c] : std::to_string(c); };
  nlohmann::json per_class = nlohmann::json::array();
  for (size_t c = 0; c < r.num_classes(); ++c) {
    per_class.push_back({{"name", name(c)},
                         {"accuracy", r.class_accuracy(c)},
                         {"precision", r.class_precision(c)},
                         {"count", r.class_count(c)}});
  }
  nlohmann::json top = nlohmann::json::array();
  for (const Confusion& c : r.top_confusions())
    top.push_back({{"true", name(static_cast<size_t>(c.truth))},
                   {"predicted", name(static_cast<size_t>(c.predicted))},
                   {"count", c.count}});
  nlohmann::json j = {{"unit", r.unit},       {"count", r.count},         {"loss", r.loss},
                      {"accuracy", r.accuracy}, {"classes", classes},     {"per_class", per_class},
                      {"top_confusions", top}};
  if (r.num_classes() <= kMaxConfusionMatrixClasses) j["confusion"] = r.confusion_matrix();
  return j;
}

void write_eval_json(const std::filesystem::path& path, const EvalResult& result,
                     const std::vector<std::string>& classes) {
  // A language model's classes are bytes, not all UTF-8 on their own: JSON gets U+FFFD for those.
  io::write_file(path, json_text(to_json(result, classes), 2) + "\n");
}

namespace {

// Above kMaxConfusionMatrixClasses: a line per class (recall, precision, samples) and the most
// frequent confusions, linear in the classes where the matrix would be quadratic.
void print_many_classes(std::ostream& out, const EvalResult& r, const std::function<std::string(size_t)>& name) {
  out << r.num_classes() << " classes: recall and precision per class, then the " << kTopConfusions
      << " most frequent confusions (the whole confusion matrix is shown up to " << kMaxConfusionMatrixClasses
      << " classes)\n";
  size_t width = 6;
  for (size_t c = 0; c < r.num_classes(); ++c) width = std::max(width, std::min<size_t>(name(c).size() + 1, 40));
  const int w = static_cast<int>(width);
  out << std::left << std::setw(w) << "class" << std::right << std::setw(9) << "recall" << std::setw(11) << "precision"
      << std::setw(9) << "samples" << "\n";
  for (size_t c = 0; c < r.num_classes(); ++c)
    out << std::left << std::setw(w) << name(c) << std::right << std::setw(7) << 100 * r.class_accuracy(c) << " %"
        << std::setw(9) << 100 * r.class_precision(c) << " %" << std::setw(9) << r.class_count(c) << "\n";
  out << "\nMost frequent confusions (true class -> predicted: samples)\n";
  const std::vector<Confusion> top = r.top_confusions();
  if (top.empty()) out << "  none: every test sample was predicted right\n";
  for (const Confusion& c : top)
    out << "  " << name(static_cast<size_t>(c.truth)) << " -> " << name(static_cast<size_t>(c.predicted)) << ": "
        << c.count << "\n";
}

}  // namespace

void print_eval(std::ostream& out, const EvalResult& r, const std::vector<std::string>& classes) {
  // Class names come from folder names and CSV values: escaped, so no control sequence reaches the
  // terminal (as predict prints them).
  const std::function<std::string(size_t)> name = [&](size_t c) {
    return c < classes.size() ? escape_text(classes[c]) : std::to_string(c);
  };
  out << std::fixed << std::setprecision(1);
  if (r.per_character()) {
    out << "Bits per character on the " << r.count << " test characters: " << std::setprecision(3)
        << r.bits_per_character() << " (perplexity " << std::setprecision(2) << r.perplexity() << ", mean loss "
        << std::setprecision(4) << r.loss << ")\n"
        << "The most likely next character is the right one for " << std::setprecision(1) << 100 * r.accuracy
        << " % of them\n";
    return;
  }
  out << "Accuracy of the network on the " << r.count << " test " << r.unit << ": " << 100 * r.accuracy << " %\n";
  out << "Mean test loss: " << std::setprecision(4) << r.loss << std::setprecision(1) << "\n\n";
  const size_t classes_n = r.num_classes();
  if (classes_n > kMaxConfusionMatrixClasses) {
    print_many_classes(out, r, name);
    return;
  }
  for (size_t c = 0; c < classes_n; ++c)
    out << "Accuracy for class: " << std::left << std::setw(12) << name(c) << std::right << " is "
        << std::setw(5) << 100 * r.class_accuracy(c) << " %\n";

  size_t width = 6;
  for (size_t c = 0; c < classes_n; ++c) width = std::max(width, name(c).size() + 1);
  out << "\nConfusion matrix (rows: true class, columns: predicted)\n" << std::setw(static_cast<int>(width)) << "";
  for (size_t c = 0; c < classes_n; ++c) out << std::setw(6) << c;
  out << "\n";
  const auto matrix = r.confusion_matrix();
  for (size_t c = 0; c < classes_n; ++c) {
    out << std::left << std::setw(static_cast<int>(width)) << name(c) << std::right;
    for (int64_t n : matrix[c]) out << std::setw(6) << n;
    out << "\n";
  }
}

}  // namespace cohort::app
