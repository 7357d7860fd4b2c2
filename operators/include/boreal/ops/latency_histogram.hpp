// A fixed-memory histogram of latencies in nanoseconds, for the run summary's percentiles
// (docs/design.md "CPU accounting and metrics": p50, p99, p99.9 from tuple timestamps).
//
// Layout (log-linear, like HdrHistogram with two significant digits):
// - bucket 0 counts negative values (clock skew between hosts); they are recorded as 0;
// - buckets 1..256 hold 0..255 ns exactly, one value each;
// - every power-of-two range [2^k, 2^(k+1)) for k = 8..36 is cut into 128 equal buckets of
//   width 2^(k−7), so a bucket is at most 1/128 of its lowest value wide;
// - the last bucket counts overflow: values ≥ 2^37 ns (137.4 s), recorded as 2^37.
// That is kBucketCount = 3,970 counters, 31 KiB inside the object, never reallocated.
//
// Accuracy: count(), min(), max() and mean() are exact over the values as recorded (i.e.
// after the clamping above; the mean as long as the recorded sum stays below 2⁶⁴ ns, 584
// years). percentile() returns the highest value of the bucket holding the requested rank,
// capped at max(): never below the true value at that rank and at most 1/128 (0.79 %)
// above it, exact below 256 ns. Percentiles of clamped values are the clamped values (0 for
// negatives, 2^37 for overflow).
//
// Not thread-safe: one thread records into its own histogram; merge() them (or send
// nonzero_buckets() to another process) to combine. record() is O(1), branch-light, never
// allocates and never fails.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include <boreal/ops/error.hpp>

namespace boreal::ops {

class LatencyHistogram {
 public:
  // Values 0 .. kMaxTrackable are bucketed; larger ones are overflow.
  static constexpr int kTopExponent = 37;
  static constexpr std::int64_t kOverflowValue = std::int64_t{1} << kTopExponent;  // 137.4 s
  static constexpr std::int64_t kMaxTrackable = kOverflowValue - 1;
  static constexpr int kSubBucketBits = 7;  // 128 buckets per power of two
  static constexpr std::uint32_t kSubBuckets = 1u << kSubBucketBits;
  static constexpr std::int64_t kExactBelow = std::int64_t{2} * kSubBuckets;  // 256 ns
  static constexpr std::uint32_t kNegativeBucket = 0;
  static constexpr std::uint32_t kOverflowBucket =
      1 + static_cast<std::uint32_t>(kExactBelow) +
      static_cast<std::uint32_t>(kTopExponent - kSubBucketBits - 1) * kSubBuckets;
  static constexpr std::uint32_t kBucketCount = kOverflowBucket + 1;
  // Upper bound of percentile()'s relative error (value − true) / true.
  static constexpr double kMaxRelativeError = 1.0 / kSubBuckets;

  using Bucket = std::pair<std::uint32_t /*index*/, std::uint64_t /*count*/>;

