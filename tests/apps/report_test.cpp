// The HTML training report: a self-contained page from metrics.jsonl (config, steps, epochs), with
// eval.json and samples.png when present; a run still writing its last line; malformed lines; the
// SVG chart's ticks, escaping and gaps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include <nlohmann/json.hpp>

#include "cohort/io/image.h"

#include "app/report.h"
#include "app/svg_chart.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class Report : public ScratchDir {
 protected:
  // A config line, steps every 5 of 20 per epoch, and `epochs` epoch lines.
  std::string metrics(int epochs = 3) const {
    std::string s =
        R"({"kind":"config","model":"lenet","dataset":"fashion-mnist","epochs":3,"batch_size":64,"lr":0.01,)"
        R"("optimizer":"sgd","seed":42,"threads":4,"devices":"cpu:0,cpu:1","version":"0.1.0"})"
        "\n";
    const double test_acc[] = {0.812, 0.845, 0.8765};
    for (int e = 0; e < epochs; ++e) {
      for (int k = 5; k <= 20; k += 5) {
        const int step = e * 20 + k;
        s += R"({"kind":"step","epoch":)" + std::to_string(e) + R"(,"step":)" + std::to_string(step) +
             R"(,"loss":)" + std::to_string(2.3 / (1 + 0.1 * step)) + R"(,"lr":0.01,"images_per_s":5230.5,"elapsed_s":)" +
             std::to_string(0.5 * step) + "}\n";
      }
      s += R"({"kind":"epoch","epoch":)" + std::to_string(e) + R"(,"step":)" + std::to_string(20 * (e + 1)) +
           R"(,"train_loss":0.61,"train_acc":0.781,"test_loss":0.45,"test_acc":)" + std::to_string(test_acc[e]) +
           R"(,"lr":0.01,"seconds":10.5,"images_per_s":1490.0})" + "\n";
    }
    return s;
  }
  std::string report() {
    app::write_report(dir_.string());
    return read_bytes(path("report.html"));
  }
};

TEST_F(Report, WritesASelfContainedPage) {
  write_bytes(path("metrics.jsonl"), metrics());
  const std::string html = report();
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_EQ(count(html, "<svg"), 4u);  // loss, accuracy, learning rate, throughput
  for (const char* value : {"lenet", "fashion-mnist", "batch_size", "0.01", "sgd", "cpu:0,cpu:1", "0.1.0"})
    EXPECT_THAT(html, HasSubstr(std::string(">") + value + "<")) << value;
  EXPECT_THAT(html, HasSubstr("87.65%"));   // the final test accuracy
  EXPECT_THAT(html, HasSubstr(">3 / 3<"));  // epochs done / planned
  EXPECT_THAT(html, HasSubstr("test loss (epoch)"));
  // Offline: the SVG namespace is the only URL, and there is no script.
  EXPECT_EQ(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("Test samples")));  // no samples.png
  EXPECT_THAT(others("metrics.jsonl"), ::testing::ElementsAre("report.html"));
}

// A short run has a step record or two, each one batch's loss: the epochs' mean train loss is the curve.
TEST_F(Report, ShortRunsDrawTheEpochsTrainLoss) {
  write_bytes(path("metrics.jsonl"),
              R"({"kind":"config","model":"lenet","dataset":"fashion-mnist","epochs":2})" "\n"
              R"({"kind":"step","epoch":0,"step":1,"loss":2.3,"lr":0.01,"images_per_s":100,"elapsed_s":0.1})" "\n"
              R"({"kind":"epoch","epoch":0,"step":3,"train_loss":1.9,"train_acc":0.5,"test_loss":1.5,"test_acc":0.6,"lr":0.01,"seconds":1,"images_per_s":100})" "\n"
              R"({"kind":"step","epoch":1,"step":4,"loss":1.2,"lr":0.01,"images_per_s":100,"elapsed_s":0.2})" "\n"
              R"({"kind":"epoch","epoch":1,"step":6,"train_loss":1.1,"train_acc":0.7,"test_loss":1.0,"test_acc":0.7,"lr":0.01,"seconds":1,"images_per_s":100})" "\n");
  std::string html = report();
  EXPECT_THAT(html, HasSubstr("train loss (epoch)"));
  EXPECT_THAT(html, Not(HasSubstr("train loss (per step)")));
  // A longer run draws the steps too.
  write_bytes(path("metrics.jsonl"), metrics());
  html = report();
  EXPECT_THAT(html, HasSubstr("train loss (epoch)"));
  EXPECT_THAT(html, HasSubstr("train loss (per step)"));
}

