// `adaptive`: chooses, per idle episode, between spinning, sleeping and blocking from the
// measured load and the latency budget (docs/measurement.md §8's algorithm, as built: §9).
//
// An idle episode is the run of empty polls between two polls that did work; a poll that
// finds work never waits, so while batches keep coming the thread stays awake.
//  1. Sleep or block (below). A thread that will block first spins for S = min(W, L/4,
//     --spin-us): W is the measured wake-up cost, so an arrival within one wake-up is caught
//     at no more than twice the optimal cost (competitive spinning). The spin is skipped while
//     it does not pay: an EWMA of how often an episode ended inside its spin must stay above
//     2/3 (spinning S and then waking anyway costs about 2W, catching the arrival less than
//     W/2 on average). A probe spins anyway, to notice a change in the gaps: the 16th episode
//     after the last probe, and while probes do not pay each waits twice as long, up to 256
//     episodes (a probe every 16th episode made `adaptive` poll 4.0–4.4 times per block at
//     1 % of tcp's maximum where `block` polled twice, each poll a system call:
//     docs/bench/experiments/sender-block/). A thread that will sleep does not spin: its one
//     wake-up already serves the several arrivals its sleep spans.
//  2. Sleep until T = min(span, time to the next deadline), ending the sleep early by the
//     lead (below) so the wake-up lands by T. When that is below the shortest sleep the
//     thread still sleeps that shortest sleep rather than spin, unless the deadline is under
//     a microsecond away.
//  3. Block: arm, poll once more and block until an event or the deadline.
//
// Sleep or block, for a thread that receives (it has a ring that can fill): a frame that
// arrives just after the thread fell asleep waits the whole sleep, so a sleep may last no more
// than span = min(L, f·C/λ): the budget, and the time in which the ring stays short of full
// (sleep_span()). A sleep costs one wake-up for every arrival it spans; blocking costs one
// wake-up per arrival and wakes on time. So the thread blocks while a sleep would span fewer
// than one arrival (span·λ < 1) and sleeps once it spans two (span·λ > 2); in between it keeps
// what it chose (hysteresis).
//
// A thread that only sends has no ring, and its waits end at its own flush and pacing
// deadlines: span = L. Blocking until the deadline costs it one timer wake-up per frame, where
// a sleep ends W early and polls again before the deadline; a sleep pays only where control
// frames (credit, acks) would wake a blocked sender between its deadlines, since a sleep
// ignores them. So the sender keeps an EWMA (weight 1/8) of how often its blocks ended by an
// event rather than at the deadline: it sleeps once that share is above 1/2 and blocks again
// once it is below 1/4. While it sleeps, one wait in kBlockProbeEvery blocks anyway to keep the
// share current. Measured (docs/bench/experiments/sender-block/): at 495 k tuples/s on tcp
// with L = 200 µs, a frame every ~125 µs, one block in 50 ended by a control frame, and the
// sleeping sender cost 1.2× the blocking one, with 1.1 sleeps and 2.5 polls a frame against
// one timer wake-up and 2 polls; on fabric-msg at 2.1 M tuples/s four blocks in five ended by
// a control frame, and there the sleeping sender was the cheaper.
//
// W starts at min(WaitConfig::spin, L/4) and follows the measured overshoot of real sleeps
// (EWMA, weight 1/8), which is what a timer wake-up costs on this machine. A receiver's sleep
// ends early by W + 2·D rather than W, D the EWMA (weight 1/4) of the overshoot's deviation
// from W, as TCP's retransmission timer adds variance to the mean round trip (RFC 6298): with a
// jittery timer, waking on time in the mean leaves every later-than-average wake-up over the
// deadline, and those are the latency tail. With a steady timer D is 0 and the lead is W. A
// sending-only thread sleeps towards its own flush deadline and ends W early: woken 2·D
// early, it would only sleep again for the rest, a second wake-up per frame (1.7–1.8× the
// sender wake-ups of `sleep` at 10 k tuples/s with a 1 ms budget:
// docs/bench/experiments/sender-lead).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>

