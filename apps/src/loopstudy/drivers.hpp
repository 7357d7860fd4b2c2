// The two ends' loops, written once and specialised at compile time by a wait strategy
// (a "poller"; the hot loop makes no virtual call). A sender poller offers:
//   Result<void> watch(SendLink&)        a connection opened
//   void forget(SendLink&)               it is about to close
//   Result<void> offer(SendCore&, SendLink&)  the link has sealed bytes: send or arm
//   Result<void> idle(SendCore&, SendLink&)   the link had nothing to send this iteration
//   bool waiting() const                 something waits for writability
//   Result<void> wait(SendCore&, std::int64_t deadline_ns)  block until writable/deadline
// and a receiver poller:
//   Result<void> watch_listener(RecvLink&), watch(RecvLink&)
//   Result<void> wait(RecvCore&, std::int64_t timeout_ns)   block, then handle what is ready
// When neither end waits for the other, the sender sleeps until its next deadline.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <boreal/transport/error.hpp>

#include "loopstudy/recv_core.hpp"
#include "loopstudy/send_core.hpp"
#include "loopstudy/study_shape.hpp"

namespace boreal::runtime::loopstudy {

[[nodiscard]] inline transport::Result<void> check_control(const StudyControl& control,
                                                           const char* end) {
  if (control.abort.load(std::memory_order_relaxed)) {
    return transport::fail(transport::ErrorCategory::closed, 0,
                           std::string{end} + ": stopped because the other end failed");
  }
  if (now_ns() > control.give_up_ns) {
    return transport::fail(transport::ErrorCategory::closed, 0,
                           std::string{end} + ": the stream did not finish within 10 s of its end");
  }
  return transport::success();
}

template <class Poller>
[[nodiscard]] transport::Result<void> drive_sender(SendCore& core, Poller& poller,
                                                   const StudyControl& control) {
  for (auto& link : core.links()) {
    if (auto ok = poller.watch(link); !ok) return ok;
  }
  while (!core.finished()) {
    if (auto ok = check_control(control, "sender"); !ok) return ok;
    const std::int64_t now = now_ns();
    core.produce(now);
    for (auto& link : core.links()) {
      if (link.closed) continue;
      auto ok = SendCore::has_pending(link) ? poller.offer(core, link) : poller.idle(core, link);
      if (!ok) return ok;
      if (SendCore::wants_reconnect(link)) {
        poller.forget(link);
        if (ok = core.reconnect(link); !ok) return ok;
        if (ok = poller.watch(link); !ok) return ok;
      }
      if (SendCore::wants_close(link)) {
        poller.forget(link);
        if (ok = core.close(link); !ok) return ok;
      }
    }
    if (core.finished()) break;
    const std::int64_t deadline = core.next_deadline(now);
    if (poller.waiting()) {
      if (auto ok = poller.wait(core, deadline); !ok) return ok;
    } else {
      core.sys().sleep_until(std::min(deadline, now_ns() + kWaitSliceNs), now_ns());
    }
  }
  return transport::success();
}

template <class Poller>
[[nodiscard]] transport::Result<void> drive_receiver(RecvCore& core, Poller& poller,
                                                     const StudyControl& control) {
  for (auto& link : core.links()) {
    if (auto ok = poller.watch_listener(link); !ok) return ok;
    if (link.conn) {
      if (auto ok = poller.watch(link); !ok) return ok;
    }
  }
  while (!core.finished()) {
    if (auto ok = check_control(control, "receiver"); !ok) return ok;
    if (auto ok = poller.wait(core, kWaitSliceNs); !ok) return ok;
  }
  return transport::success();
}

// One end driven by a poller built from its core alone (uring, sigio).
template <class Poller>
[[nodiscard]] transport::Result<void> run_sender_with(SendCore& core, const StudyControl& control) {
  Poller poller(core);
  if (auto ok = poller.open(); !ok) return ok;
  return drive_sender(core, poller, control);
}

template <class Poller>
[[nodiscard]] transport::Result<void> run_receiver_with(RecvCore& core,
                                                        const StudyControl& control) {
  Poller poller(core);
  if (auto ok = poller.open(); !ok) return ok;
  return drive_receiver(core, poller, control);
}

// What every receiver poller does with a readable connection: read (once, or until it
// would block when `drain`), and close it at end of file. Returns whether it is still open.
[[nodiscard]] inline transport::Result<bool> on_readable(RecvCore& core, RecvLink& link,
                                                         bool drain) {
  if (!link.conn) return false;
  auto status = drain ? core.drain(link) : core.read_once(link);
  if (!status) return status.error();
  if (status.value() != ReadStatus::eof) return true;
  if (auto ok = core.close_conn(link); !ok) return ok.error();
  return false;
}

}  // namespace boreal::runtime::loopstudy
