// Differential: one query network run four ways must write the same sink CSV files.
//
//   (a) embedded: the parsed file's boxes (BoxSpec::plan->make) wired in an ops::Graph in
//       this process, fed by the file's generator (generator_params, start_ns and rate as in
//       the file), written by ops::CsvWriter; at two batch sizes, which must agree
//   (b) `boreal launch` with every box on one node
//   (c) `boreal launch` over three nodes on tcp
//   (d) `boreal launch` over three nodes on fabric-msg and on fabric-rma (libfabric's default
//       provider, "tcp;ofi_rxm")
//
// at two frame sizes (batch_bytes) and a few generator seeds. The sources have `start_ns`,
// so every tuple's content (seq, ts, key, price) is the same in every run.
//
// Shape `pipeline`: generator -> filter (price > 100) -> map (ts, key, price * 2) -> two
// time-window aggregates by key (tumbling and sliding; count, sum, min, max, avg) -> two CSV
// sinks. Each box sees its input in one order whatever the placement and the frame or batch
// boundaries, so its output is a function of the input alone: the CSV bytes must be equal,
// f64 sums and averages included (they add in arrival order, which is fixed).
//
// Shape `union`: two filtered branches of one generator (on different nodes) -> union ->
// bsort on ts -> tumbling aggregate -> CSV. How the union interleaves its two inputs depends
// on when each link's frames arrive, so neither the order of the aggregate's input nor the
// order of its output rows (groups come out in first-seen order) is fixed. What is fixed: the
// aggregate's slack covers the whole run, so no tuple is late and dropped, and its functions
// (count, min, max, an i64 sum, first/last by distinct times) do not depend on arrival
// order. So this shape is compared as a sorted multiset of CSV lines, not byte for byte.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/box.hpp>
#include <boreal/ops/graph.hpp>
#include <boreal/ops/sink.hpp>
#include <boreal/ops/source.hpp>

#include "apps/app_test_support.hpp"
#include "spec/box_types.hpp"
#include "spec/network_spec.hpp"

