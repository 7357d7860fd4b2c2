// One data frame's worth of flow control: the sender spends a credit, the receiver takes the
// frame, frees its slot and (every `batch` frames) grants, and the sender applies the grant.
// The argument is the grant batch: larger batches mean fewer credit frames on the wire.
#include <cstdint>

#include <benchmark/benchmark.h>

#include <boreal/transport/credit_window.hpp>

namespace boreal::transport {
namespace {

void BM_ConsumeGrantCycle(benchmark::State& state) {
  constexpr std::uint32_t kWindow = 64;
  ReceiverCredits receiver{kWindow, static_cast<std::uint32_t>(state.range(0))};
  SenderCredits sender;
  sender.on_grant(receiver.initial_grant());
  std::int64_t grants = 0;
  for (auto _ : state) {
    if (!sender.try_consume()) {
      state.SkipWithError("sender stalled: the receiver stopped granting");
      break;
    }
    receiver.on_frame();
    receiver.on_consumed();
    if (const auto total = receiver.take_grant()) {
      sender.on_grant(total);
      ++grants;
    }
    benchmark::DoNotOptimize(sender);
    benchmark::DoNotOptimize(receiver);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["grants_per_frame"] =
      benchmark::Counter(static_cast<double>(grants), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_ConsumeGrantCycle)->Arg(1)->Arg(16)->Arg(64);

}  // namespace
}  // namespace boreal::transport
