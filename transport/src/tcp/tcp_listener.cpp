// Accepts a node's incoming links on one port and routes each connection by its hello.
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <list>
#include <memory>

#include <boost/asio/ip/tcp.hpp>
#include <boost/endian/conversion.hpp>

#include <boreal/transport/tcp_medium.hpp>

#include "tcp/recv_connection.hpp"
#include "tcp/socket_io.hpp"
#include "tcp/tcp_recv_link.hpp"

namespace boreal::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// A connection must say hello within this time or is dropped (a port scanner, a stuck peer).
constexpr std::chrono::seconds kHelloTimeout{10};

class TcpListenerImpl final : public TcpListener {
 public:
  TcpListenerImpl(EventLoop& loop, tcp::acceptor acceptor)
      : loop_(loop), acceptor_(std::move(acceptor)) {
    // The loop keeps this source, and the io_context the handlers, after the listener is
    // gone: both check `alive` first.
    loop_.add_source([this, alive = alive_] { return !*alive || arm(); });
    start_accept();
  }
  TcpListenerImpl(const TcpListenerImpl&) = delete;
  TcpListenerImpl& operator=(const TcpListenerImpl&) = delete;

  ~TcpListenerImpl() override {
    *alive_ = false;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (auto& p : pending_) p.socket.close(ignored);
  }

  RecvLink& expect(const LinkOptions& options) override {
    links_.push_back(std::make_unique<tcp_medium::TcpRecvLink>(loop_, options));
    return *links_.back();
  }

  int do_work() override {
    int work = 0;
    // A shared connection reads for its links when they poll; here too, so that hellos on it
    // are answered whatever its links do, and closed ones go.
    for (auto& connection : shared_) work += connection->pump();
    std::erase_if(shared_, [](const auto& connection) { return connection->closed(); });
    const auto now = std::chrono::steady_clock::now();
    for (auto it = pending_.begin(); it != pending_.end();) {
      const Outcome outcome = read_hello(*it);
      if (outcome == Outcome::waiting && now - it->since > kHelloTimeout) {
        reject(*it, "no hello within " + std::to_string(kHelloTimeout.count()) + " s");
      }
      if (outcome == Outcome::waiting && now - it->since <= kHelloTimeout) {
        ++it;
        continue;
      }
      it = pending_.erase(it);
      ++work;
    }
    return work;
  }

  bool arm() override {
    for (auto& connection : shared_) {
      if (!connection->arm()) return false;
    }
    for (auto& p : pending_) {
      if (!p.wait_pending) {
        p.wait_pending = true;
        p.socket.async_wait(tcp::socket::wait_read,
                            [this, &p, alive = alive_](const boost::system::error_code&) {
                              if (!*alive) return;
                              p.wait_pending = false;
                              loop_.notify();
                            });
      }
      boost::system::error_code ec;
      if (p.socket.available(ec) > 0 || ec) return false;
    }
    return true;
  }

  std::uint16_t port() const override {
    boost::system::error_code ec;
    const auto endpoint = acceptor_.local_endpoint(ec);
    return ec ? 0 : endpoint.port();
  }
  const std::vector<Error>& rejected() const override { return rejected_; }

 private:
  struct Pending {
    explicit Pending(tcp::socket s) : socket(std::move(s)) {}
    tcp::socket socket;
    std::string peer;
    std::array<std::byte, kFrameHeaderBytes + kHelloPayloadBytes> hello{};
    std::size_t have = 0;
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
    bool wait_pending = false;
    bool done = false;
  };
  enum class Outcome { waiting, attached, rejected };

  void start_accept() {
    acceptor_.async_accept([this, alive = alive_](const boost::system::error_code& ec,
                                                  tcp::socket socket) {
      if (!*alive) return;
      loop_.notify();
      if (ec == asio::error::operation_aborted) return;
      if (!ec) {
        auto& p = pending_.emplace_back(std::move(socket));
        p.peer = tcp_medium::peer_name(p.socket);
        if (auto ok = tcp_medium::configure(p.socket, "connection from " + p.peer); !ok) {
          rejected_.push_back(ok.error());
          pending_.pop_back();
        }
      }
      start_accept();
    });
  }

  Outcome read_hello(Pending& p) {
    boost::system::error_code ec;
    const auto n = p.socket.read_some(
        asio::buffer(p.hello.data() + p.have, p.hello.size() - p.have), ec);
    if (ec == asio::error::would_block) return Outcome::waiting;
    if (ec) {
      reject(p, ec == asio::error::eof ? "closed before its hello" : ec.message());
      return Outcome::rejected;
    }
    p.have += n;
    const auto raw = std::span<const std::byte, kFrameHeaderBytes>(p.hello.data(),
                                                                   kFrameHeaderBytes);
    // Check the header as soon as it is complete: a garbage peer is refused at byte 32.
    if (p.have < kFrameHeaderBytes) return Outcome::waiting;
    // Whatever stream the first frame names passes the stream check, so that a data frame
    // sent before any hello is reported as such (offset 8: frame.cpp's kStreamIdAt).
    FrameLimits limits = kFirstFrameLimits;
    std::memcpy(&limits.stream_id, p.hello.data() + 8, sizeof limits.stream_id);
    boost::endian::little_to_native_inplace(limits.stream_id);
    auto header = decode_header(raw, limits);
    if (!header) {
      reject(p, header.error().message);
      return Outcome::rejected;
    }
    if (!(header.value().flags & kFlagHello)) {
      reject(p, "first frame is not a hello (flags " + std::to_string(header.value().flags) +
                    ", stream " + std::to_string(header.value().stream_id) + ")");
      return Outcome::rejected;
    }
    if (p.have < p.hello.size()) return Outcome::waiting;
    const std::span<const std::byte> body(p.hello.data() + kFrameHeaderBytes, kHelloPayloadBytes);
    if (auto ok = verify_checksum(header.value(), raw, body); !ok) {
      reject(p, ok.error().message);
      return Outcome::rejected;
    }
    auto hello = decode_hello(body);
    if (!hello) {
      reject(p, hello.error().message);
      return Outcome::rejected;
    }
    const auto& h = hello.value();
    if (header.value().sequence == kHelloOnSharedConnection) {
      // Several links share this connection: it reads for them all, this hello included.
      if (p.wait_pending) {
        boost::system::error_code ignored;
        p.socket.cancel(ignored);
        loop_.poll_now();
      }
      auto& shared = shared_.emplace_back(std::make_unique<tcp_medium::RecvConnection>(
          loop_, std::move(p.socket), p.peer, largest_frame(),
          [this](const HelloPayload& said, std::string& problem) {
            return match(said, problem);
          },
          [this](Error refused) { rejected_.push_back(std::move(refused)); }));
      shared->take_hello(p.hello);
      return Outcome::attached;
    }
    std::string problem;
    tcp_medium::TcpRecvLink* link = match(h, problem);
    if (link == nullptr) {
      reject(p, problem);
      return Outcome::rejected;
    }
    if (p.wait_pending) {
      // The pending wait refers to this Pending entry; cancel it before the socket moves.
      boost::system::error_code ignored;
      p.socket.cancel(ignored);
      loop_.poll_now();
    }
    link->attach(std::move(p.socket), p.peer, h.sender_id);
    return Outcome::attached;
  }

