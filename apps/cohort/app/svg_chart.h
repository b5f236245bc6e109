// Line charts as inline SVG, for the training report: a page that opens offline needs no chart library.
//
//   std::string svg = app::svg_chart({{"train loss", steps, losses}}, {.title = "Loss", .x_label = "step"});
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cohort::app {

// One curve. A point whose x or y is not finite (a NaN loss, a missing value) breaks the line there.
struct Series {
  std::string name;  // the legend entry; "" for none
  std::vector<double> x, y;
  std::string color = "";  // a CSS color; "" takes the next one from a palette
  bool line = true;
  bool markers = false;  // a dot per point, with a hover tooltip of its values
  bool dashed = false;
};

struct ChartOptions {
  std::string title, x_label, y_label;
  int width = 560, height = 300;  // pixels, the whole chart including axes and legend
  bool y_percent = false;         // y values are fractions, shown as percentages
  bool y_include_zero = false;    // stretch the y range down (or up) to zero
  bool x_integer = false;         // x ticks at whole numbers only (epochs)
};

// An <svg> element (with the SVG xmlns, and no other URL): axes with nice tick values and grid
// lines, the series, a legend above the plot. With no finite point at all it says "no data yet".
std::string svg_chart(const std::vector<Series>& series, const ChartOptions& options);

// Round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart), at most about
// max_ticks of them; the first is <= lo and the last >= hi. integer keeps the step >= 1.
// lo == hi gets a range around it.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks = 6, bool integer = false);

// A tick label: as many decimals as the step between ticks needs ("0.25", "1500", "1e-05").
std::string format_tick(double value, double step);

// Text made safe for HTML and SVG element content and quoted attributes.
std::string html_escape(std::string_view text);

}  // namespace cohort::app
