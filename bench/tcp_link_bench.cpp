// Throughput of one tcp link over loopback: the sender on the benchmark thread, the receiver
// on a second thread, each with its own EventLoop, both busy polling (no wait mode). One
// iteration is one frame of `frame_bytes` holding 64-byte tuples; the window and credit
// batch are LinkOptions' defaults (64 frames, credit every 16).
//
// Counters: frames/s and tuples/s (rates over the timed loop), bytes/s, and per frame the
// send syscalls and credit stalls the sender paid. On a shared 2-core machine both threads
// compete with everything else, so compare runs made back to back, not across machines.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <thread>

#include <benchmark/benchmark.h>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/tcp_medium.hpp>

namespace boreal::transport {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kTupleBytes = 64;

class CountingSink final : public FrameSink {
 public:
  void on_frame(const FrameView& frame) override {
    ++frames;
    tuples += frame.header.tuple_count;
    benchmark::DoNotOptimize(frame.payload.data());
  }
  std::uint64_t frames = 0;
  std::uint64_t tuples = 0;
};

struct ReceiverResult {
  std::uint64_t frames = 0;
  std::uint64_t tuples = 0;
  bool finished = false;
};

// Receives one stream until its end or until `stop`; announces its port through `port`.
ReceiverResult receive(const LinkOptions& options, std::promise<std::uint16_t>& port,
                       const std::atomic<bool>& stop) {
  EventLoop loop;
  auto listener = TcpListener::open(loop, {"127.0.0.1", 0});
  if (!listener) {
    port.set_value(0);
    return {};
  }
  RecvLink& link = listener.value()->expect(options);
  port.set_value(listener.value()->port());
  CountingSink sink;
  while (!stop.load(std::memory_order_relaxed) && link.state() != LinkState::finished &&
         link.state() != LinkState::failed) {
    loop.do_work(Clock::now());
    listener.value()->do_work();
    link.poll(sink);
  }
  return {sink.frames, sink.tuples, link.state() == LinkState::finished};
}

void BM_TcpLinkLoopback(benchmark::State& state) {
  const auto frame_bytes = static_cast<std::uint32_t>(state.range(0));
  const std::uint32_t tuples_per_frame = frame_bytes / kTupleBytes;
  LinkOptions options;
  options.stream_id = 1;
  options.tuple_bytes = kTupleBytes;
  options.max_payload_bytes = frame_bytes;
  options.name = "bench";

  std::promise<std::uint16_t> port_promise;
  auto port_future = port_promise.get_future();
  std::atomic<bool> stop{false};
  auto receiver = std::async(std::launch::async, [&] {
    return receive(options, port_promise, stop);
  });
  const std::uint16_t port = port_future.get();
  if (port == 0) {
    state.SkipWithError("cannot open a listener on 127.0.0.1");
    return;
  }

  EventLoop loop;
  auto made = make_tcp_send_link(loop, {"127.0.0.1", port}, options);
  if (!made) {
    stop = true;
    state.SkipWithError(made.error().describe().c_str());
    return;
  }
  auto link = std::move(made).value();
  auto progress = [&] {
    loop.do_work(Clock::now());
    link->do_work();
  };
  const auto connect_deadline = Clock::now() + std::chrono::seconds(10);
  while (link->state() == LinkState::connecting && Clock::now() < connect_deadline) progress();
  if (link->state() != LinkState::established) {
    stop = true;
    state.SkipWithError("link did not come up");
    return;
  }

  std::uint64_t number = 0;
  for (auto _ : state) {
    Claim claim;
    while (link->try_claim(claim) != SendStatus::ok) {
      progress();
      if (link->state() == LinkState::failed) break;
    }
    if (link->state() == LinkState::failed) break;
    std::memcpy(claim.payload.data(), &number, sizeof number);  // first tuple's number
    ++number;
    link->commit(claim, tuples_per_frame, frame_bytes);
  }

  // End of stream, outside the timed loop.
  Claim claim;
  while (link->state() == LinkState::established && link->try_claim(claim) != SendStatus::ok) {
    progress();
  }
  if (link->state() == LinkState::established) {
    link->commit(claim, 0, 0, kFlagData | kFlagEndOfStream);
  }
  const auto tail_deadline = Clock::now() + std::chrono::seconds(10);
  while (link->state() == LinkState::established && Clock::now() < tail_deadline) progress();
  stop = true;
  const ReceiverResult received = receiver.get();
  if (link->state() == LinkState::failed) {
    state.SkipWithError(link->error()->describe().c_str());
    return;
  }
  if (!received.finished || received.frames != number + 1) {
    state.SkipWithError("receiver did not get every frame");
    return;
  }

  const auto frames = static_cast<double>(number);
  state.counters["frames/s"] = benchmark::Counter(frames, benchmark::Counter::kIsRate);
  state.counters["tuples/s"] =
      benchmark::Counter(frames * tuples_per_frame, benchmark::Counter::kIsRate);
  state.counters["send_calls/frame"] =
      static_cast<double>(link->stats().write_calls) / std::max(1.0, frames);
  state.counters["credit_stalls/frame"] =
      static_cast<double>(link->stats().credit_stalls) / std::max(1.0, frames);
  state.SetBytesProcessed(static_cast<std::int64_t>(number) * frame_bytes);
}
BENCHMARK(BM_TcpLinkLoopback)->Arg(4 * 1024)->Arg(32 * 1024)->UseRealTime()->Unit(
    benchmark::kMicrosecond);

}  // namespace
}  // namespace boreal::transport
