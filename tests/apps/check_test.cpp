// What `boreal check` reports: one test per kind of problem, each asserting the whole message
// ("file:line:col: path: what") that parse_network() gives for a small two-node network broken
// in one place, then the command itself: a broken file exits 2 with the same lines on stderr,
// a valid one exits 0 and prints its plan.
#include "spec/network_spec.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "apps/spec_test_support.hpp"
#include "runtime/node_graph.hpp"

#include "apps/app_test_support.hpp"

namespace boreal::runtime {
namespace {

using Errors = std::vector<std::string>;

// A valid network: a source and a filter on node a, a map and a sink on node b. The sink is
// written before the map that feeds it, so the plan's arrow order differs from the file's.
// Tests replace numbered lines (1-based) to break one thing; every expected line:col below can
// be read off this listing.
const std::vector<std::string> kBase = {
    "name: t",                                                          // 1
    "schemas:",                                                         // 2
    "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str8}]",   // 3
    "nodes:",                                                           // 4
    "  - {name: a, address: \"tcp://127.0.0.1:7101\"}",                 // 5
    "  - {name: b, address: \"tcp://127.0.0.1:7102\"}",                 // 6
    "transport: {wait: sleep, window: 8}",                              // 7
    "boxes:",                                                           // 8
    "  - name: gen",                                                    // 9
    "    type: source",                                                 // 10
    "    node: a",                                                      // 11
    "    out: ticks",                                                   // 12
    "    schema: tick",                                                 // 13
    "    params: {rate: 1000, tuples: 10}",                             // 14
    "  - name: keep",                                                   // 15
    "    type: filter",                                                 // 16
    "    node: a",                                                      // 17
    "    in: ticks",                                                    // 18
    "    out: kept",                                                    // 19
    "    params: {predicate: \"key > 500\"}",                           // 20
    "  - name: out",                                                    // 21
    "    type: sink",                                                   // 22
    "    node: b",                                                      // 23
    "    in: doubled",                                                  // 24
    "  - name: twice",                                                  // 25
    "    type: map",                                                    // 26
    "    node: b",                                                      // 27
    "    in: kept",                                                     // 28
    "    out: doubled",                                                 // 29
    "    params:",                                                      // 30
    "      fields: [{name: seq, expression: seq}, {name: k2, expression: \"key * 2\"}]",  // 31
};

// kBase with lines replaced (a replacement may hold several lines, or be empty to drop one).
std::string base_with(const std::map<int, std::string>& changes = {}) {
  return test::lines_with(kBase, changes);
}

// kBase with `lines` appended (more boxes, or a links section after the boxes), from line 32.
std::string base_plus(const std::string& lines, const std::map<int, std::string>& changes = {}) {
  return base_with(changes) + lines + "\n";
}

Errors errors_of(const std::string& text) { return test::spec_errors_of(text); }

TEST(CheckErrors, TheBaseNetworkIsValid) {
  SpecResult<NetworkSpec> spec = parse_network(base_with(), "t.yaml");
  ASSERT_TRUE(spec) << spec.error().joined();
  EXPECT_EQ(spec.value().find_stream("doubled")->tuple_schema->to_string(), "seq:i64,k2:i64");
}

TEST(CheckErrors, UnknownBoxTypeListsTheKnownOnes) {
  // The filter's output has no schema then, and nothing downstream repeats the problem.
  EXPECT_EQ(errors_of(base_with({{16, "    type: filtre"}})),
            Errors{"t.yaml:16:11: boxes[1].type: unknown box type 'filtre' (valid: source, sink, "
                   "filter, map, union, aggregate, join, bsort, resample, split, argmax)"});
}

TEST(CheckErrors, UnknownOperatorParamListsTheValidOnes) {
  EXPECT_EQ(errors_of(base_with({{20, "    params: {predicate: \"key > 500\", limit: 3}"}})),
            Errors{"t.yaml:20:38: boxes[1].params.limit: unknown key (valid: predicate, "
                   "emit_rejected)"});
  EXPECT_EQ(errors_of(base_with({{31, "      fields: [{name: seq, expression: seq}]\n"
                                      "      keep_all: true"}})),
            Errors{"t.yaml:32:7: boxes[3].params.keep_all: unknown key (valid: fields)"});
  // Inside a map field's mapping: that mapping's keys.
  EXPECT_EQ(errors_of(base_with({{31, "      fields: [{name: seq, expr: seq}]"}})),
            (Errors{"t.yaml:31:16: boxes[3].params.fields[0]: missing required key 'expression'",
                    "t.yaml:31:28: boxes[3].params.fields[0].expr: unknown key (valid: name, "
                    "expression, type)"}));
}

TEST(CheckErrors, MissingRequiredParam) {
  // Written params without the key: at the params mapping.
  EXPECT_EQ(errors_of(base_with({{20, "    params: {emit_rejected: false}"}})),
            Errors{"t.yaml:20:13: boxes[1].params: missing required key 'predicate'"});
  // No params at all: at the box, with the path of the params it lacks.
  EXPECT_EQ(errors_of(base_with({{20, ""}})),
            Errors{"t.yaml:15:5: boxes[1].params: missing required key 'predicate'"});
  EXPECT_EQ(errors_of(base_with({{30, ""}, {31, ""}})),
            Errors{"t.yaml:25:5: boxes[3].params: missing required key 'fields'"});
}

TEST(CheckErrors, BadExpressionPointsAtTheColumnInsideIt) {
  // A plain scalar: "key > > 3" starts at file col 18, its col 7 (the second '>') is col 24.
  EXPECT_EQ(errors_of(base_with({{20, "    params:\n      predicate: key > > 3"}})),
            Errors{"t.yaml:21:24: boxes[1].params.predicate: col 7: expected a value after '>', "
                   "got '>'"});
  // Quoted: the scalar's mark is the quote at col 25, so its col 7 is file col 32.
  EXPECT_EQ(errors_of(base_with({{20, "    params: {predicate: \"key > > 3\"}"}})),
            Errors{"t.yaml:20:32: boxes[1].params.predicate: col 7: expected a value after '>', "
                   "got '>'"});
  // A map field's expression: the quote is at col 69; col 7 is just past the end of "key * ".
  EXPECT_EQ(errors_of(base_with({{31, "      fields: [{name: seq, expression: seq}, "
                                      "{name: k2, expression: \"key * \"}]"}})),
            Errors{"t.yaml:31:76: boxes[3].params.fields[1].expression: col 7: expected a value "
                   "after '*', got end of expression"});
}

TEST(CheckErrors, UnknownFieldInAPredicate) {
  EXPECT_EQ(errors_of(base_with({{20, "    params: {predicate: \"key > 500 and prise < 3\"}"}})),
            Errors{"t.yaml:20:40: boxes[1].params.predicate: col 15: unknown field 'prise' "
                   "(fields: seq, ts, key, pad)"});
  // A field the map dropped is unknown downstream of it.
  EXPECT_EQ(errors_of(base_plus("  - {name: late, type: filter, node: b, in: doubled, out: d2, "
                                "params: {predicate: \"key > 1\"}}\n"
                                "  - {name: out2, type: sink, node: b, in: d2, "
                                "params: {kind: count}}")),
            Errors{"t.yaml:32:84: boxes[4].params.predicate: col 1: unknown field 'key' (fields: "
                   "seq, k2)"});
}

TEST(CheckErrors, StreamConsumedButNeverProduced) {
  EXPECT_EQ(errors_of(base_with({{28, "    in: kpet"}})),
            (Errors{"t.yaml:28:9: boxes[3].in: stream 'kpet' has no producer (no box lists it in "
                    "'out')"}));
}

TEST(CheckErrors, StreamProducedTwice) {
  EXPECT_EQ(errors_of(base_plus("  - {name: gen2, type: source, node: b, out: kept, "
                                "schema: tick}")),
            Errors{"t.yaml:32:46: boxes[4].out: stream 'kept' already has a producer, box 'keep' "
                   "(line 19)"});
}

TEST(CheckErrors, SchemaThatDiffersAcrossAnArrow) {
  const std::string schemas =
      "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str8}]\n"
      "  pair: [{seq: i64}, {k2: i32}]";
  // A sink's `schema`: what it expects to receive.
  EXPECT_EQ(errors_of(base_with({{3, schemas}, {24, "    in: doubled\n    schema: pair"}})),
            Errors{"t.yaml:26:13: boxes[2].schema: schema 'pair' (seq:i64,k2:i32) differs from "
                   "the schema of input stream 'doubled' (seq:i64,k2:i64)"});
  // An operator's `schema`: what it emits.
  EXPECT_EQ(errors_of(base_with({{3, schemas}, {29, "    out: doubled\n    schema: tick"}})),
            Errors{"t.yaml:31:13: boxes[3].schema: schema 'tick' (seq:i64,ts:timestamp,key:i64,"
                   "pad:str8) differs from what the box emits on 'doubled' (seq:i64,k2:i64)"});
  // The same fields under another name agree.
  EXPECT_TRUE(parse_network(base_with({{3, "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, "
                                           "{pad: str8}]\n  pair: [{seq: i64}, {k2: i64}]"},
                                       {24, "    in: doubled\n    schema: pair"}}),
                            "t.yaml"));
}

TEST(CheckErrors, UnknownNode) {
  EXPECT_EQ(errors_of(base_with({{27, "    node: c"}})),
            Errors{"t.yaml:27:11: boxes[3].node: unknown node 'c' (nodes: a, b)"});
}

TEST(CheckErrors, CycleNamesTheRing) {
  // Two filters feed each other; the sink reads what goes round.
  EXPECT_EQ(errors_of(base_plus("  - {name: f1, type: filter, node: b, in: back, out: round, "
                                "params: {predicate: \"seq > 0\"}}\n"
                                "  - {name: f2, type: filter, node: b, in: round, out: back, "
                                "params: {predicate: \"seq > 1\"}}\n"
                                "  - {name: see, type: sink, node: b, in: round, "
                                "params: {kind: count}}")),
            Errors{"t.yaml:32:5: boxes[4]: box 'f1' is on a cycle: f1 -> f2 -> f1 (a query "
                   "network's arrows must not loop)"});
}

TEST(CheckErrors, LinksOfOneNodeThatDisagreeOnTheirWait) {
  // The sink moves to node a, so node a sends `kept` and receives `doubled`: two links of its
  // one I/O thread, and node b runs the other ends of the same two. `doubled` busy-waits while
  // `kept` sleeps (the transport block's wait): reported once, for the first node, at the links
  // entry.
  const std::string busy =
      "t.yaml:33:14: links[0].stream: stream 'doubled' waits busy, spin_us 20, but stream 'kept' "
      "waits sleep, spin_us 20, and both are links of node '";
  const std::string cure =
      "', whose links share one I/O thread: give them the same wait and spin_us, or put their "
      "boxes on different threads (`threads` on the node, `thread` on the box)";
  EXPECT_EQ(errors_of(base_plus("links:\n  - {stream: doubled, wait: busy}",
                                {{23, "    node: a"}})),
            (Errors{busy + "a" + cure}));
  // The spin alone differs: reported at the later stream's entry.
  const std::string spin =
      "t.yaml:34:14: links[1].stream: stream 'doubled' waits sleep, spin_us 7, but stream 'kept' "
      "waits sleep, spin_us 5, and both are links of node '";
  EXPECT_EQ(errors_of(base_plus("links:\n  - {stream: kept, spin_us: 5}\n"
                                "  - {stream: doubled, spin_us: 7}",
                                {{23, "    node: a"}})),
            (Errors{spin + "a" + cure}));
  // Latency budgets may differ (the thread waits within the smallest).
  EXPECT_TRUE(parse_network(base_plus("links:\n  - {stream: doubled, latency_budget_us: 50}",
                                      {{23, "    node: a"}}),
                            "t.yaml"));
}

TEST(CheckErrors, ACsvSinkNeedsItsOutputFile) {
  EXPECT_EQ(errors_of(base_with({{24, "    in: doubled\n    params: {kind: csv}"}})),
            Errors{"t.yaml:25:13: boxes[2].params: a csv sink needs 'output' (the CSV file it "
                   "writes)"});
}

TEST(CheckErrors, JoinWithOneInput) {
  EXPECT_EQ(errors_of(base_plus("  - name: j\n    type: join\n    node: b\n    in: kept\n"
                                "    out: joined\n"
                                "    params: {left_time: ts, right_time: ts, window: 1ms}\n"
                                "  - {name: js, type: sink, node: b, in: joined, "
                                "params: {kind: count}}")),
            Errors{"t.yaml:35:9: boxes[4].in: a join box has exactly 2 input streams, got 1"});
  // Without an `in` at all.
  EXPECT_EQ(errors_of(base_plus("  - {name: j, type: join, node: b, out: joined, "
                                "params: {left_time: ts, right_time: ts, window: 1ms}}")),
            Errors{"t.yaml:32:5: boxes[4]: a join box has exactly 2 input streams, got 0 (no "
                   "'in' key)"});
}

TEST(CheckErrors, SplitWhoseOutListsADifferentNumberOfStreams) {
  EXPECT_EQ(errors_of(base_plus("  - {name: sp, type: split, node: b, in: kept, out: [p0, p1], "
                                "params: {key_fields: key, outputs: 3}}")),
            Errors{"t.yaml:32:53: boxes[4].out: this split box has 3 outputs, but 'out' lists 2 "
                   "streams"});
  // The default is two outputs.
  EXPECT_EQ(errors_of(base_plus("  - {name: sp, type: split, node: b, in: kept, out: p0, "
                                "params: {key_fields: key}}")),
            Errors{"t.yaml:32:53: boxes[4].out: this split box has 2 outputs, but 'out' lists 1 "
                   "stream"});
}

TEST(CheckErrors, CheckSinkNeedsAnI64Seq) {
  // The map drops seq: the default (check) sink cannot check anything. Without params, at the box.
  EXPECT_EQ(errors_of(base_with({{31, "      fields: [{name: k2, expression: \"key * 2\"}]"}})),
            Errors{"t.yaml:21:5: boxes[2]: a check sink needs an i64 field 'seq' (the generator's "
                   "sequence number); stream 'doubled' carries k2:i64 (use kind count, discard or "
                   "latency)"});
  // seq of another type, with params: at the params.
  EXPECT_EQ(errors_of(base_with({{24, "    in: doubled\n    params: {kind: check}"},
                                 {31, "      fields: [{name: seq, expression: seq, type: i32}]"}})),
            Errors{"t.yaml:25:13: boxes[2].params: a check sink needs an i64 field 'seq' (the "
                   "generator's sequence number); stream 'doubled' carries seq:i32 (use kind "
                   "count, discard or latency)"});
  // Another kind is fine.
  EXPECT_TRUE(parse_network(base_with({{24, "    in: doubled\n    params: {kind: count}"},
                                       {31, "      fields: [{name: k2, expression: key}]"}}),
                            "t.yaml"));
}

TEST(CheckErrors, EveryProblemIsReportedInFileOrder) {
  // Found by different passes, in this order: the rate while reading the boxes, the node and
  // the stream in the cross-checks, the map's field while deriving schemas. Reported by line.
  EXPECT_EQ(errors_of(base_with({{11, "    node: z"},
                                 {14, "    params: {rate: fast, tuples: 10}"},
                                 {24, "    in: doubld"},
                                 {31, "      fields: [{name: seq, expression: \"sqe\"}]"}})),
            (Errors{"t.yaml:11:11: boxes[0].node: unknown node 'z' (nodes: a, b)",
                    "t.yaml:14:20: boxes[0].params.rate: expected a positive number of tuples/s, "
                    "'max' or 'idle', got 'fast'",
                    "t.yaml:24:9: boxes[2].in: stream 'doubld' has no producer (no box lists it "
                    "in 'out')",
                    "t.yaml:31:41: boxes[3].params.fields[0].expression: col 1: unknown field "
                    "'sqe' (fields: seq, ts, key, pad)"}));
  // A box whose params failed derives no output schema, so nothing downstream of it is
  // checked (or reported) against a guess: the map's bad field goes unmentioned here.
  EXPECT_EQ(errors_of(base_with({{20, "    params: {predicate: \"key > 500\", limit: 3}"},
                                 {31, "      fields: [{name: seq, expression: \"sqe\"}]"}})),
            Errors{"t.yaml:20:38: boxes[1].params.limit: unknown key (valid: predicate, "
                   "emit_rejected)"});
}

// ---- the command ----

using boreal::test::TempDir;

struct Command {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `boreal check FILE`, its stdout and stderr apart.
Command check(const TempDir& dir, const std::string& file, const std::string& flags = "") {
  const std::string out_path = dir.file("stdout.txt");
  const std::string err_path = dir.file("stderr.txt");
  // run() sends the command's stderr to its pipe, so the redirections go inside a subshell.
  const auto ran = boreal::test::run("(" + std::string(BOREAL_BIN) + " check " + file + flags +
                                     " >" + out_path + " 2>" + err_path + ")");
  return {ran.status, boreal::test::read_file(out_path), boreal::test::read_file(err_path)};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(CheckCommand, ABrokenFileExits2WithEveryProblemOnStderr) {
  TempDir dir;
  const std::string text = base_with({{11, "    node: z"},
                                      {20, "    params: {predicate: \"key > > 3\"}"},
                                      {28, "    in: kpet"}});
  const std::string file = dir.file("net.yaml", text);
  const Command ran = check(dir, file);
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.out, "");
  const Errors expected = {
      file + ":11:11: boxes[0].node: unknown node 'z' (nodes: a, b)",
      file + ":20:32: boxes[1].params.predicate: col 7: expected a value after '>', got '>'",
      file + ":28:9: boxes[3].in: stream 'kpet' has no producer (no box lists it in 'out')"};
  EXPECT_EQ(lines_of(ran.err), expected);
  // The same lines parse_network() gives, the file's path as given standing for its name.
  SpecResult<NetworkSpec> parsed = parse_network(text, file);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().messages, expected);
}

TEST(CheckCommand, OneProblemKindThroughTheCommand) {
  TempDir dir;
  const std::string file = dir.file(
      "cycle.yaml", base_plus("  - {name: f1, type: filter, node: b, in: back, out: round, "
                              "params: {predicate: \"seq > 0\"}}\n"
                              "  - {name: f2, type: filter, node: b, in: round, out: back, "
                              "params: {predicate: \"seq > 1\"}}"));
  const Command ran = check(dir, file);
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(lines_of(ran.err),
            Errors{file + ":32:5: boxes[4]: box 'f1' is on a cycle: f1 -> f2 -> f1 (a query "
                          "network's arrows must not loop)"});
}

TEST(CheckCommand, AMissingFileExits2NamingIt) {
  TempDir dir;
  const std::string file = dir.file("absent.yaml");
  const Command ran = check(dir, file);
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(ran.err, file + ": cannot read the file: No such file or directory\n");
}

TEST(CheckCommand, AValidFileExits0AndPrintsItsPlan) {
  TempDir dir;
  const std::string file = dir.file("net.yaml", base_with());
  const Command ran = check(dir, file);
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ran.err, "");
  // Per node its threads; per thread its wait (on the receiving end the budget less the
  // sender's 100 us flush), its links and its boxes in arrow order (the map before the sink
  // it feeds, though the file lists the sink first); the one stream that crosses nodes as a
  // link; every stream's schema, named or derived.
  EXPECT_EQ(lines_of(ran.out),
            (std::vector<std::string>{
                "network 't' (" + file + "): 2 nodes, 4 boxes, 3 streams",
                "node a (tcp://127.0.0.1:7101): 1 I/O thread",
                "  thread 0: wait sleep, budget 200 us, links kept",
                "    gen (source: generator, 1000 tuples/s, 10 tuples, seed 1): - -> ticks",
                "    keep (filter): ticks -> kept",
                "node b (tcp://127.0.0.1:7102): 1 I/O thread",
                "  thread 0: wait sleep, budget 100 us, links kept",
                "    twice (map): kept -> doubled",
                "    out (sink: check): doubled -> -",
                "links",
                "  kept: a -> b over tcp, wait sleep, budget 200 us, flush 100 us, frames of 32768 "
                "bytes, window 8",
                "streams",
                "  ticks (gen -> keep): seq:i64,ts:timestamp,key:i64,pad:str8 (32 bytes, schema "
                "tick)",
                "  kept (keep -> twice): seq:i64,ts:timestamp,key:i64,pad:str8 (32 bytes, derived)",
                "  doubled (twice -> out): seq:i64,k2:i64 (16 bytes, derived)",
            }));
}

TEST(CheckCommand, ALinkOnASharedConnectionSaysSo) {
  TempDir dir;
  const std::string file = dir.file("net.yaml", base_with());
  const Command ran = check(dir, file, " --connection per-thread-pair");
  EXPECT_EQ(ran.status, 0) << ran.err;
  const auto lines = lines_of(ran.out);
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "  kept: a -> b over tcp, wait sleep, budget 200 us, flush 100 us, frames "
                      "of 32768 bytes, window 8, connection per-thread-pair"),
            lines.end())
      << ran.out;
}

}  // namespace
}  // namespace boreal::runtime

