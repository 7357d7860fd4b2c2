// `block`: the "interrupt" mode. Arm every source, poll once more, then block in the event
// loop (epoll_wait / fi_trywait + fd) until an event or the agent's next deadline.
#pragma once

#include <algorithm>
#include <chrono>

#include <boreal/transport/wait_clock.hpp>
#include <boreal/transport/wait_stats.hpp>
#include <boreal/transport/waitable.hpp>

namespace boreal::transport {

// A block never waits longer than this, even with no deadline: a safety net against a
// notification that a medium failed to deliver (the thread then polls and re-arms).
inline constexpr std::chrono::nanoseconds kMaxBlock = std::chrono::seconds(1);

namespace detail {
// How one block_once() step ended.
enum class BlockOutcome {
  not_blocked,  // work arrived while arming, or the deadline had passed
  woken,        // an event ended the block before its timeout
  timed_out,    // the block lasted until the deadline (or kMaxBlock)
};

// One arm → re-poll → block step, shared by block, sleep, backoff and adaptive.
template <class Clock>
BlockOutcome block_once(Waitable& source, const LoadHints& hints, WaitStats& stats) {
  auto timeout = kMaxBlock;
  if (hints.deadline != Clock::time_point::max()) {
    const auto left = hints.deadline - Clock::now();
    if (left <= std::chrono::nanoseconds::zero()) return BlockOutcome::not_blocked;
    timeout = std::min<std::chrono::nanoseconds>(timeout, left);
  }
  ++stats.arms;
  if (!source.try_arm()) {
    ++stats.failed_arms;
    source.disarm();
    return BlockOutcome::not_blocked;
  }
  ++stats.blocks;
  const auto start = Clock::now();
  const bool woken = source.wait(timeout);
  stats.blocked += Clock::now() - start;
  ++(woken ? stats.wakeups : stats.timeouts);
  source.disarm();
  return woken ? BlockOutcome::woken : BlockOutcome::timed_out;
}
}  // namespace detail

template <class Clock = SteadyClock>
class BasicBlockWait {
 public:
  void idle(int work, Waitable& source, const LoadHints& hints) {
    ++stats_.polls;
    if (work > 0) return;
    ++stats_.empty_polls;
    detail::block_once<Clock>(source, hints, stats_);
  }
  [[nodiscard]] const WaitStats& stats() const noexcept { return stats_; }

 private:
  WaitStats stats_;
};
using BlockWait = BasicBlockWait<>;

}  // namespace boreal::transport
