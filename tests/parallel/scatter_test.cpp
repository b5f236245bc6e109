// parallel::scatter: what each replica receives, PyTorch's two classic DataParallel pitfalls (a shared
// batch-1 input, per-sample lists of non-tensors), gradients back to the inputs, the check against
// the plan, and the compile-time refusal of bare non-tensors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include <cohort/cohort.h>
#include <cohort/parallel/gather.h>
#include <cohort/parallel/scatter.h>

#include "support/devices.h"
#include "support/error_of.h"
#include "support/paths.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// Eight virtual CPU devices, whatever the machine has.
using ParallelScatter = cohort::testing::WithDevices<8>;

struct Config {
  double scale = 2;
};

// Compile-time contract: what a replica receives for each kind of argument.
static_assert(std::is_same_v<parallel::scattered_t<Tensor>, Tensor>);
static_assert(std::is_same_v<parallel::scattered_t<parallel::Split<std::string>>, std::vector<std::string>>);
static_assert(std::is_same_v<parallel::scattered_t<parallel::Share<Config>>, const Config&>);
static_assert(std::is_same_v<parallel::scattered_t<parallel::Broadcast<std::vector<Tensor>>>, std::vector<Tensor>>);
static_assert(std::is_same_v<parallel::scattered_t<std::tuple<Tensor, parallel::Split<int>>>,
                             std::tuple<Tensor, std::vector<int>>>);

}  // namespace

TEST_F(ParallelScatter, SplitsTensorsIntoChunksOnEachDevice) {
  Tensor x = arange(20, kFloat32).view({10, 2});
  auto p = parallel::plan(first(3), {}, x);
  auto inputs = parallel::scatter(p, x);
  ASSERT_EQ(inputs.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    const Tensor& chunk = std::get<0>(inputs[r]);
    EXPECT_EQ(chunk.device(), p.devices[r]);
    EXPECT_EQ(chunk.sizes().vec(), p.arguments[0].replica_shapes[r]);
    EXPECT_TRUE(chunk.equal(x.narrow(0, p.offsets[r], p.chunk_sizes[r]).to(chunk.device())));
  }
}

TEST_F(ParallelScatter, FewerSamplesThanDevicesGivesOneSampleEach) {
  Tensor x = randn({3, 4});
  auto inputs = parallel::scatter(parallel::plan(parallel::all_devices(), {}, x), x);
  ASSERT_EQ(inputs.size(), 3u);
  for (auto& [chunk] : inputs) EXPECT_EQ(chunk.sizes().vec(), (Shape{1, 4}));
}

TEST_F(ParallelScatter, MarkersGiveEachReplicaWhatTheySay) {
  Tensor x = randn({5, 2});
  Tensor w = randn({2, 3});
  std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  Config cfg;
  auto p = parallel::plan(first(2), {}, x, parallel::Broadcast(w), parallel::Split(names), parallel::Share(cfg));
  auto inputs = parallel::scatter(p, x, parallel::Broadcast(w), parallel::Split(names), parallel::Share(cfg));
  static_assert(std::is_same_v<decltype(inputs)::value_type,
                               std::tuple<Tensor, Tensor, std::vector<std::string>, const Config&>>);
  for (size_t r = 0; r < 2; ++r) {
    const auto& [chunk, whole, some_names, shared] = inputs[r];
    EXPECT_EQ(whole.device(), p.devices[r]);
    EXPECT_TRUE(whole.equal(w.to(whole.device())));
    EXPECT_EQ(&shared, &cfg);  // a const reference: one object, no copy per replica
  }
  EXPECT_THAT(std::get<2>(inputs[0]), ElementsAre("a", "b", "c"));
  EXPECT_THAT(std::get<2>(inputs[1]), ElementsAre("d", "e"));
}