TEST_F(Report, LanguageModelsShowBitsPerCharacterAndTablesCountRows) {
  write_bytes(path("metrics.jsonl"),
              R"({"kind":"config","model":"char-lstm","dataset":"text","epochs":1})" "\n"
              R"({"kind":"epoch","epoch":0,"step":3,"train_loss":1.9,"train_acc":0.5,"test_loss":1.3862943611198906,"test_acc":0.6,"lr":0.01,"seconds":1,"images_per_s":900,"test_bpc":2.0})" "\n");
  write_bytes(path("eval.json"), R"({"unit":"characters","count":896,"loss":1.3862943611198906,"bits_per_character":2.0,)"
                                 R"("perplexity":4.0,"accuracy":0.6,"classes":["a","b"]})");
  std::string html = report();
  EXPECT_THAT(html, HasSubstr("test bits / character"));
  EXPECT_THAT(html, HasSubstr("<th>test bits/char</th>"));
  EXPECT_THAT(html, HasSubstr("On 896 test characters: <b>2.000 bits per character</b>, perplexity 4.00"));
  EXPECT_THAT(html, HasSubstr("characters / s"));
  EXPECT_THAT(html, Not(HasSubstr("images")));
  EXPECT_THAT(html, Not(HasSubstr("Per-class accuracy")));

  write_bytes(path("metrics.jsonl"),
              R"({"kind":"config","model":"mlp","dataset":"csv","epochs":1})" "\n"
              R"({"kind":"epoch","epoch":0,"step":3,"train_loss":1.9,"train_acc":0.5,"test_loss":1.5,"test_acc":0.6,"lr":0.01,"seconds":1,"images_per_s":900})" "\n");
  write_bytes(path("eval.json"), R"({"unit":"rows","count":40,"loss":1.5,"accuracy":0.6,"classes":["a","b"],)"
                                 R"("per_class":[{"name":"a","accuracy":0.5,"count":20},{"name":"b","accuracy":0.7,"count":20}]})");
  html = report();
  EXPECT_THAT(html, HasSubstr(" on 40 rows"));
  EXPECT_THAT(html, HasSubstr("rows / s"));
  EXPECT_THAT(html, Not(HasSubstr("images")));
}

TEST_F(Report, ReloadsItselfOnlyWhileTheRunGoesOn) {
  write_bytes(path("metrics.jsonl"), metrics(1));
  app::write_report(dir_.string(), /*in_progress=*/true);
  EXPECT_THAT(read_bytes(path("report.html")),
              HasSubstr("<meta http-equiv=\"refresh\" content=\"" + std::to_string(app::kRefreshSeconds) + "\">"));
  EXPECT_THAT(report(), Not(HasSubstr("http-equiv")));
}

TEST_F(Report, EscapesText) {
  write_bytes(path("metrics.jsonl"), R"({"kind":"config","model":"<b>net</b> & \"co\"","note":"it's"})" "\n");
  const std::string html = report();
  EXPECT_THAT(html, HasSubstr("&lt;b&gt;net&lt;/b&gt; &amp; &quot;co&quot;"));
  EXPECT_THAT(html, HasSubstr("it&#39;s"));
  EXPECT_THAT(html, Not(HasSubstr("<b>net")));
  EXPECT_THAT(html, HasSubstr("no epoch finished yet"));
}

TEST_F(Report, IgnoresATruncatedLastLine) {
  // The trainer is writing epoch 4: its line has no newline and does not parse yet.
  write_bytes(path("metrics.jsonl"), metrics() + R"({"kind":"epoch","epoch":3,"step":80,"train_loss":0.4)");
  const std::string html = report();
  EXPECT_THAT(html, HasSubstr("87.65%"));
  EXPECT_THAT(html, HasSubstr(">3 / 3<"));
  // A complete last line without its newline counts.
  write_bytes(path("metrics.jsonl"), metrics(2) + R"({"kind":"epoch","epoch":2,"step":60,"test_acc":0.9})");
  EXPECT_THAT(report(), HasSubstr("90.00%"));
}

