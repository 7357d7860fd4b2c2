// What both ends of one loop-study run agree on (sizes, schedule, deadlines) and the one
// flag they share to stop each other. Private to loopstudy/.
#pragma once

#include <atomic>
#include <cstdint>

#include <boreal/transport/frame.hpp>

namespace boreal::runtime::loopstudy {

// Immutable after run_study() builds it; read by every thread.
struct StudyShape {
  double rate = 0;                      // tuples/s over all links; 0 = as fast as possible
  std::uint64_t total_tuples = 0;       // round(rate × duration) when rate > 0
  std::uint32_t tuple_bytes = 0;
  std::uint32_t tuples_per_frame = 0;   // batch_bytes / tuple_bytes
  std::uint32_t frame_max_bytes = 0;    // header + tuples_per_frame × tuple_bytes
  std::int64_t flush_ns = 0;
  std::int64_t start_ns = 0;            // CLOCK_MONOTONIC: tuple g is due at start + g / rate
  std::int64_t end_ns = 0;              // start + duration: rate 0 stops generating here
  std::uint32_t reconnect_every = 0;    // frames per connection; 0 = never
  int links = 0;

  // Scheduled time of the global tuple g (rate > 0).
  [[nodiscard]] std::int64_t due_ns(std::uint64_t g) const noexcept {
    return start_ns + static_cast<std::int64_t>(static_cast<double>(g) * 1e9 / rate);
  }
  // Tuples link l sends when rate > 0: the g < total_tuples with g mod links == l.
  [[nodiscard]] std::uint64_t link_tuples(int l) const noexcept {
    const auto first = static_cast<std::uint64_t>(l);
    return total_tuples > first ? (total_tuples - first + static_cast<std::uint64_t>(links) - 1) /
                                      static_cast<std::uint64_t>(links)
                                : 0;
  }
};

// Shared by the two ends' threads: either sets `abort` when it fails, and both give up
// (ErrorCategory::closed) when the stream has not finished by give_up_ns.
struct StudyControl {
  std::atomic<bool> abort{false};
  std::int64_t give_up_ns = 0;
};

// The longest a wait blocks before the loop looks at StudyControl again.
inline constexpr std::int64_t kWaitSliceNs = 100'000'000;

}  // namespace boreal::runtime::loopstudy
