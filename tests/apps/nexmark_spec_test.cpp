// The nexmark source in network files: its outputs, their fixed schemas, its parameters and
// every mistake a file can make with it, each reported where it is written.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spec/network_spec.hpp"
#include "spec_test_support.hpp"

namespace boreal::test {
namespace {

using runtime::NetworkSpec;
using runtime::SourceKind;

const std::vector<std::string> kBase = {
    "name: nx",                                                        // 1
    "nodes:",                                                          // 2
    "  - {name: a, address: \"tcp://127.0.0.1:7001\"}",                // 3
    "  - {name: b, address: \"tcp://127.0.0.1:7002\"}",                // 4
    "boxes:",                                                          // 5
    "  - name: gen",                                                   // 6
    "    type: source",                                                // 7
    "    node: a",                                                     // 8
    "    out: [people, sales, bids]",                                  // 9
    "    params: {kind: nexmark, events: 1000, rate: 5000, gap_us: 20, max_delay_ms: 3}",  // 10
    "  - {name: p, type: sink, node: b, in: people, params: {kind: count}}",   // 11
    "  - {name: s, type: sink, node: b, in: sales, params: {kind: count}}",    // 12
    "  - {name: x, type: sink, node: b, in: bids, params: {kind: count}}",     // 13
};

NetworkSpec parsed(const std::string& text) {
  auto spec = runtime::parse_network(text, "t.yaml");
  EXPECT_TRUE(spec) << (spec ? "" : spec.error().messages.front());
  return std::move(spec).value();
}

TEST(NexmarkSpec, ThreeOutputsArePersonsAuctionsAndBids) {
  const NetworkSpec spec = parsed(lines_with(kBase, {}));
  const runtime::SourceParams& source = *spec.find_box("gen")->source;
  EXPECT_EQ(source.kind, SourceKind::nexmark);
  EXPECT_EQ(source.streams, (std::vector<ops::NexmarkStream>{ops::NexmarkStream::persons,
                                                             ops::NexmarkStream::auctions,
                                                             ops::NexmarkStream::bids}));
  EXPECT_EQ(source.events, 1000u);
  EXPECT_EQ(source.rate, 5000.0);
  EXPECT_EQ(source.gap_us, 20u);
  EXPECT_EQ(source.max_delay_ms, 3u);
  EXPECT_EQ(spec.find_stream("people")->tuple_schema->to_string(),
            ops::nexmark_schema(ops::NexmarkStream::persons).to_string());
  EXPECT_EQ(spec.find_stream("sales")->tuple_schema->to_string(),
            ops::nexmark_schema(ops::NexmarkStream::auctions).to_string());
  EXPECT_EQ(spec.find_stream("bids")->tuple_schema->to_string(),
            "auction:i64,bidder:i64,price:i64,date_time:timestamp");
}

TEST(NexmarkSpec, OneOutputCarriesEveryEventUnlessStreamsSaysOtherwise) {
  const std::string one = lines_with(
      kBase, {{9, "    out: all"},
              {11, ""},
              {12, ""},
              {13, "  - {name: x, type: sink, node: b, in: all, params: {kind: count}}"}});
  EXPECT_EQ(parsed(one).find_stream("all")->tuple_schema->field(0).name, "kind");
  const std::string bids = lines_with(
      kBase, {{9, "    out: all"},
              {10, "    params: {kind: nexmark, streams: [bids]}"},
              {11, ""},
              {12, ""},
              {13, "  - {name: x, type: sink, node: b, in: all, params: {kind: count}}"}});
  const NetworkSpec spec = parsed(bids);
  EXPECT_EQ(spec.find_stream("all")->tuple_schema->to_string(),
            "auction:i64,bidder:i64,price:i64,date_time:timestamp");
  EXPECT_EQ(spec.find_box("gen")->source->events, 0u);  // no limit
  EXPECT_EQ(spec.find_box("gen")->source->gap_us, 10u);
}

TEST(NexmarkSpec, StampAddsTheScheduledTimeToEveryStream) {
  const NetworkSpec spec = parsed(lines_with(
      kBase, {{10, "    params: {kind: nexmark, events: 1000, stamp: true}"}}));
  EXPECT_TRUE(spec.find_box("gen")->source->stamp);
  EXPECT_EQ(spec.find_stream("bids")->tuple_schema->to_string(),
            "auction:i64,bidder:i64,price:i64,date_time:timestamp,ts:timestamp");
  EXPECT_EQ(spec_errors_of(lines_with(kBase, {{10, "    params: {kind: nexmark, stamp: yes}"}})),
            (std::vector<std::string>{
                "t.yaml:10:36: boxes[0].params.stamp: expected true or false, got 'yes'"}));
}

TEST(NexmarkSpec, MistakesAreReportedWhereTheyAreWritten) {
  EXPECT_EQ(spec_errors_of(lines_with(kBase, {{8, "    node: a\n    schema: tick"}})),
            (std::vector<std::string>{
                "t.yaml:9:13: boxes[0].schema: a nexmark source's streams have fixed schemas "
                "(docs/nexmark.md); remove 'schema'"}));
  EXPECT_EQ(spec_errors_of(
                lines_with(kBase, {{10, "    params: {kind: nexmark, streams: [bids, person]}"}})),
            (std::vector<std::string>{
                "t.yaml:10:45: boxes[0].params.streams[1]: unknown nexmark stream 'person' "
                "(valid: persons, auctions, bids, events)"}));
  EXPECT_EQ(
      spec_errors_of(lines_with(kBase, {{10, "    params: {kind: nexmark, streams: [bids]}"}})),
      (std::vector<std::string>{
          "t.yaml:10:38: boxes[0].params.streams: names 1 stream for 3 outputs in 'out'"}));
  EXPECT_EQ(
      spec_errors_of(
          lines_with(kBase, {{10, "    params: {kind: nexmark, tuples: 5, keys: 3, gap_us: 0}"}})),
      (std::vector<std::string>{
          "t.yaml:10:37: boxes[0].params.tuples: a nexmark source counts events: use 'events'",
          "t.yaml:10:46: boxes[0].params.keys: 'keys' is for a generator source, not kind nexmark",
          "t.yaml:10:57: boxes[0].params.gap_us: must be positive, got 0"}));
  EXPECT_EQ(spec_errors_of(lines_with(kBase, {{9, "    out: [people, sales]"}, {13, ""}})),
            (std::vector<std::string>{
                "t.yaml:10:13: boxes[0].params: missing key 'streams': a nexmark source with two "
                "outputs names the kind of each (persons, auctions, bids or events)"}));
  EXPECT_EQ(spec_errors_of(lines_with(kBase, {{10, "    params: {kind: generator, gap_us: 4}"}})),
            (std::vector<std::string>{
                "t.yaml:6:5: boxes[0]: missing required key 'schema' (a source names its output's "
                "schema)",
                "t.yaml:9:10: boxes[0].out: a source has exactly one output stream, got 3",
                "t.yaml:10:39: boxes[0].params.gap_us: 'gap_us' is for a nexmark source (kind: "
                "nexmark)"}));
}

}  // namespace
}  // namespace boreal::test
