#include <boreal/ops/latency_histogram.hpp>

#include <cassert>
#include <cmath>
#include <string>

namespace boreal::ops {
namespace {

// The rank (1-based) of percentile p among count values: ⌈p/100 · count⌉, at least 1.
// p/100 · count is computed in floating point, where 99.9 % of 1000 comes out a hair above
// 999; a product within 10⁻⁹ (relative) of an integer is taken to be that integer, or the
// rank would move one value up.
std::uint64_t rank_of(double p, std::uint64_t count) noexcept {
  const double exact = p / 100.0 * static_cast<double>(count);
  const double nearest = std::round(exact);
  const double rank =
      std::abs(exact - nearest) <= 1e-9 * std::max(1.0, nearest) ? nearest : std::ceil(exact);
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(rank), 1, count);
}

}  // namespace

double LatencyHistogram::mean() const noexcept {
  return count_ > 0 ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0;
}

std::int64_t LatencyHistogram::percentile(double p) const noexcept {
  if (count_ == 0) return 0;
  if (!(p > 0)) return min();  // also NaN
  if (p >= 100) return max();
  const std::uint64_t rank = rank_of(p, count_);
  std::uint64_t seen = 0;
  for (std::uint32_t i = 0; i < kBucketCount; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(bucket_highest(i), max_);
  }
  // Unreachable while the counters sum to count_, which every mutator keeps true.
  return max_;
}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (std::uint32_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void LatencyHistogram::reset() noexcept { *this = LatencyHistogram{}; }

std::vector<LatencyHistogram::Bucket> LatencyHistogram::nonzero_buckets() const {
  std::vector<Bucket> out;
  for (std::uint32_t i = 0; i < kBucketCount; ++i) {
    if (counts_[i] != 0) out.emplace_back(i, counts_[i]);
  }
  return out;
}

Result<void> LatencyHistogram::add_bucket(std::uint32_t index, std::uint64_t count) {
  if (index >= kBucketCount) {
    return fail("latency histogram: bucket index " + std::to_string(index) +
                " is out of range (0.." + std::to_string(kBucketCount - 1) + ")");
  }
  if (count == 0) return success();
  const std::int64_t lowest = bucket_lowest(index);
  const std::int64_t highest = bucket_highest(index);
  const auto midpoint = static_cast<std::uint64_t>(lowest + (highest - lowest) / 2);
  std::uint64_t new_count = 0;
  std::uint64_t added_sum = 0;
  std::uint64_t new_sum = 0;
  if (__builtin_add_overflow(count_, count, &new_count) ||
      __builtin_mul_overflow(count, midpoint, &added_sum) ||
      __builtin_add_overflow(sum_, added_sum, &new_sum)) {
    return fail("latency histogram: bucket " + std::to_string(index) + " with count " +
                std::to_string(count) + " overflows the histogram's 64-bit count or sum");
  }
  counts_[index] += count;
  count_ = new_count;
  sum_ = new_sum;
  min_ = std::min(min_, lowest);
  max_ = std::max(max_, highest);
  return success();
}

Result<LatencyHistogram> LatencyHistogram::from_buckets(std::span<const Bucket> buckets) {
  LatencyHistogram out;
  for (const auto& [index, count] : buckets) {
    if (auto ok = out.add_bucket(index, count); !ok) return ok.error();
  }
  return out;
}

std::int64_t LatencyHistogram::bucket_lowest(std::uint32_t index) noexcept {
  assert(index < kBucketCount);
  if (index == kNegativeBucket) return 0;
  if (index == kOverflowBucket) return kOverflowValue;
  const std::uint32_t r = index - 1;
  if (r < kExactBelow) return r;
  const std::uint32_t above = r - static_cast<std::uint32_t>(kExactBelow);
  const int k = static_cast<int>(above / kSubBuckets) + kSubBucketBits + 1;
  const std::uint32_t sub = above % kSubBuckets;
  return static_cast<std::int64_t>(kSubBuckets + sub) << (k - kSubBucketBits);
}

std::int64_t LatencyHistogram::bucket_highest(std::uint32_t index) noexcept {
  assert(index < kBucketCount);
  if (index == kNegativeBucket) return 0;
  if (index == kOverflowBucket) return kOverflowValue;
  const std::uint32_t r = index - 1;
  if (r < kExactBelow) return r;
  const int k = static_cast<int>((r - static_cast<std::uint32_t>(kExactBelow)) / kSubBuckets) +
                kSubBucketBits + 1;
  return bucket_lowest(index) + (std::int64_t{1} << (k - kSubBucketBits)) - 1;
}

}  // namespace boreal::ops
