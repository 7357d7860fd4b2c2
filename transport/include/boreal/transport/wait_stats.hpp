// Counters kept by every wait mode, reported per I/O thread.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace boreal::transport {

// Where the adaptive mode spent an idle episode.
enum class IdleState : std::uint8_t { spin, sleep, block };
inline constexpr std::size_t kIdleStateCount = 3;

struct WaitStats {
  std::uint64_t polls = 0;        // do_work() calls the wait mode saw
  std::uint64_t empty_polls = 0;  // ... that found nothing to do
  std::uint64_t spins = 0;        // CPU pause hints
  std::uint64_t yields = 0;       // sched_yield calls
  std::uint64_t sleeps = 0;       // clock_nanosleep calls
  std::chrono::nanoseconds slept{0};           // time asked for
  std::chrono::nanoseconds sleep_overshoot{0}; // time actually slept beyond it
  std::uint64_t arms = 0;         // attempts to enter blocking
  std::uint64_t failed_arms = 0;  // ... abandoned because work arrived while arming
  std::uint64_t blocks = 0;       // blocking waits
  std::uint64_t wakeups = 0;      // ... ended by an event
  std::uint64_t timeouts = 0;     // ... ended by their timeout
  std::chrono::nanoseconds blocked{0};
  // Adaptive mode: how often the chosen state changed and how long each lasted.
  std::uint64_t switches = 0;
  std::uint64_t spin_skips = 0;   // idle episodes that skipped spinning (it was not paying)
  std::array<std::chrono::nanoseconds, kIdleStateCount> state_time{};
  std::array<std::uint64_t, kIdleStateCount> state_entries{};
};

}  // namespace boreal::transport