TEST_F(Report, MalformedLinesAreErrorsNamingTheLine) {
  const std::string file = path("metrics.jsonl").string();
  std::string good = metrics();
  const size_t line5 = [&] {
    size_t at = 0;
    for (int i = 0; i < 4; ++i) at = good.find('\n', at) + 1;
    return at;
  }();
  write_bytes(path("metrics.jsonl"), good.substr(0, line5) + "{\"kind\":\"step\",\"loss\":\n" + good.substr(line5));
  EXPECT_THAT(error_of([&] { report(); }), HasSubstr("write_report: " + file + ", line 5: not valid JSON"));
  write_bytes(path("metrics.jsonl"), good.substr(0, line5) + "[1, 2]\n" + good.substr(line5));
  EXPECT_THAT(error_of([&] { report(); }), HasSubstr(file + ", line 5: expected a JSON object, got [1, 2]"));
  write_bytes(path("metrics.jsonl"), good + R"({"kind":"step","step":3,"loss":"high"})" "\n");
  EXPECT_THAT(error_of([&] { report(); }), HasSubstr(", line 17: \"loss\" must be a number, got \"high\""));
  fs::remove(path("metrics.jsonl"));
  EXPECT_THAT(error_of([&] { report(); }), HasSubstr("write_report: " + file + " does not exist"));
  EXPECT_FALSE(fs::exists(path("report.html")));
}

TEST_F(Report, EmbedsSamplesAndEvaluation) {
  write_bytes(path("metrics.jsonl"), metrics());
  io::write_png(path("samples.png").string(), full({2, 2, 3}, 200, TensorOptions(kUInt8)));
  write_bytes(path("eval.json"),
              R"({"count":30,"loss":0.4,"accuracy":0.8,"classes":["cat","dog<"],)"
              R"("per_class":[{"name":"cat","accuracy":0.9,"count":10},{"name":"dog<","accuracy":0.75,"count":20}],)"
              R"("confusion":[[9,1],[5,15]]})");
  const std::string html = report();
  EXPECT_THAT(html, HasSubstr("src=\"data:image/png;base64,iVBORw0KGgo"));  // "\x89PNG\r\n\x1a\n"
  EXPECT_THAT(html, HasSubstr("Test samples"));
  EXPECT_THAT(html, HasSubstr("<b>80.00%</b> on 30 images"));
  EXPECT_THAT(html, HasSubstr(">dog&lt;</th><td>75.00%<"));
  EXPECT_THAT(html, HasSubstr("title=\"true dog&lt;, predicted cat: 5 (25.00%)\">5</td>"));
  EXPECT_THAT(html, HasSubstr(">15</td>"));
  EXPECT_EQ(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));

  write_bytes(path("eval.json"), R"({"accuracy":"most","per_class":[],"confusion":[]})");
  EXPECT_THAT(error_of([&] { report(); }), HasSubstr("write_report: " + path("eval.json").string() + ": "));
  write_bytes(path("eval.json"), R"({"accuracy":0.5,"per_class":[],"confusion":[[1,2],[3]]})");
  EXPECT_THAT(error_of([&] { report(); }), HasSubstr("\"confusion\" must be a square matrix, got 2 rows and a row of 1"));
}

TEST_F(Report, ManyClassesShowPrecisionAndTopConfusionsNotAMatrix) {
  // eval.json of a 150-class target: no "confusion", the most frequent pairs instead.
  write_bytes(path("metrics.jsonl"), metrics());
  nlohmann::json eval = {{"count", 300}, {"loss", 2.0}, {"accuracy", 0.5}};
  nlohmann::json per_class = nlohmann::json::array(), classes = nlohmann::json::array();
  for (int c = 0; c < 150; ++c) {
    classes.push_back("id" + std::to_string(c));
    per_class.push_back({{"name", "id" + std::to_string(c)}, {"accuracy", 0.5}, {"precision", 0.25}, {"count", 2}});
  }
  eval["classes"] = classes;
  eval["per_class"] = per_class;
  eval["top_confusions"] = {{{"true", "id0"}, {"predicted", "id<1>"}, {"count", 2}}};
  write_bytes(path("eval.json"), eval.dump());
  const std::string html = report();
  EXPECT_THAT(html, Not(HasSubstr("class=\"conf\"")));
  EXPECT_THAT(html, HasSubstr("<h3>Most frequent confusions</h3><p class=\"note\">150 classes: the confusion matrix "
                              "is drawn up to 100.</p>"));
  EXPECT_THAT(html, HasSubstr("<tr><th>id0</th><td>id&lt;1&gt;</td><td>2</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<th>precision</th>"));
  EXPECT_THAT(html, HasSubstr(">id149</th><td>50.00%</td>"));
  EXPECT_EQ(count(html, "<td>25.00%</td>"), 150u);
}

