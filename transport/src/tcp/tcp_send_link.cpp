// The sending end of a tcp link.
//
// Frames are built in place in pooled buffers ([32-byte header][payload]), queued in commit
// order and written with one gathering send per do_work(). A buffer returns to the pool once
// its last byte is in the kernel. Credits and acks arrive as 32-byte control frames.
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
#include <boreal/transport/tcp_medium.hpp>

#include "core/send_path.hpp"
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
        pool_(options.window, kFrameHeaderBytes + options.max_payload_bytes),
        queue_(options.window),
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
      work += read_control();
      if (state_ != LinkState::failed) work += write_frames();
    }
    return work;
  }

  SendStatus try_claim(Claim& out) override {
    return detail::claim_frame(state_, eos_committed_, credits_, pool_, options_.max_payload_bytes,
                               stats_, out);
  }

  void commit(const Claim& claim, std::uint32_t tuple_count, std::uint32_t payload_bytes,
              std::uint16_t flags) override {
    assert((flags & kFlagData) != 0 && (flags & ~(kFlagData | kFlagEndOfStream)) == 0);
    assert(payload_bytes <= options_.max_payload_bytes && !eos_committed_);
    const FrameHeader header =
        detail::seal_frame(pool_.at(claim.slot), options_.stream_id, ++last_sequence_, tuple_count,
                           payload_bytes, flags, stats_);
    queue_[queue_tail_ % queue_.size()] = {
        claim.slot, static_cast<std::uint32_t>(kFrameHeaderBytes + payload_bytes)};
    ++queue_tail_;
    if (flags & kFlagEndOfStream) {
      eos_committed_ = true;
      eos_sequence_ = header.sequence;
    }
  }

  bool arm() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return true;
    if (!socket_ready_) return true;  // the connect handler notifies the loop
    if (queue_head_ != queue_tail_ && !write_blocked_) return false;
    if (!read_wait_pending_) {
      read_wait_pending_ = true;
      socket_.async_wait(tcp::socket::wait_read,
                         [this, alive = alive_](const boost::system::error_code&) {
                           if (!*alive) return;
                           read_wait_pending_ = false;
                           loop_.notify();
                         });
    }
    if (write_blocked_ && queue_head_ != queue_tail_ && !write_wait_pending_) {
      write_wait_pending_ = true;
      socket_.async_wait(tcp::socket::wait_write,
                         [this, alive = alive_](const boost::system::error_code&) {
                           if (!*alive) return;
                           write_wait_pending_ = false;
                           write_blocked_ = false;
                           loop_.notify();
                         });
    }
    boost::system::error_code ec;
    return socket_.available(ec) == 0 && !ec;
  }

  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t max_payload_bytes() const override { return options_.max_payload_bytes; }
  std::uint64_t credits_available() const override { return credits_.available(); }
  std::uint32_t window() const override { return options_.window; }

 private:
  struct Queued {
    std::uint32_t slot = 0;
    std::uint32_t bytes = 0;  // header + payload
  };

  void start_connect() {
    asio::async_connect(socket_, peers_, [this, alive = alive_](
                                             const boost::system::error_code& ec,
                                             const tcp::endpoint&) {
      if (!*alive) return;
      loop_.notify();
      if (!ec) return on_connected();
      if (std::chrono::steady_clock::now() >= connect_deadline_) {
        return set_failed(ErrorCategory::io, ec.value(),
                          describe() + ": cannot connect within " +
                              std::to_string(connect_timeout_.count()) + " ms: " + ec.message());
      }
      boost::system::error_code ignored;
      socket_.close(ignored);
      // Retry after kConnectRetry, or at the deadline for one last attempt.
      const auto now = std::chrono::steady_clock::now();
      retry_timer_.expires_after(std::min<std::chrono::steady_clock::duration>(
          kConnectRetry, connect_deadline_ - now));
      retry_timer_.async_wait([this, alive](const boost::system::error_code& timer_ec) {
        if (*alive && !timer_ec) start_connect();
      });
    });
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
                         .max_payload_bytes = options_.max_payload_bytes};
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
      return set_failed(ErrorCategory::io, ec.value(),
                        describe() + ": cannot send hello: " + ec.message());
    }
    socket_ready_ = true;
  }

  int read_control() {
    int work = 0;
    for (;;) {
      boost::system::error_code ec;
      const auto n = socket_.read_some(
          asio::buffer(control_in_.data() + control_end_, control_in_.size() - control_end_), ec);
      ++stats_.read_calls;
      if (ec == asio::error::would_block) {
        ++stats_.would_block;
        break;
      }
      if (ec) {
        if (state_ == LinkState::finished) return work;
        if (state_ == LinkState::connecting) {
          // The listener closes a connection whose hello it refuses; its rejected() says why.
          set_failed(ErrorCategory::closed, ec.value(),
                     describe() + ": the receiver closed the connection during the handshake "
                                  "(hello refused?): " + ec.message());
        } else {
          set_failed(ErrorCategory::closed, ec.value(),
                     describe() + ": connection lost: " + ec.message());
        }
        return work;
      }
      control_end_ += n;
      std::size_t at = 0;
      while (control_end_ - at >= kFrameHeaderBytes) {
        if (!handle_control(std::span<const std::byte, kFrameHeaderBytes>(control_in_.data() + at, kFrameHeaderBytes))) return work;
        at += kFrameHeaderBytes;
        ++work;
      }
      std::memmove(control_in_.data(), control_in_.data() + at, control_end_ - at);
      control_end_ -= at;
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
    if (h.flags & kFlagCredit) {
      ++stats_.credit_frames;
      credits_.on_grant(h.sequence);
      if (state_ == LinkState::connecting) state_ = LinkState::established;
    } else if (h.flags & kFlagAck) {
      if (eos_committed_ && h.sequence == eos_sequence_) state_ = LinkState::finished;
    } else if (!(h.flags & kFlagHeartbeat)) {
      set_failed(ErrorCategory::protocol, 0,
                 describe() + ": unexpected frame with flags 0x" + hex(h.flags) +
                     " from the receiver");
      return false;
    }
    return true;
  }

  int write_frames() {
    // write_blocked_ only tells arm() to wait for writability: a busy-polling caller never
    // arms, so the send is always attempted (a refused one costs one would_block syscall).
    if (queue_head_ == queue_tail_) return 0;
    std::array<asio::const_buffer, kMaxGather> gather;
    std::size_t count = 0;
    for (auto i = queue_head_; i != queue_tail_ && count < kMaxGather; ++i, ++count) {
      const auto& q = queue_[i % queue_.size()];
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
      set_failed(ErrorCategory::closed, ec.value(), describe() + ": send failed: " + ec.message());
      return 0;
    }
    write_blocked_ = false;
    int frames_done = 0;
    while (n > 0) {
      const auto& q = queue_[queue_head_ % queue_.size()];
      const auto left = q.bytes - head_written_;
      if (n < left) {
        head_written_ += static_cast<std::uint32_t>(n);
        break;
      }
      n -= left;
      head_written_ = 0;
      pool_.release(pool_.at(q.slot));
      ++queue_head_;
      ++frames_done;
    }
    return frames_done > 0 ? frames_done : 1;
  }

  void set_failed(ErrorCategory category, int code, std::string message) {
    if (state_ == LinkState::failed) return;
    state_ = LinkState::failed;
    error_ = Error{category, code, std::move(message)};
    boost::system::error_code ignored;
    socket_.close(ignored);
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
  BufferPool pool_;
  std::vector<Queued> queue_;  // ring of committed frames, sized once (= pool size)
  std::uint64_t queue_head_ = 0;
  std::uint64_t queue_tail_ = 0;
  std::uint32_t head_written_ = 0;  // bytes of the head frame already sent
  std::array<std::byte, 16 * kFrameHeaderBytes> control_in_{};
  std::size_t control_end_ = 0;
  SenderCredits credits_;
  std::uint64_t last_sequence_ = 0;
  std::uint64_t eos_sequence_ = 0;
  bool eos_committed_ = false;
  std::chrono::milliseconds connect_timeout_;
  std::chrono::steady_clock::time_point connect_deadline_;
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
  bool socket_ready_ = false;
  bool write_blocked_ = false;
  bool read_wait_pending_ = false;
  bool write_wait_pending_ = false;
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
