#include "spec/box_types.hpp"
#include "spec/network_spec.hpp"
#include "spec/spec_values.hpp"

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "apps/spec_test_support.hpp"

namespace boreal::runtime {
namespace {

using std::chrono::microseconds;
using Errors = std::vector<std::string>;

// A small valid network; tests replace numbered lines (1-based) to break one thing, so every
// expected line:col below can be read off this listing.
const std::vector<std::string> kBase = {
    "name: t",                            // 1
    "schemas:",                           // 2
    "  tick: [{seq: i64}, {pad: str8}]",  // 3
    "nodes:",                             // 4
    "  - name: a",                        // 5
    "    address: tcp://127.0.0.1:7101",  // 6
    "  - name: b",                        // 7
    "    address: tcp://127.0.0.1:7102",  // 8
    "boxes:",                             // 9
    "  - name: gen",                      // 10
    "    type: source",                   // 11
    "    node: a",                        // 12
    "    out: s",                         // 13
    "    schema: tick",                   // 14
    "  - name: snk",                      // 15
    "    type: sink",                     // 16
    "    node: b",                        // 17
    "    in: s",                          // 18
};

// kBase with lines replaced (a replacement may hold several lines, or be empty to drop one).
std::string base_with(const std::map<int, std::string>& changes = {}) {
  return test::lines_with(kBase, changes);
}

// kBase with `lines` (e.g. a transport block) after the nodes, at line 9.
std::string after_nodes(const std::string& lines) {
  return base_with({{8, kBase[7] + "\n" + lines}});
}

NetworkSpec parse_ok(const std::string& text) {
  SpecResult<NetworkSpec> spec = parse_network(text, "t.yaml");
  EXPECT_TRUE(spec) << spec.error().joined();
  return spec ? std::move(spec).value() : NetworkSpec{};
}

Errors errors_of(const std::string& text) { return test::spec_errors_of(text); }

TEST(NetworkSpec, DemoFileParsesWithExactValues) {
  SpecResult<NetworkSpec> loaded = load_network(BOREAL_EXAMPLES_DIR "/demo.yaml");
  ASSERT_TRUE(loaded) << loaded.error().joined();
  const NetworkSpec& spec = loaded.value();
  EXPECT_EQ(spec.name, "demo");
  EXPECT_EQ(spec.file_name, BOREAL_EXAMPLES_DIR "/demo.yaml");
  // demo.yaml sets no token: the default is the hash of its name (never 0).
  EXPECT_EQ(spec.cluster_token, boreal::runtime::default_cluster_token("demo"));
  EXPECT_NE(spec.cluster_token, 0u);

  ASSERT_EQ(spec.schemas.size(), 1u);
  const ops::Schema* tick = spec.find_schema("tick");
  ASSERT_NE(tick, nullptr);
  EXPECT_EQ(tick->to_string(), "seq:i64,ts:timestamp,key:i64,pad:str40");
  EXPECT_EQ(tick->tuple_bytes(), 64u);

  ASSERT_EQ(spec.nodes.size(), 2u);
  EXPECT_EQ(spec.nodes[0].name, "src");
  EXPECT_EQ(spec.nodes[0].address, "tcp://127.0.0.1:7101");
  EXPECT_EQ(spec.nodes[0].uri, (Uri{"tcp", "", "127.0.0.1", 7101, ""}));
  EXPECT_EQ(spec.nodes[1].name, "dst");
  EXPECT_EQ(spec.nodes[1].uri, (Uri{"tcp", "", "127.0.0.1", 7102, ""}));

  const TransportSpec& t = spec.transport;
  EXPECT_EQ(t.medium, "tcp");
  EXPECT_EQ(t.wait.mode, transport::WaitMode::sleep);
  EXPECT_EQ(t.wait.latency_budget, microseconds(200));
  EXPECT_EQ(t.wait.spin, microseconds(20));
  EXPECT_EQ(t.batch_bytes, 32768u);
  EXPECT_EQ(t.flush, microseconds(100));
  EXPECT_EQ(t.window, 64u);

  ASSERT_EQ(spec.boxes.size(), 2u);
  const BoxSpec& gen = spec.boxes[0];
  EXPECT_EQ(gen.name, "gen");
  EXPECT_EQ(gen.type, "source");
  EXPECT_EQ(gen.node, "src");
  EXPECT_TRUE(gen.inputs.empty());
  EXPECT_EQ(gen.outputs, std::vector<std::string>{"ticks"});
  EXPECT_EQ(gen.schema, "tick");
  EXPECT_EQ(gen.pos, (SourcePos{57, 11}));
  ASSERT_TRUE(gen.params.IsMap());
  EXPECT_EQ(gen.params["rate"].Scalar(), "100000");  // as written, intact after parsing
  ASSERT_TRUE(gen.source.has_value());
  EXPECT_FALSE(gen.sink.has_value());
  EXPECT_EQ(gen.source->rate, std::optional<double>(100000.0));
  EXPECT_EQ(gen.source->tuples, 0u);
  EXPECT_EQ(gen.source->duration.count(), 3.0);
  EXPECT_EQ(gen.source->seed, 1u);
  EXPECT_EQ(gen.source->keys, 1000u);

  const BoxSpec& sink = spec.boxes[1];
  EXPECT_EQ(sink.name, "sink");
  EXPECT_EQ(sink.type, "sink");
  EXPECT_EQ(sink.node, "dst");
  EXPECT_EQ(sink.inputs, std::vector<std::string>{"ticks"});
  EXPECT_TRUE(sink.outputs.empty());
  EXPECT_EQ(sink.schema, "tick");
  EXPECT_EQ(sink.pos, (SourcePos{69, 11}));
  ASSERT_TRUE(sink.sink.has_value());
  EXPECT_FALSE(sink.source.has_value());
  EXPECT_EQ(sink.sink->kind, SinkKind::check);
  EXPECT_EQ(sink.sink->slow_per_frame, microseconds(0));

  ASSERT_EQ(spec.streams.size(), 1u);
  const StreamSpec& ticks = spec.streams[0];
  EXPECT_EQ(ticks.name, "ticks");
  EXPECT_EQ(ticks.id, 1u);
  EXPECT_EQ(ticks.schema, "tick");
  EXPECT_EQ(ticks.producer, "gen");
  EXPECT_EQ(ticks.producer_node, "src");
  EXPECT_EQ(ticks.consumers, std::vector<std::string>{"sink"});
  EXPECT_EQ(ticks.consumer_nodes, std::vector<std::string>{"dst"});
  EXPECT_TRUE(ticks.crosses_nodes);
  EXPECT_EQ(ticks.transport.medium, "tcp");
  EXPECT_EQ(ticks.transport.wait.mode, transport::WaitMode::sleep);
  EXPECT_EQ(ticks.transport.window, 64u);

  EXPECT_EQ(spec.find_node("dst"), &spec.nodes[1]);
  EXPECT_EQ(spec.find_box("sink"), &spec.boxes[1]);
  EXPECT_EQ(spec.find_stream("ticks"), &spec.streams[0]);
  EXPECT_EQ(spec.find_node("nope"), nullptr);
  EXPECT_EQ(spec.find_box("nope"), nullptr);
  EXPECT_EQ(spec.find_stream("nope"), nullptr);
  EXPECT_EQ(spec.find_schema("nope"), nullptr);
  EXPECT_TRUE(validate_runnable(spec));
}

TEST(NetworkSpec, TwoNodesMaxRunsUnthrottledForTwoMillionTuples) {
  SpecResult<NetworkSpec> loaded = load_network(BOREAL_EXAMPLES_DIR "/two_nodes_max.yaml");
  ASSERT_TRUE(loaded) << loaded.error().joined();
  const NetworkSpec& spec = loaded.value();
  EXPECT_EQ(spec.name, "demo");
  ASSERT_EQ(spec.boxes.size(), 2u);
  ASSERT_TRUE(spec.boxes[0].source.has_value());
  EXPECT_EQ(spec.boxes[0].source->rate, std::nullopt);
  EXPECT_EQ(spec.boxes[0].source->tuples, 2'000'000u);
  EXPECT_EQ(spec.boxes[0].source->duration.count(), 0.0);
  EXPECT_EQ(spec.transport.wait.mode, transport::WaitMode::sleep);
  EXPECT_EQ(spec.transport.batch_bytes, 32768u);
  EXPECT_EQ(spec.boxes[1].sink->kind, SinkKind::check);
  EXPECT_TRUE(validate_runnable(spec));
}

TEST(NetworkSpec, DefaultsApplyWhenOptionalKeysAreAbsent) {
  const NetworkSpec spec = parse_ok(base_with());
  const TransportSpec defaults;
  EXPECT_EQ(spec.transport.medium, defaults.medium);
  EXPECT_EQ(spec.transport.wait.mode, transport::WaitMode::block);
  EXPECT_EQ(spec.transport.batch_bytes, 32768u);
  ASSERT_TRUE(spec.boxes[0].source.has_value());
  EXPECT_EQ(spec.boxes[0].source->rate, std::nullopt);
  EXPECT_EQ(spec.boxes[0].source->tuples, 0u);
  EXPECT_EQ(spec.boxes[0].source->seed, 1u);
  EXPECT_EQ(spec.boxes[0].source->keys, 1000u);
  EXPECT_TRUE(spec.boxes[0].params.IsNull());
  EXPECT_EQ(spec.boxes[1].sink->kind, SinkKind::check);
  EXPECT_EQ(spec.boxes[1].schema, "");
  EXPECT_EQ(spec.streams[0].schema, "tick");
}

// Without a cluster_token, two networks of different names carry different tokens (so their
// nodes refuse each other's links) and every node of one network the same; one written in
// the file is used as it is, 0 included.
TEST(NetworkSpec, DefaultClusterTokenComesFromTheName) {
  using boreal::runtime::default_cluster_token;
  EXPECT_EQ(default_cluster_token("t"), 0x08a2fb28ab27f7e4ull);
  EXPECT_NE(default_cluster_token("t"), default_cluster_token("u"));
  EXPECT_EQ(parse_ok(base_with({{1, "name: t"}})).cluster_token, default_cluster_token("t"));
  EXPECT_EQ(parse_ok(base_with({{1, "name: u"}})).cluster_token, default_cluster_token("u"));
  EXPECT_EQ(parse_ok(base_with({{1, "name: t\ncluster_token: 0"}})).cluster_token, 0u);
  EXPECT_EQ(parse_ok(base_with({{1, "name: t\ncluster_token: 42"}})).cluster_token, 42u);
}

TEST(NetworkSpec, ParamsAreParsed) {
  const NetworkSpec spec = parse_ok(
      base_with({{1, "name: t\ncluster_token: 18446744073709551615"},
                 {14, "    schema: tick\n    params: {rate: 2.5e3, tuples: 7, duration_s: 0.25, "
                      "seed: 9, keys: 3}"},
                 {18, "    in: s\n    params: {kind: discard, slow_us_per_frame: 40}"}}));
  EXPECT_EQ(spec.cluster_token, 18446744073709551615u);
  const SourceParams& source = *spec.boxes[0].source;
  EXPECT_EQ(source.rate, std::optional<double>(2500.0));
  EXPECT_EQ(source.tuples, 7u);
  EXPECT_EQ(source.duration.count(), 0.25);
  EXPECT_EQ(source.seed, 9u);
  EXPECT_EQ(source.keys, 3u);
  EXPECT_EQ(spec.boxes[1].sink->kind, SinkKind::discard);
  EXPECT_EQ(spec.boxes[1].sink->slow_per_frame, microseconds(40));
  EXPECT_EQ(to_string(SinkKind::check), "check");
  EXPECT_EQ(to_string(SinkKind::count), "count");
  EXPECT_EQ(to_string(SinkKind::discard), "discard");
}

TEST(NetworkSpec, StreamIdsFollowFirstMentionAndSchemasPassThroughFilters) {
  const NetworkSpec spec = parse_ok(base_with({{10, "  - name: snk\n    type: sink\n    node: b\n"
                                                    "    in: filtered\n"
                                                    "  - name: gen"},
                                               {15, "  - name: f"},
                                               {16, "    type: filter"},
                                               {17, "    node: a"},
                                               {18, "    in: s\n    out: [filtered]\n"
                                                    "    params: {predicate: \"seq >= 0\"}"}}));
  ASSERT_EQ(spec.streams.size(), 2u);
  EXPECT_EQ(spec.streams[0].name, "filtered");
  EXPECT_EQ(spec.streams[0].id, 1u);
  EXPECT_EQ(spec.streams[0].schema, "");  // no box names it...
  ASSERT_TRUE(spec.streams[0].tuple_schema.has_value());
  EXPECT_EQ(spec.streams[0].tuple_schema->to_string(),
            "seq:i64,pad:str8");  // ...the filter passes it on
  EXPECT_EQ(spec.streams[0].producer, "f");
  EXPECT_EQ(spec.streams[0].producer_node, "a");
  EXPECT_EQ(spec.streams[0].consumers, std::vector<std::string>{"snk"});
  EXPECT_TRUE(spec.streams[0].crosses_nodes);
  EXPECT_EQ(spec.streams[1].name, "s");
  EXPECT_EQ(spec.streams[1].id, 2u);
  EXPECT_EQ(spec.streams[1].producer, "gen");
  EXPECT_EQ(spec.streams[1].consumers, std::vector<std::string>{"f"});
  EXPECT_EQ(spec.streams[1].consumer_nodes, std::vector<std::string>{"a"});
  EXPECT_FALSE(spec.streams[1].crosses_nodes);
}

TEST(NetworkSpec, StreamWithSeveralConsumersListsThemInFileOrder) {
  const NetworkSpec spec = parse_ok(
      base_with({{18, "    in: s\n  - {name: snk2, type: sink, node: a, in: [s]}"}}));
  ASSERT_EQ(spec.streams.size(), 1u);
  EXPECT_EQ(spec.streams[0].consumers, (std::vector<std::string>{"snk", "snk2"}));
  EXPECT_EQ(spec.streams[0].consumer_nodes, (std::vector<std::string>{"b", "a"}));
  EXPECT_TRUE(spec.streams[0].crosses_nodes);
}

TEST(NetworkSpec, LinkOverridesTheDefaultsForItsStreamOnly) {
  const NetworkSpec spec = parse_ok(base_with(
      {{8,
        "    address: tcp://127.0.0.1:7102\n"
        "transport: {wait: sleep, window: 32, spin_us: 5}"},
       {18,
        "    in: s\n  - {name: gen2, type: source, node: a, out: u, schema: tick}\n"
        "  - {name: snk2, type: sink, node: b, in: u}\n"
        "links:\n  - {stream: u, latency_budget_us: 500, batch_bytes: 4096, medium: inproc}"}}));
  ASSERT_EQ(spec.streams.size(), 2u);
  const TransportSpec& s = spec.streams[0].transport;
  EXPECT_EQ(s.wait.mode, transport::WaitMode::sleep);
  EXPECT_EQ(s.window, 32u);
  EXPECT_EQ(s.wait.spin, microseconds(5));
  EXPECT_EQ(s.batch_bytes, 32768u);
  EXPECT_EQ(s.medium, "tcp");
  const TransportSpec& u = spec.streams[1].transport;
  EXPECT_EQ(u.wait.mode, transport::WaitMode::sleep);  // from the defaults
  EXPECT_EQ(u.wait.latency_budget, microseconds(500));
  EXPECT_EQ(s.wait.latency_budget, microseconds(200));
  EXPECT_EQ(u.window, 32u);  // from the defaults
  EXPECT_EQ(u.wait.spin, microseconds(5));
  EXPECT_EQ(u.batch_bytes, 4096u);
  EXPECT_EQ(u.medium, "inproc");
  EXPECT_EQ(spec.transport.wait.mode, transport::WaitMode::sleep);
}

// ---- one test per kind of error ------------------------------------------------------------

TEST(NetworkSpecErrors, UnknownKeyListsTheValidOnes) {
  EXPECT_EQ(errors_of(base_with({{1, "name: t\ncolour: red"}})),
            Errors{"t.yaml:2:1: colour: unknown key (valid: name, cluster_token, schemas, nodes, "
                   "transport, boxes, links)"});
  EXPECT_EQ(errors_of(base_with({{12, "    node: a\n    nod: a"}})),
            Errors{"t.yaml:13:5: boxes[0].nod: unknown key (valid: name, type, node, in, out, "
                   "schema, params, thread)"});
  EXPECT_EQ(errors_of(base_with({{14, "    schema: tick\n    params: {rate: 5, burst: 2}"}})),
            Errors{"t.yaml:15:23: boxes[0].params.burst: unknown key (valid: kind, path, rate, "
                   "tuples, duration_s, seed, keys, key_field, distribution, zipf_s, values, "
                   "seq_field, time_field, start_ns, streams, events, first_event, gap_us, "
                   "max_delay_ms, stamp)"});
}

TEST(NetworkSpecErrors, RepeatedKey) {
  EXPECT_EQ(errors_of(base_with({{12, "    node: a\n    node: b"}})),
            Errors{"t.yaml:13:5: boxes[0].node: repeated key (first at line 12)"});
}

TEST(NetworkSpecErrors, WrongType) {
  EXPECT_EQ(errors_of(after_nodes("transport:\n  window: lots")),
            Errors{"t.yaml:10:11: transport.window: expected an integer, got 'lots'"});
  EXPECT_EQ(errors_of(after_nodes("transport:\n  window: \"64\"")),
            Errors{"t.yaml:10:11: transport.window: expected an integer, got the string \"64\""});
  EXPECT_EQ(errors_of(base_with(
                {{4, "nodes: {a: tcp://127.0.0.1:7101}"}, {5, ""}, {6, ""}, {7, ""}, {8, ""}})),
            (Errors{"t.yaml:4:8: nodes: expected a list, got a mapping",
                    "t.yaml:8:11: boxes[0].node: unknown node 'a' (no nodes are declared)",
                    "t.yaml:13:11: boxes[1].node: unknown node 'b' (no nodes are declared)"}));
  EXPECT_EQ(errors_of(base_with({{12, "    node: [a]"}})),
            Errors{"t.yaml:12:11: boxes[0].node: expected a string, got a list"});
  EXPECT_EQ(errors_of(base_with({{14, "    schema: tick\n    params: {seed: -1}"}})),
            Errors{"t.yaml:15:20: boxes[0].params.seed: expected an integer from 0 to "
                   "18446744073709551615, got '-1'"});
  EXPECT_EQ(errors_of(base_with({{14, "    schema: tick\n    params: {duration_s: soon}"}})),
            Errors{"t.yaml:15:26: boxes[0].params.duration_s: expected a number, got 'soon'"});
  EXPECT_EQ(errors_of(base_with({{14, "    schema: tick\n    params: {duration_s: -2}"}})),
            Errors{"t.yaml:15:26: boxes[0].params.duration_s: must not be negative, got -2"});
}

TEST(NetworkSpecErrors, NumberOutOfRange) {
  EXPECT_EQ(errors_of(after_nodes("transport: {window: 0, batch_bytes: 4294967296, spin_us: -1}")),
            (Errors{"t.yaml:9:21: transport.window: must be positive, got 0",
                    "t.yaml:9:37: transport.batch_bytes: must be at most 4294967295, got "
                    "4294967296",
                    "t.yaml:9:58: transport.spin_us: must not be negative, got -1"}));
}

TEST(NetworkSpecErrors, MissingRequiredKey) {
  EXPECT_EQ(errors_of(base_with({{12, ""}})),
            Errors{"t.yaml:10:5: boxes[0]: missing required key 'node'"});
  EXPECT_EQ(errors_of(base_with({{1, ""}})), Errors{"t.yaml:1:1: missing required key 'name'"});
  EXPECT_EQ(errors_of(base_with({{6, ""}})),
            Errors{"t.yaml:5:5: nodes[0]: missing required key 'address'"});
  EXPECT_EQ(errors_of(base_with({{14, ""}})),
            Errors{"t.yaml:10:5: boxes[0]: missing required key 'schema' (a source names its "
                   "output's schema)"});
}

TEST(NetworkSpecErrors, EmptyValueIsReportedAtItsKey) {
  EXPECT_EQ(errors_of(base_with({{6, "    address:"}})),
            Errors{"t.yaml:6:5: nodes[0].address: expected a string, got nothing"});
}

TEST(NetworkSpecErrors, DuplicateNodeName) {
  EXPECT_EQ(errors_of(base_with({{7, "  - name: a"}, {17, "    node: a"}})),
            Errors{"t.yaml:7:11: nodes[1].name: duplicate node name 'a' (first at line 5)"});
}

TEST(NetworkSpecErrors, DuplicateAddress) {
  EXPECT_EQ(errors_of(base_with({{8, "    address: tcp://127.0.0.1:7101"}})),
            Errors{"t.yaml:8:14: nodes[1].address: address 'tcp://127.0.0.1:7101' is already used "
                   "by node 'a'"});
}

// A checkpoint (docs/faults.md) holds input positions, sink files, box states and
// unacknowledged output: a node keeping one runs boxes without state or whose state it saves,
// on one thread.
TEST(NetworkSpec, ACheckpointingSinkNodeParses) {
  auto spec = parse_network(base_with({{8, "    address: tcp://127.0.0.1:7102\n"
                                           "    checkpoint: /tmp/b.checkpoint"}}),
                            "t.yaml");
  ASSERT_TRUE(spec) << spec.error().messages.at(0);
  EXPECT_EQ(spec.value().find_node("b")->checkpoint, "/tmp/b.checkpoint");
  EXPECT_EQ(spec.value().find_node("a")->checkpoint, "");
}

TEST(NetworkSpecErrors, ACheckpointingNodeRunsOnlyBoxesItCanRestoreOnOneThread) {
  EXPECT_EQ(errors_of(base_with({{6, "    address: tcp://127.0.0.1:7101\n"
                                     "    threads: 2\n"
                                     "    checkpoint: a.checkpoint"},
                                 {8, "    address: fabric://tcp/127.0.0.1:7102"}})),
            (Errors{"t.yaml:8:17: nodes[0].checkpoint: node 'a' keeps a checkpoint, but it has 2 "
                    "threads (a checkpoint needs threads: 1)",
                    "t.yaml:8:17: nodes[0].checkpoint: node 'a' keeps a checkpoint, but box 'gen' "
                    "(source) has state it cannot hold yet; a checkpointing node runs only "
                    "filter, map, union, split, aggregate, join, bsort, resample, argmax and "
                    "sink boxes"}));
}

// Node b keeps a checkpoint and runs every box whose state it saves (docs/faults.md); the
// last two boxes are replaced to show what the wall clock drives.
const std::vector<std::string> kStatefulCheckpointing = {
    "name: t",
    "schemas:",
    "  tick: [{seq: i64}, {ts: timestamp}, {v: f64}]",
    "nodes:",
    "  - {name: a, address: \"tcp://127.0.0.1:7101\"}",
    "  - name: b",
    "    address: tcp://127.0.0.1:7102",
    "    checkpoint: b.checkpoint",
    "boxes:",
    "  - {name: gen, type: source, node: a, out: s, schema: tick}",
    "  - {name: halves, type: filter, node: b, in: s, out: [even, odd],",
    "     params: {predicate: \"seq % 2 == 0\", emit_rejected: true}}",
    "  - {name: pairs, type: join, node: b, in: [even, odd], out: paired,",
    "     params: {left_time: seq, right_time: seq, window: 1}}",
    "  - {name: ordered, type: bsort, node: b, in: paired, out: sorted,",
    "     params: {field: l_seq, slack: 8}}",
    "  - {name: best, type: argmax, node: b, in: sorted, out: top,",
    "     params: {by: l_seq, field: r_seq}}",
    "  - {name: grid, type: resample, node: b, in: top, out: gridded,",
    "     params: {time_field: l_ts, interval: 1ms, mode: interpolate, value_fields: [r_v]}}",
    "  - {name: snk, type: sink, node: b, in: gridded, params: {kind: count}}",
    "  - {name: held, type: resample, node: b, in: s, out: per_ten,",
    "     params: {time_field: seq, interval: 10, value_fields: [v]}}",
    "  - {name: counts, type: aggregate, node: b, in: per_ten, out: counted,",
    "     params: {window: {kind: count, size: 4}, aggregates: [{function: count, as: n}]}}",
    "  - {name: snk2, type: sink, node: b, in: counted, params: {kind: count}}",
};

TEST(NetworkSpec, ACheckpointingNodeRunsTheBoxesWhoseStateItSaves) {
  const NetworkSpec spec = parse_ok(test::lines_with(kStatefulCheckpointing, {}));
  const NodeSpec* b = spec.find_node("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->checkpoint, "b.checkpoint");
  for (const char* type : {"join", "bsort", "argmax", "resample", "aggregate"}) {
    EXPECT_TRUE(checkpoint_saves_state(type)) << type;
  }
  EXPECT_FALSE(checkpoint_saves_state("filter"));
}

TEST(NetworkSpecErrors, ACheckpointingNodeRunsNothingTheWallClockDrives) {
  // A resample in hold mode on a timestamp field, and an aggregate with a timeout.
  EXPECT_EQ(errors_of(test::lines_with(
                kStatefulCheckpointing,
                {{23, "     params: {time_field: ts, interval: 1ms, value_fields: [v]}}"},
                 {25, "     params: {window: {kind: time, field: ts, size: 4ms}, timeout: 1s,\n"
                      "              aggregates: [{function: count, as: n}]}}"}})),
            (Errors{"t.yaml:8:17: nodes[1].checkpoint: node 'b' keeps a checkpoint, but resample "
                    "'held' is in hold mode on a timestamp field, where the wall clock emits grid "
                    "points and would not emit them alike after a restart",
                    "t.yaml:8:17: nodes[1].checkpoint: node 'b' keeps a checkpoint, but aggregate "
                    "'counts' has a timeout, which closes windows by the wall clock and would not "
                    "close them alike after a restart"}));
}

TEST(NetworkSpecErrors, DuplicateBoxName) {
  EXPECT_EQ(errors_of(base_with({{15, "  - name: gen"}})),
            Errors{"t.yaml:15:11: boxes[1].name: duplicate box name 'gen' (first at line 10)"});
}

TEST(NetworkSpecErrors, UnknownNode) {
  EXPECT_EQ(errors_of(base_with({{17, "    node: c"}})),
            Errors{"t.yaml:17:11: boxes[1].node: unknown node 'c' (nodes: a, b)"});
}

TEST(NetworkSpecErrors, UnknownSchema) {
  EXPECT_EQ(errors_of(base_with({{14, "    schema: tock"}})),
            Errors{"t.yaml:14:13: boxes[0].schema: unknown schema 'tock' (schemas: tick)"});
}

TEST(NetworkSpecErrors, BadSchemaField) {
  EXPECT_EQ(errors_of(base_with({{3, "  tick: [{seq: i64}, {pad: i33}]"}})),
            Errors{"t.yaml:3:22: schemas.tick[1]: unknown type 'i33' for field 'pad'; valid types: "
                   "i32, i64, f64, bool, timestamp, strN with 1 <= N <= 65496"});
  EXPECT_EQ(errors_of(base_with({{3, "  tick: [{seq: i64}, pad]"}})),
            Errors{"t.yaml:3:22: schemas.tick[1]: expected one {field: type} pair, got 'pad'"});
}

TEST(NetworkSpecErrors, BadAddress) {
  EXPECT_EQ(errors_of(base_with({{6, "    address: tcp://127.0.0.1"}})),
            Errors{"t.yaml:6:14: nodes[0].address: address 'tcp://127.0.0.1': missing port "
                   "(expected tcp://host:port, fabric://provider/host:port or inproc://name)"});
  EXPECT_EQ(errors_of(base_with({{6, "    address: udp://h:1"}})),
            Errors{"t.yaml:6:14: nodes[0].address: address 'udp://h:1': unknown scheme 'udp' "
                   "(valid: tcp, fabric, inproc)"});
}

TEST(NetworkSpecErrors, UnknownBoxType) {
  EXPECT_EQ(errors_of(base_with({{16, "    type: drain"}})),
            Errors{"t.yaml:16:11: boxes[1].type: unknown box type 'drain' (valid: source, sink, "
                   "filter, map, union, aggregate, join, bsort, resample, split, argmax)"});
}

TEST(NetworkSpecErrors, StreamWithNoProducer) {
  EXPECT_EQ(errors_of(base_with({{18, "    in: x"}})),
            Errors{"t.yaml:18:9: boxes[1].in: stream 'x' has no producer (no box lists it in "
                   "'out')"});
}

TEST(NetworkSpecErrors, StreamWithTwoProducers) {
  EXPECT_EQ(errors_of(base_with({{18, "    in: s\n  - {name: gen2, type: source, node: a, "
                                      "out: [s], schema: tick}"}})),
            Errors{"t.yaml:19:47: boxes[2].out[0]: stream 's' already has a producer, box 'gen' "
                   "(line 13)"});
}

TEST(NetworkSpecErrors, SourceAndSinkShape) {
  EXPECT_EQ(errors_of(base_with({{13, "    out: [s, s2]\n    in: x"}})),
            (Errors{"t.yaml:13:10: boxes[0].out: a source has exactly one output stream, got 2",
                    "t.yaml:14:9: boxes[0].in: a source has no input stream",
                    "t.yaml:14:9: boxes[0].in: stream 'x' has no producer (no box lists it in "
                    "'out')"}));
  EXPECT_EQ(errors_of(base_with({{18, "    in: [s, s]"}})),
            (Errors{"t.yaml:18:9: boxes[1].in: a sink has exactly one input stream, got 2",
                    "t.yaml:18:13: boxes[1].in[1]: stream 's' is listed twice"}));
  EXPECT_EQ(errors_of(base_with({{18, ""}})),
            Errors{"t.yaml:15:5: boxes[1]: missing required key 'in' (a sink has one input "
                   "stream)"});
}

TEST(NetworkSpecErrors, SinkSchemaMustMatchItsInput) {
  EXPECT_EQ(errors_of(base_with({{3, "  tick: [{seq: i64}, {pad: str8}]\n  other: [{seq: i64}]"},
                                 {18, "    in: s\n    schema: other"}})),
            Errors{"t.yaml:20:13: boxes[1].schema: schema 'other' (seq:i64) differs from the "
                   "schema of input stream 's' (seq:i64,pad:str8)"});
  // Same fields under another name are the same schema.
  parse_ok(base_with({{3, "  tick: [{seq: i64}, {pad: str8}]\n  same: [{seq: i64}, {pad: str8}]"},
                      {18, "    in: s\n    schema: same"}}));
}

TEST(NetworkSpecErrors, BadWaitMode) {
  EXPECT_EQ(errors_of(after_nodes("transport:\n  wait: nap")),
            Errors{"t.yaml:10:9: transport.wait: unknown wait mode 'nap' (valid: busy, block, "
                   "sleep, backoff, adaptive)"});
}

TEST(NetworkSpecErrors, BadMedium) {
  EXPECT_EQ(errors_of(after_nodes("transport: {medium: udp}")),
            Errors{"t.yaml:9:21: transport.medium: unknown medium 'udp' (valid: tcp, inproc, "
                   "fabric-msg, fabric-rma)"});
}

TEST(NetworkSpecErrors, BadConnection) {
  EXPECT_EQ(errors_of(after_nodes("transport: {connection: shared}")),
            Errors{"t.yaml:9:25: transport.connection: unknown connection 'shared' (valid: "
                   "per-link, per-thread-pair)"});
}

TEST(NetworkSpec, ConnectionIsPerLinkUnlessTheTransportOrALinkSaysOtherwise) {
  EXPECT_EQ(parse_ok(base_with()).streams[0].transport.connection, "per-link");
  EXPECT_EQ(parse_ok(after_nodes("transport: {connection: per-thread-pair}"))
                .streams[0]
                .transport.connection,
            "per-thread-pair");
  EXPECT_EQ(parse_ok(base_with({{18, "    in: s\nlinks: [{stream: s, connection: per-thread-pair}]"}}))
                .streams[0]
                .transport.connection,
            "per-thread-pair");
}

TEST(NetworkSpec, OnlyTcpLinksShareAConnection) {
  const NetworkSpec spec =
      parse_ok(after_nodes("transport: {medium: fabric-msg, connection: per-thread-pair}"));
  SpecResult<void> runnable = validate_runnable(spec);
  ASSERT_FALSE(runnable);
  EXPECT_EQ(runnable.error().messages,
            Errors{"t.yaml: stream 's' goes over 'fabric-msg' with connection 'per-thread-pair', "
                   "which only tcp links share; use connection per-link"});
  EXPECT_TRUE(validate_runnable(parse_ok(after_nodes("transport: {connection: per-thread-pair}"))));
}

TEST(NetworkSpecErrors, BadRate) {
  EXPECT_EQ(errors_of(base_with({{14, "    schema: tick\n    params: {rate: fast}"}})),
            Errors{"t.yaml:15:20: boxes[0].params.rate: expected a positive number of tuples/s, "
                   "'max' or 'idle', got 'fast'"});
  EXPECT_EQ(errors_of(base_with({{14, "    schema: tick\n    params: {rate: 0}"}})),
            Errors{"t.yaml:15:20: boxes[0].params.rate: expected a positive number of tuples/s, "
                   "'max' or 'idle', got '0'"});
  EXPECT_EQ(errors_of(base_with({{14, "    schema: tick\n    params: {rate: [1]}"}})),
            Errors{"t.yaml:15:20: boxes[0].params.rate: expected a positive number of tuples/s, "
                   "'max' or 'idle', got a list"});
}

TEST(NetworkSpecErrors, BadSinkKind) {
  EXPECT_EQ(errors_of(base_with({{18, "    in: s\n    params:\n      kind: verify"}})),
            Errors{"t.yaml:20:13: boxes[1].params.kind: unknown sink kind 'verify' (valid: check, "
                   "count, discard, latency, csv)"});
}

TEST(NetworkSpecErrors, BadLinks) {
  EXPECT_EQ(errors_of(base_with({{18, "    in: s\nlinks:\n  - {stream: x, wait: busy}\n"
                                      "  - {stream: s}\n  - {stream: s, window: 2}\n"
                                      "  - {wait: busy}"}})),
            (Errors{"t.yaml:20:14: links[0].stream: unknown stream 'x' (streams: s)",
                    "t.yaml:22:14: links[2].stream: stream 's' already has a link entry (line 21)",
                    "t.yaml:23:5: links[3]: missing required key 'stream'"}));
}

TEST(NetworkSpecErrors, BatchMustHoldOneTuple) {
  EXPECT_EQ(errors_of(after_nodes("transport: {batch_bytes: 8}")),
            Errors{"t.yaml:9:26: transport.batch_bytes: 8 bytes cannot hold one tuple of stream "
                   "'s' (16 bytes)"});
  EXPECT_EQ(errors_of(base_with({{18, "    in: s\nlinks: [{stream: s, batch_bytes: 12}]"}})),
            Errors{"t.yaml:19:34: links[0].batch_bytes: 12 bytes cannot hold one tuple of stream "
                   "'s' (16 bytes)"});
  EXPECT_EQ(
      errors_of(base_with({{3,
                            "  tick: [{seq: i64}, {pad: str4096}, {p2: str4096}, "
                            "{p3: str4096}, {p4: str4096}, {p5: str4096}, {p6: str4096}, "
                            "{p7: str4096}, {p8: str4096}, {p9: str4096}]"}})),
      Errors{"t.yaml:13:10: boxes[0].out: the default batch_bytes (32768) cannot hold one "
             "tuple of stream 's' (36872 bytes); set transport.batch_bytes to 36872 or more"});
}

TEST(NetworkSpecErrors, InvalidYamlIsOneLocatedError) {
  EXPECT_EQ(errors_of("name: t\nnodes: [a, b\nboxes: []\n"),
            Errors{"t.yaml:3:6: invalid YAML: end of sequence flow not found"});
}

TEST(NetworkSpecErrors, EmptyFileAndNonMappingTop) {
  EXPECT_EQ(errors_of(""),
            Errors{"t.yaml:1:1: the file is empty (expected name, nodes and boxes)"});
  EXPECT_EQ(errors_of("- a\n- b\n"), Errors{"t.yaml:1:1: expected a mapping, got a list"});
}

TEST(NetworkSpecErrors, EveryProblemIsReportedInFileOrder) {
  // Found in a different order (unknown node and no producer come from the cross-checks after
  // every section is read), reported by line and column.
  EXPECT_EQ(errors_of(base_with({{1, "name: t\ncolour: red"},
                                 {8, "    address: tcp://127.0.0.1\ntransport: {window: 0}"},
                                 {12, "    node: z"},
                                 {14, "    schema: tick\n    params: {rate: fast}"},
                                 {18, "    in: x"}})),
            (Errors{"t.yaml:2:1: colour: unknown key (valid: name, cluster_token, schemas, nodes, "
                    "transport, boxes, links)",
                    "t.yaml:9:14: nodes[1].address: address 'tcp://127.0.0.1': missing port "
                    "(expected tcp://host:port, fabric://provider/host:port or inproc://name)",
                    "t.yaml:10:21: transport.window: must be positive, got 0",
                    "t.yaml:14:11: boxes[0].node: unknown node 'z' (nodes: a, b)",
                    "t.yaml:17:20: boxes[0].params.rate: expected a positive number of tuples/s, "
                    "'max' or 'idle', got 'fast'",
                    "t.yaml:21:9: boxes[1].in: stream 'x' has no producer (no box lists it in "
                    "'out')"}));
  SpecResult<NetworkSpec> spec = parse_network("- a\n", "t.yaml");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().joined(), "t.yaml:1:1: expected a mapping, got a list");
  EXPECT_EQ((SpecErrors{{"a", "b"}}).joined(), "a\nb");
}

TEST(NetworkSpecErrors, MissingFileIsOneErrorNamingThePath) {
  SpecResult<NetworkSpec> spec = load_network("/nonexistent/boreal/net.yaml");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().messages,
            Errors{"/nonexistent/boreal/net.yaml: cannot read the file: No such file or "
                   "directory"});
}

TEST(NetworkSpec, OperatorBoxesRunAndDeriveTheirOutputSchemas) {
  const NetworkSpec spec = parse_ok(base_with({{18,
                                                "    in: u\n    params: {kind: count}\n"
                                                "  - name: f\n    type: filter\n"
                                                "    node: a\n    in: s\n    out: t\n"
                                                "    params: {predicate: \"seq > 3\"}\n"
                                                "  - {name: m, type: map, node: b, in: t, out: u,"
                                                " params: {fields: [{name: twice, expression:"
                                                " \"seq * 2\"}]}}"}}));
  EXPECT_TRUE(validate_runnable(spec));
  EXPECT_EQ(spec.find_stream("t")->tuple_schema->to_string(), "seq:i64,pad:str8");
  EXPECT_EQ(spec.find_stream("u")->tuple_schema->to_string(), "twice:i64");
  ASSERT_NE(spec.boxes[2].plan, nullptr);
  EXPECT_EQ(spec.boxes[2].plan->outputs.size(), 1u);
  EXPECT_EQ(topological_order(spec), (std::vector<std::size_t>{0, 2, 3, 1}));
}

TEST(NetworkSpec, IdleSourceNeedsADuration) {
  NetworkSpec spec = parse_ok(base_with({{14, "    schema: tick\n    params: {rate: idle}"}}));
  ASSERT_TRUE(spec.boxes[0].source->rate.has_value());
  EXPECT_EQ(*spec.boxes[0].source->rate, 0.0);
  SpecResult<void> runnable = validate_runnable(spec);
  ASSERT_FALSE(runnable);
  EXPECT_EQ(runnable.error().messages,
            Errors{"t.yaml:11:11: boxes[0].params.rate: an idle source needs a duration "
                   "(duration_s or --duration), or it never ends"});
  spec.boxes[0].source->duration = std::chrono::duration<double>(0.5);
  EXPECT_TRUE(validate_runnable(spec));
  const NetworkSpec timed =
      parse_ok(base_with({{14, "    schema: tick\n    params: {rate: idle, duration_s: 2}"}}));
  EXPECT_TRUE(validate_runnable(timed));
}

// ---- apply_overrides -------------------------------------------------------------------------

NetworkSpec demo() {
  SpecResult<NetworkSpec> loaded = load_network(BOREAL_EXAMPLES_DIR "/demo.yaml");
  EXPECT_TRUE(loaded) << loaded.error().joined();
  return loaded ? std::move(loaded).value() : NetworkSpec{};
}

// The demo with a second stream whose link overrides wait and window.
NetworkSpec demo_with_link() {
  return parse_ok(base_with({{18, "    in: s\nlinks: [{stream: s, wait: busy, window: 4}]"}}));
}

Errors override_errors(NetworkSpec& spec, const Overrides& overrides) {
  SpecResult<void> applied = apply_overrides(spec, overrides);
  EXPECT_FALSE(applied) << "unexpectedly accepted";
  return applied ? Errors{} : applied.error().messages;
}

TEST(ApplyOverrides, NoFlagsChangeNothing) {
  NetworkSpec spec = demo();
  ASSERT_TRUE(apply_overrides(spec, Overrides{}));
  EXPECT_EQ(spec.transport.wait.mode, transport::WaitMode::sleep);
  EXPECT_EQ(spec.boxes[0].source->rate, std::optional<double>(100000.0));
  EXPECT_EQ(spec.find_schema("tick")->tuple_bytes(), 64u);
}

TEST(ApplyOverrides, TransportFlagsOverrideDefaultsAndEveryLink) {
  NetworkSpec spec = demo_with_link();
  Overrides flags;
  flags.medium = "inproc";
  flags.wait = "adaptive";
  flags.latency_budget_us = 500;
  flags.spin_us = 0;
  flags.batch_bytes = 65536;
  flags.flush_us = 0;
  flags.window = 8;
  SpecResult<void> applied = apply_overrides(spec, flags);
  ASSERT_TRUE(applied) << applied.error().joined();
  for (const TransportSpec* t : {&spec.transport, &spec.streams[0].transport}) {
    EXPECT_EQ(t->medium, "inproc");
    EXPECT_EQ(t->wait.mode, transport::WaitMode::adaptive);
    EXPECT_EQ(t->wait.latency_budget, microseconds(500));
    EXPECT_EQ(t->wait.spin, microseconds(0));
    EXPECT_EQ(t->batch_bytes, 65536u);
    EXPECT_EQ(t->flush, microseconds(0));
    EXPECT_EQ(t->window, 8u);
  }
}

TEST(ApplyOverrides, FlushIsHalfTheBudgetUnlessGiven) {
  NetworkSpec spec = demo_with_link();
  EXPECT_EQ(spec.streams[0].transport.flush, microseconds(100));  // budget 200 µs
  Overrides flags;
  flags.latency_budget_us = 1000;
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.transport.flush, microseconds(500));
  EXPECT_EQ(spec.streams[0].transport.flush, microseconds(500));
  flags.flush_us = 50;
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.streams[0].transport.flush, microseconds(50));
  // Given in the file, it stays when only the budget changes.
  NetworkSpec fixed = parse_ok(after_nodes("transport: {flush_us: 80}"));
  Overrides budget;
  budget.latency_budget_us = 2000;
  ASSERT_TRUE(apply_overrides(fixed, budget));
  EXPECT_EQ(fixed.streams[0].transport.flush, microseconds(80));
  EXPECT_EQ(fixed.streams[0].transport.wait.latency_budget, microseconds(2000));
}

