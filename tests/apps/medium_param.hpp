// A medium (and, for the fabric media, a libfabric provider) as a test parameter: how gtest
// prints it, the command-line flags that select it, and whether this machine can run it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/fabric_medium.hpp>

#include "launch/launcher.hpp"

namespace boreal::test {

struct Medium {
  const char* medium;
  const char* provider;  // nullptr for tcp
};

// How gtest prints a parameter in test listings.
inline void PrintTo(const Medium& m, std::ostream* os) {
  *os << m.medium;
  if (m.provider != nullptr) *os << " over " << m.provider;
}

// The flags that select `m` on the command line.
inline std::string medium_flags(const Medium& m) {
  std::string flags = " --medium " + std::string(m.medium);
  if (m.provider != nullptr) flags += " --provider '" + std::string(m.provider) + "'";
  return flags;
}

// Empty when `m` can run here, else why not (libfabric's answer). Opens an endpoint of the
// provider and asks for a link of the medium, as a receiving node would.
inline std::string unavailable(const Medium& m) {
  if (m.provider == nullptr) return "";
  boreal::transport::EventLoop loop;
  // The socket providers bind a port the kernel picks (0); shm names its endpoint after
  // host:port and takes no socket, so it gets a port no other test process is likely to use.
  // (A port made of the process id collided with a port in use under CI's parallel tests.)
  std::uint16_t port = 0;
  if (std::string(m.provider) == "shm") port = boreal::runtime::free_tcp_port("127.0.0.1").value();
  auto listener = boreal::transport::FabricListener::open(loop, {m.provider, "127.0.0.1", port});
  if (!listener) {
    const auto& message = listener.error().message;
    if (message.find("no reliable-datagram") != std::string::npos ||
        message.find(" lacks ") != std::string::npos) {
      return message;
    }
    ADD_FAILURE() << "probing " << m.provider << ": " << message;
    return message;
  }
  return "";
}

}  // namespace boreal::test
