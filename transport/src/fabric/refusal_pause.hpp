// When to try again a control send the provider refused for now (-FI_EAGAIN). Private to the
// fabric media.
//
// rxm refuses a send while it sets up the connection to the peer, and each send it refuses
// after a rejected connection attempt starts another attempt: a peer that nobody serves (a
// receiver not up yet, a sender gone after its hello) gets a connection attempt per refused
// send. Tried on every pass, that burns a core in connection attempts (a sender alone used
// 2.74 s of CPU in 3 s under `block`; a receiver answering a sender gone after its hello
// tried ~58 000 times in 1.5 s: docs/transport-notes.md §1.3.1). So a refused send is tried
// again after a pause as long as it has been refused so far, at least kFirst (below a
// loopback connect's time) and at most kMost: the pauses double, a connect in progress is
// soon through, and a peer that is not there costs a few attempts a second.
//
// Data frames are not paced by this: they are refused while the provider's queues are full
// too, and room comes back with the CQ's completions, which wake the thread.
//
// Threading: owned by the thread that owns its link.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

namespace boreal::transport::fabric_medium {

class RefusalPause {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::microseconds kFirst{100};
  static constexpr std::chrono::milliseconds kMost{200};

  // A send was refused at `now`. Returns when to try again.
  Clock::time_point refused(Clock::time_point now) {
    if (!since_) since_ = now;
    retry_at_ = now + std::clamp<Clock::duration>(now - *since_, kFirst, kMost);
    return retry_at_;
  }
  // A send was taken (or the peer changed): the next refusal starts a new series.
  void clear() noexcept { since_.reset(); }

  // Since when sends have been refused, while they are.
  [[nodiscard]] std::optional<Clock::time_point> since() const noexcept { return since_; }
  // Whether a send may be tried at `now`: none was refused, or its pause is over.
  [[nodiscard]] bool may_try(Clock::time_point now) const noexcept {
    return !since_ || now >= retry_at_;
  }
  // While refusing: when the next try is due.
  [[nodiscard]] Clock::time_point retry_at() const noexcept { return retry_at_; }

 private:
  std::optional<Clock::time_point> since_;
  Clock::time_point retry_at_{};
};

}  // namespace boreal::transport::fabric_medium
