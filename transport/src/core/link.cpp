#include <boreal/transport/link.hpp>

namespace boreal::transport {

std::string_view to_string(SendStatus status) noexcept {
  switch (status) {
    case SendStatus::ok: return "ok";
    case SendStatus::back_pressured: return "back_pressured";
    case SendStatus::not_connected: return "not_connected";
    case SendStatus::closed: return "closed";
  }
  return "?";
}

std::string_view to_string(LinkState state) noexcept {
  switch (state) {
    case LinkState::connecting: return "connecting";
    case LinkState::established: return "established";
    case LinkState::finished: return "finished";
    case LinkState::failed: return "failed";
  }
  return "?";
}

}  // namespace boreal::transport
