// The receiving end of a shared tcp connection (recv_connection.hpp).
#include "tcp/recv_connection.hpp"

#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <boost/endian/conversion.hpp>

#include "tcp/tcp_recv_link.hpp"

namespace boreal::transport::tcp_medium {

namespace asio = boost::asio;

namespace {

std::uint32_t stream_of(const std::byte* header) {
  std::uint32_t stream = 0;
  std::memcpy(&stream, header + 8, sizeof stream);  // frame.cpp's kStreamIdAt
  return boost::endian::little_to_native(stream);
}

}  // namespace

RecvConnection::RecvConnection(EventLoop& loop, Socket socket, std::string peer,
                               std::size_t frame_bytes, Matcher matcher, Refused refused)
    : loop_(loop),
      socket_(std::move(socket)),
      peer_(std::move(peer)),
      matcher_(std::move(matcher)),
      refused_(std::move(refused)),
      buffer_(read_room_bytes(frame_bytes)) {
  const int on = 1;
  (void)::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  read_wait_.new_connection();
}

RecvConnection::~RecvConnection() {
  *alive_ = false;
  for (const Member& m : members_) {
    if (m.link != nullptr) m.link->drop_shared();
  }
  boost::system::error_code ignored;
  socket_.close(ignored);
}

void RecvConnection::take_hello(std::span<const std::byte> hello) {
  std::memcpy(buffer_.data() + end_, hello.data(), hello.size());
  end_ += hello.size();
  (void)take_frames(0, 0);
  flush_control();
}

int RecvConnection::pump() {
  if (closed_ || loop_.passes() == pass_done_) return 0;
  pass_done_ = loop_.passes();
  flush_control();
  int work = 0;
  if (read_wait_.skip_read()) return work;
  read_wait_.arm_before_read(socket_);
  for (int round = 0; round < 4 && !closed_; ++round) {
    if (begin_ > 0 && buffer_.size() - end_ < buffer_.size() / 2) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    const std::span<std::byte> tail(buffer_.data() + end_, buffer_.size() - end_);
    const std::size_t room = in_place_rest_.size() + tail.size();
    const StampedRead read = in_place_rest_.empty() ? read_stamped(socket_, tail)
                                                    : read_stamped(socket_, in_place_rest_, tail);
    const ssize_t n = read.bytes;
    LinkStats* counted = accountant();
    if (counted != nullptr) ++counted->read_calls;
    if (n < 0) {
      const int err = read.error;
      if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) {
        if (counted != nullptr) ++counted->would_block;
        if (err != EINTR) read_wait_.saw(true);
        break;
      }
      close("connection lost: " + std::string(std::strerror(err)), /*broken=*/false);
      break;
    }
    if (n == 0) {
      close(begin_ == end_ && in_place_link_ == nullptr && discard_ == 0
                ? "the sender closed the connection"
                : "the sender closed the connection in the middle of a frame",
            /*broken=*/false);
      break;
    }
    const auto got = static_cast<std::size_t>(n);
    end_ += commit_in_place(got, read);
    ++work;
    if (!take_frames(read.arrived_ns, read.read_ns)) break;
    if (read_wait_.read_returned(got, room)) break;
  }
  flush_control();
  return work;
}

std::size_t RecvConnection::commit_in_place(std::size_t got, const StampedRead& read) {
  if (in_place_rest_.empty()) return got;
  const std::size_t in_place = std::min(got, in_place_rest_.size());
  in_place_rest_ = in_place_rest_.subspan(in_place);
  TcpRecvLink* link = in_place_link_;
  const bool whole = in_place_rest_.empty();
  if (whole) in_place_link_ = nullptr;
  link->commit(in_place, whole, read.arrived_ns, read.read_ns);
  return got - in_place;
}

bool RecvConnection::take_frames(std::int64_t arrived_ns, std::int64_t read_ns) {
  if (discard_ > 0) {
    const std::size_t dropped = std::min(discard_, end_ - begin_);
    begin_ += dropped;
    discard_ -= dropped;
  }
  while (!closed_ && end_ - begin_ >= kFrameHeaderBytes) {
    const std::byte* at = buffer_.data() + begin_;
    const auto raw = std::span<const std::byte, kFrameHeaderBytes>(at, kFrameHeaderBytes);
    const std::uint32_t stream = stream_of(at);
    const Member* member = member_of(stream);
    // What this connection needs to find the next frame: magic, version, flags, and a length
    // within the limit of the link the frame is for (a hello's own; what the buffer holds for
    // a link that failed). The link checks the rest.
    std::size_t most = buffer_.size() - kFrameHeaderBytes;
    if (member != nullptr && member->link != nullptr) {
      most = member->link->options().max_payload_bytes;
    }
    FrameLimits limits{.stream_id = stream,
                       .tuple_bytes = 0,
                       .max_payload_bytes = static_cast<std::uint32_t>(
                           std::max<std::size_t>(most, kHelloPayloadBytes))};
    auto header = decode_header(raw, limits);
    if (!header) {
      close("frame for stream " + std::to_string(stream) + ": " + header.error().message,
            /*broken=*/true);
      return false;
    }
    const std::size_t frame_bytes = kFrameHeaderBytes + header.value().payload_bytes;
    if (end_ - begin_ < frame_bytes) {
      // The rest is on its way: it is read in place when the frame's link takes it (a link
      // that fails here, for want of room, lets go of the stream; one that finished takes
      // nothing more, and the frame is read here and dropped).
      if ((header.value().flags & kFlagHello) == 0 && member != nullptr &&
          member->link != nullptr) {
        TcpRecvLink* link = member->link;
        const std::span<std::byte> room = link->reserve(frame_bytes);
        if (!room.empty()) {
          const std::size_t have = end_ - begin_;
          std::memcpy(room.data(), at, have);
          link->commit(have, /*whole=*/false, 0, 0);
          in_place_link_ = link;
          in_place_rest_ = room.subspan(have);
          begin_ = end_;
        }
      }
      break;
    }
    if ((header.value().flags & kFlagHello) != 0) {
      on_hello(raw, header.value());
    } else if (member == nullptr) {
      close("frame for stream " + std::to_string(stream) +
                ", which has not said hello on this connection",
            /*broken=*/true);
      return false;
    } else if (member->link != nullptr) {
      member->link->stage({at, frame_bytes}, arrived_ns, read_ns);
    }  // else its link failed here, or its sender came back on another connection: dropped
    begin_ += frame_bytes;
  }
  if (begin_ == end_) begin_ = end_ = 0;
  return !closed_;
}

