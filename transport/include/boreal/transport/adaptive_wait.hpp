// `adaptive`: chooses, per idle episode, between spinning, sleeping and blocking from the
// measured load and the latency budget (first version of WAIT_MODES.md's algorithm).
//
// An idle episode is the run of empty polls between two polls that did work.
//  1. Spin for S = min(W, L/4): W is the measured wake-up cost, so an arrival within one
//     wake-up is caught at no more than twice the optimal cost (competitive spinning).
//  2. If arrivals are expected within the budget (1/λ < L), sleep T = min(L − W, f·C/λ) and
//     then drain: few wake-ups at high rates, bounded added latency.
//  3. Otherwise arm, poll once more and block until an event or the deadline.
// Sleep ↔ block has hysteresis: block is chosen when 1/λ > 2L and left when 1/λ < L.
// W starts at WaitConfig::spin and follows the measured overshoot of real sleeps (EWMA),
// which is what a timer wake-up costs on this machine.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

#include <boreal/transport/block_wait.hpp>
#include <boreal/transport/sleep_wait.hpp>
#include <boreal/transport/wait_clock.hpp>
#include <boreal/transport/wait_mode.hpp>
#include <boreal/transport/wait_stats.hpp>
#include <boreal/transport/waitable.hpp>

namespace boreal::transport {

template <class Clock = SteadyClock>
class BasicAdaptiveWait {
 public:
  explicit BasicAdaptiveWait(WaitConfig config) : config_(config), wake_cost_(config.spin) {}

  void idle(int work, Waitable& source, const LoadHints& hints) {
    ++stats_.polls;
    if (work > 0) {
      // The hot path reads the clock only when an idle episode ends.
      if (episode_start_) {
        close_state(Clock::now());
        episode_start_.reset();
      }
      return;
    }
    const auto now = Clock::now();
    ++stats_.empty_polls;
    if (!episode_start_) {
      episode_start_ = now;
      enter(IdleState::spin, now);
    }
    if (now - *episode_start_ < spin_budget()) {
      ++stats_.spins;
      Clock::relax();
      return;
    }
    update_preference(hints.arrival_rate_hz);
    if (!prefer_block_) {
      WaitConfig sleep_config = config_;
      sleep_config.latency_budget = std::chrono::duration_cast<std::chrono::microseconds>(
          std::max<std::chrono::nanoseconds>(config_.latency_budget - wake_cost_, kMinSleep));
      const auto t = sleep_interval(sleep_config, hints, now);
      if (t < kMinSleep) {
        ++stats_.spins;
        Clock::relax();
        return;
      }
      enter(IdleState::sleep, now);
      const auto overshoot = detail::sleep_measured<Clock>(t, stats_);
      // EWMA with weight 1/8: follows a change within a few dozen sleeps, ignores one outlier.
      wake_cost_ += (overshoot - wake_cost_) / 8;
    } else {
      enter(IdleState::block, now);
      detail::block_once<Clock>(source, hints, stats_);
    }
  }

  [[nodiscard]] const WaitStats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::chrono::nanoseconds wake_cost() const noexcept { return wake_cost_; }
  [[nodiscard]] bool prefers_block() const noexcept { return prefer_block_; }
  [[nodiscard]] std::chrono::nanoseconds spin_budget() const noexcept {
    return std::min<std::chrono::nanoseconds>(wake_cost_, config_.latency_budget / 4);
  }

 private:
  void update_preference(double rate_hz) {
    const double budget_s = std::chrono::duration<double>(config_.latency_budget).count();
    const double gap_s = rate_hz > 0.0 ? 1.0 / rate_hz : 1e30;
    const bool before = prefer_block_;
    if (prefer_block_ && gap_s < budget_s) prefer_block_ = false;
    if (!prefer_block_ && gap_s > 2.0 * budget_s) prefer_block_ = true;
    if (before != prefer_block_) ++stats_.switches;
  }
  // Time is counted only inside idle episodes; an episode's first state is always an entry.
  void enter(IdleState state, typename Clock::time_point now) {
    const bool timing = state_since_.has_value();
    if (timing && state == state_) return;
    if (timing) close_state(now);
    ++stats_.state_entries[static_cast<std::size_t>(state)];
    state_ = state;
    state_since_ = now;
  }
  void close_state(typename Clock::time_point now) {
    if (!state_since_) return;
    stats_.state_time[static_cast<std::size_t>(state_)] += now - *state_since_;
    state_since_.reset();
  }

  WaitConfig config_;
  WaitStats stats_;
  std::chrono::nanoseconds wake_cost_;
  std::optional<typename Clock::time_point> episode_start_;
  bool prefer_block_ = false;
  IdleState state_ = IdleState::spin;
  std::optional<typename Clock::time_point> state_since_;
};
using AdaptiveWait = BasicAdaptiveWait<>;

}  // namespace boreal::transport
