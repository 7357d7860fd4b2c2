// Fused generator -> filter|map -> counting sink on one thread, 64-byte tuples, generation
// included. Items processed = tuples generated (and fed to the box).
//
//   build-x/bench/filter_map_bench --benchmark_repetitions=3
//   --benchmark_report_aggregates_only=true
#include <boreal/ops/filter.hpp>
#include <boreal/ops/map.hpp>

#include <cstdint>

#include <benchmark/benchmark.h>

namespace {

using namespace boreal::ops;

// 8 + 8 + 8 + 8 + 32 = 64 bytes.
const Schema& tuple_schema() {
  static const Schema schema =
      Schema::parse("seq:i64,key:i64,value:f64,ts:timestamp,pad:str32").value();
  return schema;
}

class CountingSink final : public BatchConsumer {
 public:
  void consume(const BatchView& batch) override { rows += batch.size(); }
  std::uint64_t rows = 0;
};

// Fills `batch` with the next rows: seq, key = seq * 7919 % 1000, value in [0, 1), ts = seq.
void generate(Batch& batch, std::uint64_t& seq) {
  batch.clear();
  while (!batch.full()) {
    MutRow row = batch.append();
    const auto s = static_cast<std::int64_t>(seq++);
    const std::int64_t key = s * 7919 % 1000;
    const double value = static_cast<double>((s * 2654435761) & 1023) / 1024.0;
    std::memcpy(row.data(), &s, 8);
    std::memcpy(row.data() + 8, &key, 8);
    std::memcpy(row.data() + 16, &value, 8);
    std::memcpy(row.data() + 24, &s, 8);
  }
}

void run(benchmark::State& state, Box& box) {
  CountingSink sink;
  box.output(0).connect(&sink);
  OwnedBatch batch(tuple_schema(), static_cast<std::size_t>(state.range(0)));
  std::uint64_t seq = 0;
  for (auto _ : state) {
    generate(batch, seq);
    box.process(0, batch);
  }
  box.finish(0);
  benchmark::DoNotOptimize(sink.rows);
  state.SetItemsProcessed(static_cast<std::int64_t>(seq));
  state.counters["out_per_in"] = static_cast<double>(sink.rows) / static_cast<double>(seq);
}

// Passes about half the tuples.
void BM_Filter(benchmark::State& state) {
  auto filter = Filter::make({.predicate = "key < 500"}, tuple_schema()).value();
  run(state, *filter);
}

void BM_FilterCompound(benchmark::State& state) {
  auto filter =
      Filter::make({.predicate = "key < 500 and value > 0.25"}, tuple_schema()).value();
  run(state, *filter);
}

// Three output fields, one computed.
void BM_Map(benchmark::State& state) {
  auto map = Map::make({.fields = {{.name = "seq", .expression = "seq"},
                                   {.name = "key", .expression = "key"},
                                   {.name = "v", .expression = "value * 2.0 + 1.0"}}},
                       tuple_schema())
                 .value();
  run(state, *map);
}

BENCHMARK(BM_Filter)->Arg(64)->Arg(256)->Arg(1024)->Arg(4096);
BENCHMARK(BM_FilterCompound)->Arg(64)->Arg(256)->Arg(1024)->Arg(4096);
BENCHMARK(BM_Map)->Arg(64)->Arg(256)->Arg(1024)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
