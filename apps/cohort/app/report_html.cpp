// The training report's HTML pieces other than charts: stylesheet, summary cards, config table,
// evaluation tables, number formatting.
#include "app/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cohort/core/error.h"

#include "app/evaluate.h"
#include "app/svg_chart.h"

namespace cohort::app {

namespace {

constexpr const char* kStyle = R"css(
body{margin:0;background:#f4f5f7;color:#1d2330;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 24px 40px}
h1{font-size:24px;margin:0 0 2px}h2{font-size:16px;margin:0 0 12px}h3{font-size:13px;color:#445;margin:0 0 8px}
.sub{color:#667;margin:0 0 18px;word-break:break-all}.note{color:#667;margin:0 0 10px}
section{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:16px 18px;margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:12px;margin:0 0 16px}
.card{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:10px 14px}
.card .v{font-size:22px;font-weight:650;white-space:nowrap}.card .k{color:#667;font-size:12px}.card .s{color:#889;font-size:12px}
.card.main .v{color:#1f77b4}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(500px,1fr));gap:8px 16px}
svg.chart{max-width:100%;height:auto;font-family:inherit}
svg .title{font-size:13px;font-weight:650;fill:#1d2330}svg .tick{font-size:11px;fill:#556}
svg .label,svg .legend{font-size:12px;fill:#334}svg .grid{stroke:#eceef2}svg .frame{fill:none;stroke:#b4b9c3}
svg .tickmark{stroke:#b4b9c3}svg .series{fill:none;stroke-width:1.8;stroke-linejoin:round;stroke-linecap:round}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:4px 10px;border-bottom:1px solid #eef0f3}th{color:#556;font-weight:600;text-align:left}
table.num td{text-align:right}table.num th{text-align:right}
table.kv td.k{color:#667}table.kv td.v{font-weight:600;padding-right:28px}
.scroll{overflow-x:auto}.side{display:flex;flex-wrap:wrap;gap:28px;align-items:flex-start}
.bar{display:inline-block;height:9px;background:#1f77b4;border-radius:2px}table.num td.barcell{text-align:left}
table.conf td{text-align:right;min-width:34px;border:1px solid #fff}table.conf th{font-size:12px;border:1px solid #fff}
table.conf th.col{text-align:center;max-width:70px;white-space:normal}
img.samples{max-width:100%;border:1px solid #e1e4ea;image-rendering:pixelated}
)css";

std::string card(const std::string& key, const std::string& value, const std::string& sub, bool main = false) {
  return std::string("<div class=\"card") + (main ? " main" : "") + "\"><div class=\"k\">" + html_escape(key) +
         "</div><div class=\"v\">" + value + "</div><div class=\"s\">" + html_escape(sub) + "</div></div>\n";
}

std::string json_text(const nlohmann::ordered_json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string fmt(double value, const char* format) {
  if (!std::isfinite(value)) return "&ndash;";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string percent(double fraction) { return std::isfinite(fraction) ? fmt(100 * fraction, "%.2f") + "%" : "&ndash;"; }

std::string duration(double s) {
  if (!std::isfinite(s)) return "&ndash;";
  char buf[48];
  const auto whole = static_cast<long long>(std::llround(s));
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%lld min %02lld s", whole / 60, whole % 60);
  else std::snprintf(buf, sizeof buf, "%lld h %02lld min", whole / 3600, whole / 60 % 60);
  return buf;
}

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t j = 0; j < 3; ++j) v = v << 8 | (j < n ? static_cast<uint8_t>(bytes[i + j]) : 0);
    for (size_t j = 0; j < 4; ++j) out += j <= n ? kDigits[(v >> (18 - 6 * j)) & 63] : '=';
  }
  return out;
}

std::string Metrics::unit() const {
  const auto dataset = config.find("dataset");
  const std::string name = dataset != config.end() && dataset->is_string() ? dataset->get<std::string>() : "";
  return name == "text" ? "characters" : name == "csv" ? "rows" : "images";
}

std::string page_head(const std::string& title, int refresh_seconds) {
  const std::string refresh =
      refresh_seconds > 0 ? "<meta http-equiv=\"refresh\" content=\"" + std::to_string(refresh_seconds) + "\">\n" : "";
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n" + refresh +
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         html_escape(title) + "</title>\n<style>" + kStyle + "</style></head>\n<body><main>\n";
}

std::string summary_cards(const Metrics& m) {
  std::string out = "<div class=\"cards\">\n";
  if (m.epochs.empty()) {
    const double last_loss = m.steps.empty() ? NAN : m.steps.back().loss;
    out += card("train loss (last step)", fmt(last_loss, "%.4f"), "no epoch finished yet", true);
    return out + "</div>\n";
  }
  const Epoch& last = m.epochs.back();
  const auto best = std::max_element(m.epochs.begin(), m.epochs.end(), [](const Epoch& a, const Epoch& b) {
    return !(a.test_acc >= b.test_acc) && std::isfinite(b.test_acc);  // NaN never wins
  });
  double seconds = 0, speed = 0;
  size_t timed = 0;
  for (const Epoch& e : m.epochs) {
    if (std::isfinite(e.seconds)) seconds += e.seconds;
    if (std::isfinite(e.images_per_s)) speed += e.images_per_s, ++timed;
  }
  // A run stopped mid-epoch has steps after its last epoch record.
  if (!m.steps.empty() && std::isfinite(m.steps.back().elapsed_s)) seconds = std::max(seconds, m.steps.back().elapsed_s);
  const std::string epoch_of_last = "after epoch " + fmt(last.epoch + 1, "%.0f");
  std::string epochs = fmt(static_cast<double>(m.epochs.size()), "%.0f");
  const auto planned = m.config.find("epochs");
  if (planned != m.config.end() && planned->is_number()) epochs += " / " + html_escape(planned->dump());
  if (std::isfinite(last.test_bpc)) {
    out += card("test bits / character", fmt(last.test_bpc, "%.3f"), epoch_of_last, true);
    out += card("test perplexity", fmt(std::exp(last.test_loss), "%.2f"), "next-character accuracy " + percent(last.test_acc));
  } else {
    out += card("test accuracy", percent(last.test_acc), epoch_of_last, true);
  }
  out += card("test loss", fmt(last.test_loss, "%.4f"), epoch_of_last);
  out += card("train accuracy", percent(last.train_acc), "train loss " + fmt(last.train_loss, "%.4f"));
  out += card("best test accuracy", percent(best->test_acc), "epoch " + fmt(best->epoch + 1, "%.0f"));
  out += card("epochs", epochs, "step " + fmt(last.step, "%.0f"));
  out += card("training time", duration(seconds), "");
  out += card("mean throughput", fmt(timed ? speed / static_cast<double>(timed) : NAN, "%.0f"), m.unit() + " / s");
  return out + "</div>\n";
}

std::string config_table(const nlohmann::ordered_json& config) {
  std::string out = "<section><h2>Run configuration</h2>\n";
  if (config.empty()) return out + "<p class=\"note\">metrics.jsonl has no config line.</p></section>\n";
  constexpr size_t kPairsPerRow = 3;
  out += "<table class=\"kv\">";
  size_t i = 0;
  for (const auto& [key, value] : config.items()) {
    if (i % kPairsPerRow == 0) out += i ? "</tr>\n<tr>" : "<tr>";
    out += "<td class=\"k\">" + html_escape(key) + "</td><td class=\"v\">" + html_escape(json_text(value)) + "</td>";
    ++i;
  }
  return out + "</tr></table></section>\n";
}

// A language model's: its classes are bytes, so no per-class tables.
std::string language_eval_html(const nlohmann::json& eval) {
  auto number = [&](const char* key, const char* format) {
    return eval.contains(key) && eval.at(key).is_number() ? fmt(eval.at(key).get<double>(), format) : "?";
  };
  return "<section><h2>Evaluation</h2><p class=\"note\">On " + html_escape(eval.value("count", nlohmann::json()).dump()) +
         " test characters: <b>" + number("bits_per_character", "%.3f") + " bits per character</b>, perplexity " +
         number("perplexity", "%.2f") + ", loss " + number("loss", "%.4f") + "; the most likely next character is "
         "the right one for " + percent(eval.at("accuracy").get<double>()) + " of them.</p></section>\n";
}

std::string eval_html(const nlohmann::json& eval, const std::string& source) {
  if (eval.contains("bits_per_character")) return language_eval_html(eval);
  const double accuracy = eval.at("accuracy").get<double>();
  const auto& per_class = eval.at("per_class");
  // Above kMaxConfusionMatrixClasses classes eval.json holds the most frequent confusions instead of
  // the matrix; a matrix that large from an older eval.json is not drawn either (its page would grow
  // with the square of the classes).
  const bool has_matrix = eval.contains("confusion") && !eval.at("confusion").is_null();
  const auto confusion = has_matrix ? eval.at("confusion").get<std::vector<std::vector<int64_t>>>()
                                    : std::vector<std::vector<int64_t>>{};
  std::vector<std::string> names = eval.value("classes", std::vector<std::string>{});
  for (size_t c = names.size(); c < confusion.size(); ++c) names.push_back(std::to_string(c));
  for (const auto& row : confusion)
    COHORT_CHECK(row.size() == confusion.size(), "write_report: ", source, ": \"confusion\" must be a square matrix, got ",
                 confusion.size(), " rows and a row of ", row.size());

  std::string out = "<section><h2>Evaluation</h2><p class=\"note\">Test accuracy <b>" + percent(accuracy) + "</b>";
  if (eval.contains("count"))
    out += " on " + html_escape(eval.at("count").dump()) + " " +
           html_escape(eval.contains("unit") && eval.at("unit").is_string() ? eval.at("unit").get<std::string>() : "images");
  if (eval.contains("loss") && eval.at("loss").is_number()) out += ", loss " + fmt(eval.at("loss").get<double>(), "%.4f");
  const bool precision = !per_class.empty() && per_class.front().contains("precision");
  out += ".</p><div class=\"side\">\n<div><h3>Per-class accuracy</h3><table class=\"num\"><tr><th>class</th><th>accuracy</th><th></th>" +
         std::string(precision ? "<th>precision</th>" : "") + "<th>count</th></tr>\n";
  for (const auto& c : per_class) {
    const double a = c.at("accuracy").get<double>();
    out += "<tr><th>" + html_escape(c.at("name").get<std::string>()) + "</th><td>" + percent(a) +
           "</td><td class=\"barcell\"><span class=\"bar\" style=\"width:" + fmt(std::clamp(a, 0.0, 1.0) * 160, "%.0f") + "px\"></span></td>" +
           (precision ? "<td>" + percent(c.value("precision", 0.0)) + "</td>" : std::string()) + "<td>" +
           (c.contains("count") ? html_escape(c.at("count").dump()) : "") + "</td></tr>\n";
  }
  out += "</table></div>\n";
  if (confusion.empty() || confusion.size() > kMaxConfusionMatrixClasses) {
    if (!eval.contains("top_confusions")) return out + "</div></section>\n";
    out += "<div><h3>Most frequent confusions</h3><p class=\"note\">" + std::to_string(per_class.size()) +
           " classes: the confusion matrix is drawn up to " + std::to_string(kMaxConfusionMatrixClasses) +
           ".</p><table class=\"num\"><tr><th>true class</th><th>predicted</th><th>count</th></tr>\n";
    for (const auto& c : eval.at("top_confusions"))
      out += "<tr><th>" + html_escape(c.at("true").get<std::string>()) + "</th><td>" +
             html_escape(c.at("predicted").get<std::string>()) + "</td><td>" + html_escape(c.at("count").dump()) +
             "</td></tr>\n";
    return out + "</table></div></div></section>\n";
  }
  out += "<div class=\"scroll\"><h3>Confusion matrix: rows are true classes, columns predictions</h3>"
         "<table class=\"conf\"><tr><th>true &#8595; predicted &#8594;</th>";
  for (const auto& n : names) out += "<th class=\"col\">" + html_escape(n) + "</th>";
  out += "</tr>\n";
  for (size_t t = 0; t < confusion.size(); ++t) {
    int64_t total = 0;
    for (int64_t n : confusion[t]) total += n;
    out += "<tr><th>" + html_escape(names[t]) + "</th>";
    for (size_t p = 0; p < confusion.size(); ++p) {
      const int64_t n = confusion[t][p];
      const double frac = total ? static_cast<double>(n) / static_cast<double>(total) : 0;
      // Diagonal green by recall, off-diagonal red, amplified so that a few percent of confusion shows.
      const double alpha = n == 0 ? 0 : t == p ? 0.15 + 0.75 * frac : std::min(0.85, 0.12 + 3 * frac);
      const std::string rgb = t == p ? "44,160,44" : "214,39,40";
      out += "<td style=\"background:rgba(" + rgb + "," + fmt(alpha, "%.2f") + ")" +
             (alpha > 0.55 ? ";color:#fff" : n == 0 ? ";color:#c4c8cf" : "") + "\" title=\"true " +
             html_escape(names[t]) + ", predicted " + html_escape(names[p]) + ": " + std::to_string(n) + " (" +
             percent(frac) + ")\">" + std::to_string(n) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table></div></div></section>\n";
}

}  // namespace cohort::app
