// SVG line charts: nice ticks (Heckbert's "nice numbers for graph labels"), axes, grid, legend.
// Text widths are estimated (no font metrics offline): about 0.6 em per character.
#include "app/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace cohort::app {

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
constexpr double kCharWidth = 6.6;  // of an 11px sans-serif digit, roughly

// The 1, 2, 5 or 10 times a power of ten closest to x (round) or just above it.
double nice_number(double x, bool round) {
  const double e = std::floor(std::log10(x));
  const double f = x / std::pow(10.0, e);
  double nf;
  if (round) nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  else nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nf * std::pow(10.0, e);
}

std::string num(double v) {  // a coordinate
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tooltip_value(double v, bool percent) {
  char buf[48];
  if (percent) std::snprintf(buf, sizeof buf, "%.2f%%", 100 * v);
  else std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks, bool integer) {
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad, hi += pad;
  }
  const double range = nice_number(hi - lo, false);
  double step = nice_number(range / std::max(1, max_ticks - 1), true);
  if (integer) step = std::max(step, 1.0);
  std::vector<double> ticks;
  // Multiples of step by index, so that rounding does not accumulate.
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  for (double i = first; i <= last; ++i) ticks.push_back(i == 0 ? 0 : i * step);
  return ticks;
}

std::string format_tick(double value, double step) {
  char buf[48];
  step = std::abs(step);
  if (step == 0 || step < 1e-4 || std::abs(value) >= 1e7) {
    std::snprintf(buf, sizeof buf, "%.3g", value);
  } else {
    const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  }
  return buf;
}

