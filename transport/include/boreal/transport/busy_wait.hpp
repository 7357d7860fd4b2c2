// `busy`: spin on do_work() with a CPU pause hint. Lowest latency; one core per thread always.
#pragma once

#include <boreal/transport/wait_clock.hpp>
#include <boreal/transport/wait_stats.hpp>
#include <boreal/transport/waitable.hpp>

namespace boreal::transport {

template <class Clock = SteadyClock>
class BasicBusyWait {
 public:
  void idle(int work, Waitable& /*source*/, const LoadHints& /*hints*/) noexcept {
    ++stats_.polls;
    if (work > 0) return;
    ++stats_.empty_polls;
    ++stats_.spins;
    Clock::relax();
  }
  [[nodiscard]] const WaitStats& stats() const noexcept { return stats_; }

 private:
  WaitStats stats_;
};
using BusyWait = BasicBusyWait<>;

}  // namespace boreal::transport
