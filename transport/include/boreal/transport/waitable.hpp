// A source of events that an idle thread can block on without losing a wake-up.
//
// Protocol (Seastar's "enter interrupt mode", libfabric's fi_trywait):
//   if (w.try_arm()) { w.wait(timeout); }  w.disarm();
// try_arm() asks every source to notify and then checks once more for work that arrived
// before the notification was in place; it returns false when there is work (poll again
// instead of blocking). wait() really blocks (no spinning) until an armed source fires or the
// timeout passes.
#pragma once

#include <chrono>

namespace boreal::transport {

class Waitable {
 public:
  virtual ~Waitable() = default;
  [[nodiscard]] virtual bool try_arm() = 0;
  // Returns true when woken by a source, false on timeout. nanoseconds::max() = no timeout.
  virtual bool wait(std::chrono::nanoseconds timeout) = 0;
  virtual void disarm() = 0;
  // The thread slept (a timed sleep with nothing armed, not wait()): whatever happened on its
  // sources meanwhile is for its next polls to find.
  virtual void slept() {}
};

// What the thread's agent knows about its load, kept current by its do_work(); read by the
// sleep and adaptive modes. Times are steady_clock.
struct LoadHints {
  double arrival_rate_hz = 0.0;      // EWMA of frames (or credits) arriving per second
  double free_capacity = 0.0;        // frames that can still arrive before the sender stalls
                                     // (+inf when nothing overflows: a sending-only thread)
  std::chrono::steady_clock::time_point deadline =  // next timer the agent must serve
      std::chrono::steady_clock::time_point::max();
};

}  // namespace boreal::transport
