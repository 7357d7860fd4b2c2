// Arrival rate λ as an exponentially weighted moving average over short windows, for the
// sleep and adaptive wait modes. Owned by one thread; O(1), no allocation.
#pragma once

#include <chrono>
#include <cstdint>

namespace boreal::transport {

class RateEstimator {
 public:
  // window: how often the rate is re-estimated. 1 ms holds ~100 frames at 100 k frames/s and
  // reacts within a few ms; weight: share of the newest window (0.25 ≈ the last 4 windows).
  explicit RateEstimator(std::chrono::nanoseconds window = std::chrono::milliseconds(1),
                         double weight = 0.25) noexcept
      : window_(window), weight_(weight) {}

  // Counts `events` at time `now` (steady clock). Cheap when the window has not closed.
  template <class TimePoint>
  void add(std::uint64_t events, TimePoint now) noexcept {
    pending_ += events;
    const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        now.time_since_epoch());
    // A flag, not a zero start, marks the first call: a clock may really read zero then
    // (a fake clock, a fresh CLOCK_MONOTONIC in a new time namespace).
    if (!started_) {
      start_ = now_ns;
      started_ = true;
    }
    const auto elapsed = now_ns - start_;
    if (elapsed < window_) return;
    const double rate =
        static_cast<double>(pending_) / std::chrono::duration<double>(elapsed).count();
    rate_ = primed_ ? weight_ * rate + (1.0 - weight_) * rate_ : rate;
    primed_ = true;
    if (rate > peak_) peak_ = rate;
    pending_ = 0;
    start_ = now_ns;
  }
  [[nodiscard]] double rate_hz() const noexcept { return rate_; }
  [[nodiscard]] double peak_hz() const noexcept { return peak_; }

 private:
  std::chrono::nanoseconds window_;
  double weight_;
  std::chrono::nanoseconds start_{0};
  std::uint64_t pending_ = 0;
  double rate_ = 0.0;
  double peak_ = 0.0;
  bool started_ = false;
  bool primed_ = false;
};

}  // namespace boreal::transport