  // Records one latency. Negative values count as 0 in bucket kNegativeBucket; values above
  // kMaxTrackable count as kOverflowValue in bucket kOverflowBucket.
  void record(std::int64_t ns) noexcept {
    const std::int64_t value = std::clamp<std::int64_t>(ns, 0, kOverflowValue);
    ++counts_[bucket_of(ns)];
    ++count_;
    sum_ += static_cast<std::uint64_t>(value);
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  void record(std::chrono::nanoseconds latency) noexcept { record(latency.count()); }

  // Number of recorded values, including negatives and overflows.
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  // Smallest and largest recorded value (after clamping); 0 when empty.
  [[nodiscard]] std::int64_t min() const noexcept { return count_ > 0 ? min_ : 0; }
  [[nodiscard]] std::int64_t max() const noexcept { return max_; }
  // Arithmetic mean of the recorded values (after clamping); 0 when empty.
  [[nodiscard]] double mean() const noexcept;
  // Values that were negative / above kMaxTrackable.
  [[nodiscard]] std::uint64_t negative_count() const noexcept { return counts_[kNegativeBucket]; }
  [[nodiscard]] std::uint64_t overflow_count() const noexcept { return counts_[kOverflowBucket]; }
  // Values in bucket `index` (< kBucketCount), for folding into coarser buckets elsewhere
  // (the live metrics' histogram, apps/src/runtime/metrics_sample.hpp).
  [[nodiscard]] std::uint64_t count_at(std::uint32_t index) const noexcept {
    return counts_[index];
  }
  // Sum of the recorded values in ns (after clamping), as mean() uses it.
  [[nodiscard]] std::uint64_t sum() const noexcept { return sum_; }

  // The value at percentile p ∈ [0, 100]: the smallest recorded value v such that at least
  // p % of the values are ≤ v, to the accuracy in the header comment (rank ⌈p/100 · count⌉,
  // at least 1). p ≤ 0 gives min() and p ≥ 100 gives max(), both exact; a NaN p is treated
  // as 0. Returns 0 when empty. O(kBucketCount).
  [[nodiscard]] std::int64_t percentile(double p) const noexcept;

  // Adds every value of `other`, as if each had been recorded here.
  void merge(const LatencyHistogram& other) noexcept;
  // Back to empty.
  void reset() noexcept;

  // Compact export for sending to another process: the buckets that hold values, in
  // ascending index order. min, max and the sum are not carried (see from_buckets).
  [[nodiscard]] std::vector<Bucket> nonzero_buckets() const;
  // Adds `count` values to bucket `index`, as a peer's export delivers them. Since the exact
  // values are unknown, min and max move to the bucket's lowest and highest value and the
  // sum grows by count × the bucket's midpoint, so after an import min(), max() and mean()
  // carry the same ≤ 1/128 error as percentile(). An Error (naming the index and
  // the valid range) for an index ≥ kBucketCount, or when the total count or the sum would
  // overflow 64 bits; the histogram is then unchanged. A count of 0 is a no-op.
  [[nodiscard]] Result<void> add_bucket(std::uint32_t index, std::uint64_t count);
  // A histogram holding exactly `buckets` (indexes may repeat and come in any order); the
  // first bad bucket's error otherwise.
  [[nodiscard]] static Result<LatencyHistogram> from_buckets(std::span<const Bucket> buckets);

  // The bucket a value falls in (negatives → kNegativeBucket, > kMaxTrackable →
  // kOverflowBucket).
  [[nodiscard]] static constexpr std::uint32_t bucket_of(std::int64_t ns) noexcept {
    if (ns < 0) return kNegativeBucket;
    if (ns > kMaxTrackable) return kOverflowBucket;
    const auto v = static_cast<std::uint64_t>(ns);
    if (ns < kExactBelow) return 1 + static_cast<std::uint32_t>(v);
    // ns in [2^k, 2^(k+1)), k ≥ 8: the top 8 bits select one of 128 sub-buckets.
    const int k = static_cast<int>(std::bit_width(v)) - 1;
    const auto sub = static_cast<std::uint32_t>(v >> (k - kSubBucketBits)) - kSubBuckets;
    return 1 + static_cast<std::uint32_t>(kExactBelow) +
           static_cast<std::uint32_t>(k - kSubBucketBits - 1) * kSubBuckets + sub;
  }
  // The lowest and highest value a bucket stands for (0 for kNegativeBucket, kOverflowValue
  // for kOverflowBucket). index must be < kBucketCount (asserted).
  [[nodiscard]] static std::int64_t bucket_lowest(std::uint32_t index) noexcept;
  [[nodiscard]] static std::int64_t bucket_highest(std::uint32_t index) noexcept;

  friend bool operator==(const LatencyHistogram&, const LatencyHistogram&) = default;

 private:
  std::array<std::uint64_t, kBucketCount> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;  // of clamped values; wraps only past 584 years in total
  std::int64_t min_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ = 0;
};

}  // namespace boreal::ops
