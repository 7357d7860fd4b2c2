#include "spec/uri.hpp"

#include <charconv>

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

constexpr std::string_view kExpected =
    "expected tcp://host:port, fabric://provider/host:port or inproc://name";

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// Splits "host:port" or "[v6]:port" into uri.host and uri.port.
transport::Result<void> parse_host_port(std::string_view text, std::string_view whole, Uri& uri) {
  std::string_view host;
  std::string_view rest;  // ":port" or ""
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      return fail(ErrorCategory::config, 0, "address " + in_quotes(whole) + ": unclosed '['");
    }
    host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
  } else {
    const auto colon = text.rfind(':');
    host = colon == std::string_view::npos ? text : text.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon);
    if (host.find(':') != std::string_view::npos) {
      return fail(ErrorCategory::config, 0,
                  "address " + in_quotes(whole) + ": an IPv6 host needs brackets ([::1]:7100)");
    }
  }
  if (host.empty()) {
    return fail(ErrorCategory::config, 0, "address " + in_quotes(whole) + ": empty host");
  }
  if (!rest.starts_with(':') || rest.size() == 1) {
    return fail(ErrorCategory::config, 0,
                "address " + in_quotes(whole) + ": missing port (" + std::string(kExpected) + ")");
  }
  const std::string_view digits = rest.substr(1);
  std::uint64_t port = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (end != digits.data() + digits.size() || digits.starts_with('+')) {
    return fail(ErrorCategory::config, 0,
                "address " + in_quotes(whole) + ": port " + in_quotes(digits) + " is not a number");
  }
  if (ec == std::errc::result_out_of_range || port == 0 || port > 65535) {
    return fail(ErrorCategory::config, 0,
                "address " + in_quotes(whole) + ": port " + std::string(digits) +
                    " is out of range (1-65535)");
  }
  uri.host = std::string(host);
  uri.port = static_cast<std::uint16_t>(port);
  return transport::success();
}

}  // namespace

std::string Uri::to_string() const {
  if (scheme == "inproc") return "inproc://" + name;
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  const std::string hp = h + ":" + std::to_string(port);
  if (scheme == "fabric") return "fabric://" + provider + "/" + hp;
  return scheme + "://" + hp;
}

transport::Result<Uri> parse_uri(std::string_view text) {
  const auto sep = text.find("://");
  if (sep == std::string_view::npos) {
    return fail(ErrorCategory::config, 0,
                in_quotes(text) + " is not an address URI (" + std::string(kExpected) + ")");
  }
  Uri uri;
  uri.scheme = std::string(text.substr(0, sep));
  const std::string_view rest = text.substr(sep + 3);

  if (uri.scheme == "inproc") {
    if (rest.empty()) {
      return fail(ErrorCategory::config, 0, "address " + in_quotes(text) + ": empty inproc name");
    }
    uri.name = std::string(rest);
    return uri;
  }
  if (uri.scheme == "tcp") {
    if (auto r = parse_host_port(rest, text, uri); !r) return r.error();
    return uri;
  }
  if (uri.scheme == "fabric") {
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0) {
      return fail(ErrorCategory::config, 0,
                  "address " + in_quotes(text) + ": missing provider (expected " +
                      "fabric://provider/host:port, e.g. fabric://tcp;ofi_rxm/node2:7100)");
    }
    uri.provider = std::string(rest.substr(0, slash));
    if (auto r = parse_host_port(rest.substr(slash + 1), text, uri); !r) return r.error();
    return uri;
  }
  return fail(ErrorCategory::config, 0,
              "address " + in_quotes(text) + ": unknown scheme " + in_quotes(uri.scheme) +
                  " (valid: tcp, fabric, inproc)");
}

}  // namespace boreal::runtime
