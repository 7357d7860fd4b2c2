// What the latency histogram costs per call: record() is a few instructions (it runs once per
// tuple in a latency sink), percentile() a scan of the 3,970 counters (once per report).
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include <boreal/ops/latency_histogram.hpp>

namespace boreal::ops {
namespace {

// The argument is the spread of the recorded values in powers of ten above 100 ns: 0 keeps
// every value in a few buckets (hot cache lines), 8 spreads them over 100 ns .. 10 s.
void BM_LatencyHistogramRecord(benchmark::State& state) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> exponent(2.0, 2.0 + static_cast<double>(state.range(0)));
  std::vector<std::int64_t> values(4096);
  for (auto& v : values) v = static_cast<std::int64_t>(std::pow(10.0, exponent(rng)));
  const auto histogram = std::make_unique<LatencyHistogram>();
  std::size_t i = 0;
  for (auto _ : state) {
    histogram->record(values[i]);
    i = (i + 1) & (values.size() - 1);
  }
  benchmark::DoNotOptimize(histogram->count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LatencyHistogramRecord)->Arg(0)->Arg(3)->Arg(8);

void BM_LatencyHistogramPercentile(benchmark::State& state) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(2.0, 10.0);
  const auto histogram = std::make_unique<LatencyHistogram>();
  for (int i = 0; i < 100'000; ++i) {
    histogram->record(static_cast<std::int64_t>(std::pow(10.0, exponent(rng))));
  }
  for (auto _ : state) benchmark::DoNotOptimize(histogram->percentile(99.9));
}
BENCHMARK(BM_LatencyHistogramPercentile);

}  // namespace
}  // namespace boreal::ops
