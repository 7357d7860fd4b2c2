#include "tcp/tcp_recv_link.hpp"

#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <boost/asio/write.hpp>

#include "tcp/recv_connection.hpp"

namespace boreal::transport::tcp_medium {

namespace asio = boost::asio;

TcpRecvLink::TcpRecvLink(EventLoop& loop, const LinkOptions& options)
    : loop_(loop),
      options_(options),
      limits_{.stream_id = options.stream_id,
              .tuple_bytes = options.tuple_bytes,
              .max_payload_bytes = options.max_payload_bytes},
      staging_bytes_(static_cast<std::size_t>(options.window) *
                     (kFrameHeaderBytes + options.max_payload_bytes)),
      read_bytes_(read_room_bytes(kFrameHeaderBytes + options.max_payload_bytes)),
      // Not zeroed: a page is touched when bytes first arrive in it (see the header).
      staging_(new std::byte[staging_bytes_]),
      credits_(options.window, std::max<std::uint32_t>(1, std::min(options.credit_batch,
                                                                  options.window))),
      next_sequence_(options.resume_after + 1),
      acked_(options.resume_after) {
  // The loop keeps this source, and the io_context the wait handlers, after this link is
  // gone: both check `alive` first.
  loop_.add_source([this, alive = alive_] { return !*alive || arm(); });
}

TcpRecvLink::~TcpRecvLink() {
  *alive_ = false;
  leave_connection();
}

std::string TcpRecvLink::refuses(std::uint32_t sender_id) const {
  if (state_ == LinkState::failed) return "it failed: " + error_->message;
  // sender id 0: a sender that never reconnects, so a second connection is a second sender.
  if (connected() && (sender_id == 0 || sender_id != sender_id_)) return "it is already connected";
  return {};
}

void TcpRecvLink::leave_connection() {
  if (socket_) {
    boost::system::error_code ignored;
    socket_->close(ignored);
    socket_.reset();
  }
  read_wait_.counted(false);
  if (shared_ != nullptr) {
    shared_->detach(*this);
    shared_ = nullptr;
  }
}

void TcpRecvLink::attach(Socket socket, std::string peer, std::uint32_t sender_id) {
  // The same sender again: its old connection is dead, whether or not this end noticed.
  leave_connection();
  socket_.emplace(std::move(socket));
  read_wait_.new_connection();
  read_wait_.counted(true);
  // Arrival times for the pickup report. Linux switches receive stamps on for the host in
  // deferred work when the first socket asks, so the first reads on a host where no socket
  // had them may come unstamped; those frames say "unknown" and the report skips them.
  const int on = 1;
  (void)::setsockopt(socket_->native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  start_connection(std::move(peer), sender_id);
}

void TcpRecvLink::attach_shared(RecvConnection& connection, std::string peer,
                                std::uint32_t sender_id) {
  leave_connection();
  shared_ = &connection;
  ever_shared_ = true;
  start_connection(std::move(peer), sender_id);
}

std::uint64_t TcpRecvLink::arrivals() const {
  if (!ever_shared_) return stats_.frames;
  return stats_.read_calls - std::min(stats_.read_calls, stats_.would_block);
}

void TcpRecvLink::start_connection(std::string peer, std::uint32_t sender_id) {
  if (ever_attached_) ++stats_.reconnects;
  ever_attached_ = true;
  peer_ = std::move(peer);
  sender_id_ = sender_id;
  // A fresh connection: nothing of the old one's bytes or credit carries over.
  begin_ = end_ = 0;
  peer_closed_ = false;
  frames_received_ = 0;
  credits_ = ReceiverCredits(options_.window, std::max<std::uint32_t>(
                                                  1, std::min(options_.credit_batch,
                                                              options_.window)));
  control_out_ = ControlQueue{};
  if (state_ == LinkState::connecting) state_ = LinkState::established;
  // Where to resume first, then credit: the sender replays from acked_ + 1.
  (void)control_out_.push(FrameHeader{.flags = kFlagAck, .stream_id = options_.stream_id,
                                      .sequence = acked_});
  ack_sent_ = acked_;
  FrameHeader grant{.flags = kFlagCredit, .stream_id = options_.stream_id,
                    .sequence = credits_.initial_grant()};
  (void)control_out_.push(grant);
  ++stats_.credit_frames;
  flush_control();
}

double TcpRecvLink::free_capacity() const {
  // Credit the sender still holds, plus slots freed here but not yet granted.
  return static_cast<double>(credits_.granted() - frames_received_) +
         static_cast<double>(credits_.freed_not_granted());
}

int TcpRecvLink::poll(FrameSink& sink) {
  if (state_ == LinkState::failed) return 0;
  if (!connected()) {
    check_reconnect_deadline();
    return 0;
  }
  int work = 0;
  if (shared_ != nullptr) {
    // The connection reads for all its links (once per pass) and stages this one's frames.
    work += shared_->pump();
    if (state_ == LinkState::established) work += deliver(sink);
    if (shared_ != nullptr &&
        (state_ == LinkState::established || state_ == LinkState::finished)) {
      queue_control(credits_.take_grant());
      if (!control_out_.empty()) flush_control();
    }
    return work;
  }
  // Nothing has arrived since the read wait was armed on an empty socket, as of this pass's
  // start (read_wait.hpp): no recvmsg() this pass.
  const bool nothing_to_read = read_wait_.skip_read();
  if (!nothing_to_read && state_ == LinkState::established) read_wait_.arm_before_read(*socket_);
  // Drain: read, deliver, repeat while reads fill their room; four windows' worth of reads
  // at most bound one call, so other links of the thread get their turn.
  const std::size_t rounds = 4 * std::max<std::size_t>(1, staging_bytes_ / read_bytes_);
  for (std::size_t round = 0; round < rounds && state_ == LinkState::established; ++round) {
    const auto got = nothing_to_read ? ReadResult{} : read_available();
    work += deliver(sink);
    if (got.bytes == 0 || got.drained) break;
  }
  if (!socket_) return work;  // lost while reading
  if (state_ == LinkState::established || state_ == LinkState::finished) {
    queue_control(credits_.take_grant());
    if (!control_out_.empty()) flush_control();
  }
  // deliver() has taken every complete frame, so bytes left after the peer closed belong to
  // a frame cut short; the sender still has it and replays it after reconnecting.
  if (peer_closed_ && state_ == LinkState::established && sender_id_ == 0) {
    // A sender that never reconnects (sender id 0): the stream ends here, cut short.
    if (begin_ == end_) {
      fail_link(ErrorCategory::closed, 0,
                "peer closed the connection before the end of the stream (after frame " +
                    std::to_string(next_sequence_ - 1) + ")");
    } else {
      fail_link(ErrorCategory::protocol, 0,
                "peer closed the connection in the middle of a frame (" +
                    std::to_string(end_ - begin_) + " bytes of a truncated frame after frame " +
                    std::to_string(next_sequence_ - 1) + ")");
    }
  } else if (peer_closed_ && state_ == LinkState::established) {
    disconnect("the sender closed the connection after frame " +
               std::to_string(next_sequence_ - 1) +
               (begin_ == end_ ? std::string()
                               : " and " + std::to_string(end_ - begin_) +
                                     " bytes of the next"));
  }
  return work;
}

void TcpRecvLink::queue_control(std::uint64_t grant_total) {
  if (!options_.manual_ack) acked_ = next_sequence_ - 1;
  // Acknowledgements ride with credit (one write); a manual one, or the end of the stream's,
  // goes alone.
  const bool finished_unacked = state_ == LinkState::finished && acked_ > ack_sent_;
  if (acked_ > ack_sent_ && (grant_total != 0 || options_.manual_ack || finished_unacked)) {
    if (control_out_.push(FrameHeader{.flags = kFlagAck, .stream_id = options_.stream_id,
                                      .sequence = acked_})) {
      ack_sent_ = acked_;
    }
  }
  if (grant_total != 0) {
    const auto pickup = pickup_.quantile(0.99);
    stats_.pickup_p99_us = pickup ? encode_pickup_report(*pickup) : 0;
    FrameHeader grant{.flags = kFlagCredit, .stream_id = options_.stream_id,
                      .tuple_count = stats_.pickup_p99_us, .sequence = grant_total};
    if (control_out_.push(grant)) ++stats_.credit_frames;
  }
}

int TcpRecvLink::keep_alive() {
  if (state_ == LinkState::failed) return 0;
  if (!connected()) {
    check_reconnect_deadline();
    return 0;
  }
  // Paused: deliver nothing, but acknowledgements made meanwhile still go out.
  queue_control(0);
  if (!control_out_.empty()) flush_control();
  return 0;
}

void TcpRecvLink::acknowledge(std::uint64_t through) {
  if (!options_.manual_ack) return;
  acked_ = std::max(acked_, std::min(through, next_sequence_ - 1));
  // Out at once: the owner acknowledges once per checkpoint, and the last one may come just
  // before its node exits.
  if (connected() && acked_ > ack_sent_) {
    queue_control(0);
    flush_control();
  }
}

void TcpRecvLink::disconnect(const std::string& why) {
  if (sender_id_ == 0) return fail_link(ErrorCategory::closed, 0, why);
  leave_connection();
  begin_ = end_ = 0;
  state_ = LinkState::connecting;
  lost_because_ = why;
  reconnect_deadline_ = std::chrono::steady_clock::now() + options_.reconnect_timeout;
}

void TcpRecvLink::check_reconnect_deadline() {
  if (state_ != LinkState::connecting || !ever_attached_) return;
  if (std::chrono::steady_clock::now() < reconnect_deadline_) return;
  fail_link(ErrorCategory::closed, 0,
            lost_because_ + "; it did not reconnect within " +
                std::to_string(options_.reconnect_timeout.count()) + " ms");
}

TcpRecvLink::ReadResult TcpRecvLink::read_available() {
  if (peer_closed_) return {};
  // Reads go to the front of the staging buffer, a read's room at a time: once the bytes not
  // yet delivered (a frame's part, at most) start a read's room in, they move to the front,
  // so the reads keep to memory the cache holds (socket_io.hpp, read_room_bytes()).
  const std::size_t frame_bytes = kFrameHeaderBytes + options_.max_payload_bytes;
  if (begin_ > 0 && (staging_bytes_ - end_ < frame_bytes || begin_ >= read_bytes_)) {
    std::memmove(staging_.get(), staging_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == staging_bytes_) return {};
  const std::size_t room = std::min(staging_bytes_ - end_, read_bytes_);
  const StampedRead read = read_stamped(*socket_, {staging_.get() + end_, room});
  const ssize_t n = read.bytes;
  ++stats_.read_calls;
  if (n < 0) {
    const int err = read.error;
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) {
      ++stats_.would_block;
      if (err != EINTR) read_wait_.saw(true);
      return {};
    }
    disconnect("connection lost after frame " + std::to_string(next_sequence_ - 1) + ": " +
               std::strerror(err));
    return {};
  }
  if (n == 0) {
    peer_closed_ = true;
    return {};
  }
  record_pickup(read.arrived_ns, read.read_ns);
  const auto got = static_cast<std::size_t>(n);
  end_ += got;
  return {.bytes = got, .drained = read_wait_.read_returned(got, room)};
}

void TcpRecvLink::record_pickup(std::int64_t arrived_ns, std::int64_t read_ns) {
  // No stamp (0): the frames the read completes say "unknown", and the report skips them.
  last_arrived_ns_ = arrived_ns;
  last_read_ns_ = read_ns;
  if (arrived_ns != 0) pickup_.record(std::chrono::nanoseconds{read_ns - arrived_ns});
}

int TcpRecvLink::deliver(FrameSink& sink) {
  int frames = 0;
  while (end_ - begin_ >= kFrameHeaderBytes && state_ == LinkState::established) {
    const auto raw = std::span<const std::byte, kFrameHeaderBytes>(staging_.get() + begin_,
                                                                   kFrameHeaderBytes);
    auto decoded = decode_header(raw, limits_);
    if (!decoded) {
      fail_link(ErrorCategory::protocol, 0, decoded.error().message);
      break;
    }
    const FrameHeader& h = decoded.value();
    if (!(h.flags & kFlagData)) {
      if (h.flags & kFlagHeartbeat) {
        begin_ += kFrameHeaderBytes;
        continue;
      }
      fail_link(ErrorCategory::protocol, 0,
                std::string("unexpected ") +
                    ((h.flags & kFlagHello) != 0 ? "second hello" : "control frame") +
                    " with flags " + std::to_string(h.flags) + " from the sender");
      break;
    }
    const std::size_t frame_bytes = kFrameHeaderBytes + h.payload_bytes;
    if (end_ - begin_ < frame_bytes) break;  // the rest is still on its way
    const std::span<const std::byte> payload(staging_.get() + begin_ + kFrameHeaderBytes,
                                             h.payload_bytes);
    const auto crc = sink.payload_crc(payload);  // the sink's pass, when it makes one
    if (auto ok = crc ? verify_checksum_from_crc(h, raw, *crc)
                      : verify_checksum(h, raw, payload);
        !ok) {
      fail_link(ErrorCategory::protocol, 0, ok.error().message + " in frame " +
                                                std::to_string(h.sequence));
      break;
    }
    if (frames_received_ >= credits_.granted()) {
      fail_link(ErrorCategory::protocol, 0,
                "sender exceeded its credit (frame " + std::to_string(h.sequence) + ")");
      break;
    }
    begin_ += frame_bytes;
    ++frames_received_;
    credits_.on_frame();
    if (h.sequence < next_sequence_) {
      ++stats_.duplicates_dropped;  // a replay after reconnect: already delivered
    } else if (h.sequence > next_sequence_) {
      fail_link(ErrorCategory::protocol, 0,
                "sequence gap: expected frame " + std::to_string(next_sequence_) + ", got " +
                    std::to_string(h.sequence));
      break;
    } else {
      ++next_sequence_;
      ++stats_.frames;
      stats_.tuples += h.tuple_count;
      stats_.payload_bytes += h.payload_bytes;
      sink.on_frame(FrameView{h, payload, last_arrived_ns_, last_read_ns_});
      ++frames;
    }
    credits_.on_consumed();
    if (h.flags & kFlagEndOfStream) state_ = LinkState::finished;  // acked by queue_control()
  }
  if (begin_ == end_) begin_ = end_ = 0;
  return frames;
}

void TcpRecvLink::flush_control() {
  if (shared_ != nullptr && !control_out_.empty()) {
    shared_->queue_control(control_out_.pending());  // sent with the others' (one send)
    control_out_.consume(control_out_.pending().size());
    // The stream's last acknowledgement, or one its owner asked for, goes out at once: the
    // node may exit before the connection's next pass.
    if (state_ == LinkState::finished || options_.manual_ack) shared_->flush();
    return;
  }
  if (!socket_ || control_out_.empty()) return;
  boost::system::error_code ec;
  const auto pending = control_out_.pending();
  const auto n = socket_->write_some(asio::buffer(pending.data(), pending.size()), ec);
  ++stats_.write_calls;
  if (ec == asio::error::would_block) {
    ++stats_.would_block;
    return;
  }
  if (ec) {
    if (state_ == LinkState::established) {
      disconnect("cannot send credit after frame " + std::to_string(next_sequence_ - 1) + ": " +
                 ec.message());
    }
    return;
  }
  control_out_.consume(n);
}

bool TcpRecvLink::arm() {
  // Waiting for the sender to come back: the node's tick checks the deadline.
  if (!connected() || state_ == LinkState::failed) return true;
  if (paused_ && state_ == LinkState::established && control_out_.empty()) return true;
  // Finished: only an unsent end-of-stream ack is left to wait for (below).
  if (state_ == LinkState::finished && control_out_.empty()) return true;
  if (end_ - begin_ >= kFrameHeaderBytes) {
    // A complete frame may be waiting (a poll stopped after its rounds).
    const auto raw = std::span<const std::byte, kFrameHeaderBytes>(staging_.get() + begin_,
                                                                   kFrameHeaderBytes);
    if (auto h = decode_header(raw, limits_);
        !h || end_ - begin_ >= kFrameHeaderBytes + h.value().payload_bytes) {
      return false;
    }
  }
  if (shared_ != nullptr) return shared_->arm();
  if (peer_closed_ && state_ != LinkState::finished) return false;
  // A read wait still pending after try_arm() ran the ready handlers, on a socket seen empty
  // since it was armed: nothing has arrived since, and whatever arrives ends the block through
  // it. Otherwise the socket is asked (below).
  if (read_wait_.quiet() && control_out_.empty()) return true;
  if (state_ != LinkState::finished) read_wait_.arm(*socket_);
  if (!control_out_.empty() && !write_wait_pending_) {
    write_wait_pending_ = true;
    socket_->async_wait(Socket::wait_write,
                        with_memory(write_wait_memory_,
                                    [this, alive = alive_](const boost::system::error_code&) {
                                      if (!*alive) return;
                                      write_wait_pending_ = false;
                                      loop_.notify();
                                    }));
  }
  boost::system::error_code ec;
  const bool empty = socket_->available(ec) == 0 && !ec;
  read_wait_.saw(empty);
  return empty;
}

void TcpRecvLink::fail_link(ErrorCategory category, int code, const std::string& what) {
  if (state_ == LinkState::failed) return;
  state_ = LinkState::failed;
  error_ = Error{category, code, describe() + ": " + what};
  if (socket_) {
    boost::system::error_code ignored;
    socket_->close(ignored);
  }
  read_wait_.counted(false);
  if (shared_ != nullptr) {
    shared_->detach(*this);
    shared_ = nullptr;
  }
}

void TcpRecvLink::stage(std::span<const std::byte> frame, std::int64_t arrived_ns,
                        std::int64_t read_ns) {
  const std::span<std::byte> room = reserve(frame.size());
  if (room.empty()) return;
  std::memcpy(room.data(), frame.data(), frame.size());
  commit(frame.size(), /*whole=*/true, arrived_ns, read_ns);
}

std::span<std::byte> TcpRecvLink::reserve(std::size_t frame_bytes) {
  if (state_ != LinkState::established) return {};  // finished: nothing more is taken
  if (staging_bytes_ - end_ < frame_bytes && begin_ > 0) {
    std::memmove(staging_.get(), staging_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (staging_bytes_ - end_ < frame_bytes) {
    // Room for a window of frames is always there: the sender sent beyond its credit.
    fail_link(ErrorCategory::protocol, 0,
              "sender exceeded its credit (" + std::to_string(end_ - begin_) +
                  " bytes of frames staged, no room for the next " +
                  std::to_string(frame_bytes) + ")");
    return {};
  }
  return {staging_.get() + end_, frame_bytes};
}

void TcpRecvLink::commit(std::size_t bytes, bool whole, std::int64_t arrived_ns,
                         std::int64_t read_ns) {
  end_ += bytes;
  if (whole) record_pickup(arrived_ns, read_ns);
}

void TcpRecvLink::lost_shared(const std::string& why, bool broken) {
  shared_ = nullptr;  // the connection has forgotten this link already
  if (broken) return fail_link(ErrorCategory::protocol, 0, why);
  if (state_ != LinkState::established) return;
  disconnect(why + " after frame " + std::to_string(next_sequence_ - 1));
}

std::string TcpRecvLink::describe() const {
  return "link '" + options_.name + "' (stream " + std::to_string(options_.stream_id) +
         ") from " + (peer_.empty() ? std::string("?") : peer_);
}

}  // namespace boreal::transport::tcp_medium
