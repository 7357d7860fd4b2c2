// Back-pressure end to end, through two relay nodes: a source at full speed on node a, a filter
// on node b that keeps every row, a map on node c that copies every field, and a slow check
// sink on node d. Credit (window frames per link) must hold every hop back to the sink's pace:
// nothing lost, reordered or duplicated, the source throttled to what the sink takes, and no
// node buffering more than its links' credit allows.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apps/app_test_support.hpp"

namespace {

using nlohmann::json;
using namespace boreal::test;

constexpr std::uint64_t kTuples = 40000;
constexpr std::uint64_t kTupleBytes = 64;     // the schema below: 8 + 8 + 8 + 40
constexpr std::uint64_t kBatchBytes = 4096;   // 64 tuples per frame
constexpr std::uint64_t kWindow = 4;          // frames of credit per link
constexpr std::uint64_t kSlowUsPerFrame = 2000;

const std::string kNetwork =
    "name: backpressure\n"
    "schemas:\n"
    "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]\n"
    "nodes:\n"
    "  - {name: a, address: \"tcp://127.0.0.1:7401\"}\n"
    "  - {name: b, address: \"tcp://127.0.0.1:7402\"}\n"
    "  - {name: c, address: \"tcp://127.0.0.1:7403\"}\n"
    "  - {name: d, address: \"tcp://127.0.0.1:7404\"}\n"
    "transport: {medium: tcp, wait: block, batch_bytes: " + std::to_string(kBatchBytes) +
    ", window: " + std::to_string(kWindow) + "}\n"
    "boxes:\n"
    "  - {name: gen, type: source, node: a, out: ticks, schema: tick,\n"
    "     params: {rate: max, tuples: " + std::to_string(kTuples) + "}}\n"
    "  - {name: all, type: filter, node: b, in: ticks, out: kept,\n"
    "     params: {predicate: \"seq >= 0\"}}\n"
    "  - name: copy\n"
    "    type: map\n"
    "    node: c\n"
    "    in: kept\n"
    "    out: copied\n"
    "    params:\n"
    "      fields:\n"
    "        - {name: seq, expression: seq}\n"
    "        - {name: ts, expression: ts, type: timestamp}\n"
    "        - {name: key, expression: key}\n"
    "        - {name: pad, expression: pad}\n"
    "  - {name: check, type: sink, node: d, in: copied, schema: tick,\n"
    "     params: {kind: check, slow_us_per_frame: " + std::to_string(kSlowUsPerFrame) + "}}\n";

const json* find_in(const json& list, const std::string& key, const std::string& value,
                    const std::string& key2 = "", const std::string& value2 = "") {
  for (const json& item : list) {
    if (item.value(key, "") == value && (key2.empty() || item.value(key2, "") == value2)) {
      return &item;
    }
  }
  return nullptr;
}

TEST(Backpressure, ASlowSinkThrottlesTheSourceThroughTwoRelaysWithBoundedBuffers) {
  TempDir dir;
  const auto spec = dir.file("net.yaml", kNetwork);
  const auto lines_path = dir.file("run.jsonl");
  // A hang fails within the timeout; a normal run takes about 2 s.
  const auto out = run(std::string(BOREAL_BIN) + " launch " + spec +
                       " --timeout 25 --free-ports --quiet --json " + lines_path);
  ASSERT_EQ(out.status, 0) << out.text;

  const auto lines = read_json_lines(lines_path);
  ASSERT_FALSE(lines.empty());
  const json& summary = lines.back();
  ASSERT_EQ(summary.value("kind", ""), "run") << summary.dump();
  EXPECT_TRUE(summary["errors"].empty()) << summary["errors"].dump();

  // Every tuple arrives once, in order (the check sink follows seq).
  EXPECT_EQ(summary["tuples_sent"], kTuples);
  EXPECT_EQ(summary["tuples_received"], kTuples);
  EXPECT_EQ(summary["lost"], 0);
  EXPECT_EQ(summary["duplicated"], 0);
  EXPECT_EQ(summary["out_of_order"], 0);
  // The filter keeps and the map copies every field, so the sink sees the source's bytes.
  const json* source_node = find_kind(lines, "node", "a");
  const json* sink_node = find_kind(lines, "node", "d");
  ASSERT_NE(source_node, nullptr);
  ASSERT_NE(sink_node, nullptr);
  EXPECT_EQ((*source_node)["checksum_sent"], (*sink_node)["checksum_received"]);
  for (const char* relay : {"all", "copy"}) {
    const json* box = find_in(summary["boxes"], "name", relay);
    ASSERT_NE(box, nullptr) << relay;
    EXPECT_EQ((*box)["tuples_in"], kTuples) << relay;
    EXPECT_EQ((*box)["tuples_out"], kTuples) << relay;
  }

  // The sink sleeps 2 ms per frame of at most 64 tuples: at most 32,000 tuples/s. The
  // source's rate (tuples over its window, first credit to its end being acknowledged) can
  // exceed that only by the tuples still in flight when it finishes (a few windows and
  // backlogs, about 1,000 of the 40,000), so 1.5 times is a generous bound; unthrottled it
  // sends millions per second.
  const double sink_limit = static_cast<double>(kBatchBytes / kTupleBytes) * 1e6 /
                            static_cast<double>(kSlowUsPerFrame);
  EXPECT_GT(summary["tuples_per_s"].get<double>(), 0.0);
  EXPECT_LT(summary["tuples_per_s"].get<double>(), 1.5 * sink_limit) << summary.dump();
  // The sink really took its time: at least 2 ms for each of the >= 625 frames but the first.
  const double min_sink_s = static_cast<double>(kTuples * kTupleBytes / kBatchBytes - 1) *
                            static_cast<double>(kSlowUsPerFrame) * 1e-6;
  EXPECT_GE((*sink_node)["window_s"].get<double>(), min_sink_s);
  // So the source spent most of its window held back (generating 40,000 rows takes ~10 ms).
  const json* gen = find_in(summary["boxes"], "name", "gen");
  ASSERT_NE(gen, nullptr);
  EXPECT_GT((*gen)["backpressured_s"].get<double>(), 0.0);
  EXPECT_GT((*gen)["backpressured_s"].get<double>(), 0.5 * (*source_node)["window_s"].get<double>())
      << gen->dump();

  // Back-pressure travels hop by hop: each relay's sending link held rows for lack of credit,
  // and meanwhile left its receiving link unpolled, so its credit stopped flowing upstream.
  //
  // Bounds on the backlog (link_ports.hpp: while a writer's backlog is not empty, every
  // producer upstream of it on the node stops, so it holds at most what one input batch
  // produced):
  //   - a's link is fed by the source alone, which writes straight into claimed frames and
  //     stops when none is free: no backlog at all;
  //   - a relay's rows come from one poll of its receiving link, and the upstream sender has
  //     at most `window` frames outstanding (credit is granted after the poll), so one poll
  //     hands on at most window * batch_bytes = 16 KiB; the filter and the map emit one row
  //     per row, and the box output is flushed to the writer once per cycle. (Looser: one box
  //     output batch, Output::kDefaultBatchRows = 1024 rows = 64 KiB.)
  const json* ticks = find_in(summary["links"], "stream", "ticks", "direction", "send");
  ASSERT_NE(ticks, nullptr);
  EXPECT_EQ((*ticks)["node"], "a");
  EXPECT_EQ((*ticks)["backlog_peak_bytes"], 0) << ticks->dump();
  for (const auto& [node, stream, upstream] :
       {std::tuple{"b", "kept", "ticks"}, std::tuple{"c", "copied", "kept"}}) {
    const json* send = find_in(summary["links"], "stream", stream, "direction", "send");
    const json* recv = find_in(summary["links"], "stream", upstream, "direction", "recv");
    ASSERT_NE(send, nullptr) << stream;
    ASSERT_NE(recv, nullptr) << upstream;
    EXPECT_EQ((*send)["node"], node);
    EXPECT_EQ((*recv)["node"], node);
    EXPECT_GT((*send)["backlog_peak_bytes"].get<std::uint64_t>(), 0u) << send->dump();
    EXPECT_LE((*send)["backlog_peak_bytes"].get<std::uint64_t>(), kWindow * kBatchBytes)
        << send->dump();
    EXPECT_GT((*send)["backpressured_s"].get<double>(), 0.0) << send->dump();
    EXPECT_GT((*recv)["backpressured_s"].get<double>(), 0.0) << recv->dump();
  }

  // No node grows its memory while held back: buffers are windows of 4 KiB frames. 64 MiB
  // leaves room for the binary and its libraries (each node peaks near 8 MiB).
  ASSERT_EQ(summary["nodes"].size(), 4u);
  for (const json& node : summary["nodes"]) {
    EXPECT_LT(node["max_rss_kb"].get<std::int64_t>(), 64 * 1024) << node.dump();
  }

  // A relay held back blocks until credit returns (its reader is paused), rather than polling
  // the frames it will not read yet: a small fraction of a core over its window, where it
  // spun at about half a core before readers paused.
  for (const char* relay : {"b", "c"}) {
    const json* node = find_kind(lines, "node", relay);
    ASSERT_NE(node, nullptr);
    EXPECT_LT((*node)["process_cpu_s"].get<double>(), 0.2 * (*node)["window_s"].get<double>())
        << relay << ": " << (*node)["wait_stats"].dump();
  }
}

}  // namespace
