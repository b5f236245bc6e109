// The tqdm-style progress bar.
#include "app/progress.h"

#include <unistd.h>

#include <cmath>
#include <sstream>

namespace cohort::app {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  }
  return buf;
}

std::string ProgressBar::format(const std::string& label, int64_t done, int64_t total, int64_t done_here,
                                double elapsed_s, const std::string& postfix, int bar_width) {
  double frac = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 0;
  // Eighths of a cell give the bar a smooth edge, as tqdm's does.
  static const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  int64_t eighths = static_cast<int64_t>(frac * bar_width * 8);
  std::string bar;
  for (int64_t i = 0; i < eighths / 8; ++i) bar += "█";
  int64_t cells = eighths / 8;
  if (cells < bar_width && eighths % 8) {
    bar += kEighths[eighths % 8];
    ++cells;
  }
  bar += std::string(static_cast<size_t>(bar_width - cells), ' ');

  double rate = elapsed_s > 0 ? static_cast<double>(done_here) / elapsed_s : 0;
  double remaining = rate > 0 ? static_cast<double>(total - done) / rate : NAN;
  std::ostringstream out;
  char pct[8];
  std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(frac * 100));
  char rate_text[32];
  std::snprintf(rate_text, sizeof rate_text, "%.1f it/s", rate);
  out << label << " " << pct << "|" << bar << "| " << done << "/" << total << " [" << format_duration(elapsed_s)
      << "<" << format_duration(remaining) << ", " << (rate > 0 ? rate_text : "? it/s");
  if (!postfix.empty()) out << ", " << postfix;
  out << "]";
  return out.str();
}

ProgressBar::ProgressBar(std::string label, int64_t total, int64_t start, bool enabled, std::FILE* stream)
    : label_(std::move(label)),
      total_(total),
      start_(start),
      done_(start),
      enabled_(enabled),
      tty_(isatty(fileno(stream)) != 0),
      stream_(stream),
      started_(std::chrono::steady_clock::now()),
      last_draw_(started_) {}

ProgressBar::~ProgressBar() { close(); }

void ProgressBar::update(int64_t done, const std::string& postfix) {
  done_ = done;
  postfix_ = postfix;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  double since = std::chrono::duration<double>(now - last_draw_).count();
  if (since >= (tty_ ? 0.1 : 5.0)) {
    last_draw_ = now;
    draw(false);
  }
}

void ProgressBar::close() {
  if (closed_) return;
  closed_ = true;
  if (enabled_) draw(true);
}

void ProgressBar::draw(bool final) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  int64_t done_here = done_ - start_;
  std::string line = format(label_, done_, total_, done_here, elapsed, postfix_);
  if (tty_) {
    std::fprintf(stream_, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
  } else {
    std::fprintf(stream_, "%s\n", line.c_str());
  }
  std::fflush(stream_);
}

}  // namespace cohort::app
