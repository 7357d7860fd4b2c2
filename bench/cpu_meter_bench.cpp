// What the CPU meter costs per call, to decide where each may go: ThreadCpu::now() and
// ProcessUsage::sample*() are one syscall each (the vDSO does not serve thread CPU clocks),
// MachineCpu::sample() opens and reads /proc/stat. Compare against the per-batch work they
// would be added to. (The latency histogram's costs: latency_histogram_bench.cpp.)
#include <benchmark/benchmark.h>

#include <boreal/transport/cpu_meter.hpp>

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

}  // namespace
}  // namespace boreal::transport
