// What an I/O thread does when a poll found nothing: the wait mode, as data
// (docs/design.md, convention 2).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <boreal/transport/error.hpp>

namespace boreal::transport {

enum class WaitMode : std::uint8_t { busy, block, sleep, backoff, adaptive };

inline constexpr std::array<WaitMode, 5> kAllWaitModes = {
    WaitMode::busy, WaitMode::block, WaitMode::sleep, WaitMode::backoff, WaitMode::adaptive};

[[nodiscard]] std::string_view to_string(WaitMode mode) noexcept;
// Parses "busy", "block", "sleep", "backoff" or "adaptive". An unknown name is a config
// error that lists the valid ones.
[[nodiscard]] Result<WaitMode> parse_wait_mode(std::string_view name);

struct WaitConfig {
  WaitMode mode = WaitMode::block;
  // Largest delay the wait may add to a tuple (sleep, adaptive). 200 µs by default: about
  // ten wake-ups of a 2-vCPU VM (docs/transport-notes.md §3), well under a typical streaming SLO.
  std::chrono::microseconds latency_budget{200};
  // Spin budget before yielding/blocking (backoff). Adaptive spins min(this, budget/4, the
  // measured wake-up cost), and only before it blocks. 20 µs ~ two wake-ups' CPU cost on the
  // reference VM.
  std::chrono::microseconds spin{20};
  // Fraction of the time-to-full that one sleep may use (the seed's f).
  double sleep_fraction = 0.5;
};

}  // namespace boreal::transport
