// The caching allocator (Note [Caching allocator]): blocks of a megabyte and more are chunks that split
// and merge, and the pool stays near the live peak (Note [Segments]); blocks below come back for
// requests they fit, small ones for requests of their power-of-two size class; the counters stay
// exact, and the limit and empty_cache hold; blocks of megabytes ask for huge pages (Note [Huge pages
// for large blocks]).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cohort/core/device.h"
#include "cohort/core/storage.h"
#include "cohort/core/tensor.h"
#include "cohort/ops/creation.h"
#include "support/error_of.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

// Caching on with a known limit for one test, whatever the build's default (off under ASan).
class CacheLimit {
 public:
  explicit CacheLimit(int64_t bytes) : saved_(allocator_cache_limit()) {
    set_allocator_cache_limit(bytes);
    empty_cache();
  }
  ~CacheLimit() {
    empty_cache();
    set_allocator_cache_limit(saved_);
  }

 private:
  int64_t saved_;
};

constexpr int64_t kLarge = 1 << 20;  // floats: 4 MiB, well above the 64 KiB caching threshold

TEST(Allocator, AFreedLargeBlockIsReusedForTheSameSize) {
  CacheLimit limit(int64_t{64} << 20);
  const Device d("cpu:0");
  void* first = nullptr;
  {
    Tensor a = empty({kLarge});
    first = a.data_ptr();
  }
  EXPECT_GE(memory_stats(d).cached_bytes, kLarge * 4);
  Tensor b = empty({kLarge});
  EXPECT_EQ(b.data_ptr(), first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data_ptr()) % 64, 0u);
}

TEST(Allocator, ASlightlySmallerRequestTakesTheWholeBlockAMuchSmallerOneSplitsIt) {
  CacheLimit limit(int64_t{64} << 20);
  const Device d("cpu:0");
  char* block = nullptr;
  {
    Tensor a = empty({kLarge});
    block = static_cast<char*>(a.data_ptr());
  }
  {
    Tensor a = empty({kLarge - kLarge / 16});  // the rest (256 KiB) is too small to be a block of its own
    EXPECT_EQ(a.data_ptr(), block);
    EXPECT_EQ(memory_stats(d).cached_bytes, 0);
  }
  {
    Tensor front = empty({kLarge / 2});  // 2 MiB out of the free 4: the front half, then the back half
    Tensor back = empty({kLarge / 2});
    EXPECT_EQ(front.data_ptr(), block);
    EXPECT_EQ(back.data_ptr(), block + kLarge * 2);
    EXPECT_EQ(memory_stats(d).cached_bytes, 0);
  }
  // Freed, the halves merged again: the whole block serves a request of its size.
  EXPECT_EQ(memory_stats(d).cached_bytes, kLarge * 4);
  Tensor whole = empty({kLarge});
  EXPECT_EQ(whole.data_ptr(), block);
}

TEST(Allocator, ThePoolFollowsTheLivePeakWhenTheSizesChange) {
  CacheLimit limit(int64_t{1} << 30);
  const Device d("cpu:0");
  {
    std::vector<Tensor> quarters;
    for (int i = 0; i < 8; ++i) quarters.push_back(empty({kLarge}));  // 8 x 4 MiB
  }
  EXPECT_EQ(memory_stats(d).cached_bytes, kLarge * 4 * 8);
  // Two 16 MiB blocks fit in none of the 4 MiB ones: the free ones give way instead of the pool
  // growing to 64 MiB for a 32 MiB peak.
  Tensor a = empty({kLarge * 4}), b = empty({kLarge * 4});
  EXPECT_LE(memory_stats(d).cached_bytes, kLarge * 4 * 8 / 16);
  a.fill_(1.0);
  b.fill_(2.0);
  EXPECT_EQ(a.sum().item<double>() + b.sum().item<double>(), 3.0 * kLarge * 4);
}

TEST(Allocator, AFreeChunkBetweenTwoInUseIsReturnedToTheSystem) {
  CacheLimit limit(int64_t{64} << 20);
  const Device d("cpu:0");
  { Tensor whole = empty({kLarge * 3 / 2}); }  // 6 MiB, then three 2 MiB pieces of it
  Tensor first = empty({kLarge / 2}), middle = empty({kLarge / 2}), last = empty({kLarge / 2});
  EXPECT_EQ(static_cast<char*>(middle.data_ptr()), static_cast<char*>(first.data_ptr()) + kLarge * 2);
  middle = Tensor();
  EXPECT_EQ(memory_stats(d).cached_bytes, kLarge * 2);
  empty_cache(d);
  EXPECT_EQ(memory_stats(d).cached_bytes, 0);
  first.fill_(1.0);  // its neighbours in use are untouched by the hole between them
  last.fill_(2.0);
  EXPECT_EQ(first.sum().item<double>() + last.sum().item<double>(), 3.0 * kLarge / 2);
}

TEST(Allocator, CountersCountWhatTensorsAskedForAndCachedBytesWhatIsKept) {
  CacheLimit limit(int64_t{64} << 20);
  const Device d("cpu:0");
  const MemoryStats before = memory_stats(d);
  {
    Tensor a = empty({kLarge});
    EXPECT_EQ(memory_stats(d).allocated_bytes, before.allocated_bytes + kLarge * 4);
    EXPECT_EQ(memory_stats(d).allocations, before.allocations + 1);
  }
  const MemoryStats after = memory_stats(d);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.allocations, before.allocations);
  EXPECT_EQ(after.cached_bytes, before.cached_bytes + kLarge * 4);  // 4 MiB is a multiple of the 4 KiB rounding
  empty_cache(d);
  EXPECT_EQ(memory_stats(d).cached_bytes, 0);
}

