// `boreal bench`'s calibration step: what one wake-up costs this machine (README "Wake-ups at
// low rates"). At low rates a frame costs a wake-up at each end, so the CPU per tuple cannot
// fall below (wake-ups per tuple) × (the cost of one); the bench reports each point's CPU
// against that floor.
//
// Two threads pass a token back and forth through two eventfds, each blocking in epoll_wait
// for its turn as a node's `block` thread does; the machine's busy CPU over the exchange
// (wall × CPUs − idle from /proc/stat, as the bench measures its runs, clamped to the
// exchange's capacity), divided by the wake-ups, is the cost of one: the waker's write, the
// switch into the woken thread, its epoll_wait and read.
#pragma once

#include <chrono>
#include <cstdint>

#include <boreal/transport/error.hpp>

namespace boreal::runtime {

struct WakeCost {
  double cpu_us_per_wakeup = 0;  // machine CPU-µs per wake-up
  std::uint64_t wakeups = 0;     // wake-ups counted (two per round trip)
  double seconds = 0;            // the exchange's wall time
};

// Exchanges the token for `length` of wall time. Fails (io) when an eventfd, an epoll
// instance or /proc/stat is not available.
[[nodiscard]] transport::Result<WakeCost> measure_wake_cost(std::chrono::duration<double> length);

}  // namespace boreal::runtime
