// The sending end of a tcp link, and the connection it travels on. Private to the transport.
//
// TcpSendLink is the link's protocol: frames built in place in pooled buffers
// ([32-byte header][payload]) and queued in commit order, credit, acknowledgements, and
// upstream backup (docs/design.md, "Faults"): a frame's buffer returns to the pool only when
// the receiver acknowledges the frame, not when it is written. When an established connection
// is lost the link says hello again, on the next connection, with the same sender id; the
// receiver answers with the sequence it has (an ack) before any credit, and the link rewinds
// to the frame after it and replays from there. A data frame spends a credit of the current
// connection when it is written, so a replay never exceeds the receiver's window.
//
// SendConnection is the socket: connecting, retrying, reconnecting with backoff, writing the
// members' frames with gathering sends and reading the control frames that come back, each to
// the member whose stream it names. A link made alone has a connection of its own. Links made
// with one TcpConnections share one per receiving address (docs/design.md, "One tcp
// connection per pair of threads"): their hellos say so, each link's frames go whole between
// the others', and the connection writes once per pass of its thread (EventLoop::pass()), so
// the frames that several links committed in a pass leave in one send (sending on while the
// socket takes all, when they are more than one send carries; and with a send's worth
// unwritten its links take no more frames: crowded()). A member's faults
// stay its own (a bad control frame, a refused hello); a lost connection is lost by all of
// them, and each resumes on the next as it would alone.
//
// Threading: both belong to the thread of the EventLoop they were made on.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/handler_memory.hpp>
#include <boreal/transport/link.hpp>

#include "core/backup_queue.hpp"
#include "tcp/read_wait.hpp"

namespace boreal::transport::tcp_medium {

class TcpSendLink;

class SendConnection {
 public:
  using Endpoints = std::vector<boost::asio::ip::tcp::endpoint>;

  // `shared`: links join it through a TcpConnections (their hellos say so).
  SendConnection(EventLoop& loop, Endpoints peers, std::string peer_text,
                 std::chrono::milliseconds connect_timeout, bool shared);
  SendConnection(const SendConnection&) = delete;
  SendConnection& operator=(const SendConnection&) = delete;
  ~SendConnection();

  // A link starts using the connection (its hello goes out once it is open), or stops (its
  // destructor).
  void join(TcpSendLink& link);
  void leave(TcpSendLink& link);

  // The I/O of a member's do_work(): writes what the members' credit covers, reads the
  // control frames. A shared connection does it once per pass of the loop.
  int do_work();
  // A member's arm(): the connection's waits. False when a write can go now.
  bool arm();

  [[nodiscard]] bool shared() const noexcept { return shared_; }
  // A shared connection whose members hold kMostUnsentFrames frames not yet written (as of
  // its last count, in do_work(), and the frames committed since): its members take no more
  // (try_claim() says back_pressured) until it has written some. A sender that outruns its
  // receiver then queues about one send's worth ahead of the socket, not a window per link.
  // A committed frame had credit (a replay gets credit as the receiver takes the replay),
  // and the receiving end reads whatever its links' consumers do, so the count falls as fast
  // as the socket drains: no member holds the others back by not being read.
  [[nodiscard]] bool crowded() const noexcept { return unsent_frames_ >= kMostUnsentFrames; }
  void committed_frame() noexcept {
    if (shared_) ++unsent_frames_;
  }
  static constexpr std::uint64_t kMostUnsentFrames = 128;
  [[nodiscard]] bool ready() const noexcept { return ready_; }
  [[nodiscard]] const std::string& peer_text() const noexcept { return peer_text_; }

 private:
  void start_connect();
  void retry_after(std::chrono::milliseconds delay,
                   std::chrono::steady_clock::time_point deadline);
  std::chrono::milliseconds next_backoff();
  void on_connect_failed(const boost::system::error_code& ec);
  void on_connected();
  int read_control();
  // One gathering send; `took_all` says whether the socket took all it was given (so a
  // next send may find room).
  int write_frames(bool* took_all = nullptr);
  // The connection broke: every member hears it (a member that was never established fails,
  // the others wait for the next connection), and the connection reconnects if any waits.
  void lost(const boost::system::error_code& ec, const std::string& why, bool reading);
  void close_socket();
  // The member whose system calls the statistics count (a shared connection's calls serve
  // all its members; they are counted once, on the first).
  TcpSendLink* accountant() const noexcept;
  TcpSendLink* member_of(std::uint32_t stream_id) const noexcept;
  [[nodiscard]] bool any_waiting() const noexcept;

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer retry_timer_;
  Endpoints peers_;
  std::string peer_text_;
  bool shared_;
  std::vector<TcpSendLink*> members_;
  std::chrono::milliseconds connect_timeout_;
  std::chrono::steady_clock::time_point connect_deadline_;
  bool connecting_ = false;   // an attempt or its retry timer is under way
  bool reconnecting_ = false;  // after a loss, until a connection is back
  std::chrono::milliseconds backoff_{0};
  bool ready_ = false;
  bool write_blocked_ = false;
  // Hellos of links that joined an open connection, written ahead of any frame.
  std::vector<std::byte> hellos_;
  std::size_t hellos_written_ = 0;
  // The member whose frame the last send stopped inside: its rest goes first.
  TcpSendLink* partial_ = nullptr;
  std::size_t next_first_ = 0;  // the member whose frames lead the next send (fairness)
  std::uint64_t pass_done_ = ~std::uint64_t{0};  // a shared connection's last pass of I/O
  std::uint64_t unsent_frames_ = 0;              // crowded()
  std::array<std::byte, 16 * kFrameHeaderBytes> control_in_{};
  std::size_t control_end_ = 0;
  ReadWait read_wait_{loop_};
  bool write_wait_pending_ = false;
  // The write wait's handler, so a block-mode wake-up allocates nothing (handler_memory.hpp).
  SharedHandlerMemory write_wait_memory_ = make_handler_memory();
};

class TcpSendLink final : public SendLink {
 public:
  TcpSendLink(std::shared_ptr<SendConnection> connection, const LinkOptions& options);
  TcpSendLink(const TcpSendLink&) = delete;
  TcpSendLink& operator=(const TcpSendLink&) = delete;
  ~TcpSendLink() override;

