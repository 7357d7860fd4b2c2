// Join and resample boxes: input tuples/s per core, fused on one thread with a deterministic
// inline generator (64-byte tuples "seq:i64,ts:i64,key:i64,val:f64,pad:str32") and a
// counting consumer. Generation is included in the time.
//
//   ninja -C build join_resample_bench && build/bench/join_resample_bench
//       --benchmark_repetitions=3 --benchmark_report_aggregates_only=true   (one command line)
//
// Join: each iteration generates one batch for the left port and one for the right, times
// = sequence numbers, keys uniform over 1,000, window 500, equality on key: about one match
// per input tuple. Resample: hold or interpolate over 10 groups at interval 64.
#include <boreal/ops/join.hpp>
#include <boreal/ops/resample.hpp>

#include <cstdint>

#include <benchmark/benchmark.h>

namespace boreal::ops {
namespace {

const Schema& tuple_schema() {
  static const Schema schema = Schema::parse("seq:i64,ts:i64,key:i64,val:f64,pad:str32").value();
  return schema;
}

class CountingConsumer final : public BatchConsumer {
 public:
  void consume(const BatchView& batch) override { rows += batch.size(); }
  std::uint64_t rows = 0;
};

// Fills `batch` with the next rows: seq and ts count up, key from a xorshift stream.
struct Generator {
  std::uint64_t seq = 0;
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  std::uint64_t keys = 1000;

  void fill(OwnedBatch& batch) {
    batch.clear();
    const FieldRef<std::int64_t> seq_f{0}, ts_f{8}, key_f{16};
    const FieldRef<double> val_f{24};
    while (!batch.full()) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      MutRow row = batch.append();
      seq_f.set(row, static_cast<std::int64_t>(seq));
      ts_f.set(row, static_cast<std::int64_t>(seq));
      key_f.set(row, static_cast<std::int64_t>(state % keys));
      val_f.set(row, static_cast<double>(state & 0xffff));
      ++seq;
    }
  }
};

void BM_Join(benchmark::State& state) {
  const auto batch_rows = static_cast<std::size_t>(state.range(0));
  auto box = JoinBox::make({.left_time = "ts", .right_time = "ts", .window = Duration(500),
                            .equal = {{"key", "key"}}},
                           tuple_schema(), tuple_schema())
                 .value();
  CountingConsumer sink;
  box->output(0).connect(&sink);
  Generator left, right;
  right.state = 0x2545F4914F6CDD1Dull;
  OwnedBatch batch(tuple_schema(), batch_rows);
  for (auto _ : state) {
    left.fill(batch);
    box->process(0, batch);
    right.fill(batch);
    box->process(1, batch);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 2 *
                          static_cast<std::int64_t>(batch_rows));
  state.counters["out_per_in"] =
      static_cast<double>(sink.rows) /
      static_cast<double>(static_cast<std::int64_t>(state.iterations()) * 2 *
                          static_cast<std::int64_t>(batch_rows));
}
BENCHMARK(BM_Join)->RangeMultiplier(4)->Range(64, 4096);

void resample(benchmark::State& state, const char* mode) {
  const auto batch_rows = static_cast<std::size_t>(state.range(0));
  auto box = ResampleBox::make({.time_field = "ts", .interval = 64, .group_by = {"key"},
                                .value_fields = {"val"}, .mode = mode},
                               tuple_schema())
                 .value();
  CountingConsumer sink;
  box->output(0).connect(&sink);
  Generator gen;
  gen.keys = 10;
  OwnedBatch batch(tuple_schema(), batch_rows);
  for (auto _ : state) {
    gen.fill(batch);
    box->process(0, batch);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(batch_rows));
  benchmark::DoNotOptimize(sink.rows);
}

void BM_ResampleHold(benchmark::State& state) { resample(state, "hold"); }
void BM_ResampleInterpolate(benchmark::State& state) { resample(state, "interpolate"); }
BENCHMARK(BM_ResampleHold)->RangeMultiplier(4)->Range(64, 4096);
BENCHMARK(BM_ResampleInterpolate)->RangeMultiplier(4)->Range(64, 4096);

}  // namespace
}  // namespace boreal::ops
