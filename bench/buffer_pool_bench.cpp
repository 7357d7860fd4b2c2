// Cost of one acquire + release pair, the per-frame overhead a link pays for its buffers.
// The argument is how many buffers are already held, to show the cost does not depend on it.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <boreal/transport/buffer_pool.hpp>

namespace boreal::transport {
namespace {

void BM_AcquireRelease(benchmark::State& state) {
  constexpr std::uint32_t kBuffers = 1024;
  BufferPool pool{kBuffers, 4096};
  std::vector<BufferPool::Buffer> held;
  for (std::int64_t i = 0; i < state.range(0); ++i) held.push_back(*pool.acquire());
  for (auto _ : state) {
    auto buffer = pool.acquire();
    benchmark::DoNotOptimize(buffer);
    pool.release(*buffer);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AcquireRelease)->Arg(0)->Arg(512)->Arg(1023);

// A burst: take a whole window of buffers, then give them all back, as a sender does when
// credit arrives for a full window at once.
void BM_AcquireReleaseBurst(benchmark::State& state) {
  const auto burst = static_cast<std::uint32_t>(state.range(0));
  BufferPool pool{burst, 4096};
  std::vector<BufferPool::Buffer> held(burst);
  for (auto _ : state) {
    for (auto& b : held) b = *pool.acquire();
    benchmark::DoNotOptimize(held.data());
    for (const auto& b : held) pool.release(b);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AcquireReleaseBurst)->Arg(16)->Arg(256);

}  // namespace
}  // namespace boreal::transport