namespace {

namespace ops = boreal::ops;
namespace rt = boreal::runtime;
using namespace boreal::test;

// Not a multiple of the 10 ms windows: the first and last windows are partial.
constexpr std::int64_t kStartNs = 1'700'000'000'003'001'234;
constexpr int kTuples = 60'000;  // at 200,000/s: 0.3 s of scheduled time per launch

// Where each box of a shape runs: a node name per box, in the shape's box order.
using Placement = std::vector<std::string>;

struct Variant {
  std::uint64_t seed = 1;
  std::string medium = "tcp";
  std::uint32_t batch_bytes = 32768;
};

std::string source_box(const std::string& node, std::uint64_t seed) {
  return "  - name: gen\n"
         "    type: source\n"
         "    node: " + node + "\n"
         "    out: trades\n"
         "    schema: trade\n"
         "    params: {rate: 200000, tuples: " + std::to_string(kTuples) +
         ", seed: " + std::to_string(seed) + ", keys: 40, start_ns: " + std::to_string(kStartNs) +
         ",\n"
         "             values: [{field: price, min: 1, max: 500}]}\n";
}

// The file's head: the schema, the nodes `placement` uses (in order of first use; a node
// without boxes would be an error) and the transport defaults. Addresses do not matter:
// every launch moves the nodes to free ports.
std::string network_head(const std::string& name, const Placement& placement, const Variant& v) {
  std::string text =
      "name: " + name +
      "\n"
      "schemas:\n"
      "  trade: [{seq: i64}, {ts: timestamp}, {key: i64}, {price: f64}, {pad: str16}]\n"
      "nodes:\n";
  std::set<std::string> seen;
  int port = 7401;
  for (const std::string& node : placement) {
    if (seen.insert(node).second) {
      text +=
          "  - {name: " + node + ", address: \"tcp://127.0.0.1:" + std::to_string(port) + "\"}\n";
      port += 2;
    }
  }
  text += "transport: {medium: " + v.medium + ", wait: block, batch_bytes: " +
          std::to_string(v.batch_bytes) + "}\n";
  return text;
}

// Shape `pipeline`; placement: gen, cheap, doubled, sliding, tumbling, and both sinks.
const std::vector<std::string> kPipelineSinks = {"out_tumbling", "out_sliding"};

std::string pipeline_yaml(const Placement& at, const Variant& v, const std::string& dir) {
  const std::string aggregates =
      "      aggregates:\n"
      "        - {function: count, as: n}\n"
      "        - {function: sum, field: price2, as: total}\n"
      "        - {function: min, field: price2, as: low}\n"
      "        - {function: max, field: price2, as: high}\n"
      "        - {function: avg, field: price2, as: mean}\n";
  return network_head("differential_pipeline", at, v) + "boxes:\n" + source_box(at[0], v.seed) +
         "  - {name: cheap, type: filter, node: " + at[1] +
         ", in: trades, out: kept, params: {predicate: \"price > 100\"}}\n"
         "  - name: doubled\n"
         "    type: map\n"
         "    node: " + at[2] + "\n"
         "    in: kept\n"
         "    out: priced\n"
         "    params:\n"
         "      fields:\n"
         "        - {name: ts, expression: ts, type: timestamp}\n"
         "        - {name: key, expression: key}\n"
         "        - {name: price2, expression: \"price * 2\"}\n"
         "  - name: sliding\n"
         "    type: aggregate\n"
         "    node: " + at[3] + "\n"
         "    in: priced\n"
         "    out: slid\n"
         "    params:\n"
         "      group_by: key\n"
         "      window: {kind: time, field: ts, size: 25ms, slide: 10ms}\n" +
         aggregates +
         "  - name: tumbling\n"
         "    type: aggregate\n"
         "    node: " + at[4] + "\n"
         "    in: priced\n"
         "    out: tumbled\n"
         "    params:\n"
         "      group_by: key\n"
         "      window: {kind: time, field: ts, size: 10ms}\n" +
         aggregates +
         "  - {name: out_tumbling, type: sink, node: " + at[5] +
         ", in: tumbled, params: {kind: count, output: \"" + dir + "/out_tumbling.csv\"}}\n"
         "  - {name: out_sliding, type: sink, node: " + at[5] +
         ", in: slid, params: {kind: count, output: \"" + dir + "/out_sliding.csv\"}}\n";
}

// All on one node: the source's stream is handed on through the node's fan-out.
const Placement kPipelineOneNode(6, "solo");
// Three nodes: gen alone on `a` (its stream goes to one other node only, so the source
// writes straight into the link's frames); the map's stream is consumed on its own node
// (sliding) and on `c` (tumbling); the sliding aggregate's rows cross to `c` as well.
const Placement kPipelineThreeNodes = {"a", "b", "b", "b", "c", "c"};

// Shape `union`; placement: gen, low, high, both, by_time, per_key, out.
const std::vector<std::string> kUnionSinks = {"out_merged"};

std::string union_yaml(const Placement& at, const Variant& v, const std::string& dir) {
  return network_head("differential_union", at, v) + "boxes:\n" + source_box(at[0], v.seed) +
         "  - {name: low, type: filter, node: " + at[1] +
         ", in: trades, out: cheap, params: {predicate: \"price < 150\"}}\n"
         "  - {name: high, type: filter, node: " + at[2] +
         ", in: trades, out: dear, params: {predicate: \"price >= 350\"}}\n"
         "  - {name: both, type: union, node: " + at[3] + ", in: [cheap, dear], out: merged}\n"
         "  - {name: by_time, type: bsort, node: " + at[4] +
         ", in: merged, out: sorted, params: {field: ts, slack: 1024}}\n"
         "  - name: per_key\n"
         "    type: aggregate\n"
         "    node: " + at[5] + "\n"
         "    in: sorted\n"
         "    out: stats\n"
         "    params:\n"
         "      group_by: key\n"
         "      window: {kind: time, field: ts, size: 10ms}\n"
         "      slack: 1s\n"
         "      aggregates:\n"
         "        - {function: count, as: n}\n"
         "        - {function: sum, field: seq, as: seq_sum}\n"
         "        - {function: min, field: price, as: low}\n"
         "        - {function: max, field: price, as: high}\n"
         "        - {function: first, field: price, as: opening}\n"
         "        - {function: last, field: seq, as: last_seq}\n"
         "  - {name: out_merged, type: sink, node: " + at[6] +
         ", in: stats, params: {kind: count, output: \"" + dir + "/out_merged.csv\"}}\n";
}

const Placement kUnionOneNode(7, "solo");
// The branches' filters on different nodes, both feeding the union on `c`.
const Placement kUnionThreeNodes = {"a", "a", "b", "c", "c", "c", "c"};

std::string describe(const Variant& v) {
  return "seed " + std::to_string(v.seed) + ", medium " + v.medium + ", batch_bytes " +
         std::to_string(v.batch_bytes);
}

// ---- (a) embedded -----------------------------------------------------------------------

// One stream's batches to every consumer it has in the graph: boxes' inputs (pushed, which
// runs their downstream chains) and sinks. Used where Graph::connect cannot be: a source's
// stream, a stream with several consumers, a stream into a sink.
class StreamTee final : public ops::BatchConsumer {
 public:
  explicit StreamTee(ops::Graph& graph) : graph_(graph) {}
  void add(ops::BoxId box, std::size_t port) { boxes_.emplace_back(box, port); }
  void add(ops::BatchConsumer& sink) { sinks_.push_back(&sink); }

