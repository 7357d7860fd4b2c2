// boreal-loopback-floor: the one-way latency of bare loopback TCP on this host, the floor under
// `busy` mode's latency breakdown (docs/design.md, "Where the latency goes").
//
// One thread sends a 96-byte message (a 64-byte tuple and a 32-byte frame header) at each due
// time of a paced stream, spinning until it is due; another busy-polls recvmsg() with
// SO_TIMESTAMPNS. It prints the p50, p99 and p99.9 over the messages of due -> the kernel's
// arrival stamp, arrival -> the read returned, and due -> read, in the stages' names:
//   boreal-loopback-floor --rate 10000 --messages 20000
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <CLI/CLI.hpp>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr std::size_t kMessageBytes = 96;

std::int64_t realtime_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

void print(const char* stage, std::vector<std::int64_t> ns) {
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    return static_cast<double>(
               ns[static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1))]) /
           1e3;
  };
  std::printf("%-16s %8.1f %8.1f %9.1f\n", stage, at(0.50), at(0.99), at(0.999));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"One-way latency of bare loopback TCP with a busy-polling reader: the floor "
               "under boreal's busy mode (docs/design.md, \"Where the latency goes\")."};
  double rate = 10000;
  std::size_t messages = 20000;
  app.add_option("--rate", rate, "messages per second")->check(CLI::Range(1.0, 1e6));
  app.add_option("--messages", messages, "messages to send (at least 100)")
      ->check(CLI::Range(std::size_t{100}, std::size_t{10'000'000}));
  CLI11_PARSE(app, argc, argv);

  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  tcp::socket out(io);
  tcp::socket in(io);
  out.connect(acceptor.local_endpoint());
  acceptor.accept(in);
  out.set_option(tcp::no_delay(true));
  const int on = 1;
  if (::setsockopt(in.native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) {
    std::fprintf(stderr, "boreal-loopback-floor: SO_TIMESTAMPNS: %s\n", std::strerror(errno));
    return 1;
  }

  // Stages of the messages whose read carried an arrival stamp (Linux turns stamping on from a
  // work queue after the first socket asks, so the first reads may carry none).
  std::vector<std::int64_t> arrived, picked, total(messages);
  arrived.reserve(messages);
  picked.reserve(messages);
  std::size_t unstamped = 0;
  std::thread reader([&] {
    std::vector<char> buffer(1 << 16);
    std::size_t have = 0;  // bytes of the message being read
    std::size_t i = 0;
    std::int64_t due = 0;
    while (i < messages) {
      iovec iov{buffer.data(), buffer.size()};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
      msghdr message{};
      message.msg_iov = &iov;
      message.msg_iovlen = 1;
      message.msg_control = control;
      message.msg_controllen = sizeof control;
      const ssize_t n = ::recvmsg(in.native_handle(), &message, MSG_DONTWAIT);
      if (n <= 0) continue;
      const std::int64_t now = realtime_ns();
      std::int64_t stamp = 0;
      for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
        timespec t{};
        std::memcpy(&t, CMSG_DATA(c), sizeof t);
        stamp = static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
      }
      for (std::size_t at = 0; at < static_cast<std::size_t>(n) && i < messages; ++at) {
        if (have < sizeof due) std::memcpy(reinterpret_cast<char*>(&due) + have, &buffer[at], 1);
        if (++have < kMessageBytes) continue;
        have = 0;
        if (stamp != 0) {
          arrived.push_back(stamp - due);
          picked.push_back(now - stamp);
        } else {
          ++unstamped;
        }
        total[i] = now - due;
        ++i;
      }
    }
  });
  const auto period = static_cast<std::int64_t>(1e9 / rate);
  const std::int64_t start = realtime_ns() + 1'000'000;
  char message[kMessageBytes] = {};
  for (std::size_t i = 0; i < messages; ++i) {
    const std::int64_t due = start + static_cast<std::int64_t>(i) * period;
    while (realtime_ns() < due) {
    }
    std::memcpy(message, &due, sizeof due);
    if (::send(out.native_handle(), message, sizeof message, 0) !=
        static_cast<ssize_t>(sizeof message)) {
      std::fprintf(stderr, "boreal-loopback-floor: send: %s\n", std::strerror(errno));
      std::_Exit(1);
    }
  }
  reader.join();
  std::printf("%zu messages of %zu bytes at %.0f/s over loopback TCP, busy reader (us)\n",
              messages, kMessageBytes, rate);
  std::printf("%-16s %8s %8s %9s\n", "stage", "p50", "p99", "p99.9");
  if (!arrived.empty()) {
    print("due_to_arrived", arrived);
    print("arrived_to_read", picked);
  }
  print("end_to_end", total);
  if (unstamped > 0) {
    std::printf("(%zu messages arrived without a stamp: not in the two stages)\n", unstamped);
  }
  return 0;
}