TEST(ApplyOverrides, UnsetFlagsKeepTheLinkOverride) {
  NetworkSpec spec = demo_with_link();
  Overrides flags;
  flags.window = 16;
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.streams[0].transport.window, 16u);
  EXPECT_EQ(spec.streams[0].transport.wait.mode, transport::WaitMode::busy);  // from the link
  EXPECT_EQ(spec.transport.wait.mode, transport::WaitMode::block);
}

TEST(ApplyOverrides, SourceFlagsApplyToEverySource) {
  NetworkSpec spec = demo();
  Overrides flags;
  flags.rate = "2500.5";
  flags.tuples = 10;
  flags.duration_s = 1.5;
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.boxes[0].source->rate, std::optional<double>(2500.5));
  EXPECT_EQ(spec.boxes[0].source->tuples, 10u);
  EXPECT_EQ(spec.boxes[0].source->duration.count(), 1.5);
  EXPECT_EQ(spec.boxes[0].source->seed, 1u);
  EXPECT_FALSE(spec.boxes[1].source.has_value());

  flags = Overrides{};
  flags.rate = "max";
  flags.tuples = 0;
  flags.duration_s = 0;
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.boxes[0].source->rate, std::nullopt);
  EXPECT_EQ(spec.boxes[0].source->tuples, 0u);
  EXPECT_EQ(spec.boxes[0].source->duration.count(), 0.0);
}

