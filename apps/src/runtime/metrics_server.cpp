#include "runtime/metrics_server.hpp"

#include <exception>
#include <optional>
#include <set>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "runtime/metrics_text.hpp"
#include "runtime/owner_thread.hpp"

namespace boreal::runtime {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using transport::ErrorCategory;
using transport::fail;

std::string metrics_bind_address(std::string_view host) {
  if (host.empty() || host == "localhost") return "127.0.0.1";
  boost::system::error_code ec;
  const auto address = net::ip::make_address(std::string(host), ec);
  return ec ? "0.0.0.0" : address.to_string();
}

namespace {

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// After a failed accept (out of descriptors, say) the next one waits this long, so the
// server does not spin while the condition lasts.
constexpr std::chrono::milliseconds kAcceptRetry{100};

Response text_response(http::status status, unsigned version, std::string body) {
  Response response{status, version};
  response.set(http::field::content_type, "text/plain; charset=utf-8");
  response.set(http::field::server, "boreal");
  response.body() = std::move(body);
  return response;
}

// What a request that could not be read gets, before the connection is closed.
Response error_response(const beast::error_code& ec) {
  http::status status = http::status::bad_request;
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    status = http::status::request_header_fields_too_large;
  } else if (ec == http::error::body_limit) {
    status = http::status::payload_too_large;
  }
  Response response = text_response(status, 11, "bad request: " + ec.message() + "\n");
  response.keep_alive(false);
  response.prepare_payload();
  return response;
}

}  // namespace

class MetricsServer::Impl {
 public:
  Impl(MetricsServerOptions options, Render render)
      : options_(std::move(options)), render_(std::move(render)), acceptor_(ioc_), retry_(ioc_) {}

  transport::Result<void> listen() {
    const auto where = options_.address + ":" + std::to_string(options_.port);
    boost::system::error_code ec;
    const auto address = net::ip::make_address(options_.address, ec);
    if (ec) {
      return fail(ErrorCategory::config, ec.value(),
                  "metrics: '" + options_.address + "' is not a numeric address");
    }
    const tcp::endpoint endpoint(address, options_.port);
    if (acceptor_.open(endpoint.protocol(), ec); !ec) {
      acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    }
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (!ec) port_ = acceptor_.local_endpoint(ec).port();
    if (ec) {
      return fail(ErrorCategory::io, ec.value(),
                  "metrics: cannot listen on " + where + ": " + ec.message());
    }
    return boost::outcome_v2::success();
  }

  void serve() {
    // The first accept is posted, so that everything the listener and the sessions touch is
    // touched on the server's thread alone.
    net::post(ioc_, [this] { accept(); });
    thread_ = std::thread([this] { run(); });
  }

  void stop() {
    if (!thread_.joinable()) return;
    net::post(ioc_, [this] { shut_down(); });
    thread_.join();
  }

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] const MetricsServerOptions& options() const noexcept { return options_; }

 private:
  class Session;

  // The server's thread. A handler that throws (out of memory while reading, say) costs its
  // own connection, not the server: run() is entered again.
  void run() {
    for (;;) {
      try {
        ioc_.run();
        return;
      } catch (const std::exception&) {
      }
    }
  }

  void accept();
  void shut_down();
  [[nodiscard]] Response respond(const Request& request) const;

  // Declared before ioc_: sessions still queued in it when it is destroyed unregister here.
  MetricsServerOptions options_;
  Render render_;
  std::set<Session*> sessions_;  // open connections; the server's thread only
  bool stopping_ = false;        // the server's thread only
  OwnerThread owner_;            // asserts that (debug builds)
  std::uint16_t port_ = 0;
  net::io_context ioc_{1};
  tcp::acceptor acceptor_;
  net::steady_timer retry_;
  std::thread thread_;
};

