// Recoverable errors of the transport layer (docs/design.md, convention 5).
//
// A flow condition (no credit, nothing to read) is an enum such as SendStatus; a recoverable
// failure (a refused connection, a malformed frame, a bad address) is an Error carried in a
// Result<T>; a programmer error is an assertion. Nothing in the transport throws.
#pragma once

#include <string>
#include <string_view>

#include <boost/outcome/result.hpp>
#include <boost/outcome/success_failure.hpp>

namespace boreal::transport {

enum class ErrorCategory {
  config,    // bad flag, option or address given by the user
  io,        // the operating system refused or failed (errno / asio error)
  protocol,  // a peer sent something that breaks the wire protocol
  fabric,    // libfabric returned an error
  closed,    // the peer went away
};

std::string_view to_string(ErrorCategory category) noexcept;

struct Error {
  ErrorCategory category = ErrorCategory::io;
  int code = 0;         // errno, asio error value or libfabric code; 0 when none applies
  std::string
      message;  // names the problem and where it is ("link 'ticks' from 127.0.0.1:4021: ...")

  // "protocol error: <message>" (plus " (code N)" when code is set).
  [[nodiscard]] std::string describe() const;
};

// tl::expected is not packaged in Debian 12, so boreal uses Boost.Outcome's result, which is.
// The `terminate` policy turns a wrong access (value() of an error) into std::terminate: a
// programmer error, never an exception.
template <class T>
using Result = boost::outcome_v2::basic_result<T, Error, boost::outcome_v2::policy::terminate>;

using boost::outcome_v2::success;

// The failure value of a Result: `return fail(ErrorCategory::config, 0, "...");`.
inline auto fail(ErrorCategory category, int code, std::string message) {
  return boost::outcome_v2::failure(Error{category, code, std::move(message)});
}

}  // namespace boreal::transport
