#include <boreal/transport/wait_mode.hpp>

#include <string>

namespace boreal::transport {

std::string_view to_string(WaitMode mode) noexcept {
  switch (mode) {
    case WaitMode::busy: return "busy";
    case WaitMode::block: return "block";
    case WaitMode::sleep: return "sleep";
    case WaitMode::backoff: return "backoff";
    case WaitMode::adaptive: return "adaptive";
  }
  return "?";
}

Result<WaitMode> parse_wait_mode(std::string_view name) {
  for (WaitMode mode : kAllWaitModes) {
    if (name == to_string(mode)) return mode;
  }
  return fail(ErrorCategory::config, 0,
              "unknown wait mode '" + std::string(name) +
                  "' (valid: busy, block, sleep, backoff, adaptive)");
}

}  // namespace boreal::transport
