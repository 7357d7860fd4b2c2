// Node addresses as URIs (docs/design.md "Transport"):
//
//   tcp://host:port                 Boost.Asio TCP
//   fabric://provider/host:port     libfabric; the provider may hold ';' ("tcp;ofi_rxm")
//   inproc://name                   a ring inside this process
//
// host is a name, an IPv4 address or a bracketed IPv6 address ("[::1]:7100"; stored without
// the brackets). Parsing is pure: nothing is resolved here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boreal/transport/error.hpp>

namespace boreal::runtime {

struct Uri {
  std::string scheme;    // "tcp", "fabric" or "inproc"
  std::string provider;  // fabric only: "verbs", "tcp;ofi_rxm", ...
  std::string host;      // tcp and fabric
  std::uint16_t port = 0;  // tcp and fabric: 1..65535
  std::string name;      // inproc only

  // Back to the textual form; parse_uri(u.to_string()) == u.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const Uri&, const Uri&) = default;
};

// Errors (ErrorCategory::config) quote the text and say what is wrong: no "scheme://", an
// unknown scheme (listing the valid ones), a missing or empty provider, an empty host, a
// missing port, a port that is not a number or is outside 1..65535, an empty inproc name.
[[nodiscard]] transport::Result<Uri> parse_uri(std::string_view text);

}  // namespace boreal::runtime