TEST(ApplyOverrides, EachBadFlagIsNamedInItsError) {
  NetworkSpec spec = demo();
  const auto one = [&](auto set) {
    Overrides flags;
    set(flags);
    return override_errors(spec, flags);
  };
  EXPECT_EQ(one([](Overrides& f) { f.medium = "udp"; }),
            Errors{"--medium: unknown medium 'udp' (valid: tcp, inproc, fabric-msg, fabric-rma)"});
  EXPECT_EQ(one([](Overrides& f) { f.connection = "shared"; }),
            Errors{"--connection: unknown connection 'shared' (valid: per-link, "
                   "per-thread-pair)"});
  EXPECT_EQ(one([](Overrides& f) { f.wait = "nap"; }),
            Errors{"--wait: unknown wait mode 'nap' (valid: busy, block, sleep, backoff, "
                   "adaptive)"});
  EXPECT_EQ(one([](Overrides& f) { f.latency_budget_us = 0; }),
            Errors{"--latency-budget: must be positive, got 0"});
  EXPECT_EQ(one([](Overrides& f) { f.latency_budget_us = 60'000'001; }),
            Errors{"--latency-budget: must be at most 60000000, got 60000001"});
  EXPECT_EQ(one([](Overrides& f) { f.spin_us = -1; }),
            Errors{"--spin-us: must not be negative, got -1"});
  EXPECT_EQ(one([](Overrides& f) { f.batch_bytes = 0; }),
            Errors{"--batch-bytes: must be positive, got 0"});
  EXPECT_EQ(one([](Overrides& f) { f.batch_bytes = 4294967296; }),
            Errors{"--batch-bytes: must be at most 4294967295, got 4294967296"});
  EXPECT_EQ(one([](Overrides& f) { f.batch_bytes = 32; }),
            Errors{"--batch-bytes: batch_bytes 32 cannot hold one tuple of stream 'ticks' (64 "
                   "bytes); give --batch-bytes 64 or more"});
  EXPECT_EQ(one([](Overrides& f) { f.flush_us = -5; }),
            Errors{"--flush-us: must not be negative, got -5"});
  EXPECT_EQ(one([](Overrides& f) { f.window = 0; }), Errors{"--window: must be positive, got 0"});
  EXPECT_EQ(one([](Overrides& f) { f.rate = "fast"; }),
            Errors{"--rate: expected a positive number of tuples/s, 'max' or 'idle', got 'fast'"});
  EXPECT_EQ(one([](Overrides& f) { f.rate = "0"; }),
            Errors{"--rate: expected a positive number of tuples/s, 'max' or 'idle', got '0'"});
  EXPECT_EQ(one([](Overrides& f) { f.rate = "-3"; }),
            Errors{"--rate: expected a positive number of tuples/s, 'max' or 'idle', got '-3'"});
  EXPECT_EQ(one([](Overrides& f) { f.rate = "inf"; }),
            Errors{"--rate: expected a positive number of tuples/s, 'max' or 'idle', got 'inf'"});
  EXPECT_EQ(one([](Overrides& f) { f.tuples = -1; }),
            Errors{"--tuples: must not be negative, got -1"});
  EXPECT_EQ(one([](Overrides& f) { f.duration_s = -1; }),
            Errors{"--duration: must not be negative, got -1"});
  EXPECT_EQ(one([](Overrides& f) { f.tuple_bytes = 0; }),
            Errors{"--tuple-bytes: must be positive, got 0"});
  EXPECT_EQ(one([](Overrides& f) { f.tuple_bytes = 100; }),
            Errors{"--tuple-bytes: must be a multiple of 8 (tuples are 8-byte aligned), got 100"});
}