TEST_F(ParallelScatter, SharedBatchOneInputFailsThenWorksWithBroadcastOrExpand) {
  // model(x1, x2) returns (x1, x2); x2 is a batch-1 input shared by all samples. PyTorch's
  // DataParallel splits x1 and not x2 and returns half the batch.
  Tensor x1 = randn({4, 3, 2, 2});
  Tensor x2 = randn({1, 5, 6});
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, x1, x2); }),
              HasSubstr("argument 1 of shape [1, 5, 6] has size 1 along dim 0, but the batch is 4"));
  // With Broadcast, both replicas get all of x2 and the batch of y1 is not shrunk.
  auto p = parallel::plan(first(2), {}, x1, parallel::Broadcast(x2));
  auto inputs = parallel::scatter(p, x1, parallel::Broadcast(x2));
  std::vector<Tensor> y1;
  for (auto& [a, b] : inputs) {
    EXPECT_EQ(b.sizes().vec(), (Shape{1, 5, 6}));
    y1.push_back(a);
  }
  EXPECT_TRUE(parallel::gather(y1, "cpu:0", p).equal(x1));
  // The usual PyTorch workaround also works: expand x2 (no copy) to the batch, so it splits like x1.
  Tensor x2e = x2.expand({4, -1, -1});
  auto pe = parallel::plan(first(2), {}, x1, x2e);
  auto expanded = parallel::scatter(pe, x1, x2e);
  auto [g1, g2] = parallel::gather(expanded, "cpu:0", pe);  // the replicas return their inputs
  EXPECT_TRUE(g1.equal(x1));
  EXPECT_TRUE(g2.equal(x2e.contiguous()));
  // Expanding to the device count instead (a PyTorch habit on 2 GPUs) is an error, not a silent split.
  EXPECT_THAT(error_of([&] { parallel::plan(first(2), {}, x1, x2.expand({2, -1, -1})); }),
              HasSubstr("hint: wrap it in parallel::Broadcast(x)"));
}

TEST_F(ParallelScatter, ListOfLengthsIsSplitWithTheBatch) {
  // A per-sample list of non-tensors: PyTorch's scatter hands the whole list to every replica (its users
  // pass an index tensor instead). Split cuts the list at the tensor's boundaries, ragged tensor items
  // included.
  Tensor x = randn({5, 4});
  std::vector<int64_t> lengths = {4, 2, 3, 1, 4};
  std::vector<Tensor> ragged;
  for (int64_t n : lengths) ragged.push_back(randn({n}, requires_grad()));
  auto p = parallel::plan(first(2), {}, x, parallel::Split(lengths), parallel::Split(ragged));
  auto inputs = parallel::scatter(p, x, parallel::Split(lengths), parallel::Split(ragged));
  EXPECT_THAT(std::get<1>(inputs[0]), ElementsAre(4, 2, 3));
  EXPECT_THAT(std::get<1>(inputs[1]), ElementsAre(1, 4));
  Tensor total = zeros({}, TensorOptions().device("cpu:0"));
  for (size_t r = 0; r < 2; ++r) {
    const auto& items = std::get<2>(inputs[r]);
    ASSERT_EQ(items.size(), static_cast<size_t>(p.chunk_sizes[r]));
    for (size_t i = 0; i < items.size(); ++i) {
      EXPECT_EQ(items[i].device(), p.devices[r]);
      EXPECT_EQ(items[i].size(0), std::get<1>(inputs[r])[i]);
      total = total + (items[i] * items[i]).sum().to("cpu:0");
    }
  }
  total.backward();
  for (const Tensor& t : ragged) EXPECT_TRUE(t.grad().allclose(t * 2));
}

