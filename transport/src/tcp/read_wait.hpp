// The read wait of one tcp end, and what it says about its socket between wake-ups.
//
// Both ends of a tcp link read: the receiver its data frames, the sender the control frames
// (credit, acks) coming back. When the end's thread blocks, arm() issues an async_wait for
// readability, which stays pending until bytes arrive and its handler runs in one of the
// loop's polls. While it is pending on a socket seen empty since it was armed (quiet()), the
// socket has had nothing new to read as of the loop's last poll: in a pass that began with
// every handler run, the end skips its read (skip_read(); EventLoop's readiness,
// event_loop.hpp). Bytes already there when the wait was armed may not end it (epoll reports
// arrivals, not levels), hence "seen empty since": a FIONREAD after arm(), or a read that
// found nothing or returned less than it had room for (saw()). Linux's TCP recvmsg() stops
// short only when the receive queue and the socket's backlog are empty, so a short read
// drained the socket and the end need not read again to find it empty.
//
// In such a pass an end whose wait has run (something arrived) arms the next one before it
// reads (arm_before_read()): its read, once it drains the socket, makes the wait quiet, and
// the next passes skip the end until something more arrives. Without it the end would read in
// every pass until its thread blocks again and arm() re-arms it.
//
// A new connection (new_connection()) starts over: the old socket's wait, aborted when it
// closed, carries an older generation and changes nothing when its handler runs.
//
// Owned by the end's I/O thread, as the loop is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/handler_memory.hpp>

#include "tcp/socket_io.hpp"

namespace boreal::transport::tcp_medium {

class ReadWait {
 public:
  // `counted`: among the loop's readiness readers from the start (else from counted(true)).
  explicit ReadWait(EventLoop& loop, bool counted = true) : loop_(loop), counted_(counted) {
    if (counted_) loop_.add_readiness_reader();
  }
  ReadWait(const ReadWait&) = delete;
  ReadWait& operator=(const ReadWait&) = delete;
  ~ReadWait() {
    *alive_ = false;
    if (counted_) loop_.remove_readiness_reader();
  }

  // Whether the end reads a socket of its own, and so counts among the loop's readiness
  // readers (a receiving link on a shared connection does not: the connection reads).
  void counted(bool yes) noexcept {
    if (yes == counted_) return;
    counted_ = yes;
    if (yes) {
      loop_.add_readiness_reader();
    } else {
      loop_.remove_readiness_reader();
    }
  }

  // The end has a new socket (the old one is closed, or there was none).
  void new_connection();

  // Arms the wait on `socket` unless one is pending; its handler notifies the loop.
  void arm(Socket& socket);

  // In a pass that began with the loop's handlers run, arm() before a read. (Not in other
  // passes: a thread that does not block polls its reactor only every 100 µs, and the waits
  // would only cost it.)
  void arm_before_read(Socket& socket) {
    if (loop_.pass_began_with_poll()) arm(socket);
  }

  // What a FIONREAD after arm(), or a read after it, found: an empty socket makes a pending
  // wait quiet.
  void saw(bool empty) noexcept {
    if (empty && pending_) seen_empty_ = true;
  }

  // A read returned `got` bytes (> 0) of the `room` it offered. Returns whether it drained the
  // socket (it stopped short: see above), which saw() then records; the end need not read
  // again in this pass.
  bool read_returned(std::size_t got, std::size_t room) noexcept {
    const bool drained = got < room;
    saw(drained);
    return drained;
  }

  // Pending on a socket seen empty since it was armed: anything that arrives ends it.
  [[nodiscard]] bool quiet() const noexcept { return pending_ && seen_empty_; }

  // In a pass of the loop: whether the end may skip its read (quiet, and the pass began with
  // the loop's handlers run); the loop counts the skip.
  [[nodiscard]] bool skip_read() noexcept {
    return quiet() && loop_.skip_read_this_pass(pass_seen_);
  }

 private:
  EventLoop& loop_;
  // The handler may run after this is gone (a closed socket's wait, or the io_context's
  // destruction): it checks `alive` first.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // The handler's memory, so arming allocates nothing (handler_memory.hpp).
  SharedHandlerMemory memory_ = make_handler_memory();
  bool counted_;
  bool pending_ = false;
  bool seen_empty_ = false;
  std::uint64_t generation_ = 0;
  std::uint64_t pass_seen_ = 0;  // EventLoop::skip_read_this_pass()
};

}  // namespace boreal::transport::tcp_medium
