#include "tcp/socket_io.hpp"

#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#include <cstring>

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

StampedRead read_stamped(Socket& socket, std::span<std::byte> room,
                         std::span<std::byte> then) {
  std::array<iovec, 2> iov{iovec{room.data(), room.size()}, iovec{then.data(), then.size()}};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(timespec))> control{};
  msghdr message{};
  message.msg_iov = iov.data();
  message.msg_iovlen = then.empty() ? 1 : 2;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  StampedRead read;
  read.bytes = ::recvmsg(socket.native_handle(), &message, MSG_DONTWAIT);
  if (read.bytes < 0) {
    read.error = errno;
    return read;
  }
  for (const cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr;
       c = CMSG_NXTHDR(&message, const_cast<cmsghdr*>(c))) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec arrived{};
    std::memcpy(&arrived, CMSG_DATA(c), sizeof arrived);
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    read.arrived_ns = realtime_ns_of(arrived);
    read.read_ns = realtime_ns_of(now);
    break;
  }
  return read;
}

}  // namespace boreal::transport::tcp_medium