  // The link a hello attaches to, or nullptr and why not.
  tcp_medium::TcpRecvLink* match(const HelloPayload& h, std::string& problem) {
    for (auto& link : links_) {
      const auto& o = link->options();
      if (o.stream_id != h.stream_id) continue;
      const std::string stream = "stream " + std::to_string(h.stream_id) + " '" + o.name + "'";
      problem.clear();
      if (h.cluster_token != o.cluster_token) {
        // Checked first: a peer of another cluster learns nothing about this one's schemas.
        // The tokens themselves are not printed.
        problem = "cluster token mismatch for " + stream;
      } else if (h.schema_hash != o.schema_hash) {
        problem = "schema hash mismatch for " + stream + ": sender has " + hex64(h.schema_hash) +
                  ", receiver expects " + hex64(o.schema_hash);
      } else if (h.tuple_bytes != o.tuple_bytes) {
        problem = "tuple size mismatch for " + stream + ": sender has " +
                  std::to_string(h.tuple_bytes) + " bytes, receiver expects " +
                  std::to_string(o.tuple_bytes);
      } else if (h.max_payload_bytes > o.max_payload_bytes) {
        problem = "batch of " + std::to_string(h.max_payload_bytes) + " bytes for " + stream +
                  " exceeds the " + std::to_string(o.max_payload_bytes) +
                  " this receiver has room for";
      } else if (auto why = link->refuses(h.sender_id); !why.empty()) {
        problem = stream + " cannot take this connection: " + why;
      }
      return problem.empty() ? link.get() : nullptr;
    }
    std::string known;
    for (const auto& link : links_) {
      known += (known.empty() ? "" : ", ") + std::to_string(link->stream_id());
    }
    problem = "unknown stream id " + std::to_string(h.stream_id) + " (this node expects " +
              (known.empty() ? std::string("none") : "streams " + known) + ")";
    return nullptr;
  }

  std::size_t largest_frame() const {
    std::size_t most = 0;
    for (const auto& link : links_) {
      most = std::max<std::size_t>(most, link->options().max_payload_bytes);
    }
    return kFrameHeaderBytes + most;
  }

  static std::string hex64(std::uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%016" PRIX64, value);
    return text;
  }

  void reject(Pending& p, const std::string& why) {
    rejected_.push_back(
        Error{ErrorCategory::protocol, 0, "connection from " + p.peer + " refused: " + why});
    if (p.wait_pending) {
      boost::system::error_code ignored;
      p.socket.cancel(ignored);
      loop_.poll_now();
    }
    boost::system::error_code ignored;
    p.socket.close(ignored);
  }

  // The first frame on a connection is decoded with no stream or size expectations, so that
  // decode_header() reports "not our protocol" (magic, version, flags) before anything else;
  // read_hello() then insists on a hello, whose payload length decode_header() pins to 32.
  static constexpr FrameLimits kFirstFrameLimits{
      .stream_id = 0, .tuple_bytes = 0, .max_payload_bytes = 0xFFFF'FFFFu};

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  tcp::acceptor acceptor_;
  std::vector<std::unique_ptr<tcp_medium::TcpRecvLink>> links_;
  // Connections several links share; after links_, so that they go first (each tells its
  // links).
  std::vector<std::unique_ptr<tcp_medium::RecvConnection>> shared_;
  std::list<Pending> pending_;  // stable addresses: waits capture them
  std::vector<Error> rejected_;
};

}  // namespace

Result<std::unique_ptr<TcpListener>> TcpListener::open(EventLoop& loop, const TcpEndpoint& local) {
  const std::string text = local.host + ":" + std::to_string(local.port);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(local.host.empty() ? "0.0.0.0" : local.host, ec);
  if (ec) {
    return fail(ErrorCategory::config, ec.value(),
                "cannot listen on " + text + ": not a numeric address (" + ec.message() + ")");
  }
  tcp::acceptor acceptor(loop.context());
  const tcp::endpoint endpoint(address, local.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return fail(ErrorCategory::io, ec.value(), "cannot listen on " + text + ": " + ec.message());
  }
  return std::unique_ptr<TcpListener>(new TcpListenerImpl(loop, std::move(acceptor)));
}

}  // namespace boreal::transport
