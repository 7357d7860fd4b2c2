// The duty cycle (docs/design.md, convention 1): an agent offers do_work(); a runner owns the
// thread and calls wait.idle(agent.do_work(), ...). The wait mode is chosen at run time but
// dispatched statically: std::visit picks the loop once, and the loop itself has no virtual
// call.
#pragma once

#include <atomic>
#include <concepts>
#include <variant>

#include <boreal/transport/adaptive_wait.hpp>
#include <boreal/transport/backoff_wait.hpp>
#include <boreal/transport/block_wait.hpp>
#include <boreal/transport/busy_wait.hpp>
#include <boreal/transport/sleep_wait.hpp>
#include <boreal/transport/wait_mode.hpp>
#include <boreal/transport/waitable.hpp>

namespace boreal::transport {

template <class A>
concept Agent = requires(A agent) {
  { agent.do_work() } -> std::convertible_to<int>;    // work done; 0 = idle
  { agent.done() } -> std::convertible_to<bool>;      // the runner stops when true
  { agent.waitable() } -> std::convertible_to<Waitable&>;
  { agent.hints() } -> std::convertible_to<const LoadHints&>;
};

using AnyWait = std::variant<BusyWait, BlockWait, SleepWait, BackoffWait, AdaptiveWait>;

[[nodiscard]] AnyWait make_wait(const WaitConfig& config);
[[nodiscard]] const WaitStats& stats_of(const AnyWait& wait) noexcept;

// Runs `agent` on the calling thread until it is done or `stop` is set. Lowers the thread's
// timer slack first. Blocks the caller for the whole run.
template <Agent A>
void run_agent(A& agent, AnyWait& wait, const std::atomic<bool>& stop) {
  lower_timer_slack();
  std::visit(
      [&](auto& strategy) {
        while (!agent.done() && !stop.load(std::memory_order_relaxed)) {
          strategy.idle(agent.do_work(), agent.waitable(), agent.hints());
        }
      },
      wait);
}

}  // namespace boreal::transport
