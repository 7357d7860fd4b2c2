#include <boreal/transport/agent_runner.hpp>

namespace boreal::transport {

AnyWait make_wait(const WaitConfig& config) {
  switch (config.mode) {
    case WaitMode::busy: return BusyWait{};
    case WaitMode::block: return BlockWait{};
    case WaitMode::sleep: return SleepWait{config};
    case WaitMode::backoff: return BackoffWait{config};
    case WaitMode::adaptive: return AdaptiveWait{config};
  }
  return BlockWait{};
}

const WaitStats& stats_of(const AnyWait& wait) noexcept {
  return std::visit([](const auto& strategy) -> const WaitStats& { return strategy.stats(); },
                    wait);
}

}  // namespace boreal::transport
