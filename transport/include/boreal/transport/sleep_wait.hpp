// `sleep`: the seed's mechanism (Akram & Bilas). Sleep for an interval computed from the
// measured arrival rate λ and the free capacity C, so the receive ring cannot fill while the
// thread sleeps, capped by the latency budget; then drain everything that arrived. A thread
// that found nothing to do for idle_before_block() blocks on its sources until work or its
// deadline instead (as `block` does), so an idle link costs no wake-ups.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include <boreal/transport/block_wait.hpp>
#include <boreal/transport/wait_clock.hpp>
#include <boreal/transport/wait_mode.hpp>
#include <boreal/transport/wait_stats.hpp>
#include <boreal/transport/waitable.hpp>

namespace boreal::transport {

// Below this a sleep is not worth a syscall: even with 1 ns timer slack nanosleep(1 µs) took
// 21 µs on the reference VM, so the thread pauses for one spin instead.
inline constexpr std::chrono::nanoseconds kMinSleep = std::chrono::microseconds(1);

// The longest sleep the budget and the free capacity allow: min(budget, f·C/λ). λ ≤ 0
// (nothing arriving) gives the budget. Pure, so tests check the formula directly.
inline std::chrono::nanoseconds sleep_span(const WaitConfig& config,
                                           const LoadHints& hints) noexcept {
  std::chrono::nanoseconds t = config.latency_budget;
  if (hints.arrival_rate_hz > 0.0) {
    // Written so that NaN inputs (an estimator fed garbage) keep the budget instead of reaching
    // the integer conversion, which would be undefined behaviour.
    const double capacity = hints.free_capacity > 0.0 ? hints.free_capacity : 0.0;
    const double ns = config.sleep_fraction * capacity * 1e9 / hints.arrival_rate_hz;
    if (ns < static_cast<double>(t.count())) {
      t = std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
    }
  }
  return std::max(t, std::chrono::nanoseconds::zero());
}

// t = min(sleep_span, time to the deadline), never negative.
template <class TimePoint>
std::chrono::nanoseconds sleep_interval(const WaitConfig& config, const LoadHints& hints,
                                        TimePoint now) noexcept {
  auto t = sleep_span(config, hints);
  if (hints.deadline != TimePoint::max()) {
    t = std::min<std::chrono::nanoseconds>(t, hints.deadline - now);
  }
  return std::max(t, std::chrono::nanoseconds::zero());
}

// How long the sleep mode finds nothing to do before it blocks: ten latency budgets, at least
// 2 ms. Sleeping the budget over and over while idle costs a wake-up per budget (the idle
// two-node demo at a 200 µs budget used 0.39 cores); a blocked thread costs none, and wakes
// within tens of microseconds of a frame, inside the budget. A stream with gaps shorter than
// this between its frames keeps sleeping.
inline std::chrono::nanoseconds idle_before_block(const WaitConfig& config) noexcept {
  return std::max<std::chrono::nanoseconds>(std::chrono::milliseconds(2),
                                            10 * config.latency_budget);
}

namespace detail {
// Sleeps `t`, tells `source` it slept, and records what it cost. Returns the overshoot.
template <class Clock>
std::chrono::nanoseconds sleep_measured(std::chrono::nanoseconds t, Waitable& source,
                                        WaitStats& stats) {
  const auto start = Clock::now();
  Clock::sleep_for(t);
  source.slept();
  const auto overshoot = std::max<std::chrono::nanoseconds>(Clock::now() - start - t, {});
  ++stats.sleeps;
  stats.slept += t;
  stats.sleep_overshoot += overshoot;
  return overshoot;
}
}  // namespace detail

template <class Clock = SteadyClock>
class BasicSleepWait {
 public:
  explicit BasicSleepWait(WaitConfig config) : config_(config) {}

  // Sleeps the interval minus the timer's usual overshoot (an EWMA of what earlier sleeps
  // overshot by, weight 1/8, primed by the first), so the thread wakes when the interval
  // ends rather than one wake-up cost later (but never sleeps less than kMinSleep).
  void idle(int work, Waitable& source, const LoadHints& hints) {
    ++stats_.polls;
    if (work > 0) {
      idle_since_.reset();
      return;
    }
    ++stats_.empty_polls;
    const auto now = Clock::now();
    if (!idle_since_) {
      idle_since_ = now;
    } else if (now - *idle_since_ >= idle_before_block(config_)) {
      // Whether it blocked or found work (or a passed deadline) while arming, the next poll
      // is due now.
      detail::block_once<Clock>(source, hints, stats_);
      return;
    }
    const auto interval = sleep_interval(config_, hints, now);
    if (interval < kMinSleep || ring_fills_first(hints)) {
      ++stats_.spins;
      Clock::relax();
      return;
    }
    // Never shorter than kMinSleep: an interval the overshoot swallows still gives the CPU
    // away for the shortest sleep rather than spinning.
    const auto t = std::max(interval - overshoot_estimate_, kMinSleep);
    const auto overshoot = detail::sleep_measured<Clock>(t, source, stats_);
    overshoot_estimate_ = primed_ ? overshoot_estimate_ + (overshoot - overshoot_estimate_) / 8
                                  : overshoot;
    primed_ = true;
  }
  [[nodiscard]] const WaitStats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::chrono::nanoseconds overshoot_estimate() const noexcept {
    return overshoot_estimate_;
  }

 private:
  // Whether the free capacity lasts no longer than a sleep's usual overshoot: the shortest
  // sleep would then end after the time f·C/λ in which the ring stays short of full, and the
  // sender would stall for a wake-up's length while the thread is away, so it polls again
  // instead. At the maximum rate on tcp, on a day the VM's timer overshot by ~37 µs, sleeping
  // there halved the throughput (20 against block's 40 M tuples/s, the receiver asleep a
  // quarter of the time, mostly overshoot). A sleep cut short by a deadline (a flush) is not
  // this: being late for it costs latency, not the sender's progress, and spinning until it
  // would cost a core at low rates.
  [[nodiscard]] bool ring_fills_first(const LoadHints& hints) const noexcept {
    if (!primed_) return false;
    const auto span = sleep_span(config_, hints);
    return span < config_.latency_budget && span <= overshoot_estimate_;
  }

  WaitConfig config_;
  WaitStats stats_;
  std::chrono::nanoseconds overshoot_estimate_{0};
  bool primed_ = false;
  // Set while polls find nothing: when the first of them was.
  std::optional<typename Clock::time_point> idle_since_;
};
using SleepWait = BasicSleepWait<>;

}  // namespace boreal::transport
