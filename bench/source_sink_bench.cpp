// What a source and the CSV sink cost per row: Generator::fill with uniform or Zipf keys
// (rejection-inversion: a few log/exp per key), CsvWriter formatting to memory, CsvReader
// parsing from memory. 64-byte tuples; the argument is the batch size in rows.
//
//   bench/source_sink_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>

#include <boreal/ops/sink.hpp>
#include <boreal/ops/source.hpp>

namespace boreal::ops {
namespace {

// 8 + 8 + 8 + 8 + 4 + 28 = 64 bytes.
constexpr const char* kSchema = "seq:i64,ts:timestamp,key:i64,price:f64,qty:i32,pad:str28";

GeneratorParams params(KeyDistribution distribution) {
  return {
      .schema = kSchema,
      .rate = 1e6,
      .keys = {.field = "key", .count = 10'000, .distribution = distribution, .zipf_s = 1.1},
      .values = {{.field = "price", .min = 1, .max = 1000}, {.field = "qty", .min = 1, .max = 100}},
      .start_ns = 0,
      .seed = 7};
}

void generate(benchmark::State& state, KeyDistribution distribution) {
  Generator gen = Generator::make(params(distribution)).value();
  const auto rows = static_cast<std::size_t>(state.range(0));
  OwnedBatch batch(gen.schema(), rows);
  for (auto _ : state) {
    batch.clear();
    gen.fill(batch, rows);
    benchmark::DoNotOptimize(batch.bytes().data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 64);
}

void BM_GeneratorUniform(benchmark::State& state) { generate(state, KeyDistribution::uniform); }
void BM_GeneratorZipf(benchmark::State& state) { generate(state, KeyDistribution::zipf); }
BENCHMARK(BM_GeneratorUniform)->RangeMultiplier(4)->Range(64, 4096);
BENCHMARK(BM_GeneratorZipf)->RangeMultiplier(4)->Range(64, 4096);

// One batch of generated rows, formatted again and again into a reused string stream.
void BM_CsvWrite(benchmark::State& state) {
  Generator gen = Generator::make(params(KeyDistribution::uniform)).value();
  const auto rows = static_cast<std::size_t>(state.range(0));
  OwnedBatch batch(gen.schema(), rows);
  gen.fill(batch, rows);
  std::ostringstream out;
  auto writer = CsvWriter::make({.path = "bench", .stream = &out, .header = false}, gen.schema())
                    .value();
  for (auto _ : state) {
    out.str(std::string());
    writer->consume(batch);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CsvWrite)->RangeMultiplier(4)->Range(64, 4096);

// 16,384 rows of CSV text, read back `range(0)` rows per read() call.
void BM_CsvRead(benchmark::State& state) {
  constexpr std::size_t kRows = 16'384;
  Generator gen = Generator::make(params(KeyDistribution::uniform)).value();
  OwnedBatch batch(gen.schema(), kRows);
  gen.fill(batch, kRows);
  std::ostringstream text;
  CsvWriter::make({.path = "bench", .stream = &text}, gen.schema()).value()->consume(batch);
  const std::string csv = text.str();
  const auto rows = static_cast<std::size_t>(state.range(0));
  OwnedBatch back(gen.schema(), rows);
  std::int64_t total = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::istringstream in(csv);
    auto reader = CsvReader::make({.path = "bench", .stream = &in}, gen.schema()).value();
    state.ResumeTiming();
    for (bool end = false; !end;) {
      back.clear();
      auto got = reader->read(back, rows);
      if (!got) {
        state.SkipWithError(got.error().describe().c_str());
        return;
      }
      end = got.value().end;
      total += static_cast<std::int64_t>(got.value().rows);
    }
  }
  state.SetItemsProcessed(total);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(csv.size()));
}
BENCHMARK(BM_CsvRead)->RangeMultiplier(4)->Range(64, 4096)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace boreal::ops
