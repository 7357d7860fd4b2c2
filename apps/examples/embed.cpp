// Embedding boreal's operators in your own program: no nodes, threads or sockets, just
// boxes wired in a Graph and driven from main().
//
//   Generator -> Filter "price > 50.0" -> Aggregate by key, 5 s tumbling -> tap -> CSV on stdout
//
// 10,000 trades (key Zipf-distributed over 8 symbols, price uniform in [1, 100), qty in
// [1, 10]) at a scheduled 1,000 per second from time 0, so 10 s of data in two windows. It
// prints the aggregate rows as CSV, then a summary line that it checks itself: the windows'
// counts add up to the rows that passed the filter, counted straight from the generator.
// The output is the same on every run (the generator is deterministic for its seed).
//
// Every make() returns a Result<T>: the object, or an Error saying what is wrong and where.
// Check it, then use it. value() on a Result that holds an error does not throw: it ends the
// program (std::terminate), since using a value that is not there is a programmer error.
//
//   auto filter = ops::Filter::make({.predicate = "price > 50.0"}, schema);
//   if (!filter) return failed("filter", filter.error());  // prints error().describe()
//   graph.add(std::move(filter).value());                  // checked above: safe
//
// error().message is the problem alone ("unknown field 'prize' ..."), error().where the
// place ("params.predicate col 1"), and error().describe() both.
//
// embed_csv.cpp beside this file does the same from a CSV file: CsvReader -> filter ->
// aggregate -> CsvWriter, with the reading loop CsvReader::read() is made for.
//
// Build against an installed boreal: find_package(boreal REQUIRED COMPONENTS operators) and
// link boreal::operators (tests/package/CMakeLists.txt does exactly this).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <utility>

#include <boreal/ops/aggregate.hpp>
#include <boreal/ops/filter.hpp>
#include <boreal/ops/graph.hpp>
#include <boreal/ops/sink.hpp>
#include <boreal/ops/source.hpp>

namespace ops = boreal::ops;

namespace {

// Adds up the `n` column of what passes and hands every batch on.
struct CountTap final : ops::BatchConsumer {
  CountTap(ops::FieldRef<std::int64_t> n_field, ops::BatchConsumer& next_consumer)
      : n(n_field), next(next_consumer) {}
  void consume(const ops::BatchView& batch) override {
    for (ops::Row row : batch) counted += static_cast<std::uint64_t>(n.get(row));
    windows += batch.size();
    next.consume(batch);
  }
  void end() override { next.end(); }

  ops::FieldRef<std::int64_t> n;
  ops::BatchConsumer& next;
  std::uint64_t counted = 0;
  std::uint64_t windows = 0;
};

int failed(const char* what, const ops::Error& error) {
  std::fprintf(stderr, "embed: %s: %s\n", what, error.describe().c_str());
  return 1;
}

}  // namespace

int main() {
  using namespace std::chrono_literals;
  const ops::GeneratorParams trades{
      .schema = "seq:i64,ts:timestamp,key:i32,price:f64,qty:i32",
      .rate = 1000.0,
      .keys = {.field = "key", .count = 8, .distribution = ops::KeyDistribution::zipf,
               .zipf_s = 1.0},
      .values = {{.field = "price", .min = 1, .max = 100}, {.field = "qty", .min = 1, .max = 10}},
      .start_ns = 0,
      .seed = 2024,
      .limit = 10'000};
  auto generator = ops::Generator::make(trades);
  if (!generator) return failed("generator", generator.error());
  const ops::Schema& schema = generator.value().schema();

  auto filter = ops::Filter::make({.predicate = "price > 50.0"}, schema);
  if (!filter) return failed("filter", filter.error());
  auto aggregate = ops::AggregateBox::make(
      {.group_by = {"key"},
       .window = {.field = "ts", .size = 5s, .slide = 5s},  // tumbling, on the timestamp
       .aggregates = {{"count", "", "n"}, {"sum", "qty", "qty"}, {"max", "price", "top"}}},
      filter.value()->output(0).schema());
  if (!aggregate) return failed("aggregate", aggregate.error());
  const ops::Schema result_schema = aggregate.value()->output(0).schema();

  ops::Graph graph;
  const ops::BoxId keep = graph.add(std::move(filter).value());
  const ops::BoxId windows = graph.add(std::move(aggregate).value());
  if (auto ok = graph.connect(keep, 0, windows, 0); !ok) return failed("connect", ok.error());

  // The aggregate's rows go to a CSV writer on stdout, through a tap that also adds up the
  // windows' counts for the check below.
  auto csv = ops::CsvWriter::make({.path = "stdout", .stream = &std::cout}, result_schema);
  if (!csv) return failed("csv", csv.error());
  CountTap tap(ops::FieldRef<std::int64_t>::bind(result_schema, "n").value(), *csv.value());
  graph.collect(windows, 0, tap);

  // Drive it: fill a batch, push it through, until the generator is done. The rows that
  // should pass the filter are counted here, independently of the boxes.
  auto price = ops::FieldRef<double>::bind(schema, "price").value();
  std::uint64_t expected_passed = 0;
  ops::OwnedBatch batch(schema, 512);
  while (!generator.value().done()) {
    batch.clear();
    generator.value().fill(batch, batch.capacity_rows());
    for (ops::Row row : batch) expected_passed += price.get(row) > 50.0 ? 1 : 0;
    graph.push(keep, 0, batch);
  }
  graph.finish(keep, 0);  // closes the open windows and ends the CSV writer
  if (auto ok = csv.value()->status(); !ok) return failed("csv", ok.error());

  const bool ok = tap.counted == expected_passed;
  std::printf("embed: generated=%llu passed=%llu windows=%llu counted=%llu %s\n",
              static_cast<unsigned long long>(generator.value().generated()),
              static_cast<unsigned long long>(expected_passed),
              static_cast<unsigned long long>(tap.windows),
              static_cast<unsigned long long>(tap.counted), ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
