// The intra-op thread count and its limit (src/core/threads.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cohort/core/threads.h"
#include "support/error_of.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

// libgomp crashes when it cannot start the threads it was asked for, so the count is refused first.
TEST(Threads, SetNumThreadsRefusesCountsPastTheLimit) {
  const int before = get_num_threads();
  EXPECT_THAT(testing::error_of([] { set_num_threads(100000); }),
              HasSubstr("set_num_threads: the thread count must be at most 1024, got 100000"));
  EXPECT_THAT(testing::error_of([] { set_num_threads(0); }), HasSubstr("must be at least 1, got 0"));
  EXPECT_EQ(get_num_threads(), before);
  set_num_threads(kMaxThreads);  // the limit itself is allowed (no thread starts before an op runs)
  EXPECT_EQ(get_num_threads(), kMaxThreads);
  set_num_threads(before);
}

}  // namespace
}  // namespace cohort
