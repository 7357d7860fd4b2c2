#include <boreal/transport/recent_quantile.hpp>

#include <gtest/gtest.h>

namespace boreal::transport {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

constexpr nanoseconds units(std::int64_t n) { return nanoseconds{n << 10}; }

TEST(RecentQuantile, BucketsAreAQuarterOfAPowerOfTwoWide) {
  EXPECT_EQ(RecentQuantile::bucket_of(nanoseconds{0}), 0U);
  EXPECT_EQ(RecentQuantile::bucket_of(nanoseconds{-5}), 0U);
  EXPECT_EQ(RecentQuantile::bucket_of(units(3)), 3U);
  EXPECT_EQ(RecentQuantile::bucket_of(units(4)), 4U);
  EXPECT_EQ(RecentQuantile::bucket_of(units(7)), 7U);
  EXPECT_EQ(RecentQuantile::bucket_of(units(8)), 8U);
  EXPECT_EQ(RecentQuantile::bucket_of(units(9)), 8U);
  EXPECT_EQ(RecentQuantile::bucket_of(units(10)), 9U);
  EXPECT_EQ(RecentQuantile::upper_edge(8), units(10));
  EXPECT_EQ(RecentQuantile::upper_edge(3), units(4));
  // Every duration lies below its bucket's upper edge and at or above the one before.
  for (std::int64_t n = 0; n < (std::int64_t{1} << 16); n += 37) {
    const auto bucket = RecentQuantile::bucket_of(units(n));
    EXPECT_LT(units(n), RecentQuantile::upper_edge(bucket)) << n;
    if (bucket > 0) {
      EXPECT_GE(units(n), RecentQuantile::upper_edge(bucket - 1)) << n;
    }
  }
  EXPECT_EQ(RecentQuantile::bucket_of(std::chrono::seconds{5}), RecentQuantile::kBuckets - 1);
}

TEST(RecentQuantile, AnswersOnlyAfterEnoughSamples) {
  RecentQuantile q;
  for (std::uint64_t i = 1; i < RecentQuantile::kMinSamples; ++i) q.record(microseconds{20});
  EXPECT_FALSE(q.quantile(0.99).has_value());
  q.record(microseconds{20});
  ASSERT_TRUE(q.quantile(0.99).has_value());
  // 20 µs = 19.5 units, in bucket [18, 20): its edge is 20 units, 20.48 µs.
  EXPECT_EQ(*q.quantile(0.99), units(20));
}

TEST(RecentQuantile, TheP99IsTheBucketOfTheHundredthLargestOfTenThousandIn) {
  RecentQuantile q;
  // 99 of every 100 samples at 10 units, one at 100 units: the p99 is 10's bucket, the
  // p99.5 the outlier's.
  for (int i = 0; i < 300; ++i) q.record(i % 100 == 99 ? units(100) : units(10));
  EXPECT_EQ(*q.quantile(0.99), units(12));
  EXPECT_EQ(*q.quantile(0.995), units(112));
}

TEST(RecentQuantile, OldSamplesFadeOnceTheWindowFills) {
  RecentQuantile q;
  for (std::uint32_t i = 0; i < RecentQuantile::kWindow; ++i) q.record(units(200));
  EXPECT_EQ(*q.quantile(0.99), units(224));
  // The receiver's wait changed: after a few windows of 5-unit pickups the old ones are
  // under 1 % of the weight.
  for (std::uint32_t i = 0; i < 4 * RecentQuantile::kWindow; ++i) q.record(units(5));
  EXPECT_EQ(*q.quantile(0.99), units(6));
  EXPECT_EQ(q.samples(), 5U * RecentQuantile::kWindow);
  q.reset();
  EXPECT_FALSE(q.quantile(0.99).has_value());
}

}  // namespace
}  // namespace boreal::transport
