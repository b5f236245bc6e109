// The large-block arena on its own (Note [Segments]): chunks split and merge, the pool stays near the
// live peak when the sizes change, and a loop that keeps taking back what the room made it give up
// gets more room and stops mapping.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "core/segment_arena.h"

namespace cohort::detail {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// One round of a loop whose fragments do not fit the first room: a 6 MiB block is cut into two 2 MiB
// ones, the first is freed, and 6 MiB are asked for while the second is held.
void fragmenting_round(SegmentArena& arena) {
  arena.deallocate(arena.allocate(6 * kMiB), INT64_MAX);
  void* a = arena.allocate(2 * kMiB);
  void* b = arena.allocate(2 * kMiB);
  arena.deallocate(a, INT64_MAX);
  void* c = arena.allocate(6 * kMiB);
  std::memset(c, 1, 6 * kMiB);  // the memory is there and writable
  arena.deallocate(b, INT64_MAX);
  arena.deallocate(c, INT64_MAX);
}

TEST(SegmentArena, AChunkSplitsForSmallerRequestsAndMergesBack) {
  SegmentArena arena;
  auto* whole = static_cast<char*>(arena.allocate(8 * kMiB));
  arena.deallocate(whole, INT64_MAX);
  void* a = arena.allocate(3 * kMiB);
  void* b = arena.allocate(3 * kMiB);
  void* c = arena.allocate(2 * kMiB);
  EXPECT_EQ(a, whole);
  EXPECT_EQ(b, whole + 3 * kMiB);
  EXPECT_EQ(c, whole + 6 * kMiB);
  EXPECT_EQ(arena.free_bytes(), 0);
  arena.deallocate(b, INT64_MAX);  // the middle, then either side: one chunk again
  arena.deallocate(a, INT64_MAX);
  arena.deallocate(c, INT64_MAX);
  EXPECT_EQ(arena.allocate(8 * kMiB), whole);
  EXPECT_EQ(arena.mappings(), 1);
}

TEST(SegmentArena, ThePoolStaysWithinASixteenthOfThePeakWhenTheSizesChange) {
  SegmentArena arena;
  std::vector<void*> blocks;
  for (int i = 0; i < 16; ++i) blocks.push_back(arena.allocate(3 * kMiB));  // 48 MiB in 3 MiB blocks
  for (void* p : blocks) arena.deallocate(p, INT64_MAX);
  blocks.clear();
  for (int i = 0; i < 3; ++i) blocks.push_back(arena.allocate(16 * kMiB));  // 48 MiB in 16 MiB blocks
  EXPECT_LE(arena.mapped_bytes(), static_cast<int64_t>(48 * kMiB + 48 * kMiB / 16));
  for (void* p : blocks) arena.deallocate(p, INT64_MAX);
  arena.release();
  EXPECT_EQ(arena.mapped_bytes(), 0);
  EXPECT_EQ(arena.free_bytes(), 0);
}

TEST(SegmentArena, ALoopThatKeepsMissingWhatItGaveBackGetsMoreRoomAndSettles) {
  SegmentArena arena;
  std::vector<int64_t> maps_per_round;
  for (int round = 0; round < 12; ++round) {
    const int64_t before = arena.mappings();
    fragmenting_round(arena);
    maps_per_round.push_back(arena.mappings() - before);
  }
  // Within a sixteenth of its 8 MiB peak the loop maps 6 MiB afresh in its second and third rounds...
  EXPECT_GT(maps_per_round[1], 0);
  EXPECT_GT(maps_per_round[2], 0);
  // ...until the room has grown to what its fragments need; then it maps nothing more.
  for (int round = 8; round < 12; ++round) EXPECT_EQ(maps_per_round[round], 0) << "round " << round;
  EXPECT_LE(arena.mapped_bytes(), static_cast<int64_t>(2 * 8 * kMiB));
}

TEST(SegmentArena, AFreeChunkIsUnmappedWhenTheLimitIsPassed) {
  SegmentArena arena;
  void* a = arena.allocate(4 * kMiB);
  void* b = arena.allocate(4 * kMiB);
  arena.deallocate(a, 6 * kMiB);
  EXPECT_EQ(arena.free_bytes(), static_cast<int64_t>(4 * kMiB));
  arena.deallocate(b, 6 * kMiB);  // 8 MiB free: one 4 MiB chunk goes
  EXPECT_EQ(arena.free_bytes(), static_cast<int64_t>(4 * kMiB));
  EXPECT_EQ(arena.mapped_bytes(), static_cast<int64_t>(4 * kMiB));
  EXPECT_FALSE(arena.deallocate(&arena, INT64_MAX)) << "not a block of this arena";
}

TEST(SegmentArena, ThreadsTakeAndGiveBackBlocksOfOneArenaAtOnce) {
  // A device's tensors are freed on whichever thread drops them last (DataParallel's replicas, the
  // backward engine's executors): the arena is shared, and ThreadSanitizer runs this test too.
  SegmentArena arena;
  auto work = [&arena](int seed) {
    std::vector<void*> held;
    for (int i = 0; i < 200; ++i) {
      const size_t size = (1 + (i * 7 + seed) % 5) * kMiB;
      auto* p = static_cast<char*>(arena.allocate(size));
      ASSERT_NE(p, nullptr);
      p[0] = p[size - 1] = static_cast<char>(seed);
      held.push_back(p);
      if (held.size() > 3) {
        arena.deallocate(held.front(), INT64_MAX);
        held.erase(held.begin());
      }
    }
    for (void* p : held) arena.deallocate(p, INT64_MAX);
  };
  std::thread a(work, 1), b(work, 2);
  a.join();
  b.join();
  arena.release();
  EXPECT_EQ(arena.mapped_bytes(), 0);
}

}  // namespace
}  // namespace cohort::detail
