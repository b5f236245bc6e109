// The profiler: which ranges a profile records (ops with their inputs, backward nodes, user scopes,
// other threads), how they nest, self times that add up, key_averages, the Chrome trace, libtorch's
// RecordProfile and macros, and that nothing is recorded outside a profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cohort/nn/functional/conv.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/activation.h"
#include "cohort/ops/convolution.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/profiler/profiler.h"
#include "support/error_of.h"

namespace cohort::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using profiler::Event;
using profiler::Kind;

std::vector<const Event*> named(const std::vector<Event>& events, const std::string& name) {
  std::vector<const Event*> out;
  for (const Event& e : events)
    if (e.name == name) out.push_back(&e);
  return out;
}

int64_t index_of(const std::vector<Event>& events, const Event* e) { return e - events.data(); }

TEST(Profiler, RecordsOpsWithTheirInputs) {
  const Tensor x = randn({2, 3, 8, 8}), w = randn({4, 3, 3, 3});
  profiler::Profile profile;
  conv2d(x, w);
  const auto& events = profile.events();
  const auto conv = named(events, "conv2d");
  ASSERT_EQ(conv.size(), 1u);
  EXPECT_EQ(conv[0]->kind, Kind::Op);
  EXPECT_EQ(conv[0]->thread, 0);
  ASSERT_EQ(conv[0]->input_shapes.size(), 3u);  // input, weight, the absent bias
  EXPECT_EQ(conv[0]->input_shapes[0], (std::vector<int64_t>{2, 3, 8, 8}));
  EXPECT_EQ(conv[0]->input_shapes[1], (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_TRUE(conv[0]->input_shapes[2].empty());
  EXPECT_EQ(conv[0]->dtype, "float32");
  EXPECT_EQ(conv[0]->device, "cpu:0");
  EXPECT_GE(conv[0]->end_ns, conv[0]->start_ns);
  // The output, 2 * 4 * 6 * 6 floats, was allocated inside the range.
  EXPECT_GE(conv[0]->bytes, int64_t{2 * 4 * 6 * 6 * 4});
}

TEST(Profiler, NestsOpsInsideUserScopesAndRecordsBackwardNodes) {
  nn::Linear fc(4, 3);
  const Tensor x = randn({5, 4});
  profiler::Profile profile;
  {
    profiler::RecordFunction step("step");
    Tensor loss = relu(fc->forward(x)).sum();
    loss.backward();
  }
  const auto& events = profile.events();
  const std::vector<int64_t> parent = profiler::parents(events);
  const auto step = named(events, "step");
  ASSERT_EQ(step.size(), 1u);
  EXPECT_EQ(step[0]->kind, Kind::User);
  EXPECT_EQ(parent[index_of(events, step[0])], -1);
  EXPECT_EQ(step[0]->depth, 0);
  // Every other range of this thread is inside the step, in time and in the tree.
  for (size_t i = 0; i < events.size(); ++i) {
    if (&events[i] == step[0] || events[i].thread != 0) continue;
    int64_t up = static_cast<int64_t>(i);
    while (parent[up] >= 0) up = parent[up];
    EXPECT_EQ(up, index_of(events, step[0])) << events[i].name;
    EXPECT_GE(events[i].start_ns, step[0]->start_ns) << events[i].name;
    EXPECT_LE(events[i].end_ns, step[0]->end_ns) << events[i].name;
  }
  // linear runs as an op of its own; its children (if any) nest in it.
  const auto linear = named(events, "linear");
  ASSERT_EQ(linear.size(), 1u);
  EXPECT_EQ(parent[index_of(events, linear[0])], index_of(events, step[0]));
  ASSERT_EQ(named(events, "relu").size(), 1u);
  ASSERT_EQ(named(events, "sum").size(), 1u);
  // The backward pass: one range per node, named as the node.
  for (const char* node : {"SumBackward0", "ReluBackward0"}) {
    const auto b = named(events, node);
    ASSERT_EQ(b.size(), 1u) << node;
    EXPECT_EQ(b[0]->kind, Kind::Backward);
    ASSERT_EQ(b[0]->input_shapes.size(), 1u);  // the gradient it received
  }
  EXPECT_EQ(named(events, "ReluBackward0")[0]->input_shapes[0], (std::vector<int64_t>{5, 3}));
}

TEST(Profiler, SelfTimesAddUpToTheTopLevelRanges) {
  const Tensor a = randn({64, 64});
  profiler::Profile profile;
  for (int i = 0; i < 3; ++i) {
    profiler::RecordFunction outer("outer");
    {
      profiler::RecordFunction inner("inner");
      matmul(a, a).relu().sum();
    }
    a.add(a);
  }
  const auto& events = profile.events();
  const std::vector<int64_t> self = profiler::self_times(events);
  const std::vector<int64_t> parent = profiler::parents(events);
  int64_t top = 0, all_self = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_GE(self[i], 0) << events[i].name;
    all_self += self[i];
    if (parent[i] < 0) top += events[i].end_ns - events[i].start_ns;
  }
  EXPECT_EQ(all_self, top);  // exact: each child's time is taken from its parent's once
  const auto rows = profiler::key_averages(events);
  std::map<std::string, profiler::KeyAverage> by_name;
  int64_t rows_self = 0;
  for (const auto& r : rows) {
    by_name[r.name] = r;
    rows_self += r.self_ns;
  }
  EXPECT_EQ(rows_self, top);
  EXPECT_EQ(by_name["outer"].calls, 3);
  EXPECT_EQ(by_name["inner"].calls, 3);
  EXPECT_EQ(by_name["matmul"].calls, 3);
  EXPECT_EQ(by_name["add"].calls, 3);
  EXPECT_GE(by_name["outer"].total_ns, by_name["inner"].total_ns + by_name["add"].total_ns);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_GE(rows[i - 1].self_ns, rows[i].self_ns);
  // The table names the rows and the total.
  const std::string table = profiler::format_table(rows, 3);
  EXPECT_THAT(table, HasSubstr("Self %"));
  EXPECT_THAT(table, HasSubstr(rows[0].name));
  EXPECT_THAT(table, HasSubstr("more rows with less self time"));
  EXPECT_THAT(table, HasSubstr("Self time total:"));
}

TEST(Profiler, RecordsOtherThreadsApart) {
  const Tensor a = randn({16, 16});
  profiler::Profile profile;
  {
    profiler::RecordFunction main_scope("main");
    std::thread worker([&] {
      profiler::RecordFunction scope("worker");
      a.mul(a);
    });
    worker.join();
  }
  const auto& events = profile.events();
  const auto worker = named(events, "worker");
  ASSERT_EQ(worker.size(), 1u);
  EXPECT_NE(worker[0]->thread, 0);
  EXPECT_EQ(worker[0]->depth, 0);  // not inside the main thread's scope: nesting is per thread
  const auto mul = named(events, "mul");
  ASSERT_EQ(mul.size(), 1u);
  EXPECT_EQ(mul[0]->thread, worker[0]->thread);
  EXPECT_EQ(profiler::parents(events)[index_of(events, mul[0])], index_of(events, worker[0]));
}

TEST(Profiler, NothingIsRecordedOutsideAProfile) {
  const Tensor a = randn({4});
  {
    profiling::Scope scope("before");
    EXPECT_FALSE(scope);
  }
  a.add(a);
  std::optional<profiling::Scope> across(std::in_place, "opened before, closed inside");
  profiler::Profile profile;
  across.reset();
  a.add(a);
  std::optional<profiler::RecordFunction> open(std::in_place, "still open at stop");
  profile.stop();
  open.reset();
  a.add(a);
  const auto& events = profile.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].name, "add");
  EXPECT_EQ(events[1].name, "still open at stop");
  EXPECT_GE(events[1].end_ns, events[1].start_ns);  // ended at the stop
  EXPECT_FALSE(profiling::active());
}

