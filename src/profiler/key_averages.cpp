// Self times from the events' nesting, and the key_averages table (see cohort/profiler/profiler.h).
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "cohort/profiler/profiler.h"

namespace cohort::profiler {

namespace {

int64_t duration(const Event& e) { return e.end_ns - e.start_ns; }

// Nanoseconds as PyTorch's tables print them: "812ns", "35.118us", "1.204ms", "2.031s".
std::string format_time(int64_t ns) {
  char buf[32];
  if (ns < 1000)
    std::snprintf(buf, sizeof buf, "%lldns", static_cast<long long>(ns));
  else if (ns < 1000000)
    std::snprintf(buf, sizeof buf, "%.3fus", static_cast<double>(ns) / 1e3);
  else if (ns < 1000000000)
    std::snprintf(buf, sizeof buf, "%.3fms", static_cast<double>(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3fs", static_cast<double>(ns) / 1e9);
  return buf;
}

std::string format_bytes(int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  const double mag = b < 0 ? -b : b;
  if (mag < 1024)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else if (mag < 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f KiB", b / 1024);
  else if (mag < 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  return buf;
}

std::string format_share(int64_t part, int64_t whole) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0);
  return buf;
}

}  // namespace

std::vector<int64_t> parents(const std::vector<Event>& events) {
  std::vector<int64_t> parent(events.size(), -1);
  // On each thread in opening order, a range's parent is the innermost open one of smaller depth.
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < events.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(events[a].thread, events[a].order) < std::tie(events[b].thread, events[b].order);
  });
  std::vector<size_t> stack;
  int thread = -1;
  for (size_t i : order) {
    const Event& e = events[i];
    if (e.thread != thread) {
      stack.clear();
      thread = e.thread;
    }
    while (!stack.empty() && events[stack.back()].depth >= e.depth) stack.pop_back();
    if (!stack.empty()) parent[i] = static_cast<int64_t>(stack.back());
    stack.push_back(i);
  }
  return parent;
}

namespace {

// Each event's own share of a quantity that includes its children's (time, bytes): its value minus
// its children's values.
std::vector<int64_t> minus_children(const std::vector<int64_t>& parent, const std::vector<int64_t>& value) {
  std::vector<int64_t> self = value;
  for (size_t i = 0; i < value.size(); ++i)
    if (parent[i] >= 0) self[static_cast<size_t>(parent[i])] -= value[i];
  return self;
}

std::vector<int64_t> durations(const std::vector<Event>& events) {
  std::vector<int64_t> d(events.size());
  for (size_t i = 0; i < events.size(); ++i) d[i] = duration(events[i]);
  return d;
}

}  // namespace

std::vector<int64_t> self_times(const std::vector<Event>& events) {
  return minus_children(parents(events), durations(events));
}

std::vector<KeyAverage> key_averages(const std::vector<Event>& events) {
  const std::vector<int64_t> parent = parents(events);
  std::vector<int64_t> bytes(events.size());
  for (size_t i = 0; i < events.size(); ++i) bytes[i] = events[i].bytes;
  const std::vector<int64_t> self = minus_children(parent, durations(events));
  const std::vector<int64_t> self_bytes = minus_children(parent, bytes);
  std::map<std::pair<std::string, Kind>, KeyAverage> rows;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    KeyAverage& row = rows[{e.name, e.kind}];
    row.name = e.name;
    row.kind = e.kind;
    ++row.calls;
    row.self_ns += self[i];
    row.total_ns += duration(e);
    row.self_bytes += self_bytes[i];
    row.total_bytes += e.bytes;
  }
  std::vector<KeyAverage> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(),
                   [](const KeyAverage& a, const KeyAverage& b) { return a.self_ns > b.self_ns; });
  return out;
}

std::string format_table(const std::vector<KeyAverage>& rows, size_t max_rows) {
  int64_t all_self = 0;
  for (const KeyAverage& r : rows) all_self += r.self_ns;
  const size_t shown = max_rows == 0 ? rows.size() : std::min(max_rows, rows.size());
  size_t name_width = 4;
  for (size_t i = 0; i < shown; ++i) name_width = std::max(name_width, std::min<size_t>(rows[i].name.size(), 48));
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-8s  %10s  %12s  %10s  %12s  %8s  %12s  %12s\n",
                static_cast<int>(name_width),
                "Name", "Kind", "Self %", "Self", "Total %", "Total", "Calls", "Avg total", "Self bytes");
  const std::string header = line;
  const std::string rule(header.size() - 1, '-');
  os << rule << '\n' << header << rule << '\n';
  for (size_t i = 0; i < shown; ++i) {
    const KeyAverage& r = rows[i];
    std::string name = r.name.size() > 48 ? r.name.substr(0, 45) + "..." : r.name;
    std::snprintf(line, sizeof line, "%-*s  %-8s  %10s  %12s  %10s  %12s  %8lld  %12s  %12s\n",
                  static_cast<int>(name_width), name.c_str(), profiling::kind_name(r.kind),
                  format_share(r.self_ns, all_self).c_str(), format_time(r.self_ns).c_str(),
                  format_share(r.total_ns, all_self).c_str(), format_time(r.total_ns).c_str(),
                  static_cast<long long>(r.calls), format_time(r.calls ? r.total_ns / r.calls : 0).c_str(),
                  format_bytes(r.self_bytes).c_str());
    os << line;
  }
  os << rule << '\n';
  if (shown < rows.size()) os << (rows.size() - shown) << " more rows with less self time\n";
  os << "Self time total: " << format_time(all_self) << '\n';
  return os.str();
}

}  // namespace cohort::profiler
