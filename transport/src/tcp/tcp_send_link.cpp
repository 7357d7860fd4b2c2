// The sending end of a tcp link.
//
// Frames are built in place in pooled buffers ([32-byte header][payload]), queued in commit
// order and written with gathering sends, before and after do_work() reads the credits and
// acknowledgements that arrive as 32-byte control frames.
//
// Upstream backup (docs/design.md, "Faults"): a frame's buffer returns to the pool only when
// the receiver acknowledges the frame, not when it is written. When an established connection
// is lost the link reconnects with backoff, says hello again with the same sender id, and the
// receiver answers with the sequence it has (an ack) before any credit; the link rewinds to
// the frame after it and replays from there. A data frame spends a credit of the current
// connection when it is written, so a replay never exceeds the receiver's window.
#include <algorithm>
#include <array>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/steady_timer.hpp>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/handler_memory.hpp>
#include <boreal/transport/tcp_medium.hpp>

#include "core/backup_queue.hpp"
#include "tcp/read_wait.hpp"
#include "tcp/socket_io.hpp"

namespace boreal::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// Frames gathered into one send. 64 × 32 KiB frames is 2 MiB, more than a loopback socket
// buffer takes at once; 64 small frames amortise the syscall over many tuples.
constexpr std::size_t kMaxGather = 64;
// A refused connect is retried this often until the connect timeout.
constexpr std::chrono::milliseconds kConnectRetry{20};
// Reconnecting after a lost connection: the first retry after kReconnectFirst, doubling up to
// kReconnectMost between attempts.
constexpr std::chrono::milliseconds kReconnectFirst{10};
constexpr std::chrono::milliseconds kReconnectMost{500};

class TcpSendLink final : public SendLink {
 public:
  TcpSendLink(EventLoop& loop, std::vector<tcp::endpoint> peers, std::string peer_text,
              const LinkOptions& options, std::chrono::milliseconds connect_timeout)
      : loop_(loop),
        socket_(loop.context()),
        retry_timer_(loop.context()),
        peers_(std::move(peers)),
        peer_text_(std::move(peer_text)),
        options_(options),
        sender_id_(detail::pick_sender_id(options.sender_id)),
        pool_(options.window + options.backup_frames,
              kFrameHeaderBytes + options.max_payload_bytes),
        backup_(pool_, pool_.capacity(), options.hold_until_released),
        connect_timeout_(connect_timeout),
        connect_deadline_(std::chrono::steady_clock::now() + connect_timeout) {
    // The loop keeps its sources, and the io_context its handlers, after this link is gone:
    // both check `alive` before touching it.
    loop_.add_source([this, alive = alive_] { return !*alive || arm(); });
    start_connect();
  }

  TcpSendLink(const TcpSendLink&) = delete;
  TcpSendLink& operator=(const TcpSendLink&) = delete;

  ~TcpSendLink() override {
    *alive_ = false;
    boost::system::error_code ignored;
    retry_timer_.cancel();
    socket_.close(ignored);
  }

