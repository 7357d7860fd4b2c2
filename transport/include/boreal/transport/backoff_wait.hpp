// `backoff`: spin for a budget, then yield a few times, then block (Aeron's BackoffIdleStrategy
// and NAPI's shape). Any work resets it to spinning.
#pragma once

#include <chrono>
#include <optional>

#include <boreal/transport/block_wait.hpp>
#include <boreal/transport/wait_clock.hpp>
#include <boreal/transport/wait_mode.hpp>
#include <boreal/transport/wait_stats.hpp>
#include <boreal/transport/waitable.hpp>

namespace boreal::transport {

// Yields after the spin budget before blocking. A yield costs ~170 ns here (docs/transport-notes.md
// §3), so 10 of them add little CPU and catch a peer that is about to run on this core.
inline constexpr int kBackoffYields = 10;

template <class Clock = SteadyClock>
class BasicBackoffWait {
 public:
  explicit BasicBackoffWait(WaitConfig config) : config_(config) {}

  void idle(int work, Waitable& source, const LoadHints& hints) {
    ++stats_.polls;
    if (work > 0) {
      idle_since_.reset();
      yields_ = 0;
      return;
    }
    ++stats_.empty_polls;
    const auto now = Clock::now();
    if (!idle_since_) idle_since_ = now;
    if (now - *idle_since_ < config_.spin) {
      ++stats_.spins;
      Clock::relax();
    } else if (yields_ < kBackoffYields) {
      ++yields_;
      ++stats_.yields;
      Clock::yield();
    } else {
      detail::block_once<Clock>(source, hints, stats_);
    }
  }
  [[nodiscard]] const WaitStats& stats() const noexcept { return stats_; }

 private:
  WaitConfig config_;
  WaitStats stats_;
  std::optional<typename Clock::time_point> idle_since_;
  int yields_ = 0;
};
using BackoffWait = BasicBackoffWait<>;

}  // namespace boreal::transport