TEST(Allocator, SmallBlocksComeBackForRequestsOfTheirSizeClass) {
  CacheLimit limit(int64_t{64} << 20);
  const Device d("cpu:0");
  void* block = nullptr;
  {
    Tensor a = empty({1000});  // 4000 bytes: the 4 KiB class
    block = a.data_ptr();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 64, 0u);
  }
  EXPECT_EQ(memory_stats(d).cached_bytes, 4096);
  {
    Tensor small = empty({100});  // 400 bytes: the 512-byte class, a fresh block
    EXPECT_NE(small.data_ptr(), block);
    Tensor same_class = empty({600});  // 2400 bytes: also 4 KiB
    EXPECT_EQ(same_class.data_ptr(), block);
    EXPECT_EQ(memory_stats(d).cached_bytes, 0);
  }
  EXPECT_EQ(memory_stats(d).cached_bytes, 4096 + 512);
  empty_cache(d);
  EXPECT_EQ(memory_stats(d).cached_bytes, 0);
  CacheLimit off(0);
  { Tensor a = empty({1000}); }
  EXPECT_EQ(memory_stats(d).cached_bytes, 0);
}

TEST(Allocator, ASmallBlockMadeWithCachingOffIsNotKept) {
  // With caching off a small block is cut to the request (ASan then sees overruns), so it has no
  // size class: kept, it would be handed out for requests it cannot hold.
  CacheLimit off(0);
  Tensor a = empty({100});  // 400 bytes: a 448-byte block
  CacheLimit on(int64_t{64} << 20);
  a = Tensor();
  EXPECT_EQ(memory_stats(Device("cpu:0")).cached_bytes, 0);
}

TEST(Allocator, TheLimitCapsWhatIsKeptAndZeroTurnsCachingOff) {
  const Device d("cpu:0");
  {
    CacheLimit limit(kLarge * 4 * 3 / 2);  // room for one 4 MiB block, not two
    {
      Tensor a = empty({kLarge}), b = empty({kLarge});
    }
    EXPECT_EQ(memory_stats(d).cached_bytes, kLarge * 4);
  }
  CacheLimit off(0);
  { Tensor a = empty({kLarge}); }
  EXPECT_EQ(memory_stats(d).cached_bytes, 0);
  EXPECT_THAT(testing::error_of([] { set_allocator_cache_limit(-1); }),
              HasSubstr("set_allocator_cache_limit: expected a limit of 0 bytes or more, got -1"));
}

TEST(Allocator, EachDeviceHasItsOwnCache) {
  CacheLimit limit(int64_t{64} << 20);
  set_device_count(std::max(2, device_count()));
  const Device d0("cpu:0"), d1("cpu:1");
  { Tensor a = empty({kLarge}, TensorOptions().device(d1)); }
  EXPECT_EQ(memory_stats(d0).cached_bytes, 0);
  EXPECT_EQ(memory_stats(d1).cached_bytes, kLarge * 4);
  Tensor b = empty({kLarge}, TensorOptions().device(d1));
  EXPECT_EQ(memory_stats(d1).cached_bytes, 0);
}

TEST(Allocator, ReusedBlocksHoldWhatIsWrittenToThem) {
  CacheLimit limit(int64_t{64} << 20);
  { Tensor a = full({kLarge}, 7.0); }
  Tensor b = zeros({kLarge});  // the reused block must be zeroed, not carry the 7s
  EXPECT_EQ(b.sum().item<double>(), 0.0);
  b.fill_(1.0);
  EXPECT_EQ(b.sum().item<double>(), static_cast<double>(kLarge));
}

// The smaps field `name` of the mapping that holds `address`, or "" when there is none.
std::string smaps_field(uintptr_t address, const std::string& name) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= address && address < end;
      continue;
    }
    if (inside && line.rfind(name + ":", 0) == 0) return line.substr(name.size() + 1);
  }
  return "";
}

TEST(Allocator, BlocksOfMegabytesStartOnAHugePageAndMayUseHugePages) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  {
    CacheLimit off(0);  // caching off: a block from the system, its 64-byte header first
    Tensor big = empty({4 << 20});
    EXPECT_EQ((reinterpret_cast<uintptr_t>(big.data_ptr()) - 64) % kHugePage, 0u);
    Tensor small = empty({1 << 18});  // 1 MiB: below the threshold, 64-byte aligned as before
    EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data_ptr()) % 64, 0u);
  }
  CacheLimit on(int64_t{64} << 20);
  Tensor big = empty({4 << 20});  // 16 MiB, freshly mapped
  const auto data = reinterpret_cast<uintptr_t>(big.data_ptr());
  EXPECT_EQ(data % kHugePage, 0u) << "a fresh mapping starts on a 2 MiB boundary";

  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  if (modes.empty() || modes.find("[never]") != std::string::npos)
    GTEST_SKIP() << "transparent huge pages are off on this kernel (\"" << modes << "\"): nothing to advise";
  EXPECT_THAT(smaps_field(data + kHugePage, "THPeligible"), HasSubstr("1"))
      << "the block's full 2 MiB pages are advised for huge pages (THP modes: " << modes << ")";
}

}  // namespace
}  // namespace cohort
