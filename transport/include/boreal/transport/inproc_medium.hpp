// The `inproc` medium: both ends of a link in one process, joined by a single-producer /
// single-consumer ring. Used by the embedded executor and by tests.
//
// The ring has `window` slots of max_payload_bytes each, allocated once by
// make_inproc_link(); they are the receiver's frame slots. A claim takes one credit and
// hands out a slot, the sender writes its rows there in place (no copy), commit() publishes
// the frame and the receiver's poll() hands it to the sink straight from the slot. Freed
// slots go back to the sender as credit, `credit_batch` at a time as with tcp. Nothing
// allocates, locks or makes a system call per frame.
//
// Semantics follow the tcp medium: sequence numbers from 1, end of stream acknowledged by the
// receiver (the sender then reports LinkState::finished), LinkStats counted the same way.
// There is no wire, so no checksum is computed (FrameHeader::checksum is 0) and
// read_calls/write_calls count only the eventfd wake-ups described below. Both ends are
// established from the start.
//
// Waking: each direction has an eventfd registered in the other end's EventLoop. An end
// writes it only when the other end has said, in its arm(), that it is about to sleep
// (LiteBlocking); an end that keeps polling costs its peer nothing. The sender makes that
// check in do_work() (as tcp writes committed frames in do_work()), so a sender must call
// do_work() after committing for a blocked receiver to wake.
//
// Threading: each end belongs to the thread that runs its EventLoop; the two loops may be
// the same loop or run on two threads. Each EventLoop must outlive the end registered in it.
// Destroying one end before the stream finished fails the other (ErrorCategory::closed).
#pragma once

#include <memory>

#include <boreal/transport/error.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/link.hpp>

namespace boreal::transport {

struct InprocPair {
  std::unique_ptr<SendLink> send;
  std::unique_ptr<RecvLink> recv;
};

// Makes both ends of one link: `send` registered in `sender_loop`, `recv` in
// `receiver_loop` (which may be the same loop). Errors: ErrorCategory::config for options
// that cannot make a link (zero window, batch bytes smaller than one tuple),
// ErrorCategory::io when an eventfd cannot be created. Allocates the ring; call at set-up.
[[nodiscard]] Result<InprocPair> make_inproc_link(EventLoop& sender_loop,
                                                  EventLoop& receiver_loop,
                                                  const LinkOptions& options);

}  // namespace boreal::transport