  void consume(const ops::BatchView& batch) override {
    for (auto [box, port] : boxes_) graph_.push(box, port, batch);
    for (ops::BatchConsumer* sink : sinks_) sink->consume(batch);
  }
  void end() override {
    for (auto [box, port] : boxes_) graph_.finish(box, port);
    for (ops::BatchConsumer* sink : sinks_) sink->end();
  }

 private:
  ops::Graph& graph_;
  std::vector<std::pair<ops::BoxId, std::size_t>> boxes_;
  std::vector<ops::BatchConsumer*> sinks_;
};

struct EmbeddedRun {
  std::string error;                           // empty when the run worked
  std::map<std::string, std::string> csv;      // sink name -> the file it wrote
  std::map<std::string, std::uint64_t> rows;   // sink name -> rows written
};

// Runs the network in `yaml` in this process: operator boxes made with `batch_rows` rows per
// output batch, the generator filled `batch_rows` rows at a time, each sink's rows written
// to dir/embedded-<batch_rows>-<sink>.csv.
EmbeddedRun run_embedded(const std::string& yaml, std::size_t batch_rows, const TempDir& dir) {
  EmbeddedRun run;
  auto parsed = rt::parse_network(yaml, "embedded.yaml");
  if (!parsed) {
    run.error = parsed.error().joined();
    return run;
  }
  const rt::NetworkSpec& spec = parsed.value();

  ops::Graph graph;
  std::map<std::string, ops::BoxId> ids;
  for (std::size_t b : rt::topological_order(spec)) {
    const rt::BoxSpec& box = spec.boxes[b];
    if (box.type == "source" || box.type == "sink") continue;
    if (!box.plan) {
      run.error = "box '" + box.name + "' has no plan";
      return run;
    }
    auto made = box.plan->make(batch_rows);
    if (!made) {
      run.error = "box '" + box.name + "': " + made.error().describe();
      return run;
    }
    ids.emplace(box.name, graph.add(std::move(made).value()));
  }

  std::vector<std::unique_ptr<ops::CsvWriter>> writers;
  std::map<std::string, ops::CsvWriter*> writer_of;  // sink name -> writer
  std::map<std::string, std::string> path_of;
  for (const rt::BoxSpec& box : spec.boxes) {
    if (box.type != "sink") continue;
    const rt::StreamSpec& in = *spec.find_stream(box.inputs.at(0));
    path_of[box.name] =
        dir.file("embedded-" + std::to_string(batch_rows) + "-" + box.name + ".csv");
    auto writer = ops::CsvWriter::make({.path = path_of[box.name]}, *in.tuple_schema);
    if (!writer) {
      run.error = "sink '" + box.name + "': " + writer.error().describe();
      return run;
    }
    writer_of[box.name] = writer.value().get();
    writers.push_back(std::move(writer).value());
  }

  // The streams: a direct edge from one operator box to its only consumer, an operator box;
  // a tee for everything else.
  std::vector<std::unique_ptr<StreamTee>> tees;
  std::map<std::string, StreamTee*> source_tee;  // source box name -> the tee it feeds
  for (const rt::StreamSpec& stream : spec.streams) {
    const rt::BoxSpec& producer = *spec.find_box(stream.producer);
    const auto out_port = static_cast<std::size_t>(
        std::find(producer.outputs.begin(), producer.outputs.end(), stream.name) -
        producer.outputs.begin());
    const rt::BoxSpec* only =
        stream.consumers.size() == 1 ? spec.find_box(stream.consumers[0]) : nullptr;
    if (producer.type != "source" && only != nullptr && only->type != "sink" &&
        only->inputs.size() == 1) {
      if (auto ok = graph.connect(ids.at(producer.name), out_port, ids.at(only->name), 0); !ok) {
        run.error = "stream '" + stream.name + "': " + ok.error().describe();
        return run;
      }
      continue;
    }
    auto tee = std::make_unique<StreamTee>(graph);
    for (const std::string& consumer_name : stream.consumers) {
      const rt::BoxSpec& consumer = *spec.find_box(consumer_name);
      if (consumer.type == "sink") {
        tee->add(*writer_of.at(consumer.name));
        continue;
      }
      for (std::size_t port = 0; port < consumer.inputs.size(); ++port) {
        if (consumer.inputs[port] == stream.name) tee->add(ids.at(consumer.name), port);
      }
    }
    if (producer.type == "source") {
      source_tee[producer.name] = tee.get();
    } else {
      graph.collect(ids.at(producer.name), out_port, *tee);
    }
    tees.push_back(std::move(tee));
  }

  // Drive every source to its end, `batch_rows` rows per batch, as the file schedules them.
  for (const rt::BoxSpec& box : spec.boxes) {
    if (box.type != "source") continue;
    const ops::Schema& schema = *spec.find_stream(box.outputs.at(0))->tuple_schema;
    ops::GeneratorParams params = rt::generator_params(*box.source, schema);
    params.start_ns = box.source->start_ns;
    params.rate = box.source->rate;
    auto generator = ops::Generator::make(params);
    if (!generator || !params.start_ns || !params.limit) {
      run.error =
          "source '" + box.name + "': " +
          (generator ? std::string("needs start_ns and tuples") : generator.error().describe());
      return run;
    }
    ops::OwnedBatch batch(schema, batch_rows);
    StreamTee& tee = *source_tee.at(box.name);
    while (!generator.value().done()) {
      batch.clear();
      generator.value().fill(batch, batch.capacity_rows());
      tee.consume(batch);
    }
    tee.end();
  }

  for (const auto& [name, writer] : writer_of) {
    if (auto ok = writer->status(); !ok) {
      run.error = "sink '" + name + "': " + ok.error().describe();
      return run;
    }
    run.rows[name] = writer->rows_written();
  }
  writers.clear();  // closes the files
  for (const auto& [name, path] : path_of) run.csv[name] = read_file(path);
  return run;
}

// ---- (b), (c), (d) launched -------------------------------------------------------------

struct LaunchRun {
  Output out;
  std::string command;
  std::map<std::string, std::string> csv;  // sink name -> the file it wrote
};

// Over libfabric the nodes log ofi_rxm's connection events (FI_LOG_LEVEL=info): a fabric run
// that fails now and then in CI (a hello answered but never received, then fresh endpoints
// whose hellos never arrive) shows whether the connection requests reached the listener.
// Only those lines, warnings and errors are kept for the failure message (without_fabric_chatter).
LaunchRun launch(const std::string& yaml, const std::vector<std::string>& sinks,
                 const TempDir& dir, bool fabric) {
  LaunchRun launched;
  const std::string spec = dir.file("net.yaml", yaml);
  launched.command = std::string(fabric ? "FI_LOG_LEVEL=info FI_LOG_PROV=ofi_rxm " : "") +
                     BOREAL_BIN + " launch " + spec + " --timeout 60 --free-ports --quiet --json " +
                     dir.file("run.jsonl");
  launched.out = run(launched.command);
  for (const std::string& sink : sinks) launched.csv[sink] = read_file(dir.file(sink + ".csv"));
  return launched;
}

// A launch's output without libfabric's informational lines, except its connection events
// (the ep_ctrl subsystem: connection requests, accepts, rejects), and with a run of one kind
// of event (a sender whose provider retries while its receiver starts) told once and counted.
std::string without_fabric_chatter(const std::string& text) {
  std::istringstream in(text);
  std::string kept;
  std::string last;  // the last kept line from its source location on (no pid or time)
  std::size_t repeats = 0;
  const auto end_run = [&] {
    if (repeats > 0) kept += "  (and " + std::to_string(repeats) + " more like it)\n";
    repeats = 0;
  };
  for (std::string line; std::getline(in, line);) {
    const bool libfabric = line.rfind("libfabric:", 0) == 0;
    if (libfabric && line.find("<info>") != std::string::npos &&
        line.find(":ep_ctrl:") == std::string::npos) {
      continue;
    }
    // rxm's settings dump, and the address lines of dropped messages.
    if (line.rfind("\t", 0) == 0 || line.rfind(": fi_", 0) == 0) continue;
    // libfabric:PID:TIME::PROV:SUBSYSTEM:FUNCTION():LINE<LEVEL> text: from "::" to '>'.
    const std::size_t from = std::min(line.find("::"), line.size());
    const std::string what = libfabric ? line.substr(from, line.find('>', from) - from) : line;
    if (libfabric && what == last) {
      ++repeats;
      continue;
    }
    end_run();
    last = libfabric ? what : "";
    kept += line + "\n";
  }
  end_run();
  return kept;
}

// The lines of a CSV file (without their '\n').
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first line where two files differ, with a line on each side, for a failure message.
std::string first_difference(const std::string& expected, const std::string& actual) {
  const auto a = lines_of(expected);
  const auto b = lines_of(actual);
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::ostringstream out;
  out << "files of " << a.size() << " and " << b.size() << " lines first differ at line " << i + 1
      << ":\n";
  for (std::size_t k = i == 0 ? 0 : i - 1; k <= i + 1; ++k) {
    out << "  line " << k + 1 << "\n    embedded: " << (k < a.size() ? a[k] : "<none>")
        << "\n    launched: " << (k < b.size() ? b[k] : "<none>") << "\n";
  }
  return out.str();
}

// The header, then the other lines sorted: a multiset of rows.
std::string sorted_lines(const std::string& csv) {
  auto lines = lines_of(csv);
  if (lines.size() > 1) std::sort(lines.begin() + 1, lines.end());
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// ---- the tests --------------------------------------------------------------------------

enum class Compare : std::uint8_t { bytes, multiset };

struct Shape {
  const char* name;
  std::string (*yaml)(const Placement&, const Variant&, const std::string&);
  const std::vector<std::string>* sinks;
  const Placement* one_node;
  const Placement* three_nodes;
  Compare compare;
  std::uint64_t min_rows;  // each sink writes at least this many rows
};

// gtest prints a parameter's Shape by its name.
void PrintTo(const Shape* shape, std::ostream* out) { *out << shape->name; }

const Shape kPipeline = {"pipeline", &pipeline_yaml, &kPipelineSinks, &kPipelineOneNode,
                         &kPipelineThreeNodes, Compare::bytes, 1000};
const Shape kUnion = {"union", &union_yaml, &kUnionSinks, &kUnionOneNode, &kUnionThreeNodes,
                      Compare::multiset, 1000};

// The embedded run at `batch_rows` rows, checked: it worked and every sink has enough rows.
EmbeddedRun embedded_reference(const Shape& shape, std::uint64_t seed, std::size_t batch_rows,
                               const TempDir& dir) {
  const std::string yaml = shape.yaml(*shape.three_nodes, {.seed = seed}, dir.file("unused"));
  EmbeddedRun run = run_embedded(yaml, batch_rows, dir);
  EXPECT_EQ(run.error, "") << shape.name << ", seed " << seed << ", batch rows " << batch_rows;
  for (const std::string& sink : *shape.sinks) {
    EXPECT_GE(run.rows[sink], shape.min_rows)
        << shape.name << " sink " << sink << ", seed " << seed;
    // The header and one line per row.
    EXPECT_EQ(lines_of(run.csv[sink]).size(), run.rows[sink] + 1) << sink << ", seed " << seed;
  }
  return run;
}

class Embedded : public testing::TestWithParam<std::tuple<const Shape*, std::uint64_t>> {};

// The graph's own batch size changes how rows are grouped, never which rows or their order
// (the union shape's embedded run is deterministic too: pushes run depth first).
TEST_P(Embedded, BatchRowsDoNotChangeTheOutput) {
  const auto [shape, seed] = GetParam();
  TempDir dir;
  const EmbeddedRun small = embedded_reference(*shape, seed, 100, dir);
  const EmbeddedRun large = embedded_reference(*shape, seed, 1024, dir);
  for (const std::string& sink : *shape->sinks) {
    EXPECT_EQ(small.rows.at(sink), large.rows.at(sink)) << sink << ", seed " << seed;
    EXPECT_TRUE(small.csv.at(sink) == large.csv.at(sink))
        << sink << ", seed " << seed << ": "
        << first_difference(large.csv.at(sink), small.csv.at(sink));
  }
}

// One launch per (shape, seed, medium); each at two frame sizes. "one-node" puts every box
// on one node (no link: the medium is not used).
using LaunchParam = std::tuple<const Shape*, std::uint64_t, const char*>;
class Launched : public testing::TestWithParam<LaunchParam> {};

TEST_P(Launched, SinkFilesEqualTheEmbeddedRun) {
  const auto [shape, seed, medium_name] = GetParam();
  const std::string medium = medium_name;
  const bool one_node = medium == "one-node";

  TempDir reference_dir;
  const EmbeddedRun reference = embedded_reference(*shape, seed, 1024, reference_dir);
  ASSERT_EQ(reference.error, "");

  for (const std::uint32_t batch_bytes : {4096u, 32768u}) {
    const Variant variant{
        .seed = seed, .medium = one_node ? "tcp" : medium, .batch_bytes = batch_bytes};
    const std::string what = std::string(shape->name) + ", " +
                             (one_node ? "one node, " : "three nodes, ") + describe(variant);
    SCOPED_TRACE(what);
    TempDir dir;
    const std::string dir_path = std::filesystem::path(dir.file("x")).parent_path().string();
    const std::string yaml =
        shape->yaml(one_node ? *shape->one_node : *shape->three_nodes, variant, dir_path);
    const LaunchRun run = launch(yaml, *shape->sinks, dir, medium.rfind("fabric", 0) == 0);
    // On failure the nodes' reports too: each link's counts (reconnects, fresh endpoints) and
    // each node's refused connections.
    ASSERT_EQ(run.out.status, 0) << what << "\n$ " << run.command << "\n"
                                 << without_fabric_chatter(run.out.text) << "\n"
                                 << yaml << "\n--- run.jsonl\n"
                                 << read_file(dir.file("run.jsonl"));
    const auto lines = read_json_lines(dir.file("run.jsonl"));
    ASSERT_FALSE(lines.empty()) << what;
    const nlohmann::json& summary = lines.back();
    EXPECT_EQ(summary.value("kind", ""), "run") << what << ": " << summary.dump();
    if (summary.contains("errors")) {
      EXPECT_TRUE(summary["errors"].empty()) << what << ": " << summary["errors"].dump();
    }

    for (const std::string& sink : *shape->sinks) {
      const std::string& expected = reference.csv.at(sink);
      const std::string& actual = run.csv.at(sink);
      EXPECT_EQ(lines_of(actual).size(), reference.rows.at(sink) + 1) << what << ", sink " << sink;
      if (shape->compare == Compare::bytes) {
        EXPECT_TRUE(actual == expected) << what << ", sink " << sink << ": "
                                        << first_difference(expected, actual) << "$ " << run.command
                                        << "\n" << yaml;
      } else {
        const std::string want = sorted_lines(expected);
        const std::string got = sorted_lines(actual);
        EXPECT_TRUE(got == want) << what << ", sink " << sink
                                 << " (sorted lines): " << first_difference(want, got) << "$ "
                                 << run.command << "\n"
                                 << yaml;
      }
    }
  }
}

std::string launch_name(const testing::TestParamInfo<LaunchParam>& info) {
  std::string medium = std::get<2>(info.param);
  std::replace(medium.begin(), medium.end(), '-', '_');
  return std::string(std::get<0>(info.param)->name) + "_seed" +
         std::to_string(std::get<1>(info.param)) + "_" + medium;
}

std::string embedded_name(
    const testing::TestParamInfo<std::tuple<const Shape*, std::uint64_t>>& info) {
  return std::string(std::get<0>(info.param)->name) + "_seed" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Pipeline, Embedded,
                         testing::Combine(testing::Values(&kPipeline),
                                          testing::Values(7u, 1234u, 99991u)),
                         embedded_name);
INSTANTIATE_TEST_SUITE_P(Union, Embedded,
                         testing::Combine(testing::Values(&kUnion), testing::Values(7u, 1234u)),
                         embedded_name);

INSTANTIATE_TEST_SUITE_P(
    Pipeline, Launched,
    testing::Combine(testing::Values(&kPipeline), testing::Values(7u, 1234u, 99991u),
                     testing::Values("one-node", "tcp", "fabric-msg", "fabric-rma")),
    launch_name);
INSTANTIATE_TEST_SUITE_P(Union, Launched,
                         testing::Combine(testing::Values(&kUnion), testing::Values(7u, 1234u),
                                          testing::Values("one-node", "tcp", "fabric-msg",
                                                          "fabric-rma")),
                         launch_name);

}  // namespace
