// DataParallel's imbalance warning: once per wrapper on devices whose cores differ by more than
// 25% (Note [Device properties]), never on balanced devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <cohort/cohort.h>
#include <cohort/parallel/data_parallel.h>

using namespace cohort;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

struct Small : nn::Cloneable<Small> {
  Small() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(4, 2)); }
  Tensor forward(const Tensor& x) { return fc(x); }
  nn::Linear fc{nullptr};
};

class DataParallelImbalance : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = device_count(); manual_seed(0); }
  void TearDown() override { set_device_count(saved_); }

  // stderr of `calls` forwards of one wrapper over cpu:0 and cpu:1, with a batch of 4.
  static std::string stderr_of_calls(int calls) {
    auto dp = std::make_shared<nn::DataParallel<Small>>(std::make_shared<Small>(),
                                                        std::vector<Device>{"cpu:0", "cpu:1"});
    Tensor x = randn({4, 4});
    ::testing::internal::CaptureStderr();
    for (int i = 0; i < calls; ++i) (*dp)(x).sum().backward();
    return ::testing::internal::GetCapturedStderr();
  }

  static size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

 private:
  int saved_ = 1;
};

const std::string kWarning = "cohort: warning: DataParallel: devices differ by more than 25% in cores: ";

TEST_F(DataParallelImbalance, WarnsOncePerWrapperNamingDevicesAndCores) {
  const int cores = core_count();
  if (cores >= 2) {
    // cores + 1 devices: cpu:0 shares core 0 with cpu:<cores>, cpu:1 has its core alone.
    set_device_count(cores + 1);
    ASSERT_NE(describe_imbalance(std::vector<Device>{"cpu:0", "cpu:1"}), "");
    std::string err = stderr_of_calls(3);
    EXPECT_EQ(count(err, kWarning), 1u) << err;
    EXPECT_THAT(err, HasSubstr(kWarning + "cpu:0 has 0.5 cores, cpu:1 has 1 core; "));
    // A second wrapper warns again, once.
    EXPECT_EQ(count(stderr_of_calls(2), kWarning), 1u);
  } else {
    // One core: every device gets the same share of it, so there is nothing to warn about.
    set_device_count(3);
    EXPECT_EQ(count(stderr_of_calls(2), kWarning), 0u);
  }
}

TEST_F(DataParallelImbalance, SilentOnBalancedDevices) {
  set_device_count(std::max(2, core_count()));  // one core each (or equal shares of one core)
  std::string err = stderr_of_calls(3);
  EXPECT_THAT(err, Not(HasSubstr("devices differ")));
  set_device_count(4 * core_count());  // four devices on every core: equal shares
  EXPECT_THAT(stderr_of_calls(2), Not(HasSubstr("devices differ")));
}

TEST_F(DataParallelImbalance, SilentWhenOnlyOneReplicaRuns) {
  if (core_count() >= 2) set_device_count(core_count() + 1);
  auto dp = std::make_shared<nn::DataParallel<Small>>(std::make_shared<Small>(), std::vector<Device>{"cpu:0", "cpu:1"});
  Tensor x = randn({1, 4});  // a batch of 1 runs on cpu:0 alone
  ::testing::internal::CaptureStderr();
  (*dp)(x);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), Not(HasSubstr("devices differ")));
}

}  // namespace
