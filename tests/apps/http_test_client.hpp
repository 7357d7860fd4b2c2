// A small HTTP client for the metrics tests: one request over a fresh connection with
// Boost.Beast, and a raw exchange (bytes out, whatever comes back until the server closes),
// each bounded in time so a server that hangs fails the test instead of blocking it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace boreal::test {

struct HttpReply {
  int status = 0;  // 0: no response (error says why)
  std::string content_type;
  std::string allow;
  std::string body;
  std::string error;
};

// `verb target` to 127.0.0.1:port, HTTP/1.1, Connection: close; everything within `limit`.
inline HttpReply http_request(std::uint16_t port, boost::beast::http::verb verb,
                              const std::string& target,
                              std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  namespace net = boost::asio;
  namespace beast = boost::beast;
  namespace http = beast::http;
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  http::request<http::string_body> request{verb, target, 11};
  request.set(http::field::host, "127.0.0.1");
  request.keep_alive(false);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  HttpReply reply;
  auto field = [&](http::field f) {
    const auto value = response[f];
    return std::string(value.data(), value.size());
  };
  stream.expires_after(limit);
  const net::ip::tcp::endpoint server(net::ip::make_address("127.0.0.1"), port);
  stream.async_connect(server, [&](beast::error_code ec) {
    if (ec) {
      reply.error = "connect: " + ec.message();
      return;
    }
    http::async_write(stream, request, [&](beast::error_code wec, std::size_t) {
      if (wec) {
        reply.error = "write: " + wec.message();
        return;
      }
      http::async_read(stream, buffer, response, [&](beast::error_code rec, std::size_t) {
        if (rec) {
          reply.error = "read: " + rec.message();
          return;
        }
        reply.status = static_cast<int>(response.result_int());
        reply.content_type = field(http::field::content_type);
        reply.allow = field(http::field::allow);
        reply.body = response.body();
      });
    });
  });
  ioc.run();
  return reply;
}

inline HttpReply http_get(std::uint16_t port, const std::string& target) {
  return http_request(port, boost::beast::http::verb::get, target);
}

struct RawReply {
  std::string received;
  bool closed = false;  // the server closed (or reset) the connection within the limit
};

// Sends `bytes` and reads until the server closes the connection or `limit` passes.
inline RawReply raw_exchange(std::uint16_t port, const std::string& bytes,
                             std::chrono::milliseconds limit) {
  namespace net = boost::asio;
  namespace beast = boost::beast;
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  RawReply reply;
  std::string incoming;
  stream.expires_after(limit);
  const net::ip::tcp::endpoint server(net::ip::make_address("127.0.0.1"), port);
  stream.async_connect(server, [&](beast::error_code ec) {
    if (ec) return;
    net::async_write(stream, net::buffer(bytes), [&](beast::error_code wec, std::size_t) {
      // A server that closes early may reset the rest of a large write; read what it said.
      (void)wec;
      net::async_read(
          stream, net::dynamic_buffer(incoming),
          [&](beast::error_code rec, std::size_t) { reply.closed = rec != beast::error::timeout; });
    });
  });
  ioc.run();
  reply.received = incoming;
  return reply;
}

}  // namespace boreal::test
