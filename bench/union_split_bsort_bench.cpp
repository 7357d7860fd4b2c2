// Fused one-thread pipelines: inline generator -> box -> CountingConsumer, 64-byte tuples.
// items/s = generated tuples per second, generation included, per core.
//
//   build-X/bench/union_split_bsort_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true          (one command line)
//
// Args: the generator's batch size in rows (64 .. 4096). The boxes' own output batches are
// Output::kDefaultBatchRows rows.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include <boreal/ops/bsort.hpp>
#include <boreal/ops/graph.hpp>
#include <boreal/ops/split.hpp>
#include <boreal/ops/union.hpp>

namespace boreal::ops {
namespace {

// 64 bytes: seq@0 key@8 value@16 ts@24 pad@32.
const Schema kSchema = Schema::parse("seq:i64,key:i64,value:f64,ts:timestamp,pad:str32").value();
const FieldRef<std::int64_t> kSeq{0};
const FieldRef<std::int64_t> kKey{8};
const FieldRef<double> kValue{16};
const FieldRef<std::int64_t> kTs{24};

// Deterministic rows: seq counts up, key cycles over 1,000 keys, ts runs forward with a
// local disorder of up to 32 (a 32-periodic reversal), value derived from seq.
class Generator {
 public:
  explicit Generator(std::size_t batch_rows) : batch_(kSchema, batch_rows) {}

  const BatchView& next() {
    batch_.clear();
    while (!batch_.full()) {
      MutRow row = batch_.append();
      kSeq.set(row, seq_);
      kKey.set(row, static_cast<std::int64_t>((seq_ * 7919) % 1000));
      kValue.set(row, static_cast<double>(seq_ & 1023) * 0.5);
      kTs.set(row, (seq_ & ~std::int64_t{31}) + (31 - (seq_ & 31)));
      ++seq_;
    }
    return batch_;
  }

 private:
  OwnedBatch batch_;
  std::int64_t seq_ = 0;
};

void report(benchmark::State& state, std::uint64_t generated, std::uint64_t counted) {
  state.SetItemsProcessed(static_cast<std::int64_t>(generated));
  state.SetBytesProcessed(static_cast<std::int64_t>(generated * kSchema.tuple_bytes()));
  benchmark::DoNotOptimize(counted);  // the sink's count: what the pipeline produced
}

void BM_Union(benchmark::State& state) {
  const auto batch_rows = static_cast<std::size_t>(state.range(0));
  auto box = UnionBox::make({}, std::vector<Schema>{kSchema, kSchema}).value();
  CountingConsumer sink;
  box->output(0).connect(&sink);
  Generator a(batch_rows);
  Generator b(batch_rows);
  std::uint64_t generated = 0;
  for (auto _ : state) {
    box->process(0, a.next());
    box->process(1, b.next());
    generated += 2 * batch_rows;
  }
  box->finish(0);
  box->finish(1);
  report(state, generated, sink.rows());
}

void BM_Split4(benchmark::State& state) {
  const auto batch_rows = static_cast<std::size_t>(state.range(0));
  auto box = SplitBox::make({.key_fields = {"key"}, .outputs = 4}, kSchema).value();
  CountingConsumer sinks[4];
  for (std::size_t i = 0; i < 4; ++i) box->output(i).connect(&sinks[i]);
  Generator gen(batch_rows);
  std::uint64_t generated = 0;
  for (auto _ : state) {
    box->process(0, gen.next());
    generated += batch_rows;
  }
  box->finish(0);
  std::uint64_t counted = 0;
  for (const auto& sink : sinks) counted += sink.rows();
  report(state, generated, counted);
}

void BM_BSort64(benchmark::State& state) {
  const auto batch_rows = static_cast<std::size_t>(state.range(0));
  auto box = BSortBox::make({.field = "ts", .slack = 64}, kSchema).value();
  CountingConsumer sink;
  box->output(0).connect(&sink);
  Generator gen(batch_rows);
  std::uint64_t generated = 0;
  for (auto _ : state) {
    box->process(0, gen.next());
    generated += batch_rows;
  }
  box->finish(0);
  report(state, generated, sink.rows());
}

// The generator alone, for subtracting its share.
void BM_GeneratorOnly(benchmark::State& state) {
  const auto batch_rows = static_cast<std::size_t>(state.range(0));
  Generator gen(batch_rows);
  CountingConsumer sink;
  std::uint64_t generated = 0;
  for (auto _ : state) {
    sink.consume(gen.next());
    generated += batch_rows;
  }
  report(state, generated, sink.rows());
}

BENCHMARK(BM_GeneratorOnly)->RangeMultiplier(4)->Range(64, 4096);
BENCHMARK(BM_Union)->RangeMultiplier(4)->Range(64, 4096);
BENCHMARK(BM_Split4)->RangeMultiplier(4)->Range(64, 4096);
BENCHMARK(BM_BSort64)->RangeMultiplier(4)->Range(64, 4096);

}  // namespace
}  // namespace boreal::ops