#include <boreal/transport/block_wait.hpp>
#include <boreal/transport/sleep_wait.hpp>
#include <boreal/transport/wait_clock.hpp>
#include <boreal/transport/wait_mode.hpp>
#include <boreal/transport/wait_stats.hpp>
#include <boreal/transport/waitable.hpp>

namespace boreal::transport {

// A sleep ends this many deviations of the wake-up cost before its target, besides W.
inline constexpr int kWakeLeadDeviations = 2;
// While spinning does not pay, one episode in kSpinProbeEvery spins its full budget anyway;
// each probe that does not pay either doubles the interval, up to kSpinProbeEveryMost.
inline constexpr std::uint32_t kSpinProbeEvery = 16;
inline constexpr std::uint32_t kSpinProbeEveryMost = 256;
// Spinning pays while more than this share of episodes end inside the spin.
inline constexpr double kSpinPaysAbove = 2.0 / 3.0;
// A sending-only thread sleeps once more than this share of its blocks ended by an event (a
// control frame) before its deadline, and blocks again once fewer than kSenderBlocksBelow.
inline constexpr double kSenderSleepsAbove = 1.0 / 2.0;
inline constexpr double kSenderBlocksBelow = 1.0 / 4.0;
// While a sending-only thread sleeps, one wait in kBlockProbeEvery blocks instead.
inline constexpr std::uint32_t kBlockProbeEvery = 16;

template <class Clock = SteadyClock>
class BasicAdaptiveWait {
 public:
  explicit BasicAdaptiveWait(WaitConfig config)
      : config_(config),
        wake_cost_(std::min<std::chrono::nanoseconds>(config.spin, config.latency_budget / 4)) {}

  void idle(int work, Waitable& source, const LoadHints& hints) {
    ++stats_.polls;
    if (work > 0) {
      // The hot path reads the clock only when an idle episode ends.
      if (episode_start_) end_episode(Clock::now());
      return;
    }
    const auto now = Clock::now();
    ++stats_.empty_polls;
    if (!episode_start_) begin_episode(now);
    if (now - *episode_start_ < episode_spin_) {
      ++stats_.spins;
      Clock::relax();
      return;
    }
    reached_wait_ = true;
    update_preference(hints);
    // A sleeping sender's probe: this episode blocks, to see whether control frames still
    // wake it before its deadline.
    const bool probe_block =
        !prefer_block_ && !receives(hints) && ++sleeping_waits_ % kBlockProbeEvery == 0;
    if (!prefer_block_ && !probe_block) {
      const auto t = sleep_interval(config_, hints, now);
      if (t < kMinSleep) {  // a deadline or a full ring is (almost) due: poll again
        enter(IdleState::spin, now);
        ++stats_.spins;
        Clock::relax();
        return;
      }
      enter(IdleState::sleep, now);
      // A receiver ends its sleep W + 2·D early; a sending-only thread W early (see the top).
      const auto lead = receives(hints) ? wake_lead() : wake_cost_;
      const auto overshoot = detail::sleep_measured<Clock>(std::max(t - lead, kMinSleep), source,
                                                          stats_);
      const auto deviation =
          overshoot > wake_cost_ ? overshoot - wake_cost_ : wake_cost_ - overshoot;
      wake_deviation_ += (deviation - wake_deviation_) / 4;
      wake_cost_ += (overshoot - wake_cost_) / 8;
    } else {
      enter(IdleState::block, now);
      const auto outcome = detail::block_once<Clock>(source, hints, stats_);
      if (outcome != detail::BlockOutcome::not_blocked && !receives(hints)) {
        const double woken = outcome == detail::BlockOutcome::woken ? 1.0 : 0.0;
        woken_share_ += (woken - woken_share_) / 8;
      }
    }
  }

