// A high quantile of recent durations in fixed memory: a receiving link's pickup latency (a
// frame's arrival at the host to its thread reading it) and a sender's lateness at its flush
// deadlines, which together decide how long a sender may hold a partly filled frame
// (docs/design.md, "Flush: the sender's share of the budget").
//
// Durations are counted in 1.024 µs units (ns >> 10) in log-linear buckets: 0..3 units one
// bucket each, then every power of two cut into four, so a bucket is at most a quarter of its
// lowest value wide; everything from 2^20 units (1.07 s) on shares the last bucket. "Recent":
// once kWindow durations are counted, every bucket is halved, so a sample's weight halves with
// every kWindow / 2 newer ones and the quantile follows a receiver whose wait changed.
// quantile() answers the upper edge of the bucket holding the rank: never below the true value
// of the counted samples, at most 25 % above it.
//
// record() is O(1) and allocates nothing; quantile() scans kBuckets counters. Not thread-safe:
// the thread that records owns it.
//
// Not ops::LatencyHistogram, which keeps every sample of a run at 1/128 precision for the
// run's report: that one never forgets (a receiver that changed its wait would be read by
// its history) and is 31 KiB, where this is 77 counters held by every link and flush hold;
// and the transport library does not depend on the operator library.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <optional>

namespace boreal::transport {

class RecentQuantile {
 public:
  static constexpr int kMaxExponent = 20;  // 2^20 units: 1.07 s
  static constexpr std::size_t kBuckets = 4 * (kMaxExponent - 1) + 1;
  static constexpr std::uint32_t kWindow = 512;
  // quantile() answers only after this many samples since construction (or reset()).
  static constexpr std::uint64_t kMinSamples = 32;

  void record(std::chrono::nanoseconds duration) noexcept {
    ++counts_[bucket_of(duration)];
    ++seen_;
    if (++total_ >= kWindow) {
      total_ = 0;
      for (auto& c : counts_) {
        c /= 2;
        total_ += c;
      }
    }
  }

  // The q quantile (0 < q <= 1) of the recent samples, as its bucket's upper edge; nullopt
  // before kMinSamples samples.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> quantile(double q) const noexcept {
    if (seen_ < kMinSamples || total_ == 0) return std::nullopt;
    // The smallest bucket at or below which at least q of the samples lie.
    const auto rank =
        static_cast<std::uint64_t>(std::max(1.0, q * static_cast<double>(total_) + 0.999999));
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
      below += counts_[i];
      if (below >= rank) return upper_edge(i);
    }
    return upper_edge(kBuckets - 1);
  }

  [[nodiscard]] std::uint64_t samples() const noexcept { return seen_; }
  void reset() noexcept { *this = RecentQuantile{}; }

  // The bucket a duration is counted in, and the largest duration it holds (exposed for tests).
  [[nodiscard]] static std::size_t bucket_of(std::chrono::nanoseconds duration) noexcept {
    const auto units =
        static_cast<std::uint64_t>(std::max<std::int64_t>(0, duration.count())) >> 10;
    if (units < 4) return static_cast<std::size_t>(units);
    const int exponent = static_cast<int>(std::bit_width(units)) - 1;  // >= 2
    if (exponent >= kMaxExponent) return kBuckets - 1;
    const auto quarter = (units >> (exponent - 2)) & 3U;
    return static_cast<std::size_t>(4 * (exponent - 1) + quarter);
  }
  [[nodiscard]] static std::chrono::nanoseconds upper_edge(std::size_t bucket) noexcept {
    if (bucket == kBuckets - 1)
      return std::chrono::nanoseconds{(std::int64_t{1} << kMaxExponent) << 10};
    if (bucket < 4) return std::chrono::nanoseconds{static_cast<std::int64_t>(bucket + 1) << 10};
    const int exponent = static_cast<int>(bucket / 4) + 1;
    const auto quarter = static_cast<std::int64_t>(bucket % 4);
    return std::chrono::nanoseconds{((5 + quarter) << (exponent - 2)) << 10};
  }

 private:
  std::array<std::uint32_t, kBuckets> counts_{};
  std::uint32_t total_ = 0;  // sum of counts_
  std::uint64_t seen_ = 0;
};

}  // namespace boreal::transport
