// The `tcp` medium: one TCP connection per link (or one for several links: TcpConnections),
// over Boost.Asio sockets with TCP_NODELAY.
//
// Wire: the sending end connects and sends a hello frame (stream id, schema hash, tuple
// size, cluster token); the receiving node's listener matches it to an expected stream and
// answers with the initial credit. Data frames then flow one way and credit and
// acknowledgement frames the other. Reads and writes are non-blocking system calls made by
// the links themselves, gathering many frames per call.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boreal/transport/error.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/link.hpp>

namespace boreal::transport {

struct TcpEndpoint {
  std::string host;  // numeric address or name (resolved once, at set-up)
  std::uint16_t port = 0;
};

// Sending links that share connections: the links of one thread made with the same
// TcpConnections and the same peer address travel on one TCP connection (docs/design.md, "One
// tcp connection per pair of threads"). Each link keeps its own credit, sequence, backup and
// failure; what several of them commit in one pass of their thread leaves in one send, so the
// thread must call its EventLoop's do_work() at the start of every pass (as a node's threads
// do): a shared connection does its I/O once per pass. Belongs to the thread of the links'
// EventLoop, and must outlive nothing: the connection lives as long as a link uses it. The
// receiving listener needs nothing: the links' hellos say the connection is shared.
class TcpConnections {
 public:
  TcpConnections();
  TcpConnections(const TcpConnections&) = delete;
  TcpConnections& operator=(const TcpConnections&) = delete;
  ~TcpConnections();

 private:
  friend Result<std::unique_ptr<SendLink>> make_tcp_send_link(EventLoop&, const TcpEndpoint&,
                                                              const LinkOptions&,
                                                              std::chrono::milliseconds,
                                                              TcpConnections*);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The sending end of a link to `peer`. Connects in the background, retrying refused
// connections until `connect_timeout`, then fails with an error naming the address. With
// `shared`, on the connection its other links to `peer` use (opened by the first of them).
[[nodiscard]] Result<std::unique_ptr<SendLink>> make_tcp_send_link(
    EventLoop& loop, const TcpEndpoint& peer, const LinkOptions& options,
    std::chrono::milliseconds connect_timeout = std::chrono::seconds(10),
    TcpConnections* shared = nullptr);

// Accepts the connections of every link a node receives, on one port.
class TcpListener {
 public:
  virtual ~TcpListener() = default;

  // Opens `local` (port 0 picks a free port; see port()).
  [[nodiscard]] static Result<std::unique_ptr<TcpListener>> open(EventLoop& loop,
                                                                 const TcpEndpoint& local);

  // The receiving end of one stream; a sender's hello with this stream id attaches to it.
  // Call at set-up. The link lives as long as the listener.
  virtual RecvLink& expect(const LinkOptions& options) = 0;

  // Accepts connections and reads their hellos. Never blocks. Returns work done.
  virtual int do_work() = 0;
  // Arms waits for pending hellos; false when one is ready to read.
  [[nodiscard]] virtual bool arm() = 0;

  [[nodiscard]] virtual std::uint16_t port() const = 0;
  // Connections refused before they became a link (bad hello, unknown stream, mismatched
  // schema...), each with the peer's address. The node keeps running.
  [[nodiscard]] virtual const std::vector<Error>& rejected() const = 0;
};

}  // namespace boreal::transport
