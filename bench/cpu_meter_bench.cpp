// What the CPU meter and the latency histogram cost per call, to decide where each may go:
// ThreadCpu::now() and ProcessUsage::sample*() are one syscall each (the vDSO does not serve
// thread CPU clocks), MachineCpu::sample() opens and reads /proc/stat, record() is a few
// instructions. Compare against the per-batch work they would be added to.
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include <boreal/transport/cpu_meter.hpp>
#include <boreal/transport/latency_histogram.hpp>

namespace boreal::transport {
namespace {

void BM_ThreadCpuNow(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ThreadCpu::now());
}
BENCHMARK(BM_ThreadCpuNow);

void BM_ProcessUsageSample(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ProcessUsage::sample());
}
BENCHMARK(BM_ProcessUsageSample);

void BM_ProcessUsageSampleThread(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ProcessUsage::sample_thread());
}
BENCHMARK(BM_ProcessUsageSampleThread);

void BM_MachineCpuSample(benchmark::State& state) {
  for (auto _ : state) {
    auto sampled = MachineCpu::sample();
    if (!sampled) {
      state.SkipWithError(sampled.error().describe().c_str());
      break;
    }
    benchmark::DoNotOptimize(sampled.value());
  }
}
BENCHMARK(BM_MachineCpuSample);

// Once per run: reads (and maybe decompresses) the kernel config.
void BM_IrqTimeAccounting(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(irq_time_accounting());
}
BENCHMARK(BM_IrqTimeAccounting)->Unit(benchmark::kMicrosecond);

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
}  // namespace boreal::transport
