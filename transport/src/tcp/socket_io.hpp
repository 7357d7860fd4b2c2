// Small pieces both TCP ends share: socket set-up, errors with the peer's address, and a
// fixed queue of 32-byte control frames (credit, ack) waiting to be written.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include <boost/asio/ip/tcp.hpp>

#include <boreal/transport/error.hpp>
#include <boreal/transport/frame.hpp>

namespace boreal::transport::tcp_medium {

using Socket = boost::asio::ip::tcp::socket;

// "127.0.0.1:7101", or "?" if the socket has no peer.
std::string peer_name(const Socket& socket);

// TCP_NODELAY and non-blocking mode. Fails with an io Error naming `what`.
Result<void> configure(Socket& socket, const std::string& what);

// One non-blocking recvmsg() into `room` (recvmsg() rather than asio's read_some(): a socket
// with SO_TIMESTAMPNS says when its bytes arrived in a control message). `bytes` as recvmsg()
// returns it (-1: see `error`, the errno); `arrived_ns`, when the kernel took in the last of
// the bytes, and `read_ns`, when the read returned, in CLOCK_REALTIME ns (0 and 0: no stamp).
// `then`: where bytes go once `room` is full (one recvmsg() fills both, in order).
struct StampedRead {
  ssize_t bytes = 0;
  int error = 0;
  std::int64_t arrived_ns = 0;
  std::int64_t read_ns = 0;
};
StampedRead read_stamped(Socket& socket, std::span<std::byte> room,
                         std::span<std::byte> then = {});

// How much one read asks for: at least 64 KiB, and always two of the largest frames, at each
// kind of receiving end (a link's own socket, a shared connection). A read that asks for
// more at the maximum rate lands in memory the cache no longer holds: a link of its own that
// read up to its whole window of staging (2 MiB with the defaults) carried 0.72-0.83x the
// tuples/s at the maximum that it carries reading 64 KiB at a time
// (docs/bench/experiments/read-room/).
[[nodiscard]] constexpr std::size_t read_room_bytes(std::size_t largest_frame_bytes) noexcept {
  constexpr std::size_t kLeastReadBytes = 64 * 1024;
  return kLeastReadBytes > 2 * largest_frame_bytes ? kLeastReadBytes : 2 * largest_frame_bytes;
}

// Control frames have no payload, so they are encoded whole into this queue and written
// with one send. 32 frames = 1 KiB: far more than one poll ever queues (one credit and at
// most one ack), so a full queue means the peer stopped reading.
class ControlQueue {
 public:
  [[nodiscard]] bool push(const FrameHeader& header) noexcept {
    if (end_ + kFrameHeaderBytes > bytes_.size()) return false;
    encode_header(header, {}, std::span<std::byte, kFrameHeaderBytes>(bytes_.data() + end_,
                                                                     kFrameHeaderBytes));
    end_ += kFrameHeaderBytes;
    return true;
  }
  [[nodiscard]] bool empty() const noexcept { return begin_ == end_; }
  [[nodiscard]] std::span<const std::byte> pending() const noexcept {
    return {bytes_.data() + begin_, end_ - begin_};
  }
  void consume(std::size_t n) noexcept {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }

 private:
  std::array<std::byte, 32 * kFrameHeaderBytes> bytes_{};
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace boreal::transport::tcp_medium
