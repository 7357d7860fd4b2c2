#include <boreal/ops/latency_histogram.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace boreal::ops {
namespace {

using H = LatencyHistogram;

// 31 KiB each: keep them off the test thread's stack.
std::unique_ptr<H> make() { return std::make_unique<H>(); }

// The value the histogram must report when the true value at the rank is `truth`.
std::int64_t expected_report(std::int64_t truth, std::int64_t max) {
  return std::min(H::bucket_highest(H::bucket_of(truth)), max);
}

TEST(LatencyHistogram, EmptyReportsZeros) {
  const auto h = make();
  EXPECT_EQ(h->count(), 0u);
  EXPECT_EQ(h->min(), 0);
  EXPECT_EQ(h->max(), 0);
  EXPECT_EQ(h->mean(), 0.0);
  EXPECT_EQ(h->percentile(50), 0);
  EXPECT_EQ(h->percentile(100), 0);
  EXPECT_TRUE(h->nonzero_buckets().empty());
}

TEST(LatencyHistogram, BucketsTileTheRangeWithinTheDocumentedWidth) {
  EXPECT_EQ(H::kBucketCount, 3970u);
  EXPECT_EQ(H::bucket_of(0), 1u);
  EXPECT_EQ(H::bucket_highest(H::kOverflowBucket - 1), H::kMaxTrackable);
  for (std::uint32_t i = 1; i < H::kOverflowBucket; ++i) {
    const std::int64_t lo = H::bucket_lowest(i);
    const std::int64_t hi = H::bucket_highest(i);
    ASSERT_EQ(H::bucket_of(lo), i);
    ASSERT_EQ(H::bucket_of(hi), i);
    if (i + 1 < H::kOverflowBucket) {
      ASSERT_EQ(hi + 1, H::bucket_lowest(i + 1)) << i;
    }
    if (lo < H::kExactBelow) {
      ASSERT_EQ(lo, hi);
    } else {
      ASSERT_LE(static_cast<double>(hi - lo + 1) / static_cast<double>(lo), H::kMaxRelativeError);
    }
  }
}

TEST(LatencyHistogram, ValuesBelow256AreExact) {
  const auto h = make();
  for (std::int64_t v = 0; v < 256; ++v) h->record(v);
  EXPECT_EQ(h->count(), 256u);
  EXPECT_EQ(h->min(), 0);
  EXPECT_EQ(h->max(), 255);
  EXPECT_DOUBLE_EQ(h->mean(), 127.5);
  EXPECT_EQ(h->percentile(0), 0);
  EXPECT_EQ(h->percentile(50), 127);  // rank 128
  EXPECT_EQ(h->percentile(90), 230);  // rank ⌈230.4⌉ = 231
  EXPECT_EQ(h->percentile(100), 255);
}

TEST(LatencyHistogram, UniformPercentilesAreWithinOnePercentAbove) {
  constexpr std::int64_t kN = 100'000;
  const auto h = make();
  for (std::int64_t v = 1; v <= kN; ++v) h->record(v);
  EXPECT_EQ(h->count(), static_cast<std::uint64_t>(kN));
  EXPECT_EQ(h->min(), 1);
  EXPECT_EQ(h->max(), kN);
  EXPECT_DOUBLE_EQ(h->mean(), 50'000.5);
  // Value v has rank v, so the true percentile p is ⌈p/100 · N⌉.
  const std::array<std::pair<double, std::int64_t>, 9> cases = {{{1, 1'000},
                                                                  {10, 10'000},
                                                                  {25, 25'000},
                                                                  {50, 50'000},
                                                                  {75, 75'000},
                                                                  {90, 90'000},
                                                                  {99, 99'000},
                                                                  {99.9, 99'900},
                                                                  {99.99, 99'990}}};
  for (const auto& [p, truth] : cases) {
    const std::int64_t got = h->percentile(p);
    EXPECT_EQ(got, expected_report(truth, kN)) << "p" << p;
    EXPECT_GE(got, truth) << "p" << p;
    EXPECT_LE(static_cast<double>(got - truth) / static_cast<double>(truth), H::kMaxRelativeError)
        << "p" << p;
  }
  EXPECT_EQ(h->percentile(50), 50'175);  // 50,000 lies in [49,920, 50,175] (width 2⁸)
}

TEST(LatencyHistogram, PercentilesOfAMultiModalDistribution) {
  const auto h = make();
  for (int i = 0; i < 900; ++i) h->record(1'000);            // 1 µs
  for (int i = 0; i < 90; ++i) h->record(1'000'000);         // 1 ms
  for (int i = 0; i < 9; ++i) h->record(1'000'000'000);      // 1 s
  h->record(std::chrono::nanoseconds{50'000'000'000});       // 50 s
  EXPECT_EQ(h->count(), 1000u);
  EXPECT_EQ(h->percentile(50), 1'003);          // bucket [1,000, 1,003]
  EXPECT_EQ(h->percentile(90), 1'003);          // rank 900
  EXPECT_EQ(h->percentile(99), 1'003'519);      // bucket [999,424, 1,003,519]
  EXPECT_EQ(h->percentile(99.9), 1'002'438'655);  // bucket [998,244,352, 1,002,438,655]
  EXPECT_EQ(h->percentile(99.95), 50'000'000'000);  // top bucket, capped at max()
  EXPECT_EQ(h->max(), 50'000'000'000);
  EXPECT_DOUBLE_EQ(h->mean(), (900.0 * 1e3 + 90.0 * 1e6 + 9.0 * 1e9 + 5e10) / 1000.0);
}

TEST(LatencyHistogram, RankOfAPercentileIsNotShiftedByRounding) {
  const auto h = make();
  for (std::int64_t v = 1; v <= 1000; ++v) h->record(v);
  // 99.9 % of 1000 is rank 999 (bucket [996, 999]), not 1000 (bucket [1000, 1003] → max).
  EXPECT_EQ(h->percentile(99.9), 999);
  EXPECT_EQ(h->percentile(99.91), 1000);
}

TEST(LatencyHistogram, NegativeAndHugeValuesAreClampedAndCounted) {
  const auto h = make();
  h->record(-5);
  h->record(std::numeric_limits<std::int64_t>::min());
  h->record(0);
  h->record(H::kMaxTrackable);
  h->record(H::kMaxTrackable + 1);
  h->record(std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(h->count(), 6u);
  EXPECT_EQ(h->negative_count(), 2u);
  EXPECT_EQ(h->overflow_count(), 2u);
  EXPECT_EQ(h->min(), 0);
  EXPECT_EQ(h->max(), H::kOverflowValue);
  EXPECT_DOUBLE_EQ(h->mean(),
                   static_cast<double>(H::kMaxTrackable + 2 * H::kOverflowValue) / 6.0);
  EXPECT_EQ(h->percentile(1), 0);
  EXPECT_EQ(h->percentile(50), 0);                   // rank 3: the recorded 0
  EXPECT_EQ(h->percentile(60), H::kMaxTrackable);    // rank 4: the top regular bucket
  EXPECT_EQ(h->percentile(70), H::kOverflowValue);   // rank 5: overflow
  const auto buckets = h->nonzero_buckets();
  ASSERT_EQ(buckets.size(), 4u);
  EXPECT_EQ(buckets.front(), (H::Bucket{H::kNegativeBucket, 2}));
  EXPECT_EQ(buckets.back(), (H::Bucket{H::kOverflowBucket, 2}));
}

void record_random(H& h, std::mt19937_64& rng, int n) {
  // Log-uniform over 1 ns .. 10 s plus some skew and overflow.
  std::uniform_real_distribution<double> exponent(0.0, 10.0);
  std::uniform_int_distribution<int> kind(0, 99);
  for (int i = 0; i < n; ++i) {
    const int k = kind(rng);
    if (k == 0) {
      h.record(-static_cast<std::int64_t>(rng() % 1000));
    } else if (k == 1) {
      h.record(H::kOverflowValue + static_cast<std::int64_t>(rng() % 1000));
    } else {
      h.record(static_cast<std::int64_t>(std::pow(10.0, exponent(rng))));
    }
  }
}

TEST(LatencyHistogram, MergeEqualsRecordingEverything) {
  const auto seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng_a(seed);
  std::mt19937_64 rng_b(seed + 1);
  std::mt19937_64 rng_all_a(seed);
  std::mt19937_64 rng_all_b(seed + 1);
  const auto a = make();
  const auto b = make();
  const auto all = make();
  record_random(*a, rng_a, 5000);
  record_random(*b, rng_b, 3000);
  record_random(*all, rng_all_a, 5000);
  record_random(*all, rng_all_b, 3000);
  a->merge(*b);
  EXPECT_EQ(*a, *all);
  EXPECT_EQ(a->count(), 8000u);
  EXPECT_EQ(a->percentile(99), all->percentile(99));
  // Merging an empty histogram changes nothing, and merging into one copies.
  a->merge(*make());
  EXPECT_EQ(*a, *all);
  const auto c = make();
  c->merge(*all);
  EXPECT_EQ(*c, *all);
}

TEST(LatencyHistogram, ExportImportRoundTripKeepsBucketsAndBoundsTheRest) {
  const auto seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const auto h = make();
  record_random(*h, rng, 10'000);
  const auto buckets = h->nonzero_buckets();
  auto imported = H::from_buckets(buckets);
  ASSERT_TRUE(imported) << imported.error().describe();
  const H& g = imported.value();
  EXPECT_EQ(g.nonzero_buckets(), buckets);
  EXPECT_EQ(g.count(), h->count());
  EXPECT_EQ(g.negative_count(), h->negative_count());
  EXPECT_EQ(g.overflow_count(), h->overflow_count());
  EXPECT_EQ(g.min(), H::bucket_lowest(H::bucket_of(h->min())));
  EXPECT_EQ(g.max(), H::bucket_highest(H::bucket_of(h->max())));
  EXPECT_NEAR(g.mean(), h->mean(), h->mean() * H::kMaxRelativeError);
  for (double p : {10.0, 50.0, 90.0, 99.0, 99.9}) {
    const std::int64_t want = h->percentile(p);
    EXPECT_GE(g.percentile(p), want) << "p" << p;
    EXPECT_LE(static_cast<double>(g.percentile(p) - want),
              static_cast<double>(want) * H::kMaxRelativeError)
        << "p" << p;
  }
  // Importing an import is exact: bucket representatives reproduce themselves.
  auto again = H::from_buckets(g.nonzero_buckets());
  ASSERT_TRUE(again);
  EXPECT_EQ(again.value(), g);
}

TEST(LatencyHistogram, AddBucketAccumulatesIntoARecordedHistogram) {
  const auto h = make();
  h->record(100);
  ASSERT_TRUE(h->add_bucket(H::bucket_of(100), 2));
  ASSERT_TRUE(h->add_bucket(H::bucket_of(40), 1));
  ASSERT_TRUE(h->add_bucket(H::bucket_of(40), 0));  // a no-op
  EXPECT_EQ(h->count(), 4u);
  EXPECT_EQ(h->min(), 40);
  EXPECT_EQ(h->max(), 100);
  EXPECT_DOUBLE_EQ(h->mean(), 85.0);
}

TEST(LatencyHistogram, BadBucketIsRejectedAndLeavesTheHistogramUnchanged) {
  const auto h = make();
  h->record(500);
  const H before = *h;
  auto bad = h->add_bucket(H::kBucketCount, 1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "latency histogram: bucket index 3970 is out of range (0..3969)");
  EXPECT_EQ(bad.error().where, "");
  EXPECT_EQ(*h, before);

  // The total count would pass 2⁶⁴.
  ASSERT_TRUE(h->add_bucket(H::bucket_of(0), std::numeric_limits<std::uint64_t>::max() - 1));
  auto too_many = h->add_bucket(H::bucket_of(0), 1);
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error().message,
            "latency histogram: bucket 1 with count 1 overflows the histogram's 64-bit count or "
            "sum");
  // The sum would pass 2⁶⁴: 2⁴⁰ values of 2³⁷ ns.
  h->reset();
  EXPECT_FALSE(h->add_bucket(H::kOverflowBucket, std::uint64_t{1} << 40));
  EXPECT_EQ(*h, H{});

  const std::vector<H::Bucket> list = {{5, 1}, {H::kBucketCount + 7, 1}};
  auto from = H::from_buckets(list);
  ASSERT_FALSE(from);
  EXPECT_EQ(from.error().message, "latency histogram: bucket index 3977 is out of range (0..3969)");
}

TEST(LatencyHistogram, ResetEmptiesIt) {
  const auto h = make();
  h->record(12);
  h->record(-3);
  h->reset();
  EXPECT_EQ(*h, H{});
  EXPECT_EQ(h->count(), 0u);
  EXPECT_EQ(h->min(), 0);
  EXPECT_EQ(h->negative_count(), 0u);
}

}  // namespace
}  // namespace boreal::ops
