// Aggregate over 1,000 groups: generator -> AggregateBox -> counting consumer, fused on one
// thread (generation included). 64-byte tuples "seq:i64,ts:i64,key:i64,val:i64,pad:str32";
// aggregates count + sum(val). Arguments: batch size (rows per generated batch).
//
//   aggregate_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// Medians of 3 (CPU time), Release build, 2-vCPU VM at 2.45 GHz shared with other jobs
// (load ~6), g++ 12, 2026-11-23:
//   batch rows        64     256    1024    4096
//   tumbling count   41.1   39.9   38.8   37.9  M tuples/s per core
//   tumbling time    45.7   44.6   45.5   42.0  M tuples/s per core
// (issue #4's target: >= 25 M/s; WindFlow keyed count windows here: ~20 M/s.)
#include <boreal/ops/aggregate.hpp>

#include <cstdint>
#include <cstring>

#include <benchmark/benchmark.h>

namespace boreal::ops {
namespace {

struct CountingConsumer final : BatchConsumer {
  void consume(const BatchView& batch) override { rows += batch.size(); }
  std::uint64_t rows = 0;
};

constexpr std::int64_t kGroups = 1000;
// Both windows hold about 100 tuples per group: count windows of 100 tuples per group; time
// windows of 100,000 units with one unit per tuple over 1,000 groups.
constexpr std::int64_t kCountWindow = 100;
constexpr std::int64_t kTimeWindow = 100'000;

void run(benchmark::State& state, WindowKind kind) {
  const Schema schema = Schema::parse("seq:i64,ts:i64,key:i64,val:i64,pad:str32").value();
  AggregateParams params;
  params.group_by = {"key"};
  if (kind == WindowKind::time) {
    params.window = {.field = "ts", .size = Duration(kTimeWindow), .slide = Duration(kTimeWindow)};
  } else {
    const Count size{static_cast<std::uint64_t>(kCountWindow)};
    params.window = {.size = size, .slide = size};
  }
  params.aggregates = {{"count", "", "n"}, {"sum", "val", "s"}};
  auto box = AggregateBox::make(params, schema).value();
  CountingConsumer sink;
  box->output(0).connect(&sink);
  const auto rows = static_cast<std::size_t>(state.range(0));
  OwnedBatch batch(schema, rows);
  std::int64_t seq = 0;
  std::uint64_t lcg = 42;
  for (auto _ : state) {
    batch.clear();
    for (std::size_t i = 0; i < rows; ++i) {
      MutRow row = batch.append();
      lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
      // Time advances one unit per tuple; keys are pseudo-random over kGroups.
      const std::int64_t v[4] = {seq, seq, static_cast<std::int64_t>((lcg >> 33) % kGroups),
                                 static_cast<std::int64_t>(lcg >> 54)};
      std::memcpy(row.data(), v, sizeof v);
      ++seq;
    }
    box->process(0, batch);
  }
  benchmark::DoNotOptimize(sink.rows);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rows));
  state.counters["windows_out"] = static_cast<double>(sink.rows);
}

void BM_AggregateTumblingCount(benchmark::State& state) { run(state, WindowKind::count); }
void BM_AggregateTumblingTime(benchmark::State& state) { run(state, WindowKind::time); }

BENCHMARK(BM_AggregateTumblingCount)->RangeMultiplier(4)->Range(64, 4096);
BENCHMARK(BM_AggregateTumblingTime)->RangeMultiplier(4)->Range(64, 4096);

}  // namespace
}  // namespace boreal::ops