TEST_F(ParallelScatter, NestedContainersRecurse) {
  Tensor a = randn({6, 2});
  std::vector<Tensor> pair = {randn({6}), randn({6, 3})};
  auto tup = std::make_tuple(randn({6, 1}), parallel::Split(std::vector<std::string>{"p", "q", "r", "s", "t", "u"}));
  std::map<std::string, Tensor> batch = {{"mask", ones({6})}, {"x", randn({6, 4})}};
  std::map<std::string, Tensor> consts = {{"bias", randn({4})}};
  auto p = parallel::plan(first(4), {}, a, pair, tup, batch, parallel::Broadcast(consts));
  auto inputs = parallel::scatter(p, a, pair, tup, batch, parallel::Broadcast(consts));
  ASSERT_EQ(inputs.size(), 4u);  // 6 on 4: 2, 2, 1, 1
  const auto& [a3, pair3, tup3, batch3, consts3] = inputs[3];
  EXPECT_EQ(a3.sizes().vec(), (Shape{1, 2}));
  EXPECT_EQ(pair3[1].sizes().vec(), (Shape{1, 3}));
  EXPECT_EQ(std::get<0>(tup3).sizes().vec(), (Shape{1, 1}));
  EXPECT_THAT(std::get<1>(tup3), ElementsAre("u"));
  EXPECT_EQ(batch3.at("x").sizes().vec(), (Shape{1, 4}));
  EXPECT_EQ(batch3.at("x").device(), Device("cpu:3"));
  EXPECT_EQ(consts3.at("bias").device(), Device("cpu:3"));
  EXPECT_EQ(consts3.at("bias").sizes().vec(), (Shape{4}));
  EXPECT_EQ(p.arguments[6].path, "argument 3['x']");  // leaves in order: a, pair[0], pair[1], tup[0], tup[1], ...
  EXPECT_EQ(p.arguments[7].path, "argument 4['bias']");
  EXPECT_EQ(p.arguments[7].kind, parallel::ArgumentPlan::Kind::kBroadcast);
}

TEST_F(ParallelScatter, GradientsMatchTheUnsplitComputation) {
  // 9 samples on 4 devices (3, 2, 2, 2); w is broadcast, so its gradient sums over the replicas.
  Tensor x = randn({9, 3}, kFloat64).requires_grad_();
  Tensor w = randn({3, 4}, kFloat64).requires_grad_();
  auto f = [](const Tensor& xs, const Tensor& ws) { return xs.matmul(ws).tanh(); };
  (f(x, w) * f(x, w)).sum().backward();
  Tensor want_x = x.grad().clone(), want_w = w.grad().clone();
  x.mutable_grad() = Tensor();
  w.mutable_grad() = Tensor();

  auto p = parallel::plan(first(4), {}, x, parallel::Broadcast(w));
  std::vector<Tensor> outputs;
  for (auto& [xs, ws] : parallel::scatter(p, x, parallel::Broadcast(w))) outputs.push_back(f(xs, ws));
  Tensor y = parallel::gather(outputs, "cpu:0", p);
  EXPECT_TRUE(y.allclose(f(x, w)));
  (y * y).sum().backward();
  EXPECT_TRUE(x.grad().allclose(want_x, 1e-12, 1e-12));
  EXPECT_TRUE(w.grad().allclose(want_w, 1e-12, 1e-12));
}

TEST_F(ParallelScatter, UndefinedTensorsStayUndefined) {
  Tensor x = randn({4, 2});
  auto inputs = parallel::scatter(parallel::plan(first(2), {}, x, Tensor()), x, Tensor());
  for (auto& [chunk, none] : inputs) EXPECT_FALSE(none.defined());
}

TEST_F(ParallelScatter, NoArgumentsGiveOneEmptyCall) {
  auto inputs = parallel::scatter(parallel::plan(first(4), {}));
  EXPECT_EQ(inputs.size(), 1u);  // one call on cpu:0 with no arguments, as PyTorch does
}

TEST_F(ParallelScatter, ArgumentsMustBeThoseThePlanWasMadeFor) {
  Tensor x = randn({10, 2});
  auto p = parallel::plan(first(3), {}, x);
  EXPECT_THAT(error_of([&] { parallel::scatter(p, randn({12, 2})); }),
              HasSubstr("parallel::scatter: argument 0 has shape [12, 2] but the plan was made for shape [10, 2]; "
                        "hint: make the plan from the same arguments you scatter"));
  EXPECT_THAT(error_of([&] { parallel::scatter(p, x, x); }),
              HasSubstr("parallel::scatter: the arguments hold 2 tensors, Split lists and shared values, but the plan "
                        "was made for 1"));
  EXPECT_THAT(error_of([&] { parallel::scatter(p, parallel::Broadcast(x)); }),
              HasSubstr("parallel::scatter: found a Broadcast tensor at argument 0 where the plan has a tensor to split "
                        "at argument 0"));
  EXPECT_THAT(error_of([&] { parallel::scatter(parallel::Plan{}, x); }),
              HasSubstr("parallel::scatter: the plan has no replicas"));
}

