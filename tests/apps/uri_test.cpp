#include "spec/uri.hpp"

#include <string>

#include <gtest/gtest.h>

namespace boreal::runtime {
namespace {

Uri parse_ok(std::string_view text) {
  transport::Result<Uri> uri = parse_uri(text);
  EXPECT_TRUE(uri) << text << ": " << uri.error().message;
  return uri ? uri.value() : Uri{};
}

std::string error_of(std::string_view text) {
  transport::Result<Uri> uri = parse_uri(text);
  EXPECT_FALSE(uri) << "unexpectedly valid: " << text;
  if (uri) return {};
  EXPECT_EQ(uri.error().category, transport::ErrorCategory::config);
  return uri.error().message;
}

TEST(Uri, TcpHostAndPort) {
  EXPECT_EQ(parse_ok("tcp://127.0.0.1:7101"), (Uri{"tcp", "", "127.0.0.1", 7101, ""}));
  EXPECT_EQ(parse_ok("tcp://node-2.example:1"), (Uri{"tcp", "", "node-2.example", 1, ""}));
  EXPECT_EQ(parse_ok("tcp://h:65535").port, 65535);
}

TEST(Uri, BracketedIpv6HostIsStoredWithoutBrackets) {
  EXPECT_EQ(parse_ok("tcp://[::1]:7100"), (Uri{"tcp", "", "::1", 7100, ""}));
  EXPECT_EQ(parse_ok("tcp://[fe80::1%eth0]:9"), (Uri{"tcp", "", "fe80::1%eth0", 9, ""}));
}

TEST(Uri, FabricProviderMayHoldSemicolons) {
  EXPECT_EQ(parse_ok("fabric://tcp;ofi_rxm/node2:7100"),
            (Uri{"fabric", "tcp;ofi_rxm", "node2", 7100, ""}));
  EXPECT_EQ(parse_ok("fabric://verbs/[::1]:5"), (Uri{"fabric", "verbs", "::1", 5, ""}));
}

TEST(Uri, InprocName) {
  EXPECT_EQ(parse_ok("inproc://ring-a"), (Uri{"inproc", "", "", 0, "ring-a"}));
}

TEST(Uri, ToStringRoundTrips) {
  for (std::string_view text : {"tcp://127.0.0.1:7101", "tcp://[::1]:7100", "tcp://h:65535",
                                "fabric://tcp;ofi_rxm/node2:7100", "fabric://verbs/[fe80::2]:1",
                                "inproc://ring-a"}) {
    const Uri uri = parse_ok(text);
    EXPECT_EQ(uri.to_string(), text);
    EXPECT_EQ(parse_ok(uri.to_string()), uri) << text;
  }
}

TEST(Uri, NoSchemeSeparator) {
  EXPECT_EQ(error_of("127.0.0.1:7101"),
            "'127.0.0.1:7101' is not an address URI (expected tcp://host:port, "
            "fabric://provider/host:port or inproc://name)");
  EXPECT_EQ(error_of(""),
            "'' is not an address URI (expected tcp://host:port, fabric://provider/host:port or "
            "inproc://name)");
}

TEST(Uri, UnknownScheme) {
  EXPECT_EQ(error_of("udp://h:1"),
            "address 'udp://h:1': unknown scheme 'udp' (valid: tcp, fabric, inproc)");
}

TEST(Uri, EmptyHost) {
  EXPECT_EQ(error_of("tcp://:7100"), "address 'tcp://:7100': empty host");
  EXPECT_EQ(error_of("tcp://[]:7100"), "address 'tcp://[]:7100': empty host");
}

TEST(Uri, MissingPort) {
  const std::string expected =
      "(expected tcp://host:port, fabric://provider/host:port or inproc://name)";
  EXPECT_EQ(error_of("tcp://h"), "address 'tcp://h': missing port " + expected);
  EXPECT_EQ(error_of("tcp://h:"), "address 'tcp://h:': missing port " + expected);
  EXPECT_EQ(error_of("tcp://[::1]"), "address 'tcp://[::1]': missing port " + expected);
}

TEST(Uri, PortNotANumber) {
  EXPECT_EQ(error_of("tcp://h:http"), "address 'tcp://h:http': port 'http' is not a number");
  EXPECT_EQ(error_of("tcp://h:+80"), "address 'tcp://h:+80': port '+80' is not a number");
  EXPECT_EQ(error_of("tcp://h:80x"), "address 'tcp://h:80x': port '80x' is not a number");
}

TEST(Uri, PortOutOfRange) {
  EXPECT_EQ(error_of("tcp://h:0"), "address 'tcp://h:0': port 0 is out of range (1-65535)");
  EXPECT_EQ(error_of("tcp://h:65536"),
            "address 'tcp://h:65536': port 65536 is out of range (1-65535)");
  EXPECT_EQ(error_of("tcp://h:99999999999999999999999"),
            "address 'tcp://h:99999999999999999999999': port 99999999999999999999999 is out of "
            "range (1-65535)");
}

TEST(Uri, Ipv6NeedsBrackets) {
  EXPECT_EQ(error_of("tcp://::1:7100"),
            "address 'tcp://::1:7100': an IPv6 host needs brackets ([::1]:7100)");
}

TEST(Uri, UnclosedBracket) {
  EXPECT_EQ(error_of("tcp://[::1:7100"), "address 'tcp://[::1:7100': unclosed '['");
}

TEST(Uri, FabricMissingProvider) {
  const std::string expected =
      ": missing provider (expected fabric://provider/host:port, e.g. "
      "fabric://tcp;ofi_rxm/node2:7100)";
  EXPECT_EQ(error_of("fabric://node2:7100"), "address 'fabric://node2:7100'" + expected);
  EXPECT_EQ(error_of("fabric:///node2:7100"), "address 'fabric:///node2:7100'" + expected);
}

TEST(Uri, FabricHostErrorsAreThoseOfTcp) {
  EXPECT_EQ(error_of("fabric://verbs/node2"),
            "address 'fabric://verbs/node2': missing port (expected tcp://host:port, "
            "fabric://provider/host:port or inproc://name)");
}

TEST(Uri, EmptyInprocName) {
  EXPECT_EQ(error_of("inproc://"), "address 'inproc://': empty inproc name");
}

}  // namespace
}  // namespace boreal::runtime