namespace boreal::runtime {
namespace {

TEST(OutputBatches, WideTuplesGetFewerRowsPerBoxOutputBatch) {
  // kBase's filter emits 32-byte tuples: the library's 1024 rows. The map's output is 16
  // bytes: 1024 too. With an 8000-byte pad, the filter's batches hold 8 rows (64 KiB).
  const auto rows_of = [](const std::string& yaml, std::string_view box) {
    SpecResult<NetworkSpec> spec = parse_network(yaml, "t.yaml");
    EXPECT_TRUE(spec) << (spec ? "" : spec.error().joined());
    return spec ? output_batch_rows(spec.value(), *spec.value().find_box(box)) : 0;
  };
  EXPECT_EQ(rows_of(base_with(), "keep"), 1024u);
  EXPECT_EQ(rows_of(base_with(), "twice"), 1024u);
  const std::string wide =
      base_with({{3, "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str8000}]"},
                 {7, "transport: {wait: sleep, window: 8, batch_bytes: 65503}"}});
  EXPECT_EQ(rows_of(wide, "keep"), 65536u / 8024u);
  const std::string widest =
      base_with({{3, "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str65472}]"},
                 {7, "transport: {wait: sleep, window: 8, batch_bytes: 65503}"}});
  EXPECT_EQ(rows_of(widest, "keep"), 1u);
}

}  // namespace
}  // namespace boreal::runtime
