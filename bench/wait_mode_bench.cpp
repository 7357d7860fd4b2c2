// What the wait modes cost.
//
//  - BM_IdleWithWork/<mode>: one idle() call after a poll that did work, the hot path of every
//    I/O thread under load. It should be a counter increment and a branch; anything more
//    (a clock read, a syscall) is paid once per poll at full rate.
//  - BM_BusyEmptyPoll: one empty poll of `busy` (the CPU pause hint dominates).
//  - BM_SleepInterval/<case>: the sleep formula, computed on every empty poll of sleep and
//    adaptive. 0 = nothing arriving, 1 = rate and capacity, 2 = also a deadline.
//  - BM_PingPong/<mode>: two threads, each with its own EventLoop, bounce one token; the time
//    per iteration is one round trip, i.e. two wake-ups through the mode's blocking path
//    (real time: the waiting is the point). block_waits_per_rt says how many of the peer's
//    idle episodes really blocked (1.0 = every wake-up went through epoll).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>

#include <benchmark/benchmark.h>
#include <boost/asio/post.hpp>

#include <boreal/transport/agent_runner.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/sleep_wait.hpp>
#include <boreal/transport/wait_mode.hpp>

namespace boreal::transport {
namespace {

using namespace std::chrono_literals;

// The hot-path benchmarks never reach the waitable; if a mode did, it would find work at once.
class NeverBlocks final : public Waitable {
 public:
  bool try_arm() override { return false; }
  bool wait(std::chrono::nanoseconds /*timeout*/) override { return false; }
  void disarm() override {}
};

template <class W>
W construct(const WaitConfig& config) {
  if constexpr (std::is_constructible_v<W, WaitConfig>) {
    return W{config};
  } else {
    return W{};
  }
}

template <class W>
void BM_IdleWithWork(benchmark::State& state) {
  W wait = construct<W>(WaitConfig{});
  NeverBlocks source;
  const LoadHints hints;
  for (auto _ : state) {
    int work = 1;
    benchmark::DoNotOptimize(work);  // a run-time value, as do_work()'s result is
    wait.idle(work, source, hints);
    benchmark::ClobberMemory();
  }
  state.counters["polls"] = static_cast<double>(wait.stats().polls);
}
BENCHMARK(BM_IdleWithWork<BusyWait>)->Name("BM_IdleWithWork/busy");
BENCHMARK(BM_IdleWithWork<BlockWait>)->Name("BM_IdleWithWork/block");
BENCHMARK(BM_IdleWithWork<SleepWait>)->Name("BM_IdleWithWork/sleep");
BENCHMARK(BM_IdleWithWork<BackoffWait>)->Name("BM_IdleWithWork/backoff");
BENCHMARK(BM_IdleWithWork<AdaptiveWait>)->Name("BM_IdleWithWork/adaptive");

void BM_BusyEmptyPoll(benchmark::State& state) {
  BusyWait wait;
  NeverBlocks source;
  const LoadHints hints;
  for (auto _ : state) {
    int work = 0;
    benchmark::DoNotOptimize(work);
    wait.idle(work, source, hints);
  }
  benchmark::DoNotOptimize(wait.stats().spins);
}
BENCHMARK(BM_BusyEmptyPoll);

void BM_SleepInterval(benchmark::State& state) {
  const auto now = std::chrono::steady_clock::now();
  WaitConfig config;
  LoadHints hints;
  if (state.range(0) >= 1) {
    hints.arrival_rate_hz = 250'000.0;
    hints.free_capacity = 64.0;
  }
  if (state.range(0) >= 2) hints.deadline = now + 150us;
  for (auto _ : state) {
    benchmark::DoNotOptimize(hints);
    benchmark::DoNotOptimize(sleep_interval(config, hints, now));
  }
}
BENCHMARK(BM_SleepInterval)->Arg(0)->Arg(1)->Arg(2);

// ---- ping-pong through the event loop ----------------------------------------------------

// One end of the ping-pong. `deliver()` is called by the other thread: it bumps the inbox and
// posts a wake-up; the source re-reads the inbox, so no wake-up is lost while arming.
class Mailbox {
 public:
  Mailbox() {
    loop_.add_source([this] { return inbox_.load(std::memory_order_acquire) == seen_; });
  }
  void deliver() {
    inbox_.fetch_add(1, std::memory_order_release);
    boost::asio::post(loop_.context(), [this] { loop_.notify(); });
  }
  // Owner thread: tokens that arrived since the last call.
  int take() {
    loop_.do_work(std::chrono::steady_clock::now());
    const std::uint64_t now_in = inbox_.load(std::memory_order_acquire);
    const auto got = static_cast<int>(now_in - seen_);
    seen_ = now_in;
    return got;
  }
  EventLoop& loop() { return loop_; }

 private:
  EventLoop loop_;
  std::atomic<std::uint64_t> inbox_{0};
  std::uint64_t seen_ = 0;
};

// The echoing side, driven by run_agent like any I/O thread.
struct Echo {
  Mailbox& in;
  Mailbox& out;
  const std::atomic<bool>& stop;
  LoadHints load_hints;

  int do_work() {
    const int got = in.take();
    for (int i = 0; i < got; ++i) out.deliver();
    return got;
  }
  [[nodiscard]] bool done() const { return stop.load(std::memory_order_relaxed); }
  Waitable& waitable() { return in.loop(); }
  [[nodiscard]] const LoadHints& hints() const { return load_hints; }
};
static_assert(Agent<Echo>);

void BM_PingPong(benchmark::State& state) {
  WaitConfig config;
  config.mode = static_cast<WaitMode>(state.range(0));
  state.SetLabel(std::string(to_string(config.mode)));
  Mailbox here;
  Mailbox there;
  std::atomic<bool> stop{false};
  AnyWait peer_wait = make_wait(config);
  std::thread peer([&] {
    Echo echo{there, here, stop, {}};
    run_agent(echo, peer_wait, stop);
  });

  AnyWait wait = make_wait(config);
  const LoadHints hints;
  for (auto _ : state) {
    there.deliver();
    std::visit(
        [&](auto& strategy) {
          for (;;) {
            const int got = here.take();
            strategy.idle(got, here.loop(), hints);
            if (got > 0) break;
          }
        },
        wait);
  }
  stop.store(true);
  there.deliver();  // wakes the peer if it is blocked
  peer.join();

  const WaitStats& peer_stats = stats_of(peer_wait);
  const double round_trips = static_cast<double>(state.iterations());
  state.counters["block_waits_per_rt"] =
      round_trips > 0 ? static_cast<double>(peer_stats.blocks) / round_trips : 0.0;
  state.counters["round_trips"] = benchmark::Counter(round_trips, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PingPong)
    ->Arg(static_cast<int>(WaitMode::block))
    ->Arg(static_cast<int>(WaitMode::backoff))
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace boreal::transport
