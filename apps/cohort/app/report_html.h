// Internal to the training report (report.cpp): the parsed metrics and the HTML pieces of the page
// that are not charts. Every piece escapes the text it puts into HTML.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cohort::app {

// One line of metrics.jsonl; a missing number is NaN.
struct Step {
  double epoch, step, loss, lr, images_per_s, elapsed_s;
};
struct Epoch {
  double epoch, step, train_loss, train_acc, test_loss, test_acc, lr, seconds, images_per_s;
  double test_bpc;  // a language model's bits per character
};
struct Metrics {
  nlohmann::ordered_json config = nlohmann::ordered_json::object();  // in the file's key order
  std::vector<Step> steps;
  std::vector<Epoch> epochs;
  std::vector<std::pair<int64_t, std::string>> text_samples;  // a language model's generated text, by epoch
  std::string failure;  // why training stopped, from a "failure" record; empty when it did not fail
  // What a sample is, from the config's dataset: "images", "rows" (csv) or "characters" (text).
  std::string unit() const;
};

// <!DOCTYPE html> up to and including the opening <main>, with the page's whole stylesheet; with
// refresh_seconds > 0 the page reloads itself that often (a run still training rewrites it).
std::string page_head(const std::string& title, int refresh_seconds = 0);
// The final numbers as cards: test and train accuracy, test loss, best epoch, time, throughput.
std::string summary_cards(const Metrics& m);
// The config's key/value pairs as a table (strings as they are, other values as JSON).
std::string config_table(const nlohmann::ordered_json& config);
// The evaluation section from eval.json (read from `source`, named in errors); a missing key or a
// value of the wrong type throws nlohmann::json::exception, which report.cpp turns into an error
// naming the file.
std::string eval_html(const nlohmann::json& eval, const std::string& source);

// Numbers for people: "&ndash;" for NaN, else printf with `format`.
std::string fmt(double value, const char* format);
std::string percent(double fraction);  // "83.80%"
std::string duration(double seconds);  // "40.2 s", "12 min 05 s", "2 h 03 min"
std::string base64(std::string_view bytes);

}  // namespace cohort::app
