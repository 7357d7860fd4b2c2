// The clock and CPU primitives the wait modes use. A template parameter of every wait mode,
// so tests substitute a fake clock and check the state machines without real time passing.
#pragma once

#include <chrono>

namespace boreal::transport {

struct SteadyClock {
  using time_point = std::chrono::steady_clock::time_point;
  static time_point now() noexcept { return std::chrono::steady_clock::now(); }
  // clock_nanosleep(CLOCK_MONOTONIC); precision depends on the thread's timer slack.
  static void sleep_for(std::chrono::nanoseconds duration) noexcept;
  static void yield() noexcept;
  // One CPU pause hint (about 10 ns on x86, docs/transport-notes.md §3).
  static void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
};

// Lowers the calling thread's timer slack to 1 ns (PR_SET_TIMERSLACK) so short sleeps are
// short: nanosleep(10 µs) took 95 µs with the default 50 µs slack and 32 µs with 1 ns on the
// reference VM (docs/transport-notes.md §3). Returns false if the kernel refused.
bool lower_timer_slack() noexcept;

}  // namespace boreal::transport
