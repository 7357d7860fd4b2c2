// The sending end of a tcp link: the link's protocol (tcp_send_link.hpp). Its socket is a
// SendConnection's (send_connection.cpp).
#include "tcp/tcp_send_link.hpp"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>

#include <boost/asio/ip/tcp.hpp>

#include <boreal/transport/tcp_medium.hpp>

namespace boreal::transport {
namespace tcp_medium {

namespace asio = boost::asio;

namespace {

std::string hex(unsigned value) {
  char text[16];
  std::snprintf(text, sizeof text, "%x", value);
  return text;
}

}  // namespace

TcpSendLink::TcpSendLink(std::shared_ptr<SendConnection> connection, const LinkOptions& options)
    : connection_(std::move(connection)),
      options_(options),
      sender_id_(detail::pick_sender_id(options.sender_id)),
      pool_(options.window + options.backup_frames,
            kFrameHeaderBytes + options.max_payload_bytes),
      backup_(pool_, pool_.capacity(), options.hold_until_released) {
  connection_->join(*this);
}

TcpSendLink::~TcpSendLink() { connection_->leave(*this); }

int TcpSendLink::do_work() {
  if (!active()) return 0;
  return connection_->do_work();
}

// A claim needs a credit that no queued frame has a claim on yet, and a free buffer (one
// not holding an unacknowledged frame).
SendStatus TcpSendLink::try_claim(Claim& out) {
  // A shared connection with a send's worth queued takes no more frames from any member.
  if (state_ == LinkState::established && connection_->crowded()) {
    return SendStatus::back_pressured;
  }
  return backup_.claim(state_, credits_, options_.max_payload_bytes, stats_, out);
}

void TcpSendLink::commit(const Claim& claim, std::uint32_t tuple_count,
                         std::uint32_t payload_bytes, std::uint16_t flags) {
  assert((flags & kFlagData) != 0 && (flags & ~(kFlagData | kFlagEndOfStream)) == 0);
  assert(payload_bytes <= options_.max_payload_bytes);
  backup_.commit(claim, options_.stream_id, tuple_count, payload_bytes, flags, stats_);
  connection_->committed_frame();
}

bool TcpSendLink::arm() {
  if (!active()) return true;
  return connection_->arm();
}

Result<void> TcpSendLink::restore(std::span<const std::byte> frames, std::uint64_t committed) {
  assert(!connection_->ready() || connection_->shared());
  return backup_.restore(frames, committed,
                         FrameLimits{.stream_id = options_.stream_id,
                                     .tuple_bytes = options_.tuple_bytes,
                                     .max_payload_bytes = options_.max_payload_bytes},
                         describe());
}

void TcpSendLink::hello(std::span<std::byte, kFrameHeaderBytes + kHelloPayloadBytes> out,
                        bool shared) {
  HelloPayload payload{.schema_hash = options_.schema_hash,
                       .cluster_token = options_.cluster_token,
                       .stream_id = options_.stream_id,
                       .tuple_bytes = options_.tuple_bytes,
                       .max_payload_bytes = options_.max_payload_bytes,
                       .sender_id = sender_id_};
  auto body = std::span<std::byte, kHelloPayloadBytes>(out.data() + kFrameHeaderBytes,
                                                       kHelloPayloadBytes);
  encode_hello(payload, body);
  FrameHeader header{.flags = kFlagHello,
                     .stream_id = options_.stream_id,
                     .sequence = shared ? kHelloOnSharedConnection : 0,
                     .payload_bytes = static_cast<std::uint32_t>(kHelloPayloadBytes)};
  encode_header(header, body, std::span<std::byte, kFrameHeaderBytes>(out.data(),
                                                                      kFrameHeaderBytes));
}

bool TcpSendLink::handle_control(std::span<const std::byte, kFrameHeaderBytes> raw) {
  const FrameLimits limits{.stream_id = options_.stream_id};
  auto header = decode_header(raw, limits);
  if (header) {
    if (auto ok = verify_checksum(header.value(), raw, {}); !ok) header = ok.error();
  }
  if (!header) {
    set_failed(ErrorCategory::protocol, 0, describe() + ": " + header.error().message);
    return false;
  }
  const auto& h = header.value();
  if (h.flags & kFlagAck) {
    return awaiting_resume_ ? resume_after(h.sequence) : on_ack(h.sequence);
  }
  if (h.flags & kFlagCredit) {
    if (awaiting_resume_) {
      return protocol_failure("credit before the receiver said where to resume");
    }
    ++stats_.credit_frames;
    stats_.pickup_p99_us = h.tuple_count;
    credits_.on_grant(h.sequence);
    if (state_ == LinkState::connecting) {
      state_ = LinkState::established;
      was_established_ = true;
    }
    return true;
  }
  if (!(h.flags & kFlagHeartbeat)) {
    return protocol_failure("unexpected frame with flags 0x" + hex(h.flags) +
                            " from the receiver");
  }
  if (h.sequence == kHelloRefused && connection_->shared()) {
    hello_refused();
    return false;
  }
  return true;
}

// The receiver has every frame up to `sequence`: release those, rewind to the next one and
// send (again) from there, with the credit this connection grants.
bool TcpSendLink::resume_after(std::uint64_t sequence) {
  if (auto problem = backup_.resume_problem(sequence); !problem.empty()) {
    return protocol_failure(problem);
  }
  backup_.resume(sequence, [this](std::uint32_t slot) { pool_.release(pool_.at(slot)); });
  head_written_ = 0;
  awaiting_resume_ = false;
  if (reconnecting_) {
    reconnecting_ = false;
    ++stats_.reconnects;
  }
  return finish_if_acknowledged();
}

bool TcpSendLink::on_ack(std::uint64_t sequence) {
  if (auto problem = backup_.ack_problem(sequence); !problem.empty()) {
    return protocol_failure(problem);
  }
  backup_.acknowledge(sequence, [this](std::uint32_t slot) { pool_.release(pool_.at(slot)); });
  return finish_if_acknowledged();
}

bool TcpSendLink::finish_if_acknowledged() {
  if (backup_.finished()) state_ = LinkState::finished;
  return true;
}

std::size_t TcpSendLink::gather(std::span<asio::const_buffer> out) {
  // Nothing before the receiver says where to resume (docs/faults.md): frames that had
  // credit on a lost connection and were not written yet, or written in part, would follow
  // the hello ahead of the replay the receiver's ack asks for. The backup queue credits
  // nothing on a new connection until then (BackupQueue::connection_lost); this says so
  // where the writing is.
  if (awaiting_resume_ || !active()) return 0;
  // Frames spend this connection's credit as they go out (a replay needs it as much as a
  // first send); held output goes no further than it was released.
  backup_.spend(credits_);
  std::size_t count = 0;
  for (auto i = backup_.sent(); i != backup_.credited() && count < out.size(); ++i, ++count) {
    const auto& q = backup_.at(i);
    const auto skip = count == 0 ? head_written_ : 0;
    out[count] = asio::buffer(pool_.at(q.slot).data + skip, q.bytes - skip);
  }
  return count;
}

std::size_t TcpSendLink::wrote(std::size_t n, int& frames_done) {
  std::size_t taken = 0;
  while (taken < n && backup_.sent() != backup_.credited()) {
    const auto left = backup_.at(backup_.sent()).bytes - head_written_;
    if (n - taken < left) {
      head_written_ += static_cast<std::uint32_t>(n - taken);
      return n;
    }
    taken += left;
    head_written_ = 0;
    if (backup_.mark_sent()) ++stats_.frames_replayed;
    ++frames_done;
  }
  return taken;
}

// Before the link was ever established (the hello refused, the receiver not there) the link
// fails; after, it waits for the next connection, failing only when none is back within the
// reconnect timeout.
void TcpSendLink::connection_lost(int code, const std::string& what) {
  if (!active()) return;
  if (!was_established_ && state_ == LinkState::connecting) {
    return set_failed(ErrorCategory::closed, code, describe() + ": " + what);
  }
  credits_ = SenderCredits{};
  backup_.connection_lost();
  head_written_ = 0;
  awaiting_resume_ = false;
  state_ = LinkState::connecting;
  if (!reconnecting_) {
    reconnecting_ = true;
    lost_because_ = what;
    reconnect_deadline_ = std::chrono::steady_clock::now() + options_.reconnect_timeout;
  }
}

void TcpSendLink::cannot_connect(int code, const std::string& what) {
  if (!active() || was_established_) return;
  set_failed(ErrorCategory::io, code, describe() + ": " + what);
}

void TcpSendLink::give_up_reconnecting(const std::string& last_attempt) {
  set_failed(ErrorCategory::closed, 0,
             describe() + ": " + lost_because_ + "; no connection within " +
                 std::to_string(options_.reconnect_timeout.count()) +
                 " ms after that (last attempt: " + last_attempt + "); " +
                 std::to_string(backup_.unacknowledged()) + " frames were not acknowledged");
}

void TcpSendLink::hello_refused() {
  set_failed(ErrorCategory::protocol, 0,
             describe() + ": the receiver refused its hello on the shared connection (the "
                          "receiving node's log says why)");
}

bool TcpSendLink::protocol_failure(const std::string& what) {
  set_failed(ErrorCategory::protocol, 0, describe() + ": " + what);
  return false;
}

void TcpSendLink::set_failed(ErrorCategory category, int code, std::string message) {
  if (state_ == LinkState::failed) return;
  state_ = LinkState::failed;
  error_ = Error{category, code, std::move(message)};
  head_written_ = 0;
}

std::string TcpSendLink::describe() const {
  return "link '" + options_.name + "' (stream " + std::to_string(options_.stream_id) +
         ") to " + connection_->peer_text();
}

}  // namespace tcp_medium

namespace asio = boost::asio;

// Links of one thread sharing connections, by receiving address.
struct TcpConnections::Impl {
  std::vector<std::pair<std::string, std::weak_ptr<tcp_medium::SendConnection>>> open;
};

TcpConnections::TcpConnections() : impl_(std::make_unique<Impl>()) {}
TcpConnections::~TcpConnections() = default;

Result<std::unique_ptr<SendLink>> make_tcp_send_link(EventLoop& loop, const TcpEndpoint& peer,
                                                     const LinkOptions& options,
                                                     std::chrono::milliseconds connect_timeout,
                                                     TcpConnections* shared) {
  const std::string text = peer.host + ":" + std::to_string(peer.port);
  if (options.max_payload_bytes == 0 || options.window == 0 || options.tuple_bytes == 0 ||
      options.max_payload_bytes < options.tuple_bytes) {
    return fail(ErrorCategory::config, 0,
                "link '" + options.name + "' to " + text +
                    ": batch bytes must hold at least one tuple and the window must be > 0");
  }
  std::shared_ptr<tcp_medium::SendConnection> connection;
  if (shared != nullptr) {
    auto& open = shared->impl_->open;
    std::erase_if(open, [](const auto& entry) { return entry.second.expired(); });
    for (const auto& [address, existing] : open) {
      if (address == text) connection = existing.lock();
    }
  }
  if (!connection) {
    asio::ip::tcp::resolver resolver(loop.context());
    boost::system::error_code ec;
    const auto results = resolver.resolve(peer.host, std::to_string(peer.port),
                                          asio::ip::tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
      return fail(ErrorCategory::config, ec.value(),
                  "cannot resolve " + text + " for link '" + options.name + "': " +
                      ec.message());
    }
    tcp_medium::SendConnection::Endpoints endpoints;
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
    connection = std::make_shared<tcp_medium::SendConnection>(
        loop, std::move(endpoints), text, connect_timeout, shared != nullptr);
    if (shared != nullptr) shared->impl_->open.emplace_back(text, connection);
  }
  return std::unique_ptr<SendLink>(new tcp_medium::TcpSendLink(std::move(connection), options));
}

}  // namespace boreal::transport
