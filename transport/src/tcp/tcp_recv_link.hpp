// The receiving end of a tcp link. Private: made by TcpListener::expect().
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/link.hpp>

#include "tcp/socket_io.hpp"

namespace boreal::transport::tcp_medium {

// Bytes arrive into one staging buffer of window × (header + max payload) bytes, allocated
// at set-up. Complete frames are handed to the sink in place; the sender holds at most
// `window` frames of credit, so everything it may send always fits (no read ever waits for
// room). A partial frame at the end is moved to the front when the tail runs short.
class TcpRecvLink final : public RecvLink {
 public:
  TcpRecvLink(EventLoop& loop, const LinkOptions& options);
  TcpRecvLink(const TcpRecvLink&) = delete;
  TcpRecvLink& operator=(const TcpRecvLink&) = delete;
  ~TcpRecvLink() override;

  // Takes over a connection whose hello named this stream, and grants the initial credit.
  void attach(Socket socket, std::string peer);
  [[nodiscard]] bool attached() const noexcept { return socket_.has_value(); }

  int poll(FrameSink& sink) override;
  bool arm() override;
  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t stream_id() const override { return options_.stream_id; }
  double free_capacity() const override;
  [[nodiscard]] const LinkOptions& options() const noexcept { return options_; }

 private:
  int read_available();
  int deliver(FrameSink& sink);
  void flush_control();
  void fail_link(ErrorCategory category, int code, const std::string& what);
  [[nodiscard]] std::string describe() const;

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  LinkOptions options_;
  FrameLimits limits_;
  std::optional<Socket> socket_;
  std::string peer_;
  std::vector<std::byte> staging_;
  std::size_t begin_ = 0;  // first byte not yet delivered
  std::size_t end_ = 0;    // one past the last byte read
  ReceiverCredits credits_;
  ControlQueue control_out_;
  std::uint64_t next_sequence_ = 1;
  std::uint64_t frames_received_ = 0;  // data frames accepted (each spent one credit)
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
  bool peer_closed_ = false;
  bool read_wait_pending_ = false;
  bool write_wait_pending_ = false;
};

}  // namespace boreal::transport::tcp_medium
