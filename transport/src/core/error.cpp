#include <boreal/transport/error.hpp>

#include <string>
#include <string_view>

namespace boreal::transport {

std::string_view to_string(ErrorCategory category) noexcept {
  switch (category) {
    case ErrorCategory::config:
      return "config";
    case ErrorCategory::io:
      return "io";
    case ErrorCategory::protocol:
      return "protocol";
    case ErrorCategory::fabric:
      return "fabric";
    case ErrorCategory::closed:
      return "closed";
  }
  // Reachable only through a cast of an out-of-range integer; describe() must still print.
  return "unknown";
}

std::string Error::describe() const {
  std::string out{to_string(category)};
  out += " error: ";
  out += message;
  if (code != 0) {
    out += " (code ";
    out += std::to_string(code);
    out += ')';
  }
  return out;
}

}  // namespace boreal::transport