TEST_F(Report, OversizedEvalJsonIsNotParsed) {
  // An eval.json with the matrix of thousands of classes (an older cohort wrote those): the report
  // says so instead of parsing gigabytes. A sparse file: its size is what counts.
  write_bytes(path("metrics.jsonl"), metrics());
  write_bytes(path("eval.json"), "{");
  fs::resize_file(path("eval.json"), uintmax_t{65} << 20);
  const std::string html = report();
  EXPECT_THAT(html, HasSubstr("eval.json has 65 MiB, too large to show (a confusion matrix of thousands of classes?)"));
}

TEST_F(Report, LongRunsAreAveragedIntoFewerPoints) {
  std::string s = R"({"kind":"config","model":"m"})" "\n";
  for (int step = 1; step <= 6000; ++step)
    s += R"({"kind":"step","epoch":0,"step":)" + std::to_string(step) + R"(,"loss":1.5,"lr":0.1})" "\n";
  write_bytes(path("metrics.jsonl"), s);
  const std::string html = report();
  // Two curves (loss, learning rate) of at most 1500 points each, every point a "L" but the first.
  EXPECT_LE(count(html, "L"), 2u * 1500u + 20u);
  EXPECT_GE(count(html, "L"), 2u * 1000u);
  EXPECT_LT(html.size(), 200000u);
}

TEST(SvgChart, NiceTicks) {
  using ::testing::DoubleEq;
  EXPECT_THAT(app::nice_ticks(0, 1, 6),
              ::testing::ElementsAre(0, DoubleEq(0.2), DoubleEq(0.4), DoubleEq(0.6), DoubleEq(0.8), DoubleEq(1)));
  EXPECT_THAT(app::nice_ticks(0.53, 2.31, 6), ::testing::ElementsAre(0.5, 1, 1.5, 2, 2.5));
  EXPECT_THAT(app::nice_ticks(1, 3, 6, /*integer=*/true), ::testing::ElementsAre(1, 2, 3));
  EXPECT_THAT(app::nice_ticks(0, 9380, 6), ::testing::ElementsAre(0, 2000, 4000, 6000, 8000, 10000));
  const auto flat = app::nice_ticks(5, 5);
  EXPECT_LT(flat.front(), 5);
  EXPECT_GT(flat.back(), 5);
  EXPECT_EQ(app::format_tick(0.25, 0.05), "0.25");
  EXPECT_EQ(app::format_tick(1500, 500), "1500");
  EXPECT_EQ(app::format_tick(0.0001, 0.00002), "0.0001");
  EXPECT_EQ(app::format_tick(1e-5, 2e-6), "1e-05");
}

TEST(SvgChart, DrawsSeriesWithGapsAndEscapes) {
  app::Series s{"a<b", {1, 2, 3, 4}, {1.0, 2.0, std::nan(""), 3.0}};
  s.markers = true;
  const std::string svg = app::svg_chart({s}, {.title = "T&C", .x_label = "step", .y_label = "loss"});
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(count(svg, "<path"), 1u);
  EXPECT_EQ(count(svg, "M"), 2u);  // the NaN breaks the line into two pieces
  EXPECT_EQ(count(svg, "<circle"), 3u + 1u);  // three finite points and the legend's dot
  EXPECT_THAT(svg, HasSubstr(">T&amp;C<"));
  EXPECT_THAT(svg, HasSubstr(">a&lt;b<"));
  // Without markers, a point between two gaps would be invisible: it gets a dot.
  const std::string lone = app::svg_chart({{"b", {1, 2, 3, 4}, {1.0, std::nan(""), 2.0, std::nan("")}}}, {});
  EXPECT_EQ(count(lone, "<circle"), 2u);
  EXPECT_THAT(app::svg_chart({}, {.title = "empty"}), HasSubstr("no data yet"));
  EXPECT_EQ(app::html_escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
}

}  // namespace