TEST(ApplyOverrides, OnErrorTheSpecIsUnchangedAndEveryProblemIsListed) {
  NetworkSpec spec = demo_with_link();
  Overrides flags;
  flags.medium = "inproc";  // valid
  flags.wait = "nap";
  flags.window = 0;
  flags.rate = "7";  // valid
  flags.tuple_bytes = 8;
  EXPECT_EQ(override_errors(spec, flags),
            (Errors{"--wait: unknown wait mode 'nap' (valid: busy, block, sleep, backoff, "
                    "adaptive)",
                    "--window: must be positive, got 0",
                    "--tuple-bytes: schema 'tick' of source 'gen' needs at least 16 bytes (with "
                    "str1 for 'pad'), got 8"}));
  EXPECT_EQ(spec.transport.medium, "tcp");
  EXPECT_EQ(spec.streams[0].transport.medium, "tcp");
  EXPECT_EQ(spec.streams[0].transport.window, 4u);
  EXPECT_EQ(spec.boxes[0].source->rate, std::nullopt);
  EXPECT_EQ(spec.find_schema("tick")->to_string(), "seq:i64,pad:str8");
}

TEST(ApplyOverrides, TupleBytesResizesTheLastStrFieldOfEachSourceSchema) {
  NetworkSpec spec = demo();
  Overrides flags;
  flags.tuple_bytes = 128;
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.find_schema("tick")->to_string(), "seq:i64,ts:timestamp,key:i64,pad:str104");
  EXPECT_EQ(spec.find_schema("tick")->tuple_bytes(), 128u);
  flags.tuple_bytes = 32;  // the smallest: pad becomes str8
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.find_schema("tick")->to_string(), "seq:i64,ts:timestamp,key:i64,pad:str8");
  EXPECT_EQ(spec.find_schema("tick")->tuple_bytes(), 32u);
  flags.tuple_bytes = 24;
  EXPECT_EQ(override_errors(spec, flags),
            Errors{"--tuple-bytes: schema 'tick' of source 'gen' needs at least 32 bytes (with "
                   "str1 for 'pad'), got 24"});
  flags.tuple_bytes = 65504;
  EXPECT_EQ(override_errors(spec, flags),
            Errors{"--tuple-bytes: must be at most 65496 (the largest tuple, one frame's payload "
                   "on every medium), got 65504"});
  flags.tuple_bytes = 40000;  // resizable, but past the default batch
  EXPECT_EQ(override_errors(spec, flags),
            Errors{"--tuple-bytes: batch_bytes 32768 cannot hold one tuple of stream 'ticks' "
                   "(40000 bytes); give --batch-bytes 40000 or more"});
  EXPECT_EQ(spec.find_schema("tick")->tuple_bytes(), 32u);
  // Strings wider than the 4096 bytes they once stopped at.
  flags.tuple_bytes = 8192;
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.find_schema("tick")->to_string(), "seq:i64,ts:timestamp,key:i64,pad:str8168");
  flags.tuple_bytes = 65496;
  flags.batch_bytes = 65496;
  ASSERT_TRUE(apply_overrides(spec, flags));
  EXPECT_EQ(spec.find_schema("tick")->to_string(), "seq:i64,ts:timestamp,key:i64,pad:str65472");
  EXPECT_EQ(spec.find_schema("tick")->tuple_bytes(), 65496u);
  // resize_last_str() itself names the same limit.
  const auto beyond = resize_last_str(*spec.find_schema("tick"), 65504);
  ASSERT_FALSE(beyond);
  EXPECT_EQ(beyond.error().message,
            "holds at most 65496 bytes (the largest tuple, one frame's payload on every medium), "
            "got 65504");
}

