#include <boreal/transport/crc32c.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "../../transport/src/core/crc32c_impl.hpp"

namespace boreal::transport {
namespace {

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span{text.data(), text.size()});
}

// Random each run for coverage; BOREAL_TEST_SEED=<n> replays the run a failure logged.
std::uint64_t test_seed() {
  if (const char* text = std::getenv("BOREAL_TEST_SEED")) return std::strtoull(text, nullptr, 10);
  return std::random_device{}();
}

std::vector<std::byte> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng());
  return out;
}

// Check values from RFC 3720 §B.4 and the CRC catalogue (reveng "CRC-32/ISCSI").
TEST(Crc32c, MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);
}

TEST(Crc32c, EmptyInputIsZero) {
  EXPECT_EQ(crc32c({}), 0u);
  EXPECT_EQ(crc32c({}, 0xDEADBEEFu), 0xDEADBEEFu);
}

TEST(Crc32c, ThirtyTwoZeroBytesMatchRfc3720) {
  const std::vector<std::byte> zeros(32, std::byte{0});
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
}

TEST(Crc32c, ThirtyTwoOnesBytesMatchRfc3720) {
  const std::vector<std::byte> ones(32, std::byte{0xFF});
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
}

TEST(Crc32c, IncrementingBytesMatchRfc3720) {
  std::vector<std::byte> up(32);
  for (std::size_t i = 0; i < up.size(); ++i) up[i] = static_cast<std::byte>(i);
  EXPECT_EQ(crc32c(up), 0x46DD794Eu);
}

TEST(Crc32c, ChainingEqualsOneCallOverTheConcatenation) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng{seed};
  const auto data = random_bytes(rng, 1000);
  const std::span<const std::byte> all{data};
  const std::uint32_t whole = crc32c(all);
  for (std::size_t split : {0u, 1u, 7u, 8u, 9u, 500u, 999u, 1000u}) {
    SCOPED_TRACE("split " + std::to_string(split));
    EXPECT_EQ(crc32c(all.subspan(split), crc32c(all.first(split))), whole);
  }
}

TEST(Crc32c, CombiningTwoCrcsEqualsTheCrcOfTheConcatenation) {
  std::vector<std::byte> data(70000);
  std::uint32_t state = 12345;
  for (auto& b : data) {
    state = state * 1103515245u + 12345u;
    b = static_cast<std::byte>(state >> 24);
  }
  const std::span<const std::byte> all(data);
  for (const std::size_t cut :
       {0UL, 1UL, 7UL, 31UL, 32UL, 4096UL, 32768UL, 65535UL, 69999UL, 70000UL}) {
    const auto a = all.first(cut);
    const auto b = all.subspan(cut);
    EXPECT_EQ(crc32c_combine(crc32c(a), crc32c(b), b.size()), crc32c(all)) << "cut at " << cut;
  }
  // Three pieces, folded left as a stream's content checksum is, frame by frame.
  const std::uint32_t folded = crc32c_combine(
      crc32c_combine(crc32c(all.first(100)), crc32c(all.subspan(100, 5000)), 5000),
      crc32c(all.subspan(5100)), all.size() - 5100);
  EXPECT_EQ(folded, crc32c(all));
  // Frames of one length in a row reuse the power of x computed for the first (a per-thread
  // cache); a different length between them must not be served the stale one.
  for (const std::size_t length : {4096UL, 4096UL, 100UL, 4096UL, 4096UL}) {
    for (const std::size_t at : {0UL, 9000UL}) {
      const auto a = all.subspan(at, 64);
      const auto b = all.subspan(at + 64, length);
      EXPECT_EQ(crc32c_combine(crc32c(a), crc32c(b), length), crc32c(all.subspan(at, 64 + length)))
          << "length " << length << " at " << at;
    }
  }
  // An empty b leaves a's CRC; an empty a gives b's.
  EXPECT_EQ(crc32c_combine(0xDEADBEEFu, 0, 0), 0xDEADBEEFu);
  EXPECT_EQ(crc32c_combine(0, crc32c(all), all.size()), crc32c(all));
}

TEST(Crc32c, StripedHardwarePathAgreesWithThePortableOneAtEverySizeAroundItsChunks) {
  if (!detail::crc32c_hw_available()) GTEST_SKIP() << "this CPU has no SSE4.2 crc32 instruction";
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng{seed};
  const auto data = random_bytes(rng, 40000);
  const std::span<const std::byte> all{data};
  // Chunks are 3 × 2048 bytes: below, at and around one and several chunks, and odd tails.
  for (std::size_t size :
       {0u, 7u, 6143u, 6144u, 6145u, 6151u, 12288u, 20000u, 32768u, 32800u, 40000u}) {
    for (std::uint32_t start : {0u, 0x12345678u}) {
      SCOPED_TRACE("size " + std::to_string(size) + " start " + std::to_string(start));
      EXPECT_EQ(detail::crc32c_hw(all.first(size), start),
                detail::crc32c_portable(all.first(size), start));
    }
  }
  // A misaligned start.
  EXPECT_EQ(detail::crc32c_hw(all.subspan(3, 20000), 0),
            detail::crc32c_portable(all.subspan(3, 20000), 0));
}

TEST(Crc32c, PortableChainingEqualsOneCallOverTheConcatenation) {
  const auto all = bytes_of("123456789");
  EXPECT_EQ(detail::crc32c_portable(all.subspan(4), detail::crc32c_portable(all.first(4), 0)),
            0xE3069283u);
}

TEST(Crc32c, PortableMatchesTheStandardCheckValue) {
  EXPECT_EQ(detail::crc32c_portable(bytes_of("123456789"), 0), 0xE3069283u);
  EXPECT_EQ(detail::crc32c_portable({}, 0), 0u);
}

TEST(Crc32c, HardwareAndPortableAgreeOnRandomLengthsAndMisalignedStarts) {
  if (!detail::crc32c_hw_available()) GTEST_SKIP() << "this CPU has no SSE4.2";
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 rng{seed};
  const auto data = random_bytes(rng, 4096 + 64);
  std::uniform_int_distribution<std::size_t> length_of(0, 4096);
  std::uniform_int_distribution<std::size_t> offset_of(0, 63);
  std::uniform_int_distribution<std::uint32_t> crc_of;
  for (int i = 0; i < 2000; ++i) {
    const auto piece = std::span<const std::byte>{data}.subspan(offset_of(rng), length_of(rng));
    const std::uint32_t start = (i % 2 == 0) ? 0 : crc_of(rng);
    ASSERT_EQ(detail::crc32c_hw(piece, start), detail::crc32c_portable(piece, start))
        << "length " << piece.size() << " start crc " << start;
  }
}

TEST(Crc32c, HardwareAndPortableAgreeOnEveryShortLength) {
  if (!detail::crc32c_hw_available()) GTEST_SKIP() << "this CPU has no SSE4.2";
  std::vector<std::byte> data(80);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 37 + 11);
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t n = 0; offset + n <= data.size(); ++n) {
      const auto piece = std::span<const std::byte>{data}.subspan(offset, n);
      ASSERT_EQ(detail::crc32c_hw(piece, 0), detail::crc32c_portable(piece, 0))
          << "offset " << offset << " length " << n;
    }
  }
}

}  // namespace
}  // namespace boreal::transport
