#include <boreal/transport/buffer_pool.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace boreal::transport {
namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

std::vector<BufferPool::Buffer> acquire_all(BufferPool& pool) {
  std::vector<BufferPool::Buffer> out;
  while (auto buffer = pool.acquire()) out.push_back(*buffer);
  return out;
}

TEST(BufferPool, HandsOutEveryBufferThenNothing) {
  BufferPool pool{4, 100};
  EXPECT_EQ(pool.capacity(), 4u);
  EXPECT_EQ(pool.available(), 4u);
  const auto all = acquire_all(pool);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(pool.available(), 0u);
  EXPECT_EQ(pool.acquire(), std::nullopt);
  std::set<std::uint32_t> indices;
  for (const auto& b : all) indices.insert(b.index);
  EXPECT_EQ(indices, (std::set<std::uint32_t>{0, 1, 2, 3}));
}

TEST(BufferPool, FreshPoolHandsOutBuffersInIndexOrder) {
  BufferPool pool{3, 64};
  for (std::uint32_t want = 0; want < 3; ++want) {
    const auto buffer = pool.acquire();
    ASSERT_TRUE(buffer);
    EXPECT_EQ(buffer->index, want);
  }
}

TEST(BufferPool, ReleasedBuffersComeBackLastInFirstOut) {
  BufferPool pool{4, 64};
  const auto all = acquire_all(pool);
  pool.release(all[1]);
  pool.release(all[3]);
  pool.release(all[0]);
  EXPECT_EQ(pool.available(), 3u);
  EXPECT_EQ(pool.acquire()->index, 0u);
  EXPECT_EQ(pool.acquire()->index, 3u);
  EXPECT_EQ(pool.acquire()->index, 1u);
  EXPECT_EQ(pool.acquire(), std::nullopt);
}

struct Pages {
  std::size_t resident = 0;
  std::size_t total = 0;
};

// How many of the pages under `bytes` at `data` are resident (mincore()), of how many.
Pages resident_pages(const std::byte* data, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first = address(data) / page * page;
  const auto end = (address(data) + bytes + page - 1) / page * page;
  std::vector<unsigned char> pages((end - first) / page);
  if (::mincore(reinterpret_cast<void*>(first), end - first, pages.data()) != 0) {
    ADD_FAILURE() << "mincore: " << std::strerror(errno);
    return {};
  }
  Pages out{.total = pages.size()};
  for (const unsigned char p : pages) out.resident += p & 1u;
  return out;
}

// A pool does not touch its region: a buffer's pages become resident when it is first used,
// so a node with many links at a low rate holds only the few buffers each keeps reusing.
// Buffers far from the region's start are checked (the allocator's header, a sanitizer's fill
// of an allocation's first bytes, or a transparent huge page around them may reach the first).
TEST(BufferPool, MakesNoPageResidentUntilABufferIsWritten) {
  constexpr std::size_t kBytes = 1 << 20;
  BufferPool pool{32, kBytes};
  for (std::uint32_t i = 8; i < 32; ++i) {
    EXPECT_EQ(resident_pages(pool.at(i).data, kBytes).resident, 0u) << "buffer " << i;
  }
  std::memset(pool.at(20).data, 1, kBytes);
  const auto written = resident_pages(pool.at(20).data, kBytes);
  EXPECT_GE(written.total, kBytes / static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(written.resident, written.total);
  EXPECT_EQ(resident_pages(pool.at(10).data, kBytes).resident, 0u);
  EXPECT_EQ(resident_pages(pool.at(30).data, kBytes).resident, 0u);
}

TEST(BufferPool, BufferSizeIsRoundedUpToACacheLine) {
  EXPECT_EQ(BufferPool(2, 1).buffer_bytes(), 64u);
  EXPECT_EQ(BufferPool(2, 64).buffer_bytes(), 64u);
  EXPECT_EQ(BufferPool(2, 65).buffer_bytes(), 128u);
  EXPECT_EQ(BufferPool(2, 4000).buffer_bytes(), 4032u);
}

TEST(BufferPool, RegionIsAlignedAndCoversEveryBufferBackToBack) {
  BufferPool pool{5, 100};
  const auto region = pool.region();
  EXPECT_EQ(address(region.data()) % 64, 0u);
  EXPECT_EQ(region.size(), 5u * 128u);
  for (std::uint32_t i = 0; i < pool.capacity(); ++i) {
    const auto buffer = pool.at(i);
    EXPECT_EQ(buffer.index, i);
    EXPECT_EQ(buffer.data, region.data() + std::size_t{i} * 128);
    EXPECT_EQ(address(buffer.data) % 64, 0u);
  }
}

TEST(BufferPool, IndexAndAddressStayTheSameAcrossReuse) {
  BufferPool pool{3, 256};
  const auto first = acquire_all(pool);
  for (const auto& b : first) {
    EXPECT_EQ(b.data, pool.at(b.index).data);
    pool.release(b);
  }
  const auto second = acquire_all(pool);
  for (const auto& b : second) EXPECT_EQ(b.data, pool.at(b.index).data);
}

TEST(BufferPool, BuffersDoNotOverlap) {
  BufferPool pool{3, 64};
  const auto all = acquire_all(pool);
  for (const auto& b : all) std::memset(b.data, static_cast<int>(b.index + 1), pool.buffer_bytes());
  for (const auto& b : all) {
    for (std::size_t i = 0; i < pool.buffer_bytes(); ++i) {
      ASSERT_EQ(std::to_integer<std::uint32_t>(b.data[i]), b.index + 1);
    }
  }
}

TEST(BufferPool, AcquireAndReleaseInterleaveWithoutLosingBuffers) {
  BufferPool pool{8, 64};
  std::vector<BufferPool::Buffer> held;
  for (int round = 0; round < 100; ++round) {
    if (round % 3 != 2) {
      if (auto b = pool.acquire()) held.push_back(*b);
    } else if (!held.empty()) {
      pool.release(held.back());
      held.pop_back();
    }
    ASSERT_EQ(pool.available() + held.size(), pool.capacity());
  }
}

#ifdef NDEBUG
// Debug builds assert instead; release builds must at least keep the free stack sound.
TEST(BufferPool, SecondReleaseIsIgnoredInReleaseBuilds) {
  BufferPool pool{2, 64};
  const auto a = *pool.acquire();
  pool.release(a);
  pool.release(a);
  EXPECT_EQ(pool.available(), 2u);
  const auto x = pool.acquire();
  const auto y = pool.acquire();
  ASSERT_TRUE(x && y);
  EXPECT_NE(x->index, y->index);
  EXPECT_EQ(pool.acquire(), std::nullopt);
}
#else
TEST(BufferPoolDeathTest, SecondReleaseAssertsInDebugBuilds) {
  BufferPool pool{2, 64};
  const auto a = *pool.acquire();
  pool.release(a);
  EXPECT_DEATH(pool.release(a), "released twice");
}
#endif

}  // namespace
}  // namespace boreal::transport