TEST_F(ParallelScatter, DeviceErrorsComeFromThePlan) {
  Tensor x = randn({4, 2});
  EXPECT_THAT(error_of([&] { parallel::scatter(parallel::plan({}, {}, x), x); }), HasSubstr("the device list is empty"));
  EXPECT_THAT(error_of([&] { parallel::scatter(parallel::plan({"cpu:8"}, {}, x), x); }),
              HasSubstr("device cpu:8 does not exist"));
  EXPECT_THAT(error_of([&] { parallel::scatter(parallel::plan({"cpu:1", "cpu:1"}, {}, x), x); }),
              HasSubstr("device cpu:1 is listed twice"));
}

// The static_asserts' messages are the API for misused types: compile a good and a bad program, read them.
TEST_F(ParallelScatter, MisusedTypesDoNotCompileAndTheMessagesNameTheFix) {
  namespace fs = std::filesystem;
  const fs::path include = fs::path(cohort::testing::fixtures_dir()) / ".." / ".." / "include";
  const char* cxx = std::getenv("CXX");
  auto compile = [&](const std::string& body) {
    fs::path src = fs::temp_directory_path() / ("cohort_scatter_refusal_" + std::to_string(::getpid()) + ".cpp");
    std::ofstream(src) << "#include <cohort/parallel/gather.h>\nusing namespace cohort;\nvoid f() {\n" << body << "\n}\n";
    std::string cmd = std::string(cxx ? cxx : "c++") + " -std=c++20 -fsyntax-only -I" + include.string() + " " +
                      src.string() + " 2>&1";
    std::string out;
    FILE* pipe = popen(cmd.c_str(), "r");
    char buf[4096];
    while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
    int status = pipe ? pclose(pipe) : -1;
    fs::remove(src);
    return std::make_pair(status, out);
  };
  auto [ok_status, ok_out] = compile("Tensor x; parallel::plan({\"cpu:0\"}, {}, x);");
  ASSERT_EQ(ok_status, 0) << "the compiler does not build a valid use, so the checks below would prove nothing:\n"
                          << ok_out;
  // Every misuse in one translation unit: the compiler reports each static_assert once.
  auto [bad_status, bad_out] = compile(R"(
    Tensor x;
    std::vector<int64_t> lengths;
    parallel::plan({"cpu:0"}, {}, x, lengths);             // a bare per-sample list
    auto temporary = parallel::Share(std::string("x"));    // Share of a temporary would dangle
    int k = 3;
    auto not_tensors = parallel::Broadcast(k);             // Broadcast is for tensors
    auto tensor_shared = parallel::Share(x);               // Share is for non-tensors
    parallel::scattered_t<std::vector<parallel::Share<int>>>* in_list = nullptr;
    std::vector<int> outputs;
    parallel::gather(outputs, "cpu:0");                   // gather joins tensors only
  )");
  EXPECT_NE(bad_status, 0);
  EXPECT_THAT(bad_out, HasSubstr("wrap a value every replica reads in parallel::Share(x), or a per-sample "
                                 "std::vector in parallel::Split(v)"));
  EXPECT_THAT(bad_out, HasSubstr("parallel::Share refers to its argument and the replicas read it after this "
                                 "expression; keep the value in a named variable and pass that"));
  EXPECT_THAT(bad_out, HasSubstr("to give every replica a non-tensor value, use parallel::Share(x)"));
  EXPECT_THAT(bad_out, HasSubstr("use parallel::Broadcast(x) for a tensor every replica sees whole"));
  EXPECT_THAT(bad_out, HasSubstr("share the whole container instead, parallel::Share(container)"));
  EXPECT_THAT(bad_out, HasSubstr("parallel::gather: a replica's output must be a Tensor"));
}
