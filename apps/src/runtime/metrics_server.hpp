// MetricsServer: a node's live metrics over HTTP (`boreal run ... --metrics-port P`), for
// Prometheus to scrape; docs/metrics.md says what it serves.
//
//   GET /metrics       200, Content-Type kMetricsContentType, the body from `render`
//   GET /other         404
//   POST /metrics ...  405 (Allow: GET)
//   a request that does not parse, or whose header or body is too large: 400 / 431 / 413,
//   then the connection is closed
//
// HTTP is Boost.Beast's (no parsing of our own). The server runs on a thread of its own with
// its own io_context: it shares nothing with the node's I/O threads but `render` (which reads
// a MetricsBoard), so a slow or hostile client can at worst hold one of its own connections
// until their deadline. Limits, all per connection: every request must arrive whole within
// `timeout` (beast::tcp_stream::expires_after; an idle keep-alive connection is closed
// after the same time), its header within kHeaderLimit bytes and its body within
// kBodyLimit; beyond `max_connections` open at once, new connections are closed at once.
//
// Threading: start() and stop() from one thread (the node's main thread); `render` is
// called on the server's thread, once per GET /metrics.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boreal/transport/error.hpp>

namespace boreal::runtime {

// What the metrics server binds to for a node whose address names `host` (docs/metrics.md):
// a numeric IPv4 or IPv6 address as it is; no host (inproc) or "localhost": 127.0.0.1; any
// other name: 0.0.0.0, every interface, since a host name need not resolve to one address
// the node can bind.
[[nodiscard]] std::string metrics_bind_address(std::string_view host);

struct MetricsServerOptions {
  std::string address = "127.0.0.1";  // numeric
  std::uint16_t port = 0;             // 0: a free port (port() says which)
  std::chrono::milliseconds timeout{5000};
  std::size_t max_connections = 16;
};

class MetricsServer {
 public:
  static constexpr std::size_t kHeaderLimit = 8 * 1024;
  static constexpr std::size_t kBodyLimit = 4 * 1024;
  using Render = std::function<std::string()>;

  // Binds and listens on the calling thread (so a port in use is an Error here, not later),
  // then serves on a thread of its own until stop().
  [[nodiscard]] static transport::Result<std::unique_ptr<MetricsServer>> start(
      const MetricsServerOptions& options, Render render);

  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  ~MetricsServer();  // stop()

  // The port it listens on (the chosen one when started with 0).
  [[nodiscard]] std::uint16_t port() const noexcept;
  // http://ADDRESS:PORT/metrics
  [[nodiscard]] std::string url() const;
  // Closes the listener and every open connection, and joins the server's thread. Blocks
  // until then (at most as long as one render). Idempotent.
  void stop();

 private:
  class Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace boreal::runtime
