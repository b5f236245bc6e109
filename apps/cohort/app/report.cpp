// The HTML training report: metrics.jsonl is parsed into steps and epochs, then each part of the page
// (summary, config, charts, epoch table, evaluation, samples) is one function. See report.h.
#include "app/report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/io/file.h"

#include "app/report_html.h"
#include "app/svg_chart.h"

namespace cohort::app {

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kMaxPoints = 1500;  // per curve; a long run's steps are averaged in buckets

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  COHORT_CHECK(in.good(), "write_report: cannot open ", path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string excerpt(const std::string& line) { return line.size() > 60 ? line.substr(0, 60) + "..." : line; }

// A record's number field: NaN when absent or null, an error when it is anything else.
double number(const ordered_json& rec, const char* key, const std::string& where) {
  const auto it = rec.find(key);
  if (it == rec.end() || it->is_null()) return kNaN;
  COHORT_CHECK(it->is_number(), where, "\"", key, "\" must be a number, got ", it->dump());
  return it->get<double>();
}

Metrics read_metrics(const fs::path& path) {
  COHORT_CHECK(fs::exists(path), "write_report: ", path.string(),
               " does not exist; hint: pass the output directory of `cohort train`");
  const std::string text = read_text(path);
  Metrics m;
  size_t start = 0;
  for (int64_t line_no = 1; start < text.size(); ++line_no) {
    const size_t end = text.find('\n', start);
    const bool complete = end != std::string::npos;
    std::string line = text.substr(start, complete ? end - start : std::string::npos);
    start = complete ? end + 1 : text.size();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = detail::str("write_report: ", path.string(), ", line ", line_no, ": ");
    ordered_json rec;
    try {
      rec = ordered_json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      if (!complete) break;  // the trainer is still writing this line
      throw Error(detail::str(where, "not valid JSON (", e.what(), "): ", excerpt(line)));
    }
    COHORT_CHECK(rec.is_object(), where, "expected a JSON object, got ", excerpt(line));
    const auto kind = rec.find("kind");
    if (kind == rec.end() || !kind->is_string()) continue;
    if (*kind == "config") {
      for (const auto& [key, value] : rec.items())
        if (key != "kind") m.config[key] = value;
    } else if (*kind == "step") {
      m.steps.push_back({number(rec, "epoch", where), number(rec, "step", where), number(rec, "loss", where),
                         number(rec, "lr", where), number(rec, "images_per_s", where),
                         number(rec, "elapsed_s", where)});
    } else if (*kind == "failure") {
      const auto error = rec.find("error");
      m.failure = error != rec.end() && error->is_string() ? error->get<std::string>() : "(no message)";
    } else if (*kind == "epoch") {
      m.epochs.push_back({number(rec, "epoch", where), number(rec, "step", where), number(rec, "train_loss", where),
                          number(rec, "train_acc", where), number(rec, "test_loss", where),
                          number(rec, "test_acc", where), number(rec, "lr", where), number(rec, "seconds", where),
                          number(rec, "images_per_s", where), number(rec, "test_bpc", where)});
      const auto sample = rec.find("sample");
      if (sample != rec.end() && sample->is_string())
        m.text_samples.emplace_back(static_cast<int64_t>(m.epochs.back().epoch) + 1, sample->get<std::string>());
    }
  }
  return m;
}

// Averages consecutive points into at most max_points, keeping the curve's shape and the file small.
void thin(std::vector<double>& x, std::vector<double>& y, size_t max_points) {
  if (x.size() <= max_points) return;
  const size_t bucket = (x.size() + max_points - 1) / max_points;
  std::vector<double> tx, ty;
  for (size_t i = 0; i < x.size(); i += bucket) {
    double sx = 0, sy = 0;
    size_t n = 0;
    for (size_t j = i; j < std::min(x.size(), i + bucket); ++j)
      if (std::isfinite(x[j]) && std::isfinite(y[j])) sx += x[j], sy += y[j], ++n;
    tx.push_back(n ? sx / n : kNaN), ty.push_back(n ? sy / n : kNaN);
  }
  x = std::move(tx), y = std::move(ty);
}

std::string charts(const Metrics& m) {
  Series loss{"train loss (per step)", {}, {}, "#1f77b4"}, lr{"learning rate", {}, {}, "#9467bd"};
  for (const Step& s : m.steps) {
    loss.x.push_back(s.step), loss.y.push_back(s.loss);
    lr.x.push_back(s.step), lr.y.push_back(s.lr);
  }
  thin(loss.x, loss.y, kMaxPoints);
  thin(lr.x, lr.y, kMaxPoints);
  Series epoch_train{"train loss (epoch)", {}, {}, "#1f77b4", false, true};
  Series test_loss{"test loss (epoch)", {}, {}, "#d62728", true, true, true};
  Series train_acc{"train", {}, {}, "#1f77b4", true, true}, test_acc{"test", {}, {}, "#d62728", true, true};
  const std::string per_second = m.unit() + " / s";
  Series speed{per_second, {}, {}, "#2ca02c", true, true};
  for (const Epoch& e : m.epochs) {
    epoch_train.x.push_back(e.step), epoch_train.y.push_back(e.train_loss);
    test_loss.x.push_back(e.step), test_loss.y.push_back(e.test_loss);
    train_acc.x.push_back(e.epoch + 1), train_acc.y.push_back(e.train_acc);
    test_acc.x.push_back(e.epoch + 1), test_acc.y.push_back(e.test_acc);
    speed.x.push_back(e.epoch + 1), speed.y.push_back(e.images_per_s);
  }
  // The epochs' mean train loss is always drawn: a short run has only a step record or two, each one
  // batch's loss. Without step records the epochs' learning rate stands in.
  std::vector<Series> loss_series{epoch_train, test_loss};
  if (m.steps.size() >= 2 * std::max<size_t>(m.epochs.size(), 2)) loss_series.insert(loss_series.begin(), loss);
  if (m.steps.empty()) lr = {"learning rate", epoch_train.x, {}, "#9467bd", true, true};
  if (m.steps.empty())
    for (const Epoch& e : m.epochs) lr.y.push_back(e.lr);

  std::string out = "<section><h2>Training curves</h2><div class=\"charts\">\n";
  out += svg_chart(loss_series, {.title = "Loss", .x_label = "step", .y_label = "cross-entropy"});
  out += svg_chart({train_acc, test_acc},
                   {.title = "Accuracy", .x_label = "epoch", .y_label = "accuracy", .y_percent = true, .x_integer = true});
  out += svg_chart({lr}, {.title = "Learning rate", .x_label = "step", .y_label = "lr", .y_include_zero = true});
  out += svg_chart({speed}, {.title = "Throughput", .x_label = "epoch", .y_label = per_second,
                             .y_include_zero = true, .x_integer = true});
  return out + "</div></section>\n";
}

std::string epoch_table(const Metrics& m) {
  if (m.epochs.empty()) return "";
  const bool text = m.unit() == "characters";
  std::string out =
      "<section><h2>Epochs</h2><table class=\"num\"><tr><th>epoch</th><th>step</th><th>train loss</th>"
      "<th>train acc</th><th>test loss</th><th>test acc</th>" +
      std::string(text ? "<th>test bits/char</th>" : "") + "<th>lr</th><th>time</th><th>" + m.unit() + "/s</th></tr>\n";
  for (const Epoch& e : m.epochs)
    out += "<tr><td>" + fmt(e.epoch + 1, "%.0f") + "</td><td>" + fmt(e.step, "%.0f") + "</td><td>" +
           fmt(e.train_loss, "%.4f") + "</td><td>" + percent(e.train_acc) + "</td><td>" + fmt(e.test_loss, "%.4f") +
           "</td><td>" + percent(e.test_acc) + (text ? "</td><td>" + fmt(e.test_bpc, "%.3f") : std::string()) +
           "</td><td>" + fmt(e.lr, "%.4g") + "</td><td>" + duration(e.seconds) +
           "</td><td>" + fmt(e.images_per_s, "%.0f") + "</td></tr>\n";
  return out + "</table></section>\n";
}

// An eval.json this large holds a confusion matrix of thousands of classes (written by a cohort
// from before the matrix was left out above kMaxConfusionMatrixClasses): parsing it would take
// gigabytes, so the report says so instead.
constexpr uintmax_t kMaxEvalJsonBytes = uintmax_t{64} << 20;

std::string eval_section(const fs::path& path) {
  if (!fs::exists(path)) return "";
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxEvalJsonBytes)
    return "<section><h2>Evaluation</h2><p class=\"note\">" + html_escape(path.string()) + " has " +
           std::to_string(size >> 20) + " MiB, too large to show (a confusion matrix of thousands of classes?); "
           "<code>cohort eval --checkpoint DIR --json eval.json</code> writes it again in its current, "
           "linear form.</p></section>\n";
  try {
    return eval_html(nlohmann::json::parse(read_text(path)), path.string());
  } catch (const nlohmann::json::exception& e) {
    throw Error(detail::str("write_report: ", path.string(), ": ", e.what(),
                            "; hint: eval.json is written by `cohort eval` / `cohort train`"));
  }
}

std::string samples_section(const fs::path& path) {
  if (!fs::exists(path)) return "";
  const std::string png = read_text(path);
  if (png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    return "<section><h2>Test samples</h2><p class=\"note\">samples.png is not a PNG file.</p></section>\n";
  return "<section><h2>Test samples</h2><p class=\"note\">Under each image: the true class (grey) and the "
         "prediction (green when right, red when wrong).</p><img class=\"samples\" alt=\"test samples\" "
         "src=\"data:image/png;base64," + base64(png) + "\"></section>\n";
}

// A language model's text after each epoch, newest first (the last five).
std::string text_samples_section(const Metrics& m) {
  if (m.text_samples.empty()) return "";
  std::string html = "<section><h2>Generated text</h2>";
  const size_t n = m.text_samples.size();
  for (size_t i = n; i-- > n - std::min<size_t>(n, 5);)
    html += "<h3>after epoch " + std::to_string(m.text_samples[i].first) + "</h3><pre>" +
            html_escape(escape_text(m.text_samples[i].second, /*keep_newlines=*/true)) + "</pre>";
  return html + "</section>\n";
}

}  // namespace

void write_report(const std::string& out_dir, bool in_progress) {
  const fs::path dir(out_dir);
  const Metrics m = read_metrics(dir / "metrics.jsonl");
  auto config_text = [&](const char* key) {
    const auto it = m.config.find(key);
    return it == m.config.end() ? std::string() : it->is_string() ? it->get<std::string>() : it->dump();
  };
  std::string title = config_text("model");
  if (!config_text("dataset").empty()) title += (title.empty() ? "" : " on ") + config_text("dataset");
  if (title.empty()) title = "Training run";

  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string html = page_head("cohort report: " + title, in_progress ? kRefreshSeconds : 0);
  html += "<header><h1>" + html_escape(title) + "</h1><p class=\"sub\">cohort training report &middot; " +
          html_escape(fs::absolute(dir).lexically_normal().string()) + " &middot; generated " + stamp + "</p></header>\n";
  if (!m.failure.empty())
    html += "<section><h2>Training stopped</h2><p class=\"note\">" + html_escape(m.failure) + "</p></section>\n";
  html += summary_cards(m);
  html += config_table(m.config);
  html += charts(m);
  html += epoch_table(m);
  html += eval_section(dir / "eval.json");
  html += samples_section(dir / "samples.png");
  html += text_samples_section(m);
  html += "</main></body></html>\n";
  io::write_file(dir / "report.html", html);
}

}  // namespace cohort::app
