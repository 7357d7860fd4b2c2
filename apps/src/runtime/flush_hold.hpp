// How long a partly filled frame waits for more rows before it leaves (docs/design.md, "Flush:
// the sender's share of the budget").
//
// A tuple's latency is the time its frame is held, plus the sender's lateness at the frame's
// deadline (its own wake-up), the way to the receiving host, and the receiver's pickup (the
// time from the frame's arrival to its thread reading it: the receiver's wake-up, or its poll
// interval). At low rates each frame costs a wake-up at both ends, so the longer a frame may be
// held, the more tuples share them. A stream with `flush_us` holds frames that long. Otherwise
// the hold adapts: the latency budget less the p99 of what follows the hold, less a margin
// for the way between the hosts and the receiving boxes; never under the half it starts from,
// which is what the receiver's waits plan with (spec thread_wait(): they get the other half),
// so a slow receiver gets the frames it got before and a quick one bigger frames.
// What follows is the sender's lateness (measured here) and the receiver's pickup (its p99,
// which tcp links send in their credit frames). Their p99s are combined as the root of the sum
// of their squares, the p99 of the sum of two independent delays of that shape: adding them
// would assume every late frame is also picked up late, and hold frames far shorter than the
// budget allows (on this VM a 200 µs budget's hold would fall below the old half). Until the
// receiver reports (and on media whose receivers do not), half the budget.
//
// Threading: belongs to the I/O thread of the link writer that owns it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/recent_quantile.hpp>

namespace boreal::runtime {

// The frames of one thread's links that share tcp connections leave together (docs/design.md,
// "One tcp connection per pair of threads"): once a frame leaves at its deadline, in that pass
// of the thread and the next, a frame of another such link leaves too if it has waited at
// least half its hold, so that one send carries what every stream gathered over about one
// hold, where each frame at its own deadline would cost a send of its own.
//
// Threading: belongs to one I/O thread, as its loop does.
class FlushWave {
 public:
  explicit FlushWave(const transport::EventLoop& loop) noexcept : loop_(loop) {}

  // A frame left at its deadline.
  void left() noexcept {
    pass_ = loop_.passes();
    begun_ = true;
  }
  // How much sooner than its hold a frame may leave now.
  [[nodiscard]] std::chrono::nanoseconds lead(std::chrono::nanoseconds hold) const noexcept {
    return begun_ && loop_.passes() - pass_ <= 1 ? hold / 2 : std::chrono::nanoseconds{0};
  }

 private:
  const transport::EventLoop& loop_;
  std::uint64_t pass_ = 0;
  bool begun_ = false;
};

class FlushHold {
 public:
  // Always `flush`.
  explicit FlushHold(std::chrono::nanoseconds flush) noexcept : hold_(flush), initial_(flush) {}
  // `flush` until the receiver reports, then adapting within `budget`, never under `flush`.
  FlushHold(std::chrono::nanoseconds flush, std::chrono::nanoseconds budget) noexcept
      : hold_(flush), initial_(flush), budget_(budget) {
    if (adapts()) late_.emplace();
  }

  [[nodiscard]] std::chrono::nanoseconds get() const noexcept { return hold_; }
  [[nodiscard]] bool adapts() const noexcept { return budget_.count() > 0; }

  // Whether a frame whose first row has waited `held` leaves now: its hold ran out (how late
  // is counted, and `wave`, if any, begins), or it is within the wave's lead.
  bool leaves(std::chrono::nanoseconds held, FlushWave* wave) noexcept {
    if (held >= hold_) {
      left_late(held - hold_);
      if (wave != nullptr) wave->left();
      return true;
    }
    return wave != nullptr && held + wave->lead(hold_) >= hold_;
  }

  // A frame left `late` after its hold ran out.
  void left_late(std::chrono::nanoseconds late) noexcept {
    if (!adapts()) return;
    late_->record(late);
    if (++since_recompute_ >= kRecomputeEvery) recompute();
  }
  // The receiver's latest pickup report (transport/frame.hpp; µs, 0: none yet).
  void receiver_reports(std::uint32_t pickup_p99_us) noexcept {
    if (pickup_p99_us == pickup_us_ || !adapts()) return;
    pickup_us_ = pickup_p99_us;
    recompute();
  }
  // The sender's lateness p99 the hold allows for (0 until known).
  [[nodiscard]] std::chrono::nanoseconds lateness_p99() const noexcept {
    if (!adapts()) return std::chrono::nanoseconds{0};
    return late_->quantile(0.99).value_or(std::chrono::nanoseconds{0});
  }

  // What the way between the hosts and the receiving boxes get: a tenth of the budget, and
  // 10 µs more (a loopback write reaches the receiving socket in a few µs).
  [[nodiscard]] static constexpr std::chrono::nanoseconds margin(
      std::chrono::nanoseconds budget) noexcept {
    return budget / 10 + std::chrono::microseconds{10};
  }
  // The hold for a receiver's pickup p99 and the sender's lateness p99 within `budget`, at
  // least `least`.
  [[nodiscard]] static std::chrono::nanoseconds within(std::chrono::nanoseconds budget,
                                                       std::chrono::nanoseconds pickup,
                                                       std::chrono::nanoseconds late,
                                                       std::chrono::nanoseconds least) noexcept {
    const auto most = budget - margin(budget);
    const auto after = std::chrono::nanoseconds{static_cast<std::int64_t>(
        std::hypot(static_cast<double>(pickup.count()), static_cast<double>(late.count())))};
    return std::clamp(most - after, least, std::max(least, most));
  }

 private:
  static constexpr int kRecomputeEvery = 64;

  void recompute() noexcept {
    since_recompute_ = 0;
    hold_ = pickup_us_ == 0 ? initial_
                            : within(budget_, std::chrono::microseconds{pickup_us_},
                                     lateness_p99(), initial_);
  }

  std::chrono::nanoseconds hold_;
  std::chrono::nanoseconds initial_;
  std::chrono::nanoseconds budget_{0};  // 0: fixed
  std::uint32_t pickup_us_ = 0;
  int since_recompute_ = 0;
  std::optional<transport::RecentQuantile> late_;  // adapting holds only (its 77 counters)
};

}  // namespace boreal::runtime
