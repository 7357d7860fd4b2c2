// The example networks in apps/examples run as documented: `boreal launch FILE` exits 0, and
// what each writes is what its boxes compute from the generator's tuples.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/source.hpp>

#include "app_test_support.hpp"
#include "spec/network_spec.hpp"

namespace {

using nlohmann::json;
using namespace boreal::test;
using boreal::runtime::load_network;

std::string example(const std::string& name) {
  return std::string(BOREAL_EXAMPLES_DIR) + "/" + name;
}

// Launches an example from `dir` (its sinks write their CSV files there).
Output launch_in(const TempDir& dir, const std::string& file, const std::string& json_path) {
  return run("cd " + dir.file("") + " && " + BOREAL_BIN + " launch " + example(file) +
             " --free-ports --quiet --timeout 90 --json " + json_path);
}

const json* box_of(const json& summary, const std::string& name) {
  for (const json& box : summary["boxes"]) {
    if (box["name"] == name) return &box;
  }
  return nullptr;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// How many of the source `gen`'s tuples have price > `above`, from the generator itself.
std::uint64_t count_above(const std::string& file, double above) {
  auto spec = load_network(example(file));
  EXPECT_TRUE(spec) << (spec ? "" : spec.error().joined());
  const auto& box = *spec.value().find_box("gen");
  const auto& schema = *spec.value().find_stream(box.outputs[0])->tuple_schema;
  auto params = boreal::runtime::generator_params(*box.source, schema);
  params.start_ns = 0;
  auto gen = boreal::ops::Generator::make(params).value();
  auto price = boreal::ops::FieldRef<double>::bind(schema, "price").value();
  boreal::ops::OwnedBatch batch(schema, 4096);
  std::uint64_t n = 0;
  while (!gen.done()) {
    batch.clear();
    gen.fill(batch, batch.capacity_rows());
    for (boreal::ops::Row row : batch) n += price.get(row) > above ? 1 : 0;
  }
  return n;
}

TEST(Examples, PipelineFiltersAggregatesAndWritesItsCsv) {
  TempDir dir;
  const auto lines_path = dir.file("run.jsonl");
  const auto out = launch_in(dir, "pipeline.yaml", lines_path);
  ASSERT_EQ(out.status, 0) << out.text;
  const auto lines = read_json_lines(lines_path);
  const json* summary = find_kind(lines, "run");
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ((*summary)["tuples_sent"], 600000);
  EXPECT_EQ((*summary)["pass_through"], false);
  EXPECT_TRUE((*summary)["checksum_ok"].is_null());
  EXPECT_EQ((*summary)["errors"].size(), 0u);
  const json* filter = box_of(*summary, "expensive");
  const json* aggregate = box_of(*summary, "per_key");
  const json* sink = box_of(*summary, "out");
  ASSERT_TRUE(filter && aggregate && sink);
  EXPECT_EQ((*filter)["tuples_in"], 600000);
  EXPECT_EQ((*filter)["tuples_out"], count_above("pipeline.yaml", 100.0));
  EXPECT_EQ((*aggregate)["tuples_in"], (*filter)["tuples_out"]);
  EXPECT_EQ((*sink)["tuples_in"], (*aggregate)["tuples_out"]);
  // Two media: trades over tcp, the aggregates over fabric-msg.
  std::vector<std::string> media;
  for (const json& link : (*summary)["links"]) {
    if (link["direction"] == "send")
      media.push_back(link["stream"].get<std::string>() + ":" + link["medium"].get<std::string>());
  }
  EXPECT_EQ(media, (std::vector<std::string>{"trades:tcp", "stats:fabric-msg"}));

  const auto csv = lines_of(read_file(dir.file("pipeline_stats.csv")));
  ASSERT_FALSE(csv.empty());
  EXPECT_EQ(csv.front(), "key,window_start,window_end,trades,avg_price,max_price");
  EXPECT_EQ(csv.size() - 1, (*sink)["tuples_in"].get<std::size_t>());
  // Sliding windows of 100 ms every 50 ms over 3 s of 50 keys: about 61 windows per key.
  EXPECT_GT(csv.size(), 50u * 55u);
  EXPECT_LT(csv.size(), 50u * 65u);
}

TEST(Examples, FanOutInSplitsAggregatesMergesSortsAndChecks) {
  TempDir dir;
  const auto lines_path = dir.file("run.jsonl");
  const auto out = launch_in(dir, "fan_out_in.yaml", lines_path);
  ASSERT_EQ(out.status, 0) << out.text;
  const auto lines = read_json_lines(lines_path);
  const json* summary = find_kind(lines, "run");
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ((*summary)["errors"].size(), 0u);
  const json* merge = find_kind(lines, "node", "merge");
  ASSERT_NE(merge, nullptr);
  // The trades reached `merge` whole and in order over their own link (fan-out).
  EXPECT_EQ((*merge)["lost"], 0);
  EXPECT_EQ((*merge)["duplicated"], 0);
  EXPECT_EQ((*merge)["out_of_order"], 0);
  const json* audit = box_of(*summary, "audit");
  const json* route = box_of(*summary, "route");
  const json* sum0 = box_of(*summary, "sum0");
  const json* sum1 = box_of(*summary, "sum1");
  const json* both = box_of(*summary, "both");
  const json* sorted = box_of(*summary, "out");
  ASSERT_TRUE(audit && route && sum0 && sum1 && both && sorted);
  EXPECT_EQ((*audit)["tuples_in"], 300000);
  EXPECT_EQ((*route)["tuples_out"], 300000);
  EXPECT_EQ((*sum0)["tuples_in"].get<std::uint64_t>() + (*sum1)["tuples_in"].get<std::uint64_t>(),
            300000u);
  EXPECT_GT((*sum0)["tuples_in"].get<std::uint64_t>(), 0u);
  EXPECT_GT((*sum1)["tuples_in"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(
      (*both)["tuples_in"].get<std::uint64_t>(),
      (*sum0)["tuples_out"].get<std::uint64_t>() + (*sum1)["tuples_out"].get<std::uint64_t>());
  EXPECT_EQ((*sorted)["tuples_in"], (*both)["tuples_out"]);

  const auto csv = lines_of(read_file(dir.file("fan_out_in_sums.csv")));
  ASSERT_FALSE(csv.empty());
  EXPECT_EQ(csv.front(), "key,window_start,window_end,trades,volume");
  ASSERT_EQ(csv.size() - 1, (*sorted)["tuples_in"].get<std::size_t>());
  // Sorted by window end, and every trade counted once across the windows.
  std::int64_t last_end = 0;
  std::uint64_t trades = 0;
  for (std::size_t i = 1; i < csv.size(); ++i) {
    std::istringstream row(csv[i]);
    std::string key, start, end, count;
    std::getline(row, key, ',');
    std::getline(row, start, ',');
    std::getline(row, end, ',');
    std::getline(row, count, ',');
    const std::int64_t window_end = std::stoll(end);
    EXPECT_GE(window_end, last_end) << "line " << i + 1;
    last_end = window_end;
    trades += std::stoull(count);
  }
  EXPECT_EQ(trades, 300000u);
}

}  // namespace
