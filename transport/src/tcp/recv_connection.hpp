// The receiving end of a tcp connection that several links share (their hellos say so:
// kHelloOnSharedConnection; docs/design.md, "One tcp connection per pair of threads").
//
// It reads what arrives into a buffer of its own and copies each complete frame into the
// staging buffer of the link whose stream the header names, which always has room for what
// that link's credit allows: the connection never stops reading because one link's consumer
// is paused, so one slow stream does not stall the others. A frame a read returned only in
// part is read on in place: its part is copied to its link's staging buffer and the next
// read takes the rest straight there and what follows into the connection's buffer (one
// recvmsg() filling both), so most bytes of a large frame are copied once, by the kernel.
// A hello is checked as the listener checks a first hello (TcpListener's matcher) and
// attaches its link to this connection, or is refused with a heartbeat carrying
// kHelloRefused, the others carrying on.
// The links' control frames (credit, acks) go back gathered, one send per pass.
//
// Faults: a frame whose header cannot be parsed (magic, version, flags, a length beyond its
// link's limit), or that names a stream with no hello on this connection, loses the stream
// boundary: every link on the connection fails. A frame that breaks only its link's rules
// (checksum, credit, sequence, tuple count) fails that link in its own checks, and the
// connection reads on. A lost connection is lost by all its links at once; each waits for
// its sender to come back, as it does alone.
//
// Threading: belongs to the thread of its EventLoop, as its links do.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boreal/transport/error.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/handler_memory.hpp>
#include <boreal/transport/link.hpp>

#include "tcp/read_wait.hpp"
#include "tcp/socket_io.hpp"

namespace boreal::transport::tcp_medium {

class TcpRecvLink;

class RecvConnection {
 public:
  // The listener's check of a hello: the link it attaches to, or nullptr and why not.
  using Matcher = std::function<TcpRecvLink*(const HelloPayload&, std::string& problem)>;
  // A hello refused on this connection, for the listener's rejected().
  using Refused = std::function<void(Error)>;

  // `frame_bytes`: the largest frame (header and payload) of any link that may attach.
  RecvConnection(EventLoop& loop, Socket socket, std::string peer, std::size_t frame_bytes,
                 Matcher matcher, Refused refused);
  RecvConnection(const RecvConnection&) = delete;
  RecvConnection& operator=(const RecvConnection&) = delete;
  ~RecvConnection();

  // The first hello, read by the listener before it knew the connection was shared.
  void take_hello(std::span<const std::byte> hello);
  // Reads what has arrived and hands its frames to their links; once per pass of the loop.
  int pump();
  // The connection's waits; false when there is something to read or send now.
  bool arm();
  // A member's control frames, sent with the others' at the next pump or arm, or flush().
  void queue_control(std::span<const std::byte> frames);
  // Sends the control frames queued (as far as the socket takes them).
  void flush() { flush_control(); }
  // The link no longer uses this connection (it failed, or its sender came back on another).
  void detach(const TcpRecvLink& link) noexcept;
  [[nodiscard]] bool closed() const noexcept { return closed_; }
  [[nodiscard]] const std::string& peer() const noexcept { return peer_; }

 private:
  struct Member {
    std::uint32_t stream_id;
    TcpRecvLink* link;  // nullptr: detached
  };
  // Takes what one read returned; false when the connection was closed.
  bool take_frames(std::int64_t arrived_ns, std::int64_t read_ns);
  // Hands `got` bytes of a read that began with the frame being read in place to its link;
  // what is left of them went to the buffer.
  std::size_t commit_in_place(std::size_t got, const StampedRead& read);
  void on_hello(std::span<const std::byte, kFrameHeaderBytes> raw, const FrameHeader& header);
  void flush_control();
  // Every link on the connection loses it: `broken` says the stream boundary is lost (they
  // fail); otherwise each waits for its sender to come back.
  void close(const std::string& why, bool broken);
  // Where the connection's system calls are counted: the statistics of its first attached
  // link (they serve every link on it; counted once, so the links' sums stay true).
  [[nodiscard]] LinkStats* accountant() const noexcept;
  // The stream's entry (its link nullptr once detached), or nullptr: no hello for it here.
  [[nodiscard]] const Member* member_of(std::uint32_t stream_id) const noexcept;

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  Socket socket_;
  std::string peer_;
  Matcher matcher_;
  Refused refused_;
  std::vector<Member> members_;
  std::vector<std::byte> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  // The frame being read in place (take_frames() began it): its link, and the rest of its
  // room there, which the next read fills first.
  TcpRecvLink* in_place_link_ = nullptr;
  std::span<std::byte> in_place_rest_;
  // Bytes still to come of a frame begun in place whose link let go of it: dropped.
  std::size_t discard_ = 0;
  std::vector<std::byte> control_out_;
  std::uint64_t pass_done_ = ~std::uint64_t{0};
  bool closed_ = false;
  ReadWait read_wait_{loop_};
  bool write_wait_pending_ = false;
  SharedHandlerMemory write_wait_memory_ = make_handler_memory();
};

}  // namespace boreal::transport::tcp_medium
