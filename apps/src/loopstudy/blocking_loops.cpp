// The thread-per-link strategy (loops.hpp): no readiness notification at all. Each link has
// a sender thread that sends with blocking send() and sleeps until its next deadline, and a
// receiver thread blocked in recv() (with a kWaitSliceNs receive timeout so it can notice
// that the other end failed). Each thread's SendCore / RecvCore serves that one link.
#include <string>

#include "loopstudy/drivers.hpp"
#include "loopstudy/loops.hpp"

namespace boreal::runtime::loopstudy {
namespace {

using transport::Result;

class BlockingSender {
 public:
  [[nodiscard]] Result<void> watch(SendLink& /*link*/) { return transport::success(); }
  void forget(SendLink& /*link*/) noexcept {}
  // A blocking send returns once everything is queued in the socket (or fails).
  [[nodiscard]] Result<void> offer(SendCore& core, SendLink& link) {
    auto status = core.write_all(link);
    if (!status) return status.error();
    return transport::success();
  }
  [[nodiscard]] Result<void> idle(SendCore& /*core*/, SendLink& /*link*/) {
    return transport::success();
  }
  [[nodiscard]] bool waiting() const noexcept { return false; }
  [[nodiscard]] Result<void> wait(SendCore& /*core*/, std::int64_t /*deadline_ns*/) {
    return transport::success();
  }
};

class BlockingReceiver {
 public:
  [[nodiscard]] Result<void> watch_listener(RecvLink& /*link*/) { return transport::success(); }
  [[nodiscard]] Result<void> watch(RecvLink& /*link*/) { return transport::success(); }
  // One blocking recv (or accept, between connections); the timeout_ns argument is the
  // sockets' SO_RCVTIMEO, set when they were opened.
  [[nodiscard]] Result<void> wait(RecvCore& core, std::int64_t /*timeout_ns*/) {
    for (auto& link : core.links()) {
      if (link.conn) {
        if (auto open = on_readable(core, link, false); !open) return open.error();
      } else if (!link.finished) {
        if (auto accepted = core.accept(link); !accepted) return accepted.error();
      }
    }
    return transport::success();
  }
};

}  // namespace

Result<void> run_blocking_sender(SendCore& core, const StudyControl& control) {
  BlockingSender poller;
  return drive_sender(core, poller, control);
}

Result<void> run_blocking_receiver(RecvCore& core, const StudyControl& control) {
  BlockingReceiver poller;
  return drive_receiver(core, poller, control);
}

}  // namespace boreal::runtime::loopstudy
