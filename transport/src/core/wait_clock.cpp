#include <boreal/transport/wait_clock.hpp>

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <cerrno>

namespace boreal::transport {

void SteadyClock::sleep_for(std::chrono::nanoseconds duration) noexcept {
  if (duration <= std::chrono::nanoseconds::zero()) return;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(duration.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(duration.count() % 1'000'000'000);
  // A signal may cut the sleep short; the caller polls and sleeps again, so no retry here.
  ::clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
}

void SteadyClock::yield() noexcept { ::sched_yield(); }

bool lower_timer_slack() noexcept { return ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0; }

}  // namespace boreal::transport