void RecvConnection::on_hello(std::span<const std::byte, kFrameHeaderBytes> raw,
                              const FrameHeader& header) {
  const std::span<const std::byte> body(raw.data() + kFrameHeaderBytes, kHelloPayloadBytes);
  std::string problem;
  TcpRecvLink* link = nullptr;
  if (auto ok = verify_checksum(header, raw, body); !ok) {
    problem = ok.error().message;
  } else if (auto hello = decode_hello(body); !hello) {
    problem = hello.error().message;
  } else if (header.sequence != kHelloOnSharedConnection) {
    problem = "a hello for a connection of its own, on a shared one";
  } else {
    link = matcher_(hello.value(), problem);
    if (link != nullptr) {
      link->attach_shared(*this, peer_, hello.value().sender_id);
      // A second hello of a stream already here is its sender's reconnect on this
      // connection: the link started over as on a new one.
      std::erase_if(members_, [&](const Member& m) { return m.stream_id == header.stream_id; });
      members_.push_back({header.stream_id, link});
      return;
    }
  }
  refused_(Error{ErrorCategory::protocol, 0,
                 "hello for stream " + std::to_string(header.stream_id) +
                     " on the shared connection from " + peer_ + " refused: " + problem});
  std::array<std::byte, kFrameHeaderBytes> refusal{};
  encode_header(FrameHeader{.flags = kFlagHeartbeat,
                            .stream_id = header.stream_id,
                            .sequence = kHelloRefused},
                {}, refusal);
  queue_control(refusal);
}

void RecvConnection::queue_control(std::span<const std::byte> frames) {
  control_out_.insert(control_out_.end(), frames.begin(), frames.end());
}

void RecvConnection::flush_control() {
  if (closed_ || control_out_.empty()) return;
  boost::system::error_code ec;
  const auto n = socket_.write_some(asio::buffer(control_out_), ec);
  LinkStats* counted = accountant();
  if (counted != nullptr) ++counted->write_calls;
  if (ec == asio::error::would_block) {
    if (counted != nullptr) ++counted->would_block;
    return;
  }
  if (ec) return close("cannot send credit: " + ec.message(), /*broken=*/false);
  control_out_.erase(control_out_.begin(), control_out_.begin() + static_cast<long>(n));
}

bool RecvConnection::arm() {
  if (closed_) return true;
  flush_control();
  if (closed_) return true;
  if (!control_out_.empty() && !write_wait_pending_) {
    write_wait_pending_ = true;
    socket_.async_wait(Socket::wait_write,
                       with_memory(write_wait_memory_,
                                   [this, alive = alive_](const boost::system::error_code&) {
                                     if (!*alive) return;
                                     write_wait_pending_ = false;
                                     loop_.notify();
                                   }));
  }
  if (read_wait_.quiet()) return true;
  read_wait_.arm(socket_);
  boost::system::error_code ec;
  const bool empty = socket_.available(ec) == 0 && !ec;
  read_wait_.saw(empty);
  return empty;
}

void RecvConnection::detach(const TcpRecvLink& link) noexcept {
  // The stream stays known: frames of it still on the way are dropped, not taken for a
  // stream that never said hello.
  for (Member& m : members_) {
    if (m.link == &link) m.link = nullptr;
  }
  if (in_place_link_ == &link) {
    discard_ = in_place_rest_.size();
    in_place_link_ = nullptr;
    in_place_rest_ = {};
  }
}

void RecvConnection::close(const std::string& why, bool broken) {
  if (closed_) return;
  closed_ = true;
  in_place_link_ = nullptr;
  in_place_rest_ = {};
  discard_ = 0;
  boost::system::error_code ignored;
  socket_.close(ignored);
  const auto members = std::move(members_);
  members_.clear();
  for (const Member& m : members) {
    if (m.link != nullptr) m.link->lost_shared(why, broken);
  }
}

LinkStats* RecvConnection::accountant() const noexcept {
  for (const Member& m : members_) {
    if (m.link != nullptr) return &m.link->counted_stats();
  }
  return nullptr;
}

const RecvConnection::Member* RecvConnection::member_of(std::uint32_t stream_id) const noexcept {
  for (const Member& m : members_) {
    if (m.stream_id == stream_id) return &m;
  }
  return nullptr;
}

}  // namespace boreal::transport::tcp_medium