TEST(Profiler, ProfilesDoNotNestButFollowEachOther) {
  {
    profiler::Profile first;
    EXPECT_THAT(error_of([] { profiler::Profile second; }), HasSubstr("a profile is already being taken"));
    randn({3}).neg();
  }
  profiler::Profile again;
  randn({3}).exp();
  const auto& events = again.events();
  EXPECT_TRUE(named(events, "neg").empty());
  EXPECT_EQ(named(events, "exp").size(), 1u);
}

TEST(Profiler, ChromeTraceHasOneCompleteEventPerRange) {
  const Tensor x = randn({2, 3});
  profiler::Profile profile;
  {
    RECORD_USER_SCOPE("scope \"quoted\"");
    RECORD_FUNCTION("libtorch_style", std::vector<int>{});
    x.mul(x);
  }
  std::ostringstream text;
  profiler::write_chrome_trace(profile.events(), text);
  const nlohmann::json trace = nlohmann::json::parse(text.str());
  ASSERT_TRUE(trace.contains("traceEvents"));
  int complete = 0, names = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") {
      ++names;
      EXPECT_EQ(e["name"], "thread_name");
      continue;
    }
    ++complete;
    EXPECT_EQ(e["ph"], "X");
    EXPECT_GE(e["dur"].get<double>(), 0);
    EXPECT_GE(e["ts"].get<double>(), 0);
    EXPECT_TRUE(e["args"].contains("bytes"));
    if (e["name"] == "mul") {
      EXPECT_EQ(e["cat"], "op");
      EXPECT_EQ(e["args"]["input_shapes"], nlohmann::json::parse("[[2,3],[2,3]]"));
      EXPECT_EQ(e["args"]["dtype"], "float32");
    }
  }
  EXPECT_EQ(complete, static_cast<int>(profile.events().size()));
  EXPECT_EQ(names, 1);
  EXPECT_EQ(named(profile.events(), "scope \"quoted\"").size(), 1u);
  EXPECT_EQ(named(profile.events(), "libtorch_style").size(), 1u);
}

TEST(Profiler, RecordProfileWritesItsTraceWhenItEnds) {
  const fs::path path = fs::temp_directory_path() / ("cohort_record_profile_" + std::to_string(::getpid()) + ".json");
  {
    autograd::profiler::RecordProfile guard(path.string());
    randn({4}).sigmoid();
  }
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  bool found = false;
  for (const auto& e : trace["traceEvents"]) found |= e["name"] == "sigmoid";
  EXPECT_TRUE(found);
  fs::remove(path);
  // An unwritable path is reported, not thrown from the destructor.
  ::testing::internal::CaptureStderr();
  { autograd::profiler::RecordProfile guard("/nonexistent-dir/trace.json"); }
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("RecordProfile could not write its trace"));
}

}  // namespace
}  // namespace cohort::testing