// One connection: reads a request under the deadline, answers it, and reads the next while
// the client keeps the connection alive. Owned by the handlers of its pending operation.
class MetricsServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {
    server_.owner_.check();
    server_.sessions_.insert(this);
  }
  ~Session() { server_.sessions_.erase(this); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(kHeaderLimit));
    parser_->body_limit(kBodyLimit);
    // One deadline for the whole request, however slowly its bytes come (beast's tcp_stream
    // closes the socket when it passes); for a kept-alive connection, also its idle time.
    stream_.expires_after(server_.options_.timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->on_read(ec);
                     });
  }

  void close() { stream_.close(); }

 private:
  void on_read(const beast::error_code& ec) {
    if (server_.stopping_) return;
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset) {
      close();
      return;
    }
    write(ec ? error_response(ec) : server_.respond(parser_->get()));
  }

  void write(Response response) {
    response_ = std::move(response);
    stream_.expires_after(server_.options_.timeout);  // a client that never reads
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        self->on_write(ec);
                      });
  }

  void on_write(const beast::error_code& ec) {
    if (server_.stopping_) return;
    if (ec || !response_.keep_alive()) {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;  // the last handler goes: the session and its socket with it
    }
    read();
  }

  Impl& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{kHeaderLimit + kBodyLimit};
  std::optional<http::request_parser<http::string_body>> parser_;
  Response response_;
};

void MetricsServer::Impl::accept() {
  owner_.check();
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (stopping_ || ec == net::error::operation_aborted) return;
    if (ec) {
      retry_.expires_after(kAcceptRetry);
      retry_.async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && !stopping_) accept();
      });
      return;
    }
    if (sessions_.size() >= options_.max_connections) {
      socket.close(ec);  // too many at once: this one is turned away
    } else {
      try {
        std::make_shared<Session>(*this, std::move(socket))->read();
      } catch (const std::exception&) {
        // Out of memory: this connection is dropped, the listener keeps accepting.
      }
    }
    accept();
  });
}

void MetricsServer::Impl::shut_down() {
  owner_.check();
  stopping_ = true;
  beast::error_code ignored;
  acceptor_.close(ignored);
  retry_.cancel();
  // Closing completes every pending operation (operation_aborted); its handler then drops the
  // last reference to the session and ioc_.run() returns for lack of work.
  for (Session* session : sessions_) session->close();
}

Response MetricsServer::Impl::respond(const Request& request) const {
  const std::string_view target(request.target().data(), request.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  Response response;
  if (path != "/metrics") {
    response = text_response(http::status::not_found, request.version(),
                             "not found: try /metrics\n");
  } else if (request.method() != http::verb::get) {
    response = text_response(http::status::method_not_allowed, request.version(), "only GET\n");
    response.set(http::field::allow, "GET");
  } else {
    try {
      response = Response{http::status::ok, request.version()};
      response.set(http::field::content_type,
                   beast::string_view(kMetricsContentType.data(), kMetricsContentType.size()));
      response.set(http::field::server, "boreal");
      response.body() = render_();
    } catch (const std::exception& e) {
      response = text_response(http::status::internal_server_error, request.version(),
                               std::string("rendering failed: ") + e.what() + "\n");
    }
  }
  response.keep_alive(request.keep_alive());
  response.prepare_payload();
  return response;
}

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() { stop(); }

transport::Result<std::unique_ptr<MetricsServer>> MetricsServer::start(
    const MetricsServerOptions& options, Render render) {
  auto impl = std::make_unique<Impl>(options, std::move(render));
  if (auto listening = impl->listen(); !listening) return std::move(listening).error();
  impl->serve();
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

std::uint16_t MetricsServer::port() const noexcept { return impl_->port(); }

std::string MetricsServer::url() const {
  const std::string& address = impl_->options().address;
  const std::string host = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  return "http://" + host + ":" + std::to_string(port()) + "/metrics";
}

void MetricsServer::stop() { impl_->stop(); }

}  // namespace boreal::runtime
