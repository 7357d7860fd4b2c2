#include "tcp/socket_io.hpp"

#include <boost/asio/ip/tcp.hpp>

namespace boreal::transport::tcp_medium {

std::string peer_name(const Socket& socket) {
  boost::system::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "?";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

Result<void> configure(Socket& socket, const std::string& what) {
  boost::system::error_code ec;
  socket.set_option(boost::asio::ip::tcp::no_delay(true), ec);
  if (!ec) socket.non_blocking(true, ec);
  if (ec) {
    return fail(ErrorCategory::io, ec.value(), what + ": cannot set up socket: " + ec.message());
  }
  return success();
}

}  // namespace boreal::transport::tcp_medium