TEST(ApplyOverrides, TupleBytesPicksTheWidestStrThatGivesExactlyThatSize) {
  // A field after the str: the str ends where the i32 can start 4-aligned without tail padding.
  NetworkSpec spec = parse_ok(base_with({{3, "  tick: [{a: i64}, {s: str3}, {b: i32}, {t: str2}, "
                                             "{c: i32}]"},
                                         {18, "    in: s\n    params: {kind: count}"}}));
  Overrides flags;
  flags.tuple_bytes = 40;
  ASSERT_TRUE(apply_overrides(spec, flags));
  // a 0..8, s 8..11, b 12..16, t 16..(16+w), c 4-aligned +4: 16+w <= 36 -> w = 20.
  EXPECT_EQ(spec.find_schema("tick")->to_string(), "a:i64,s:str3,b:i32,t:str20,c:i32");
  EXPECT_EQ(spec.find_schema("tick")->tuple_bytes(), 40u);
}

TEST(ApplyOverrides, TupleBytesNeedsAStrField) {
  NetworkSpec spec = parse_ok(base_with({{3, "  tick: [{seq: i64}, {key: i64}]"}}));
  Overrides flags;
  flags.tuple_bytes = 64;
  EXPECT_EQ(override_errors(spec, flags),
            Errors{"--tuple-bytes: schema 'tick' of source 'gen' has no str field to resize"});
  EXPECT_EQ(spec.find_schema("tick")->to_string(), "seq:i64,key:i64");
}

