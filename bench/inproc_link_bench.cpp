// Frames per second through the inproc ring on one thread: the cost the medium itself adds
// per frame (claim, commit, poll, credit), without a second thread's cache traffic or any
// wake-up. Arguments: payload bytes (64, 32 KiB), frames committed between two polls (1 =
// strict ping-pong, 16 = a credit batch).
//
// The producer writes only the first 8 bytes and the consumer reads only those: the ring is
// zero-copy, so touching the whole payload would time memset, not the medium.
// Run: build-*/bench/inproc_link_bench --benchmark_counters_tabular=true
#include <cstdint>
#include <cstring>

#include <benchmark/benchmark.h>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/inproc_medium.hpp>

namespace boreal::transport {
namespace {

class SummingSink final : public FrameSink {
 public:
  void on_frame(const FrameView& frame) override {
    std::uint64_t value = 0;
    std::memcpy(&value, frame.payload.data(), sizeof value);
    sum += value;
  }
  std::uint64_t sum = 0;
};

// with_do_work: call the sender's do_work() after each burst, as an agent's duty cycle does;
// it adds the seq_cst store and flag check that would wake a sleeping receiver.
void BM_ClaimCommitPoll(benchmark::State& state, bool with_do_work) {
  const auto payload_bytes = static_cast<std::uint32_t>(state.range(0));
  const auto burst = static_cast<int>(state.range(1));
  EventLoop loop;
  auto pair = make_inproc_link(loop, loop,
                               LinkOptions{.tuple_bytes = 8,
                                           .max_payload_bytes = payload_bytes,
                                           .window = 64,
                                           .credit_batch = 16,
                                           .name = "bench"});
  if (!pair) {
    state.SkipWithError(pair.error().describe().c_str());
    return;
  }
  SendLink& send = *pair.value().send;
  RecvLink& recv = *pair.value().recv;
  SummingSink sink;
  std::uint64_t sequence = 0;
  std::int64_t frames = 0;
  for (auto _ : state) {
    for (int i = 0; i < burst; ++i) {
      Claim claim;
      if (send.try_claim(claim) != SendStatus::ok) break;
      ++sequence;
      std::memcpy(claim.payload.data(), &sequence, sizeof sequence);
      send.commit(claim, payload_bytes / 8, payload_bytes);
      ++frames;
    }
    if (with_do_work) benchmark::DoNotOptimize(send.do_work());
    recv.poll(sink);
  }
  benchmark::DoNotOptimize(sink.sum);
  state.SetItemsProcessed(frames);
  state.counters["credit_stalls"] = static_cast<double>(send.stats().credit_stalls);
}
BENCHMARK_CAPTURE(BM_ClaimCommitPoll, ring_only, false)
    ->ArgNames({"payload", "burst"})
    ->ArgsProduct({{64, 32 * 1024}, {1, 16}});
BENCHMARK_CAPTURE(BM_ClaimCommitPoll, with_do_work, true)
    ->ArgNames({"payload", "burst"})
    ->ArgsProduct({{64, 32 * 1024}, {1, 16}});

}  // namespace
}  // namespace boreal::transport