std::string svg_chart(const std::vector<Series>& series, const ChartOptions& o) {
  const double inf = std::numeric_limits<double>::infinity();
  double x_lo = inf, x_hi = -inf, y_lo = inf, y_hi = -inf;
  for (const Series& s : series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) {
        x_lo = std::min(x_lo, s.x[i]), x_hi = std::max(x_hi, s.x[i]);
        y_lo = std::min(y_lo, s.y[i]), y_hi = std::max(y_hi, s.y[i]);
      }
  const bool empty = x_lo > x_hi;
  if (empty) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  if (o.y_include_zero) y_lo = std::min(y_lo, 0.0), y_hi = std::max(y_hi, 0.0);
  // Whole-number ticks (epochs) are short labels: twice as many fit.
  const std::vector<double> xt = nice_ticks(x_lo, x_hi, std::max(2, o.width / (o.x_integer ? 45 : 90)), o.x_integer);
  const std::vector<double> yt = nice_ticks(y_lo, y_hi, std::max(2, o.height / 50));
  const double x_step = xt.size() > 1 ? xt[1] - xt[0] : 1, y_step = yt.size() > 1 ? yt[1] - yt[0] : 1;
  auto y_label_of = [&](double v) { return o.y_percent ? format_tick(100 * v, 100 * y_step) + "%" : format_tick(v, y_step); };

  // Margins: the longest y tick label and the rotated y-axis title on the left, the legend on top.
  size_t longest = 0;
  for (double v : yt) longest = std::max(longest, y_label_of(v).size());
  const double left = 28 + kCharWidth * static_cast<double>(longest), right = 18, top = 44, bottom = 44;
  const double pw = o.width - left - right, ph = o.height - top - bottom;
  const double x0 = xt.front(), x1 = xt.back(), y0 = yt.front(), y1 = yt.back();
  auto sx = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto sy = [&](double y) { return top + ph - (y - y0) / (y1 - y0) * ph; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" << o.width << "\" height=\"" << o.height
      << "\" viewBox=\"0 0 " << o.width << ' ' << o.height << "\" role=\"img\" aria-label=\"" << html_escape(o.title)
      << "\">\n";
  svg << "<text class=\"title\" x=\"" << num(left) << "\" y=\"18\">" << html_escape(o.title) << "</text>\n";
  // Grid lines and tick labels.
  for (double v : yt)
    svg << "<line class=\"grid\" x1=\"" << num(left) << "\" x2=\"" << num(left + pw) << "\" y1=\"" << num(sy(v))
        << "\" y2=\"" << num(sy(v)) << "\"/><text class=\"tick\" text-anchor=\"end\" x=\"" << num(left - 6) << "\" y=\""
        << num(sy(v) + 4) << "\">" << y_label_of(v) << "</text>\n";
  for (double v : xt)
    svg << "<line class=\"tickmark\" x1=\"" << num(sx(v)) << "\" x2=\"" << num(sx(v)) << "\" y1=\"" << num(top + ph)
        << "\" y2=\"" << num(top + ph + 4) << "\"/><text class=\"tick\" text-anchor=\"middle\" x=\"" << num(sx(v))
        << "\" y=\"" << num(top + ph + 16) << "\">" << format_tick(v, x_step) << "</text>\n";
  svg << "<rect class=\"frame\" x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(pw) << "\" height=\""
      << num(ph) << "\"/>\n";
  svg << "<text class=\"label\" text-anchor=\"middle\" x=\"" << num(left + pw / 2) << "\" y=\"" << o.height - 8 << "\">"
      << html_escape(o.x_label) << "</text>\n";
  svg << "<text class=\"label\" text-anchor=\"middle\" transform=\"translate(14 " << num(top + ph / 2)
      << ") rotate(-90)\">" << html_escape(o.y_label) << "</text>\n";
  if (empty)
    svg << "<text class=\"label\" text-anchor=\"middle\" x=\"" << num(left + pw / 2) << "\" y=\"" << num(top + ph / 2)
        << "\">no data yet</text>\n";

  // Series, then the legend right-aligned on the title's line, last entry rightmost.
  double legend_x = o.width - right;
  std::ostringstream legend;
  for (size_t k = series.size(); k-- > 0;) {
    const Series& s = series[k];
    const std::string color = s.color.empty() ? kPalette[k % std::size(kPalette)] : s.color;
    const size_t n = std::min(s.x.size(), s.y.size());
    std::string d, dots;
    size_t run = 0;  // points in the current piece of line
    for (size_t i = 0; i <= n; ++i) {
      const bool finite = i < n && std::isfinite(s.x[i]) && std::isfinite(s.y[i]);
      // A piece of one point has no length: without markers it would not show, so it gets a dot.
      if (!finite && run == 1 && !s.markers)
        dots += "<circle cx=\"" + num(sx(s.x[i - 1])) + "\" cy=\"" + num(sy(s.y[i - 1])) + "\" r=\"2\" fill=\"" +
                html_escape(color) + "\"/>\n";
      if (!finite) {
        run = 0;
        continue;
      }
      d += run++ ? 'L' : 'M';
      d += num(sx(s.x[i])) + ',' + num(sy(s.y[i]));
    }
    if (s.line && !d.empty())
      svg << "<path class=\"series\" d=\"" << d << "\" stroke=\"" << html_escape(color) << '"'
          << (s.dashed ? " stroke-dasharray=\"6 4\"" : "") << "/>\n" << dots;
    if (s.markers)
      for (size_t i = 0; i < n; ++i)
        if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
          svg << "<circle cx=\"" << num(sx(s.x[i])) << "\" cy=\"" << num(sy(s.y[i])) << "\" r=\"3.5\" fill=\""
              << html_escape(color) << "\"><title>" << html_escape(s.name) << ": " << html_escape(o.x_label) << ' '
              << tooltip_value(s.x[i], false) << ", " << tooltip_value(s.y[i], o.y_percent) << "</title></circle>\n";
    if (s.name.empty()) continue;
    legend_x -= kCharWidth * static_cast<double>(s.name.size());
    legend << "<text class=\"legend\" x=\"" << num(legend_x) << "\" y=\"18\">" << html_escape(s.name) << "</text>";
    legend_x -= 24;
    if (s.line)
      legend << "<line x1=\"" << num(legend_x) << "\" x2=\"" << num(legend_x + 18) << "\" y1=\"14\" y2=\"14\" stroke=\""
             << html_escape(color) << "\" stroke-width=\"2.5\"" << (s.dashed ? " stroke-dasharray=\"5 3\"" : "") << "/>";
    if (s.markers)
      legend << "<circle cx=\"" << num(legend_x + 9) << "\" cy=\"14\" r=\"3.5\" fill=\"" << html_escape(color) << "\"/>";
    legend << '\n';
    legend_x -= 14;
  }
  svg << legend.str() << "</svg>\n";
  return svg.str();
}

}  // namespace cohort::app