  [[nodiscard]] const WaitStats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::chrono::nanoseconds wake_cost() const noexcept { return wake_cost_; }
  [[nodiscard]] std::chrono::nanoseconds wake_deviation() const noexcept { return wake_deviation_; }
  // How long before its target a sleep ends: W + kWakeLeadDeviations·D.
  [[nodiscard]] std::chrono::nanoseconds wake_lead() const noexcept {
    return wake_cost_ + kWakeLeadDeviations * wake_deviation_;
  }
  [[nodiscard]] bool prefers_block() const noexcept { return prefer_block_; }
  [[nodiscard]] std::chrono::nanoseconds spin_budget() const noexcept {
    return std::min<std::chrono::nanoseconds>(
        {wake_cost_, config_.spin,
         std::chrono::duration_cast<std::chrono::nanoseconds>(config_.latency_budget) / 4});
  }
  // EWMA of the share of (spinning) episodes that ended inside their spin.
  [[nodiscard]] double spin_success() const noexcept { return spin_success_; }
  // A sending-only thread: EWMA of the share of its blocks that an event ended before the
  // deadline.
  [[nodiscard]] double woken_share() const noexcept { return woken_share_; }

 private:
  void begin_episode(typename Clock::time_point now) {
    episode_start_ = now;
    reached_wait_ = false;
    // Spinning competes with a wake-up per arrival, so only a thread that would block spins;
    // one that sleeps already pays one wake-up for the several arrivals its sleep spans.
    // While probes fail, each waits twice as many episodes as the last, up to
    // kSpinProbeEveryMost; one that pays brings the interval back to kSpinProbeEvery.
    const bool probe = ++episodes_since_probe_ >= probe_every_;
    if (probe) episodes_since_probe_ = 0;
    spinning_ = prefer_block_ && (probe || spin_success_ > kSpinPaysAbove);
    episode_spin_ = spinning_ ? spin_budget() : std::chrono::nanoseconds::zero();
    if (spinning_) {
      enter(IdleState::spin, now);
    } else {
      ++stats_.spin_skips;
    }
  }
  void end_episode(typename Clock::time_point now) {
    if (spinning_) {
      // Read before the update: this episode spun only as a probe if spinning did not pay
      // when it began (spin_success_ has not changed since).
      const bool probing = spin_success_ <= kSpinPaysAbove;
      const double caught = reached_wait_ ? 0.0 : 1.0;
      spin_success_ += (caught - spin_success_) / 8;
      if (probing) {
        probe_every_ = reached_wait_ ? std::min(probe_every_ * 2, kSpinProbeEveryMost)
                                     : kSpinProbeEvery;
      }
    }
    close_state(now);
    episode_start_.reset();
  }
  // A thread that receives has a ring that can fill; a sending-only one reports +inf.
  [[nodiscard]] static bool receives(const LoadHints& hints) noexcept {
    return hints.free_capacity < std::numeric_limits<double>::infinity();
  }
  void update_preference(const LoadHints& hints) {
    const bool before = prefer_block_;
    if (receives(hints)) {
      // Arrivals one sleep would span: sleep once it is two, block below one.
      const double rate_hz = hints.arrival_rate_hz > 0.0 ? hints.arrival_rate_hz : 0.0;
      const double spanned =
          std::chrono::duration<double>(sleep_span(config_, hints)).count() * rate_hz;
      if (prefer_block_ && spanned > 2.0) prefer_block_ = false;
      if (!prefer_block_ && spanned < 1.0) prefer_block_ = true;
    } else {
      if (prefer_block_ && woken_share_ > kSenderSleepsAbove) prefer_block_ = false;
      if (!prefer_block_ && woken_share_ < kSenderBlocksBelow) prefer_block_ = true;
    }
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
  std::chrono::nanoseconds wake_deviation_{0};
  std::optional<typename Clock::time_point> episode_start_;
  std::chrono::nanoseconds episode_spin_{0};
  bool spinning_ = true;
  bool reached_wait_ = false;
  double spin_success_ = 1.0;  // optimistic: spin until the gaps show it does not pay
  std::uint32_t episodes_since_probe_ = 0;
  std::uint32_t probe_every_ = kSpinProbeEvery;
  bool prefer_block_ = false;
  double woken_share_ = 0.0;  // a sending-only thread blocks until control frames wake it
  std::uint32_t sleeping_waits_ = 0;  // a sending-only thread's, while it sleeps
  IdleState state_ = IdleState::spin;
  std::optional<typename Clock::time_point> state_since_;
};
using AdaptiveWait = BasicAdaptiveWait<>;

}  // namespace boreal::transport
