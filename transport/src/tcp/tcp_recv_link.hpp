// The receiving end of a tcp link. Private: made by TcpListener::expect().
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/handler_memory.hpp>
#include <boreal/transport/link.hpp>
#include <boreal/transport/recent_quantile.hpp>

#include "tcp/read_wait.hpp"
#include "tcp/socket_io.hpp"

namespace boreal::transport::tcp_medium {

class RecvConnection;

// Upstream backup (docs/design.md, "Faults"): when the connection is lost before the end of
// the stream, the link waits (state connecting) up to reconnect_timeout for its sender to come
// back. A new connection starts afresh (staging emptied, credit granted anew) with an ack of
// the last frame this end keeps, so the sender replays from the next one; frames it had
// delivered already are counted and dropped.
//
// Bytes arrive into one staging buffer of window × (header + max payload) bytes, allocated
// at set-up. Complete frames are handed to the sink in place; the sender holds at most
// `window` frames of credit, so everything it may send always fits (no read ever waits for
// room). A partial frame at the end is moved to the front when the tail runs short. Reading
// starts at the front again whenever everything read was delivered, and the buffer is not
// zeroed, so a link that never has much in flight (a low rate) touches only its first pages:
// a node with many such links holds only what they use (buffer_pool.hpp).
//
// Pickup report (frame.hpp): the socket has SO_TIMESTAMPNS, so every read that returns bytes
// says when the last of them reached this host; the time from then to the read is the
// thread's pickup latency (its wait's wake-up, or its poll interval), whose recent p99 rides
// in every credit frame.
class TcpRecvLink final : public RecvLink {
 public:
  TcpRecvLink(EventLoop& loop, const LinkOptions& options);
  TcpRecvLink(const TcpRecvLink&) = delete;
  TcpRecvLink& operator=(const TcpRecvLink&) = delete;
  ~TcpRecvLink() override;

  // Takes over a connection whose hello named this stream (replacing an earlier one of the
  // same sender), says where to resume and grants the initial credit.
  void attach(Socket socket, std::string peer, std::uint32_t sender_id);
  // The same, on a connection several links share (recv_connection.hpp).
  void attach_shared(RecvConnection& connection, std::string peer, std::uint32_t sender_id);
  // Why a hello from `sender_id` cannot attach (empty: it can): the link failed, or another
  // sender is connected.
  [[nodiscard]] std::string refuses(std::uint32_t sender_id) const;
  // From the shared connection: a frame of this link's stream, whole (header and payload),
  // from a read stamped `arrived_ns` that returned at `read_ns`.
  void stage(std::span<const std::byte> frame, std::int64_t arrived_ns, std::int64_t read_ns);
  // From the shared connection, a frame read in place in pieces: room for `frame_bytes` at
  // the end of the staging buffer (the frames before it moved to the front if need be), or
  // an empty span when the link takes no more (it failed: no room means its sender went
  // beyond its credit; or it finished). The room stays put until the frame is whole: only
  // the next reserve() or stage() moves staged bytes.
  std::span<std::byte> reserve(std::size_t frame_bytes);
  // `bytes` more of the reserved frame arrived in place; `whole`: they complete it, read
  // at stage()'s `arrived_ns` and `read_ns`.
  void commit(std::size_t bytes, bool whole, std::int64_t arrived_ns, std::int64_t read_ns);
  // The shared connection is lost; `broken`: its stream boundaries were (the link fails).
  void lost_shared(const std::string& why, bool broken);
  // Where a shared connection counts its system calls (RecvConnection::accountant()).
  [[nodiscard]] LinkStats& counted_stats() noexcept { return stats_; }
  // The shared connection is being destroyed (its listener is).
  void drop_shared() noexcept { shared_ = nullptr; }

  int poll(FrameSink& sink) override;
  bool arm() override;
  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  // Frames on a connection of its own; once on a shared one, the reads that brought data it
  // counted for the connection (RecvLink::arrivals()).
  [[nodiscard]] std::uint64_t arrivals() const override;
  std::uint32_t stream_id() const override { return options_.stream_id; }
  double free_capacity() const override;
  int keep_alive() override;
  void acknowledge(std::uint64_t through) override;
  std::uint64_t delivered() const override { return next_sequence_ - 1; }
  [[nodiscard]] const LinkOptions& options() const noexcept { return options_; }

 private:
  struct ReadResult {
    std::size_t bytes = 0;
    bool drained = false;  // the read emptied the socket (ReadWait::read_returned())
  };
  // Reads what the socket holds into the staging buffer.
  ReadResult read_available();
  // Counts the pickup latency of the bytes a read returned (read_stamped()'s stamps; 0: none).
  void record_pickup(std::int64_t arrived_ns, std::int64_t read_ns);
  int deliver(FrameSink& sink);
  void flush_control();
  void queue_control(std::uint64_t now_grant);
  // The connection broke before the end of the stream: wait for the sender to reconnect.
  void disconnect(const std::string& why);
  void check_reconnect_deadline();
  void fail_link(ErrorCategory category, int code, const std::string& what);
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] bool connected() const noexcept { return socket_.has_value() || shared_ != nullptr; }
  // What attach() and attach_shared() share: a fresh connection's state, the resume ack and
  // the first credit.
  void start_connection(std::string peer, std::uint32_t sender_id);
  // Stops using the connection it has (closes its own socket, or leaves the shared one).
  void leave_connection();

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  LinkOptions options_;
  FrameLimits limits_;
  std::optional<Socket> socket_;   // a connection of its own, or
  RecvConnection* shared_ = nullptr;  // a shared one
  bool ever_shared_ = false;          // arrivals() counts reads from then on
  std::string peer_;
  std::size_t staging_bytes_;
  std::size_t read_bytes_;  // what one read asks for at most (socket_io.hpp, read_room_bytes())
  std::unique_ptr<std::byte[]> staging_;
  std::size_t begin_ = 0;  // first byte not yet delivered
  std::size_t end_ = 0;    // one past the last byte read
  ReceiverCredits credits_;
  ControlQueue control_out_;
  RecentQuantile pickup_;
  // The last read's arrival stamp and the time it returned (CLOCK_REALTIME ns; 0: no stamp),
  // handed with every frame that read completed (FrameView::arrived_ns, read_ns).
  std::int64_t last_arrived_ns_ = 0;
  std::int64_t last_read_ns_ = 0;
  std::uint64_t next_sequence_ = 1;
  // Data frames accepted on this connection (each spent one credit).
  std::uint64_t frames_received_ = 0;
  std::uint64_t acked_;                // last frame acknowledged to the sender
  std::uint64_t ack_sent_ = 0;         // last acknowledgement queued
  std::uint32_t sender_id_ = 0;
  bool ever_attached_ = false;
  std::string lost_because_;           // while waiting for the sender to reconnect
  std::chrono::steady_clock::time_point reconnect_deadline_{};
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
  bool peer_closed_ = false;
  // Counted among the loop's readers only while the link reads a socket of its own.
  ReadWait read_wait_{loop_, /*counted=*/false};
  bool write_wait_pending_ = false;
  // The write wait's handler, so a block-mode wake-up allocates nothing (handler_memory.hpp).
  SharedHandlerMemory write_wait_memory_ = make_handler_memory();
};

}  // namespace boreal::transport::tcp_medium