  int do_work() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return 0;
    int work = 0;
    if (socket_ready_) {
      // What the credit in hand covers goes out before the control frames are read: reading
      // first put a recv() between every committed frame and its send (docs/design.md,
      // "Where the latency goes"). Credit that comes with them sends the rest.
      work += write_frames();
      // No control frame has arrived since the read wait was armed on an empty socket, as of
      // this pass's start (read_wait.hpp).
      const bool nothing_to_read = read_wait_.skip_read();
      if (socket_ready_ && !nothing_to_read) read_wait_.arm_before_read(socket_);
      if (socket_ready_ && !nothing_to_read) work += read_control();
      if (socket_ready_ && !write_blocked_) work += write_frames();
    }
    return work;
  }

  // A claim needs a credit that no queued frame has a claim on yet, and a free buffer (one
  // not holding an unacknowledged frame).
  SendStatus try_claim(Claim& out) override {
    return backup_.claim(state_, credits_, options_.max_payload_bytes, stats_, out);
  }

  void commit(const Claim& claim, std::uint32_t tuple_count, std::uint32_t payload_bytes,
              std::uint16_t flags) override {
    assert((flags & kFlagData) != 0 && (flags & ~(kFlagData | kFlagEndOfStream)) == 0);
    assert(payload_bytes <= options_.max_payload_bytes);
    backup_.commit(claim, options_.stream_id, tuple_count, payload_bytes, flags, stats_);
  }

  bool arm() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return true;
    if (!socket_ready_) return true;  // the connect handler notifies the loop
    const bool can_write = backup_.can_send(credits_);
    if (can_write && !write_blocked_) return false;
    // As the receiving end's arm(): a pending wait on a socket seen empty needs no question.
    const bool asked_already = read_wait_.quiet();
    read_wait_.arm(socket_);
    if (write_blocked_ && can_write && !write_wait_pending_) {
      write_wait_pending_ = true;
      socket_.async_wait(tcp::socket::wait_write,
                         with_memory(write_wait_memory_,
                                     [this, alive = alive_](const boost::system::error_code&) {
                                       if (!*alive) return;
                                       write_wait_pending_ = false;
                                       write_blocked_ = false;
                                       loop_.notify();
                                     }));
    }
    if (asked_already) return true;
    boost::system::error_code ec;
    const bool empty = socket_.available(ec) == 0 && !ec;
    read_wait_.saw(empty);
    return empty;
  }

  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t max_payload_bytes() const override { return options_.max_payload_bytes; }
  std::uint64_t credits_available() const override { return credits_.available(); }
  std::uint32_t window() const override { return options_.window; }
  SendOccupancy occupancy() const override {
    return {backup_.unacknowledged(), pool_.capacity() - pool_.available(), pool_.capacity()};
  }

  void release(std::uint64_t through) override { backup_.release(through); }
  std::uint64_t committed() const override { return backup_.tail(); }

  void append_unacknowledged(std::vector<std::byte>& out) const override {
    backup_.append_unacknowledged(out);
  }

  Result<void> restore(std::span<const std::byte> frames, std::uint64_t committed) override {
    assert(!socket_ready_);
    return backup_.restore(frames, committed,
                           FrameLimits{.stream_id = options_.stream_id,
                                       .tuple_bytes = options_.tuple_bytes,
                                       .max_payload_bytes = options_.max_payload_bytes},
                           describe());
  }

 private:
  void start_connect() {
    asio::async_connect(socket_, peers_, [this, alive = alive_](
                                             const boost::system::error_code& ec,
                                             const tcp::endpoint&) {
      if (!*alive) return;
      loop_.notify();
      if (!ec) return on_connected();
      const auto now = std::chrono::steady_clock::now();
      const auto deadline = reconnecting_ ? reconnect_deadline_ : connect_deadline_;
      if (now >= deadline) {
        if (reconnecting_) return give_up_reconnecting(ec.message());
        return set_failed(ErrorCategory::io, ec.value(),
                          describe() + ": cannot connect within " +
                              std::to_string(connect_timeout_.count()) + " ms: " + ec.message());
      }
      boost::system::error_code ignored;
      socket_.close(ignored);
      retry_after(reconnecting_ ? next_backoff() : kConnectRetry, deadline);
    });
  }

  // Tries to connect again after `delay`, or at `deadline` for one last attempt.
  void retry_after(std::chrono::milliseconds delay,
                   std::chrono::steady_clock::time_point deadline) {
    const auto now = std::chrono::steady_clock::now();
    retry_timer_.expires_after(
        std::min<std::chrono::steady_clock::duration>(delay, deadline - now));
    retry_timer_.async_wait([this, alive = alive_](const boost::system::error_code& timer_ec) {
      if (*alive && !timer_ec) start_connect();
    });
  }

  std::chrono::milliseconds next_backoff() {
    const auto delay = backoff_;
    backoff_ = std::min(backoff_ * 2, kReconnectMost);
    return delay;
  }

  void on_connected() {
    if (auto ok = tcp_medium::configure(socket_, describe()); !ok) {
      return set_failed(ok.error().category, ok.error().code, ok.error().message);
    }
    // The hello is the first thing on the wire; a fresh socket's buffer always takes 64 bytes.
    std::array<std::byte, kFrameHeaderBytes + kHelloPayloadBytes> hello{};
    HelloPayload payload{.schema_hash = options_.schema_hash,
                         .cluster_token = options_.cluster_token,
                         .stream_id = options_.stream_id,
                         .tuple_bytes = options_.tuple_bytes,
                         .max_payload_bytes = options_.max_payload_bytes,
                         .sender_id = sender_id_};
    auto body = std::span<std::byte, kHelloPayloadBytes>(hello.data() + kFrameHeaderBytes,
                                                         kHelloPayloadBytes);
    encode_hello(payload, body);
    FrameHeader header{.flags = kFlagHello,
                       .stream_id = options_.stream_id,
                       .payload_bytes = static_cast<std::uint32_t>(kHelloPayloadBytes)};
    encode_header(header, body, std::span<std::byte, kFrameHeaderBytes>(hello.data(),
                                                                        kFrameHeaderBytes));
    boost::system::error_code ec;
    const auto written = asio::write(socket_, asio::buffer(hello), ec);
    ++stats_.write_calls;
    if (ec || written != hello.size()) {
      return connection_lost(ec, "cannot send hello: " + ec.message());
    }
    socket_ready_ = true;
    awaiting_resume_ = true;
    read_wait_.new_connection();
  }

  int read_control() {
    int work = 0;
    for (;;) {
      boost::system::error_code ec;
      const std::size_t room = control_in_.size() - control_end_;
      const auto n = socket_.read_some(asio::buffer(control_in_.data() + control_end_, room), ec);
      ++stats_.read_calls;
      if (ec == asio::error::would_block) {
        ++stats_.would_block;
        read_wait_.saw(true);
        break;
      }
      if (ec) {
        if (state_ == LinkState::finished) return work;
        connection_lost(ec, awaiting_resume_ ? "the receiver closed the connection during the "
                                               "handshake (hello refused?): " + ec.message()
                                             : "connection lost: " + ec.message());
        return work;
      }
      control_end_ += n;
      std::size_t at = 0;
      while (control_end_ - at >= kFrameHeaderBytes) {
        const auto raw =
            std::span<const std::byte, kFrameHeaderBytes>(control_in_.data() + at,
                                                          kFrameHeaderBytes);
        if (!handle_control(raw)) return work;
        at += kFrameHeaderBytes;
        ++work;
      }
      std::memmove(control_in_.data(), control_in_.data() + at, control_end_ - at);
      control_end_ -= at;
      if (read_wait_.read_returned(n, room)) break;
    }
    return work;
  }

  bool handle_control(std::span<const std::byte, kFrameHeaderBytes> raw) {
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
    return true;
  }

  // The receiver has every frame up to `sequence`: release those, rewind to the next one and
  // send (again) from there, with the credit this connection grants.
  bool resume_after(std::uint64_t sequence) {
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

  bool on_ack(std::uint64_t sequence) {
    if (auto problem = backup_.ack_problem(sequence); !problem.empty()) {
      return protocol_failure(problem);
    }
    backup_.acknowledge(sequence, [this](std::uint32_t slot) { pool_.release(pool_.at(slot)); });
    return finish_if_acknowledged();
  }

  bool finish_if_acknowledged() {
    if (backup_.finished()) state_ = LinkState::finished;
    return true;
  }

  int write_frames() {
    // Nothing before the receiver says where to resume (docs/faults.md): frames that had
    // credit on a lost connection and were not written yet, or written in part, would follow
    // the hello ahead of the replay the receiver's ack asks for. The backup queue credits
    // nothing on a new connection until then (BackupQueue::connection_lost); this says so
    // where the writing is.
    if (awaiting_resume_) return 0;
    // Frames spend this connection's credit as they go out (a replay needs it as much as a
    // first send); held output goes no further than it was released.
    backup_.spend(credits_);
    // write_blocked_ only tells arm() to wait for writability: a busy-polling caller never
    // arms, so the send is always attempted (a refused one costs one would_block syscall).
    if (backup_.sent() == backup_.credited()) return 0;
    std::array<asio::const_buffer, kMaxGather> gather;
    std::size_t count = 0;
    for (auto i = backup_.sent(); i != backup_.credited() && count < kMaxGather; ++i, ++count) {
      const auto& q = backup_.at(i);
      const auto skip = count == 0 ? head_written_ : 0;
      gather[count] = asio::buffer(pool_.at(q.slot).data + skip, q.bytes - skip);
    }
    boost::system::error_code ec;
    auto n = socket_.write_some(std::span(gather.data(), count), ec);
    ++stats_.write_calls;
    if (ec == asio::error::would_block) {
      ++stats_.would_block;
      write_blocked_ = true;
      return 0;
    }
    if (ec) {
      connection_lost(ec, "send failed: " + ec.message());
      return 0;
    }
    write_blocked_ = false;
    int frames_done = 0;
    while (n > 0) {
      const auto left = backup_.at(backup_.sent()).bytes - head_written_;
      if (n < left) {
        head_written_ += static_cast<std::uint32_t>(n);
        break;
      }
      n -= left;
      head_written_ = 0;
      if (backup_.mark_sent()) ++stats_.frames_replayed;
      ++frames_done;
    }
    return frames_done > 0 ? frames_done : 1;
  }

  // The connection broke. Before the link was ever established (the hello refused, the
  // receiver not there) the link fails; after, it reconnects and resumes, failing only when
  // no connection is back within the reconnect timeout.
  void connection_lost(const boost::system::error_code& ec, const std::string& what) {
    if (!was_established_ && state_ == LinkState::connecting) {
      return set_failed(ErrorCategory::closed, ec.value(), describe() + ": " + what);
    }
    boost::system::error_code ignored;
    socket_.close(ignored);
    socket_ready_ = false;
    write_blocked_ = false;
    control_end_ = 0;
    credits_ = SenderCredits{};
    backup_.connection_lost();
    head_written_ = 0;
    state_ = LinkState::connecting;
    const auto now = std::chrono::steady_clock::now();
    if (!reconnecting_) {
      reconnecting_ = true;
      lost_because_ = what;
      backoff_ = kReconnectFirst;
      reconnect_deadline_ = now + options_.reconnect_timeout;
    } else if (now >= reconnect_deadline_) {
      return give_up_reconnecting(what);
    }
    retry_after(next_backoff(), reconnect_deadline_);
  }

  void give_up_reconnecting(const std::string& last_attempt) {
    set_failed(ErrorCategory::closed, 0,
               describe() + ": " + lost_because_ + "; no connection within " +
                   std::to_string(options_.reconnect_timeout.count()) +
                   " ms after that (last attempt: " + last_attempt + "); " +
                   std::to_string(backup_.unacknowledged()) + " frames were not acknowledged");
  }

  bool protocol_failure(const std::string& what) {
    set_failed(ErrorCategory::protocol, 0, describe() + ": " + what);
    return false;
  }

  void set_failed(ErrorCategory category, int code, std::string message) {
    if (state_ == LinkState::failed) return;
    state_ = LinkState::failed;
    error_ = Error{category, code, std::move(message)};
    boost::system::error_code ignored;
    socket_.close(ignored);
    retry_timer_.cancel();
    socket_ready_ = false;
  }

  std::string describe() const {
    return "link '" + options_.name + "' (stream " + std::to_string(options_.stream_id) +
           ") to " + peer_text_;
  }
  static std::string hex(unsigned value) {
    char text[16];
    std::snprintf(text, sizeof text, "%x", value);
    return text;
  }

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  tcp::socket socket_;
  asio::steady_timer retry_timer_;
  std::vector<tcp::endpoint> peers_;
  std::string peer_text_;
  LinkOptions options_;
  std::uint32_t sender_id_;
  BufferPool pool_;
  detail::BackupQueue backup_;      // every committed frame until acknowledged
  std::uint32_t head_written_ = 0;  // bytes of frame backup_.sent() already written
  std::array<std::byte, 16 * kFrameHeaderBytes> control_in_{};
  std::size_t control_end_ = 0;
  SenderCredits credits_;  // of the current connection
  std::chrono::milliseconds connect_timeout_;
  std::chrono::steady_clock::time_point connect_deadline_;
  // Reconnecting: since the first loss, until the receiver said where to resume.
  bool reconnecting_ = false;
  std::string lost_because_;
  std::chrono::milliseconds backoff_ = kReconnectFirst;
  std::chrono::steady_clock::time_point reconnect_deadline_{};
  bool awaiting_resume_ = false;  // hello sent; the receiver's ack comes next
  bool was_established_ = false;
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
  bool socket_ready_ = false;
  bool write_blocked_ = false;
  tcp_medium::ReadWait read_wait_{loop_};
  bool write_wait_pending_ = false;
  // The write wait's handler, so a block-mode wake-up allocates nothing (handler_memory.hpp).
  SharedHandlerMemory write_wait_memory_ = make_handler_memory();
};

}  // namespace

Result<std::unique_ptr<SendLink>> make_tcp_send_link(EventLoop& loop, const TcpEndpoint& peer,
                                                     const LinkOptions& options,
                                                     std::chrono::milliseconds connect_timeout) {
  const std::string text = peer.host + ":" + std::to_string(peer.port);
  if (options.max_payload_bytes == 0 || options.window == 0 || options.tuple_bytes == 0 ||
      options.max_payload_bytes < options.tuple_bytes) {
    return fail(ErrorCategory::config, 0,
                "link '" + options.name + "' to " + text +
                    ": batch bytes must hold at least one tuple and the window must be > 0");
  }
  tcp::resolver resolver(loop.context());
  boost::system::error_code ec;
  const auto results = resolver.resolve(peer.host, std::to_string(peer.port),
                                        tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) {
    return fail(ErrorCategory::config, ec.value(),
                "cannot resolve " + text + " for link '" + options.name + "': " + ec.message());
  }
  std::vector<tcp::endpoint> endpoints;
  for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  return std::unique_ptr<SendLink>(
      new TcpSendLink(loop, std::move(endpoints), text, options, connect_timeout));
}

}  // namespace boreal::transport
