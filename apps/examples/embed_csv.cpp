// Embedding boreal's operators, fed from a CSV file and writing CSV: the second example
// beside embed.cpp.
//
//   CsvReader -> Filter "qty >= 100" -> Aggregate by sym, 1 s tumbling -> CsvWriter on stdout
//
//   embed_csv [trades.csv]      (default: apps/examples/embed_csv_input.csv, 20 trades)
//
// The input's header names the schema's fields, ts (integer ns), sym, price, qty. Each
// output row is one symbol's second: its trades of at least 100 shares, their volume and
// the highest price. For embed_csv_input.csv that is (tests/package checks it exactly):
//
//   sym,window_start,window_end,n,volume,high
//   IBM,0,1000000000,2,300,140.25
//   MSFT,0,1000000000,2,400,371.2
//   AAPL,0,1000000000,1,150,189.75
//   IBM,1000000000,2000000000,2,350,141.5
//   MSFT,1000000000,2000000000,1,500,369.5
//   AAPL,1000000000,2000000000,2,520,190.4
//   IBM,2000000000,3000000000,2,400,142.25
//   MSFT,2000000000,3000000000,2,350,373.5
//   AAPL,2000000000,3000000000,1,100,191
//   embed_csv: read 20 rows in 3 batches, wrote 9 windows
//
// (windows come out by end time, then symbols in the order the aggregate first saw them).
//
// Results: every make() returns a Result, which holds the object or an Error. Check it before
// using it: value() of a Result that holds an error does not throw, it ends the program
// (std::terminate), because using a value that is not there is a programmer error. So:
//
//   auto reader = ops::CsvReader::make({.path = path}, schema);
//   if (!reader) return failed("input", reader.error());  // error().describe():
//                                                          // "params.path: cannot open ..."
//   ops::CsvReader& csv = *reader.value();                 // checked: safe
//
// Build against an installed boreal: find_package(boreal REQUIRED COMPONENTS operators) and
// link boreal::operators (tests/package/CMakeLists.txt builds this file that way).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>

#include <boreal/ops/aggregate.hpp>
#include <boreal/ops/filter.hpp>
#include <boreal/ops/graph.hpp>
#include <boreal/ops/sink.hpp>
#include <boreal/ops/source.hpp>

namespace ops = boreal::ops;

namespace {

int failed(const char* what, const ops::Error& error) {
  std::fprintf(stderr, "embed_csv: %s: %s\n", what, error.describe().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  // The default is relative to the top of boreal's source tree.
  const std::string path = argc > 1 ? argv[1] : "apps/examples/embed_csv_input.csv";

  auto parsed = ops::Schema::parse("ts:timestamp,sym:str8,price:f64,qty:i32");
  if (!parsed) return failed("schema", parsed.error());
  const ops::Schema& schema = parsed.value();

  auto reader = ops::CsvReader::make({.path = path}, schema);
  if (!reader) return failed("input", reader.error());

  auto filter = ops::Filter::make({.predicate = "qty >= 100"}, schema);
  if (!filter) return failed("filter", filter.error());
  auto aggregate = ops::AggregateBox::make(
      {.group_by = {"sym"},
       .window = {.field = "ts", .size = 1s, .slide = 1s},  // tumbling, one second
       .aggregates = {{"count", "", "n"}, {"sum", "qty", "volume"}, {"max", "price", "high"}}},
      filter.value()->output(0).schema());
  if (!aggregate) return failed("aggregate", aggregate.error());
  const ops::Schema result_schema = aggregate.value()->output(0).schema();

  ops::Graph graph;
  const ops::BoxId keep = graph.add(std::move(filter).value());
  const ops::BoxId windows = graph.add(std::move(aggregate).value());
  if (auto ok = graph.connect(keep, 0, windows, 0); !ok) return failed("connect", ok.error());
  auto writer = ops::CsvWriter::make({.path = "stdout", .stream = &std::cout}, result_schema);
  if (!writer) return failed("output", writer.error());
  graph.collect(windows, 0, *writer.value());

  // The reading loop: clear the batch, read, push what came, stop when read() says the input
  // has ended. A batch smaller than the file, so that it takes several turns; the last one
  // may bring no rows. A bad value stops the program with its "file:line:column".
  ops::OwnedBatch batch(schema, 8);
  int batches = 0;
  for (bool end = false; !end;) {
    batch.clear();
    auto got = reader.value()->read(batch);
    if (!got) return failed("input", got.error());
    end = got.value().end;
    if (batch.size() == 0) continue;
    ++batches;
    graph.push(keep, 0, batch);
  }
  graph.finish(keep, 0);  // closes the open windows and ends the CSV writer
  if (auto ok = writer.value()->status(); !ok) return failed("output", ok.error());

  std::cout << std::flush;
  std::printf("embed_csv: read %llu rows in %d batches, wrote %llu windows\n",
              static_cast<unsigned long long>(reader.value()->rows_read()), batches,
              static_cast<unsigned long long>(writer.value()->rows_written()));
  return 0;
}