TEST(ApplyOverrides, TupleBytesThatOutgrowTheBatchBlameTheFlag) {
  NetworkSpec spec = demo();
  Overrides flags;
  flags.tuple_bytes = 4096;
  flags.batch_bytes = 1024;
  EXPECT_EQ(override_errors(spec, flags),
            Errors{"--batch-bytes: batch_bytes 1024 cannot hold one tuple of stream 'ticks' (4096 "
                   "bytes); give --batch-bytes 4096 or more"});
  spec.transport.batch_bytes = 2048;
  spec.streams[0].transport.batch_bytes = 2048;
  flags.batch_bytes.reset();
  EXPECT_EQ(override_errors(spec, flags),
            Errors{"--tuple-bytes: batch_bytes 2048 cannot hold one tuple of stream 'ticks' (4096 "
                   "bytes); give --batch-bytes 4096 or more"});
  EXPECT_EQ(spec.find_schema("tick")->tuple_bytes(), 64u);
}

}  // namespace
}  // namespace boreal::runtime

namespace boreal::runtime {
namespace {

TEST(FabricSpec, ProviderComesFromTheLinkThenTheAddressThenTheDefault) {
  // b's address names a provider; no medium is set anywhere, so s goes over fabric-msg.
  const NetworkSpec by_address =
      parse_ok(base_with({{8, "    address: \"fabric://sockets/127.0.0.1:7102\""}}));
  ASSERT_EQ(by_address.streams.size(), 1u);
  EXPECT_EQ(by_address.streams[0].transport.medium, "fabric-msg");
  EXPECT_EQ(by_address.streams[0].transport.provider, "");
  EXPECT_EQ(fabric_provider(by_address, by_address.streams[0]), "sockets");

  // A tcp:// address gives the default provider; the transport block's key wins over both.
  const NetworkSpec by_default = parse_ok(after_nodes("transport: {medium: fabric-rma}"));
  EXPECT_EQ(by_default.streams[0].transport.medium, "fabric-rma");
  EXPECT_EQ(fabric_provider(by_default, by_default.streams[0]), "tcp;ofi_rxm");
  const NetworkSpec by_key = parse_ok(base_with(
      {{8, "    address: \"fabric://sockets/127.0.0.1:7102\"\ntransport: {provider: shm}\n"
           "links: [{stream: s, provider: net}]"}}));
  EXPECT_EQ(fabric_provider(by_key, by_key.streams[0]), "net");

  // A medium named in the file wins over the address's scheme.
  const NetworkSpec named = parse_ok(base_with(
      {{8, "    address: \"fabric://sockets/127.0.0.1:7102\"\ntransport: {medium: tcp}"}}));
  EXPECT_EQ(named.streams[0].transport.medium, "tcp");
  const NetworkSpec per_link =
      parse_ok(base_with({{8,
                           "    address: \"fabric://sockets/127.0.0.1:7102\"\nlinks: [{stream: s, "
                           "medium: fabric-rma}]"}}));
  EXPECT_EQ(per_link.streams[0].transport.medium, "fabric-rma");
}

TEST(FabricSpec, TheFabricEndpointTakesTheNextPortOnlyBesideATcpListener) {
  const NetworkSpec fabric_only = parse_ok(after_nodes("transport: {medium: fabric-msg}"));
  EXPECT_EQ(fabric_listen_port(fabric_only, fabric_only.nodes[1]), 7102);
  const NetworkSpec tcp_too = parse_ok(base_with(
      {{3, "  tick: [{seq: i64}, {pad: str8}]"},
       {18, "    in: s\n  - {name: gen2, type: source, node: a, out: t, schema: tick}\n"
            "  - {name: snk2, type: sink, node: b, in: t}\n"
            "links: [{stream: t, medium: fabric-msg}]"}}));
  ASSERT_EQ(tcp_too.streams.size(), 2u);
  EXPECT_EQ(tcp_too.streams[0].transport.medium, "tcp");
  EXPECT_EQ(tcp_too.streams[1].transport.medium, "fabric-msg");
  EXPECT_EQ(fabric_listen_port(tcp_too, tcp_too.nodes[1]), 7103);
}

TEST(FabricSpec, BadProviderAndOutputAreLocated) {
  EXPECT_EQ(errors_of(after_nodes("transport: {provider: \"\"}")),
            Errors{"t.yaml:9:23: transport.provider: expected a string, got ''"});
  EXPECT_EQ(errors_of(after_nodes("transport: {provider: \"tcp/rxm\"}")),
            Errors{"t.yaml:9:23: transport.provider: provider 'tcp/rxm' holds '/' or white "
                   "space (expected a name as `fi_info -l` prints it)"});
  EXPECT_EQ(errors_of(base_with({{18, "    in: s\n    params: {output: \"\"}"}})),
            Errors{"t.yaml:19:22: boxes[1].params.output: expected a string, got ''"});
  const NetworkSpec spec = parse_ok(base_with({{18, "    in: s\n    params: {output: rows.csv}"}}));
  EXPECT_EQ(spec.boxes[1].sink->output, "rows.csv");
}

TEST(FabricSpec, ProviderFlagSetsEveryLinkAndNeedsAFabricMedium) {
  NetworkSpec spec = parse_ok(base_with());
  Overrides alone;
  alone.provider = "sockets";
  SpecResult<void> refused = apply_overrides(spec, alone);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().messages,
            Errors{"--provider: no stream between nodes uses a fabric medium (add --medium "
                   "fabric-msg or --medium fabric-rma)"});
  EXPECT_EQ(spec.streams[0].transport.provider, "");

  Overrides both;
  both.medium = "fabric-rma";
  both.provider = "sockets";
  ASSERT_TRUE(apply_overrides(spec, both));
  EXPECT_EQ(spec.streams[0].transport.medium, "fabric-rma");
  EXPECT_EQ(fabric_provider(spec, spec.streams[0]), "sockets");

  Overrides empty;
  empty.provider = "";
  SpecResult<void> bad = apply_overrides(spec, empty);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().messages,
            Errors{"--provider: empty provider (expected a libfabric provider such as "
                   "tcp;ofi_rxm, sockets, shm, verbs or efa)"});
}

}  // namespace
}  // namespace boreal::runtime