  // SendLink.
  int do_work() override;
  SendStatus try_claim(Claim& out) override;
  void commit(const Claim& claim, std::uint32_t tuple_count, std::uint32_t payload_bytes,
              std::uint16_t flags) override;
  bool arm() override;
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
  Result<void> restore(std::span<const std::byte> frames, std::uint64_t committed) override;

  // What the connection asks of its members.
  [[nodiscard]] std::uint32_t stream_id() const noexcept { return options_.stream_id; }
  // Wants the connection: not failed, not finished.
  [[nodiscard]] bool active() const noexcept {
    return state_ != LinkState::failed && state_ != LinkState::finished;
  }
  // Lost its connection after it was established, and still has time to get another.
  [[nodiscard]] bool reconnecting() const noexcept { return reconnecting_ && active(); }
  [[nodiscard]] std::chrono::steady_clock::time_point reconnect_deadline() const noexcept {
    return reconnect_deadline_;
  }
  // The hello for a new connection; the link then waits for the receiver to say where to
  // resume.
  void hello(std::span<std::byte, kFrameHeaderBytes + kHelloPayloadBytes> out, bool shared);
  void on_hello_sent() noexcept { awaiting_resume_ = true; }
  [[nodiscard]] bool awaiting_resume() const noexcept { return awaiting_resume_; }
  // A control frame naming this link's stream; false when it failed the link.
  bool handle_control(std::span<const std::byte, kFrameHeaderBytes> raw);
  // Has frames its credit lets go out now.
  [[nodiscard]] bool can_write() const noexcept {
    return !awaiting_resume_ && backup_.can_send(credits_);
  }
  // Appends the frames its credit lets go out, from the first not wholly written, to
  // `out` (at most out.size() of them); returns how many.
  std::size_t gather(std::span<boost::asio::const_buffer> out);
  // A send took `n` bytes of what gather() gave (in order); returns the bytes it accounted
  // for (n at most), leaving a frame cut short as the head for the next send.
  std::size_t wrote(std::size_t n, int& frames_done);
  [[nodiscard]] bool mid_frame() const noexcept { return head_written_ > 0; }
  // Frames committed and not yet written (whole), but for those held until released.
  [[nodiscard]] std::uint64_t unsent_frames() const noexcept { return backup_.unsent(); }
  // The connection broke; `what` says how. A link never established fails; one that was
  // waits for the next connection, until its reconnect timeout.
  void connection_lost(int code, const std::string& what);
  // The connection could not be opened: before the link was ever established, it fails.
  void cannot_connect(int code, const std::string& what);
  // The reconnect timeout passed with no connection back.
  void give_up_reconnecting(const std::string& last_attempt);
  // The receiver refused this link's hello on a shared connection.
  void hello_refused();
  [[nodiscard]] LinkStats& counted_stats() noexcept { return stats_; }
  [[nodiscard]] std::string describe() const;

 private:
  bool resume_after(std::uint64_t sequence);
  bool on_ack(std::uint64_t sequence);
  bool finish_if_acknowledged();
  bool protocol_failure(const std::string& what);
  void set_failed(ErrorCategory category, int code, std::string message);

  std::shared_ptr<SendConnection> connection_;
  LinkOptions options_;
  std::uint32_t sender_id_;
  BufferPool pool_;
  detail::BackupQueue backup_;      // every committed frame until acknowledged
  std::uint32_t head_written_ = 0;  // bytes of frame backup_.sent() already written
  SenderCredits credits_;           // of the current connection
  // Reconnecting: since the first loss, until the receiver said where to resume.
  bool reconnecting_ = false;
  std::string lost_because_;
  std::chrono::steady_clock::time_point reconnect_deadline_{};
  bool awaiting_resume_ = false;  // hello sent; the receiver's ack comes next
  bool was_established_ = false;
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
};

}  // namespace boreal::transport::tcp_medium
