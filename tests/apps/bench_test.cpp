// `boreal bench`: the grid, its schedule, the reduction to medians, the CSV and the table, and
// one small sweep through the real binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "app_test_support.hpp"
#include "sweep/bench_plan.hpp"
#include "sweep/bench_report.hpp"
#include "sweep/bench_soak.hpp"
#include "sweep/bench_streams.hpp"
#include "sweep/wake_cost.hpp"
#include "spec/network_spec.hpp"

#include <yaml-cpp/yaml.h>

namespace boreal::runtime {
namespace {

using test::run;
using test::TempDir;

RatePoint rate(const std::string& text) { return parse_rate_point(text).value(); }

TEST(BenchRates, ParsesEveryForm) {
  EXPECT_EQ(rate("idle").kind, RatePoint::Kind::idle);
  EXPECT_EQ(rate("max").kind, RatePoint::Kind::max);
  const auto ten = rate("10%");
  EXPECT_EQ(ten.kind, RatePoint::Kind::fraction);
  EXPECT_DOUBLE_EQ(ten.value, 0.1);
  EXPECT_EQ(ten.label, "10%");
  EXPECT_EQ(rate("2.5%").label, "2.5%");
  EXPECT_DOUBLE_EQ(*rate("2.5%").offered(2e6), 50000.0);
  EXPECT_EQ(rate("100k").label, "100000");
  EXPECT_DOUBLE_EQ(rate("1.5M").value, 1.5e6);
  EXPECT_DOUBLE_EQ(*rate("100000").offered(7e6), 100000.0);
  EXPECT_EQ(*rate("idle").offered(7e6), 0.0);
  EXPECT_FALSE(rate("max").offered(7e6).has_value());
}

TEST(BenchRates, RejectsWhatIsNotARate) {
  const std::string accepted =
      " (expected idle, max, a percentage of the maximum such as 10%, or tuples/s such as 100000 "
      "or 100k)";
  EXPECT_EQ(parse_rate_point("fast").error().message, "--rates: 'fast' is not a rate" + accepted);
  EXPECT_EQ(parse_rate_point("0").error().message, "--rates: '0' is not a rate" + accepted);
  EXPECT_EQ(parse_rate_point("-5k").error().message, "--rates: '-5k' is not a rate" + accepted);
  EXPECT_EQ(parse_rate_point("").error().message, "--rates: '' is not a rate" + accepted);
  EXPECT_EQ(parse_rate_point("150%").error().message,
            "--rates: '150%': a percentage of the maximum must be in (0, 100]");
  EXPECT_EQ(parse_rate_point("0%").error().message,
            "--rates: '0%': a percentage of the maximum must be in (0, 100]");
}

BenchGrid small_grid() {
  BenchGrid grid;
  grid.media = {"tcp", "fabric-rma"};
  grid.waits = {"block", "sleep"};
  grid.rates = {rate("idle"), rate("50%"), rate("max")};
  grid.tuple_bytes = {64};
  grid.batch_bytes = {32768};
  grid.repeats = 2;
  return grid;
}

std::string describe(const BenchGrid& grid, const std::vector<BenchRun>& runs) {
  std::string text;
  for (const auto& r : runs) {
    text += std::to_string(r.group) + ":" + r.wait + ":" +
            (r.rate == kCalibrationRun ? std::string("cal") : grid.rates[r.rate].label) + ":" +
            std::to_string(r.repeat) + " ";
  }
  return text;
}

TEST(BenchSchedule, MaxFirstThenRepeatsOutermost) {
  const BenchGrid grid = small_grid();
  ASSERT_EQ(groups(grid).size(), 2U);
  EXPECT_EQ(groups(grid)[1].medium, "fabric-rma");
  const auto runs = schedule(grid);
  ASSERT_EQ(runs.size(), 24U);
  const std::string group0 =
      "0:block:max:0 0:sleep:max:0 0:block:max:1 0:sleep:max:1 "
      "0:block:idle:0 0:sleep:idle:0 0:block:50%:0 0:sleep:50%:0 "
      "0:block:idle:1 0:sleep:idle:1 0:block:50%:1 0:sleep:50%:1 ";
  EXPECT_EQ(describe(grid, runs).substr(0, group0.size()), group0);
  EXPECT_EQ(runs[12].group, 1U);
  EXPECT_DOUBLE_EQ(estimate(grid, runs.size()).count(), 24 * (1.0 + 3.0 + 0.7));
}

TEST(BenchSchedule, FractionsWithoutMaxGetOneCalibrationRun) {
  BenchGrid grid = small_grid();
  grid.media = {"tcp"};
  grid.rates = {rate("10%"), rate("100k")};
  grid.repeats = 1;
  EXPECT_EQ(describe(grid, schedule(grid)),
            "0:block:cal:0 0:block:10%:0 0:sleep:10%:0 0:block:100000:0 0:sleep:100000:0 ");
  grid.rates = {rate("100k")};
  EXPECT_EQ(describe(grid, schedule(grid)), "0:block:100000:0 0:sleep:100000:0 ");
}

TEST(BenchGridCheck, NamesEveryProblem) {
  BenchGrid grid;
  grid.media = {"udp", "inproc"};
  grid.waits = {"nap"};
  grid.repeats = 0;
  grid.duration = std::chrono::duration<double>(0);
  grid.latency_budget_us = -1;
  grid.tuple_bytes = {0};
  EXPECT_EQ(check(grid),
            (std::vector<std::string>{
                "--rates: give at least one rate",
                "--batch-bytes: give at least one size",
                "--repeats: must be at least 1, got 0",
                "--duration: must be positive, got 0",
                "--latency-budget: must be positive, got -1",
                "--media: unknown medium 'udp' (valid: tcp, inproc, fabric-msg, fabric-rma)",
                "--media: inproc runs inside one node; the sweep measures media between nodes",
                "--waits: unknown wait mode 'nap' (valid: busy, block, sleep, backoff, adaptive)",
                "--tuple-bytes: sizes must be positive, got 0"}));
  EXPECT_TRUE(check(full_grid()).empty());
  EXPECT_TRUE(check(quick_grid()).empty());
}

TEST(BenchReport, SpreadIsMedianMinMax) {
  const Spread odd = spread_of({5, 1, 3});
  EXPECT_EQ(odd.median, 3);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 5);
  EXPECT_EQ(spread_of({4, 1, 3, 2}).median, 2.5);
  EXPECT_EQ(spread_of({}).median, 0);
}

BenchSample sample(std::size_t rate_index, const std::string& wait, int repeat,
                   std::optional<double> offered, double tuples_per_s, double cpu, double p99,
                   bool ok = true) {
  RunSummary s;
  s.config.medium = "tcp";
  s.config.latency_budget_us = 200;
  s.tuples_per_s = tuples_per_s;
  s.cpu_us_per_tuple_machine = cpu;
  s.cores_machine = cpu * tuples_per_s / 1e6;
  s.latency.p99_us = p99;
  return {{0, wait, rate_index, repeat}, offered, s, ok};
}

// Grid tcp × {block, adaptive} × {idle, 50%, max}, two repeats.
std::vector<BenchSample> samples() {
  return {
      sample(2, "block", 0, std::nullopt, 10e6, 0.2, 900),
      sample(2, "adaptive", 0, std::nullopt, 8e6, 0.25, 800),
      sample(2, "block", 1, std::nullopt, 12e6, 0.18, 700),
      sample(2, "adaptive", 1, std::nullopt, 9e6, 0.22, 600),
      sample(0, "block", 0, 0.0, 0, 0, 0),
      sample(0, "adaptive", 0, 0.0, 0, 0, 0, false),
      sample(1, "block", 0, 5.5e6, 5.5e6, 0.30, 400),
      sample(1, "adaptive", 0, 5.5e6, 5.5e6, 0.33, 300),
  };
}

BenchGrid report_grid() {
  BenchGrid grid;
  grid.media = {"tcp"};
  grid.waits = {"block", "adaptive"};
  grid.rates = {rate("idle"), rate("50%"), rate("max")};
  grid.tuple_bytes = {64};
  grid.batch_bytes = {32768};
  grid.repeats = 2;
  return grid;
}

TEST(BenchReport, MaximumIsTheBestWaitModesMedian) {
  // block: median of 10 M and 12 M = 11 M; adaptive 8.5 M.
  EXPECT_DOUBLE_EQ(group_max(samples(), 0), 11e6);
  EXPECT_DOUBLE_EQ(group_max(samples(), 1), 0.0);
}

TEST(BenchReport, RowsHoldMediansSpreadAndGoodRepeats) {
  const auto rows = aggregate(report_grid(), samples());
  ASSERT_EQ(rows.size(), 6U);
  EXPECT_EQ(rows[0].rate.label, "idle");
  EXPECT_EQ(rows[0].wait, "block");
  EXPECT_EQ(rows[1].wait, "adaptive");
  EXPECT_EQ(rows[1].repeats, 1);
  EXPECT_EQ(rows[1].ok_repeats, 0);
  const BenchRow& max_block = rows[4];
  EXPECT_EQ(max_block.rate.label, "max");
  EXPECT_EQ(max_block.repeats, 2);
  EXPECT_EQ(max_block.ok_repeats, 2);
  EXPECT_DOUBLE_EQ(max_block.tuples_per_s.median, 11e6);
  EXPECT_DOUBLE_EQ(max_block.tuples_per_s.min, 10e6);
  EXPECT_DOUBLE_EQ(max_block.cpu_us_per_tuple.median, 0.19);
  EXPECT_DOUBLE_EQ(max_block.p99_us.max, 900);
  EXPECT_DOUBLE_EQ(max_block.max_rate, 11e6);
  EXPECT_FALSE(max_block.offered_rate.has_value());
}

TEST(BenchReport, CsvLeavesPerTupleCellsOfIdleAndFailedPointsEmpty) {
  BenchMeta meta;
  meta.host = "h";
  meta.cpus = 2;
  meta.kernel = "6.1";
  meta.cpu_model = "cpu";
  meta.commit = "abc";
  meta.date = "2026-11-23T00:00:00Z";
  meta.command = "boreal bench --quick";
  const std::string csv = to_csv(meta, aggregate(report_grid(), samples()));
  std::istringstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 9U);
  EXPECT_EQ(
      lines[0],
      "# boreal bench: host=h cpus=2 kernel=6.1 cpu=\"cpu\" commit=abc date=2026-11-23T00:00:00Z");
  EXPECT_EQ(lines[1], "# command: boreal bench --quick");
  EXPECT_EQ(lines[2].substr(0, 60), "medium,provider,wait,tuple_bytes,batch_bytes,rate_label,offe");
  EXPECT_EQ(lines[3],
            "tcp,,block,64,32768,idle,0,1.1e+07,1,1,0,0,0,,,,,,0,0,0,,,,,,200,,0,0,0,0,0,,,,1,,");
  EXPECT_EQ(lines[4], "tcp,,adaptive,64,32768,idle,0,1.1e+07,1,0,,,,,,,,,,,,,,,,,200,,,,,,,,,,1,,");
  EXPECT_EQ(lines[5].substr(0, 58), "tcp,,block,64,32768,50%,5.5e+06,1.1e+07,1,1,5.5e+06,5.5e+0");
}

TEST(BenchReport, TableShowsBestFixedModeAndAdaptivesRatio) {
  BenchMeta meta;
  const std::string table = summary_table(meta, report_grid(), aggregate(report_grid(), samples()));
  EXPECT_NE(
      table.find("tcp, 64-byte tuples, 32768-byte frames; maximum 11.00 M tuples/s; median of 2\n"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("  CPU-us/tuple         idle      50%      max\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  block               0.00c    0.300    0.190\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  adaptive           failed    0.330    0.235\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  best fixed          block    block    block\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  adaptive/best           -     1.10     1.24\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  adaptive                -      300      700\n"), std::string::npos)
      << table;
  // block's p99 (400, 800 µs) is over the 200 µs budget at 50 % and max, and so is adaptive's.
  EXPECT_NE(table.find("  best in budget      block     none     none\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  adaptive/that           -        -        -\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  adaptive p99            -     over     over\n"), std::string::npos)
      << table;
}

TEST(BenchReport, BestInBudgetSkipsTheCheaperModesOverTheBudget) {
  BenchGrid grid = report_grid();
  grid.waits = {"busy", "block", "sleep", "adaptive"};
  grid.rates = {rate("1%")};
  grid.repeats = 1;
  // sleep is cheapest but over the budget; block is cheaper than busy and within it.
  const std::vector<BenchSample> runs = {
      sample(0, "busy", 0, 1e5, 1e5, 6.0, 150),
      sample(0, "block", 0, 1e5, 1e5, 2.0, 200),
      sample(0, "sleep", 0, 1e5, 1e5, 1.5, 1900),
      sample(0, "adaptive", 0, 1e5, 1e5, 1.8, 180),
  };
  const std::string table = summary_table(BenchMeta{}, grid, aggregate(grid, runs));
  EXPECT_NE(table.find("  best fixed          sleep\n"), std::string::npos) << table;
  EXPECT_NE(table.find("  adaptive/best        1.20\n"), std::string::npos) << table;
  EXPECT_NE(table.find("  best in budget      block\n"), std::string::npos) << table;
  EXPECT_NE(table.find("  adaptive/that        0.90\n"), std::string::npos) << table;
  EXPECT_NE(table.find("  adaptive p99           in\n"), std::string::npos) << table;
}

// The wake-up floor: (blocking waits + sleeps of both nodes) per tuple x the calibrated cost.
TEST(BenchReport, TheWakeFloorIsTheCpuOverWakeUpsTimesTheirCost) {
  BenchGrid grid = report_grid();
  grid.waits = {"busy", "block"};
  grid.rates = {rate("10k")};
  grid.repeats = 1;
  BenchSample busy = sample(0, "busy", 0, 1e4, 1e4, 30.0, 50);
  BenchSample block = sample(0, "block", 0, 1e4, 1e4, 10.0, 150);
  busy.summary->tuples_sent = 4000;
  block.summary->tuples_sent = 4000;
  block.summary->receiver_wait.blocks = 1500;
  block.summary->sender_wait.blocks = 300;
  block.summary->sender_wait.sleeps = 200;  // 2000 wake-ups: 0.5 per tuple
  const auto rows = aggregate(grid, {busy, block});
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_DOUBLE_EQ(rows[1].wakeups_per_tuple, 0.5);
  BenchMeta meta;
  EXPECT_FALSE(wake_floor_ratio(meta, rows[1]).has_value());  // no calibration
  EXPECT_EQ(summary_table(meta, grid, rows).find("x wake floor"), std::string::npos);
  meta.wake_cost_us = 4.0;
  EXPECT_DOUBLE_EQ(*wake_floor_ratio(meta, rows[1]), 5.0);  // 10 / (0.5 x 4)
  EXPECT_FALSE(wake_floor_ratio(meta, rows[0]).has_value());  // busy never wakes
  const std::string table = summary_table(meta, grid, rows);
  EXPECT_NE(table.find("one wake-up: 4 machine CPU-us (calibration)\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  x wake floor        10000\n  busy                    -\n  block          "
                       "      5.00\n"),
            std::string::npos)
      << table;
  const std::string csv = to_csv(meta, rows);
  EXPECT_NE(csv.find(",wakeups_per_tuple,wake_floor_ratio\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1,0.5,5\n"), std::string::npos) << csv;
}

TEST(WakeCost, TwoWakeUpsPerRoundTripAndTheMachinesCpuForThem) {
  const auto cost = measure_wake_cost(std::chrono::milliseconds(100));
  ASSERT_TRUE(cost) << cost.error().message;
  EXPECT_GE(cost.value().seconds, 0.1);
  EXPECT_GT(cost.value().wakeups, 100U);  // a round trip takes microseconds, not a millisecond
  EXPECT_EQ(cost.value().wakeups % 2, 0U);
  EXPECT_GT(cost.value().cpu_us_per_wakeup, 0.0);
  // The machine's CPU over the exchange, shared among its wake-ups, in µs: at most the
  // exchange's whole capacity (a unit slip would break it).
  EXPECT_LE(cost.value().cpu_us_per_wakeup * static_cast<double>(cost.value().wakeups),
            cost.value().seconds * 1e6 * std::thread::hardware_concurrency() * 1.001);
}

TEST(BenchGridCheck, AFlushMustFitTheBudget) {
  BenchGrid grid = report_grid();
  grid.flush_us = 300;
  EXPECT_EQ(check(grid), (std::vector<std::string>{"--flush-us: must be positive and at most the "
                                                   "latency budget (200 us), got 300"}));
  grid.flush_us = 100;
  EXPECT_TRUE(check(grid).empty());
}

TEST(BenchReport, TheRecordedCommitIsTheSourceTreesAtBuildTime) {
  // Read at every build, not at configure time: a build after a commit records the new one.
  const auto head = run(std::string("git -C ") + BOREAL_SOURCE_DIR + " rev-parse --short=12 HEAD");
  if (head.status != 0) {
    EXPECT_EQ(build_commit(), "unknown");
    return;
  }
  const std::string commit = head.text.substr(0, head.text.find('\n'));
  const auto clean = run(std::string("git -C ") + BOREAL_SOURCE_DIR + " diff --quiet HEAD --");
  EXPECT_EQ(build_commit(), clean.status == 0 ? commit : commit + "-dirty");
}

TEST(BenchGridCheck, StreamCountsAreOneTo1024AndNotForNetworkFiles) {
  BenchGrid grid = small_grid();
  grid.streams = {1, 0, 2000};
  EXPECT_EQ(check(grid),
            (std::vector<std::string>{"--streams: counts must be 1 to 1024, got 0",
                                      "--streams: counts must be 1 to 1024, got 2000"}));
  grid.streams = {1, 4};
  EXPECT_TRUE(check(grid).empty());
  grid.network = true;
  EXPECT_EQ(check(grid), (std::vector<std::string>{
                             "--streams: a --network file runs as written; --streams repeats a "
                             "--file's source -> sink pair"}));
  grid.network = false;
  grid.media = {"tcp"};
  // Each count is a group of its own: the fractions of the maximum are per count.
  const auto all = groups(grid);
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0].streams, 1U);
  EXPECT_EQ(all[1].streams, 4U);
  EXPECT_FALSE(all[0] == all[1]);
}

TEST(BenchStreams, RepeatsTheSourceSinkPairEachWithItsOwnSeedAndLinks) {
  const std::string demo = test::read_file(std::string(BOREAL_EXAMPLES_DIR) + "/demo.yaml");
  const std::string text = demo + "links:\n  - {stream: ticks, window: 32}\n";
  const auto base = parse_network(text, "demo.yaml");
  ASSERT_TRUE(base) << base.error().joined();
  const auto yaml = many_streams_network(base.value(), text, 3);
  ASSERT_TRUE(yaml) << yaml.error().message;
  EXPECT_EQ(yaml.value().rfind("# demo.yaml with its source -> sink pair repeated 3 times", 0), 0U);
  const auto spec = parse_network(yaml.value(), "streams-3.yaml");
  ASSERT_TRUE(spec) << spec.error().joined();
  std::vector<std::string> boxes;
  for (const auto& box : spec.value().boxes) boxes.push_back(box.name + ":" + box.type);
  EXPECT_EQ(boxes, (std::vector<std::string>{"gen-0:source", "sink-0:sink", "gen-1:source",
                                             "sink-1:sink", "gen-2:source", "sink-2:sink"}));
  std::vector<std::string> streams;
  for (const auto& stream : spec.value().streams) streams.push_back(stream.name);
  EXPECT_EQ(streams, (std::vector<std::string>{"ticks-0", "ticks-1", "ticks-2"}));
  const YAML::Node root = YAML::Load(yaml.value());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(root["boxes"][2 * i]["params"]["seed"].as<int>(), 1 + i);  // demo.yaml's seed is 1
    EXPECT_EQ(root["links"][i]["stream"].as<std::string>(), "ticks-" + std::to_string(i));
    EXPECT_EQ(root["links"][i]["window"].as<int>(), 32);
  }
}

TEST(BenchStreams, RefusesAFileThatIsNotOneSourceSinkPairNamingIt) {
  const std::string head =
      "name: n\nschemas: {t: [{seq: i64}]}\nnodes: [{name: a, address: \"tcp://127.0.0.1:1\"}]\n"
      "boxes:\n  - {name: g, type: source, node: a, out: s, schema: t}\n";
  const std::string tail = " (like apps/examples/demo.yaml)";
  // Each file is a network parse_network() accepts: the pair is checked on the spec.
  auto refusal = [](const std::string& text) {
    const auto spec = parse_network(text, "n.yaml");
    if (!spec) return "not parsed: " + spec.error().joined();
    auto result = many_streams_network(spec.value(), text, 2);
    return result ? std::string("accepted") : result.error().message;
  };
  EXPECT_EQ(
      refusal(
          head +
          "  - {name: f, type: filter, node: a, in: s, out: t, params: {predicate: \"seq > 0\"}}\n"
          "  - {name: k, type: sink, node: a, in: t}\n"),
      "--streams: n.yaml has a box of type 'filter' besides one source and one sink; "
      "--streams repeats a file's one source -> sink pair" +
          tail);
  EXPECT_EQ(refusal(head + "  - {name: k, type: sink, node: a, in: s}\n"
                           "  - {name: l, type: sink, node: a, in: s}\n"),
            "--streams: n.yaml has a box of type 'sink' besides one source and one sink; "
            "--streams repeats a file's one source -> sink pair" + tail);
  EXPECT_EQ(refusal(head), "--streams: n.yaml has no source or no sink box; "
                           "--streams repeats a file's one source -> sink pair" + tail);
}

// `boreal bench ARGS --out OUT`, with OUT in a temporary directory of its own: what it printed
// and the JSON lines it wrote.
struct BenchCommandRun {
  explicit BenchCommandRun(const std::string& args)
      : out_dir(dir.file("out")),
        out(run(std::string(BOREAL_BIN) + " bench " + args + " --out " + out_dir)) {}
  [[nodiscard]] std::vector<nlohmann::json> lines() const {
    return test::read_json_lines(out_dir + "/bench.jsonl");
  }

  TempDir dir;
  const std::string out_dir;
  const test::Output out;
};

TEST(BenchCommand, ManyStreamsShareTheRateAndEachCountIsAGroup) {
  const BenchCommandRun bench("--media tcp --waits block --rates 30k --streams 1,3 --repeats 1 "
                              "--duration 0.3 --warmup 0.1 --loops none --contaminated keep "
                              "--no-iperf --no-plots");
  const auto& out = bench.out;
  const auto& out_dir = bench.out_dir;
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("tcp 64B 3 streams block 30000"), std::string::npos) << out.text;
  EXPECT_TRUE(std::filesystem::exists(out_dir + "/streams-3.yaml"));
  const auto lines = bench.lines();
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0]["grid"]["streams"], (nlohmann::json{1, 3}));
  // Every source offers its share of the total.
  EXPECT_EQ(lines[1]["offered_rate"], 30000.0);
  EXPECT_EQ(lines[2]["offered_rate"], 10000.0);
  EXPECT_EQ(lines[1]["bench"]["streams"], 1);
  EXPECT_EQ(lines[2]["bench"]["streams"], 3);
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_TRUE(lines[i]["bench"]["ok"].get<bool>()) << lines[i].dump();
    EXPECT_EQ(lines[i]["tuples_sent"], lines[i]["tuples_received"]);
    EXPECT_EQ(lines[i]["lost"], 0);
  }
  std::size_t sinks = 0;
  for (const auto& box : lines[2]["boxes"]) sinks += box["type"] == "sink" ? 1 : 0;
  EXPECT_EQ(sinks, 3U);
  // The CSV's `streams` column holds the stream count, one row per count.
  std::istringstream in(test::read_file(out_dir + "/bench.csv"));
  std::vector<std::string> streams_cells;
  std::optional<std::size_t> column;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (!column) column = std::find(cells.begin(), cells.end(), "streams") - cells.begin();
    streams_cells.push_back(*column < cells.size() ? cells[*column] : "?");
  }
  EXPECT_EQ(streams_cells, (std::vector<std::string>{"streams", "1", "3"}));
}

TEST(BenchCommand, StreamsOfAFileThatIsNotOnePairAreRefusedBeforeAnyRun) {
  TempDir dir;
  const std::string file = std::string(BOREAL_EXAMPLES_DIR) + "/pipeline.yaml";
  const auto out = run(std::string(BOREAL_BIN) + " bench --file " + file +
                       " --media tcp --waits block --rates 10k --streams 1,2 --repeats 1 "
                       "--duration 0.3 --loops none --no-iperf --no-plots --out " +
                       dir.file("out"));
  EXPECT_EQ(out.status, 2);
  EXPECT_EQ(out.text.rfind("bench: --streams: " + file + " has a box of type '", 0), 0U)
      << out.text;
  EXPECT_NE(out.text.find("' besides one source and one sink; --streams repeats a file's one "
                          "source -> sink pair (like apps/examples/demo.yaml)\n"),
            std::string::npos)
      << out.text;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out") + "/streams-2.yaml"));
}

TEST(BenchCommand, BadFlagsAreNamedAndNothingRuns) {
  TempDir dir;
  const auto out = run(std::string(BOREAL_BIN) +
                       " bench --rates 5%,fast --repeats 0 --media udp --out " + dir.file("out"));
  EXPECT_EQ(out.status, 2);
  EXPECT_EQ(out.text,
            "bench: --rates: 'fast' is not a rate (expected idle, max, a percentage of the maximum "
            "such as 10%, or tuples/s such as 100000 or 100k)\n"
            "bench: --repeats: must be at least 1, got 0\n"
            "bench: --media: unknown medium 'udp' (valid: tcp, inproc, fabric-msg, fabric-rma)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
  const auto long_grid =
      run(std::string(BOREAL_BIN) + " bench --time-limit 5 --out " + dir.file("out"));
  EXPECT_EQ(long_grid.status, 2);
  // 270 runs of 1 + 3 + 0.7 s, and 7 strategies x 3 rates x 3 repeats of 2 + 0.3 s.
  EXPECT_EQ(long_grid.text,
            "bench: this grid is 333 runs, about 23m34s, over --time-limit 5m00s; drop media, wait "
            "modes or rates, lower --repeats, --duration or --warmup, or raise --time-limit\n");
  const auto bad_loops =
      run(std::string(BOREAL_BIN) + " bench --loops epoll,none --loop-rates 10%,x");
  EXPECT_EQ(bad_loops.status, 2);
  EXPECT_EQ(
      bad_loops.text,
      "bench: --loop-rates: 'x' is not a rate (expected idle, max, a percentage of the maximum "
      "such as 10%, or tuples/s such as 100000 or 100k)\n"
      "bench: --loops: unknown event-loop strategy 'epoll' (valid: epoll-rearm, epoll-lazy, "
      "epoll-et, uring-batched, recycled, thread-per-link, sigio, or none)\n"
      "bench: --loops: unknown event-loop strategy 'none' (valid: epoll-rearm, epoll-lazy, "
      "epoll-et, uring-batched, recycled, thread-per-link, sigio, or none)\n"
      "bench: --loop-rates: '10%': the event-loop study takes tuples/s or max, not idle or "
      "percentages\n");
}

TEST(BenchCommand, ASmallSweepWritesEveryPointAndTheFractionOfTheMaximum) {
  const BenchCommandRun bench("--media tcp --waits block,sleep --rates idle,50%,max --repeats 1 "
                              "--duration 0.3 --warmup 0.1 --loops epoll-et,sigio --loop-rates 20k "
                              "--contaminated keep --no-iperf --no-plots");
  const auto& out = bench.out;
  const auto& out_dir = bench.out_dir;
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("[  6/8 "), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("[  8/8] event loop sigio 20000 #1: "), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("  best fixed "), std::string::npos) << out.text;
  const auto lines = bench.lines();
  ASSERT_EQ(lines.size(), 9U);  // the header, six runs and two event-loop runs
  EXPECT_EQ(lines[7]["kind"], "event_loop");
  EXPECT_EQ(lines[7]["strategy"], "epoll-et");
  EXPECT_EQ(lines[8]["strategy"], "sigio");
  EXPECT_EQ(lines[8]["tuples"], 6000);  // 20 k/s for 0.3 s
  EXPECT_TRUE(lines[8]["ok"].get<bool>());
  EXPECT_EQ(lines[0]["kind"], "bench");
  EXPECT_EQ(lines[0]["grid"]["rates"], (nlohmann::json{"idle", "50%", "max"}));
  // The wake-up calibration ran first and its cost heads the outputs.
  EXPECT_GT(lines[0]["wake_cost_us"].get<double>(), 0.0);
  EXPECT_NE(out.text.find("bench: one wake-up costs "), std::string::npos) << out.text;
  EXPECT_NE(lines[0]["command"].get<std::string>().find("bench --media tcp"), std::string::npos);
  double max_rate = 0;
  for (std::size_t i = 1; i < 7; ++i) {
    const auto& run_line = lines[i];
    EXPECT_EQ(run_line["kind"], "run");
    EXPECT_TRUE(run_line["bench"]["ok"].get<bool>()) << run_line.dump();
    EXPECT_EQ(run_line["lost"], 0);
    EXPECT_EQ(run_line["warmup_s"], 0.1);
    if (run_line["bench"]["rate_label"] == "max") {
      max_rate = std::max(max_rate, run_line["tuples_per_s"].get<double>());
    }
  }
  // Runs 3 and 4 are idle (nothing sent), 5 and 6 offer half the better max.
  EXPECT_EQ(lines[3]["bench"]["rate_label"], "idle");
  EXPECT_EQ(lines[3]["tuples_sent"], 0);
  EXPECT_EQ(lines[5]["bench"]["rate_label"], "50%");
  EXPECT_NEAR(lines[5]["offered_rate"].get<double>(), max_rate / 2, 1.0);
  // Medium to rate label (the first six cells) of every row, in order.
  std::istringstream in(test::read_file(out_dir + "/bench.csv"));
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::size_t end = 0;
    for (int cells = 0; cells < 6 && end != std::string::npos; ++cells)
      end = line.find(',', end + 1);
    rows.push_back(line.substr(0, end));
  }
  EXPECT_EQ(rows,
            (std::vector<std::string>{"medium,provider,wait,tuple_bytes,batch_bytes,rate_label",
                                      "tcp,,block,64,32768,idle", "tcp,,sleep,64,32768,idle",
                                      "tcp,,block,64,32768,50%", "tcp,,sleep,64,32768,50%",
                                      "tcp,,block,64,32768,max", "tcp,,sleep,64,32768,max"}));
  EXPECT_EQ(test::read_file(out_dir + "/summary.txt").find("boreal bench: host="), 0U);
  std::istringstream loops(test::read_file(out_dir + "/event_loops.csv"));
  std::vector<std::string> loop_rows;
  for (std::string line; std::getline(loops, line);) {
    if (!line.empty() && line[0] != '#')
      loop_rows.push_back(line.substr(0, line.find(",", line.find(",") + 1)));
  }
  EXPECT_EQ(loop_rows,
            (std::vector<std::string>{"strategy,rate_label", "epoll-et,20000", "sigio,20000"}));
}

// --network: any network file, measured per source event; the rates are events/s and the
// fraction of the maximum is of the events/s measured at "max".
TEST(BenchCommand, ANetworkSweepCountsSourceEvents) {
  TempDir dir;
  const std::string out_dir = dir.file("out");
  const std::string q2 = std::string(BOREAL_EXAMPLES_DIR) + "/nexmark/q2.yaml";
  const auto refused = run(std::string(BOREAL_BIN) + " bench --network " + q2 +
                           " --tuple-bytes 64 --out " + out_dir);
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(refused.text,
            "bench: --tuple-bytes: a --network file's sources make their own tuples\n");
  std::filesystem::remove("nexmark_q2.csv");  // the file's sink output, in the working directory
  const auto out = run(std::string(BOREAL_BIN) + " bench --network " + q2 +
                       " --media tcp --waits block --rates 20%,max --repeats 1 --duration 0.4 "
                       "--warmup 0.1 --contaminated keep --no-iperf --no-plots --out " + out_dir);
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_FALSE(std::filesystem::exists("nexmark_q2.csv"));  // --no-output: the sink counted
  EXPECT_NE(out.text.find("maximum "), std::string::npos) << out.text;
  EXPECT_NE(out.text.find(" M events/s; median of 1"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("  M events/s/core "), std::string::npos) << out.text;
  const auto lines = test::read_json_lines(out_dir + "/bench.jsonl");
  ASSERT_EQ(lines.size(), 3U);  // the header and two runs: no event-loop study
  EXPECT_EQ(lines[0]["grid"]["network"], true);
  const double max_events = lines[1]["events_per_s"].get<double>();
  ASSERT_GT(max_events, 0);
  // Q2's source sends bids only (46 of every 50 events): events and tuples differ.
  EXPECT_NEAR(lines[1]["tuples_per_s"].get<double>() / max_events, 46.0 / 50.0, 0.01);
  EXPECT_NEAR(lines[2]["offered_rate"].get<double>(), max_events * 0.2, 1.0);
  // The schedule is in events: that many came due in the window. What the sources sent there
  // follows it on a quiet host, but one that fell behind in the warm-up (another test taking
  // the cores) catches up inside the window, and the bench says so.
  const double due = lines[2]["events_due_per_s"].get<double>();
  EXPECT_NEAR(due, max_events * 0.2, max_events * 0.02);
  const double sent = lines[2]["events_per_s"].get<double>();
  const bool noted = out.text.find(" their schedule: ") != std::string::npos;
  EXPECT_EQ(noted, std::abs(sent / due - 1.0) > 0.05) << out.text;
  EXPECT_GT(lines[2]["events_per_core"].get<double>(), 0);
}

// A process that spins at the lowest priority until it is destroyed: other people's load.
class Burner {
 public:
  Burner() : pid_(::fork()) {
    if (pid_ == 0) {
      ::prctl(PR_SET_NAME, "burner");
      (void)::nice(19);
      volatile std::uint64_t spin = 0;
      for (;;) spin = spin + 1;
    }
  }
  ~Burner() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Burner(const Burner&) = delete;
  Burner& operator=(const Burner&) = delete;
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

TEST(BenchCommand, AContaminatedRunIsRepeatedOnceAndKeptWithItsReason) {
  const Burner burner;
  ASSERT_GT(burner.pid(), 0);
  const BenchCommandRun bench("--media tcp --waits block --rates 10k --repeats 1 --duration 0.5 "
                              "--warmup 0.1 --loops none --no-iperf --no-plots");
  const auto& out = bench.out;
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("): contaminated, repeating it once\n"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find(" (contaminated again: kept)\n"), std::string::npos) << out.text;
  const auto lines = bench.lines();
  ASSERT_EQ(lines.size(), 3U);  // the header, the discarded run and its repeat
  for (std::size_t i : {1U, 2U}) {
    EXPECT_TRUE(lines[i]["contaminated"].get<bool>()) << lines[i].dump();
    EXPECT_GT(lines[i]["cores_used"]["other"].get<double>(), 0.05) << lines[i].dump();
    EXPECT_GT(lines[i]["cpu_us_per_tuple"]["machine_raw"].get<double>(),
              lines[i]["cpu_us_per_tuple"]["machine"].get<double>()) << lines[i].dump();
    ASSERT_FALSE(lines[i]["other_processes"].empty()) << lines[i].dump();
  }
  // The progress names the first run's largest other processes. The burner is usually the
  // largest, but on a machine busy with other work (a build beside the tests) a niced burner
  // gets little CPU: the run is contaminated all the same.
  const std::string first = lines[1]["other_processes"][0].get<std::string>();
  EXPECT_NE(out.text.find("cores during the run (" + first), std::string::npos) << out.text;
  EXPECT_EQ(lines[1]["bench"]["discarded"], "contaminated");
  EXPECT_FALSE(lines[2]["bench"].contains("discarded"));
  EXPECT_EQ(lines[2]["bench"]["repeated_after_other_cores"], lines[1]["cores_used"]["other"]);
  // --contaminated keep: one run, kept as it is.
  const BenchCommandRun kept("--media tcp --waits block --rates 10k --repeats 1 --duration 0.5 "
                             "--warmup 0.1 --loops none --contaminated keep --no-iperf --no-plots");
  ASSERT_EQ(kept.out.status, 0) << kept.out.text;
  EXPECT_NE(kept.out.text.find(" (contaminated: kept)\n"), std::string::npos) << kept.out.text;
  EXPECT_EQ(kept.lines().size(), 2U);
}

// --soak DURATION: whole seconds, or with s, m or h; anything else names the flag and value.
TEST(BenchSoak, ParsesDurations) {
  EXPECT_EQ(parse_soak_duration("600").value().count(), 600.0);
  EXPECT_EQ(parse_soak_duration("30s").value().count(), 30.0);
  EXPECT_EQ(parse_soak_duration("10m").value().count(), 600.0);
  EXPECT_EQ(parse_soak_duration("1h").value().count(), 3600.0);
  for (const char* bad : {"", "s", "ten", "1.5m", "-3", "10x", "0", "0m", "3 s"}) {
    auto parsed = parse_soak_duration(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().message.rfind(std::string("--soak: '") + bad + "'", 0), 0U)
        << parsed.error().message;
  }
}

TEST(BenchSoak, BadFlagsAreNamedAndNothingRuns) {
  TempDir dir;
  const auto out =
      run(std::string(BOREAL_BIN) +
          " bench --soak 5min --media tcp,fabric-msg --rates 10%,20% --out " + dir.file("out"));
  EXPECT_EQ(out.status, 2);
  EXPECT_EQ(out.text,
            "bench: --soak: '5min' is not a duration (expected whole seconds such as 600, or 30s, "
            "10m, 1h)\n"
            "bench: --rates: a soak runs at one rate, got 2\n"
            "bench: --media: a soak takes one value, got 2\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
  const auto at_max =
      run(std::string(BOREAL_BIN) + " bench --soak 30s --rates max --out " + dir.file("out"));
  EXPECT_EQ(at_max.status, 2);
  EXPECT_EQ(at_max.text,
            "bench: --rates: a soak runs below the maximum: give N% of it or tuples/s, not max\n");
  const auto too_long = run(std::string(BOREAL_BIN) + " bench --soak 2h --out " + dir.file("out"));
  EXPECT_EQ(too_long.status, 2);
  EXPECT_EQ(too_long.text,
            "bench: --soak 2h is longer than --time-limit 60 (minutes); raise --time-limit\n");
}

TEST(BenchSoak, ReadsTheSeriesItNeedsFromAScrape) {
  const std::string text =
      "# HELP boreal_process_resident_memory_bytes x\n"
      "boreal_process_resident_memory_bytes{node=\"dst\"} 4096000\n"
      "boreal_node_tuples_sent_total{node=\"dst\"} 10\n"
      "boreal_node_tuples_received_total{node=\"dst\"} 90\n"
      "boreal_link_send_buffers_in_use{node=\"dst\",link=\"a\"} 3\n"
      "boreal_link_send_buffers_in_use{node=\"dst\",link=\"b\"} 4\n"
      "boreal_link_send_buffers{node=\"dst\",link=\"a\"} 64\n"
      "boreal_link_frames_unacknowledged{node=\"dst\",link=\"a\"} 2\n"
      "boreal_link_backlog_bytes{node=\"dst\",link=\"a\"} 128\n"
      "boreal_sink_lost_tuples{node=\"dst\",box=\"s\",thread=\"0\"} 1\n"
      "boreal_sink_duplicated_total{node=\"dst\",box=\"s\",thread=\"0\"} 2\n"
      "boreal_sink_out_of_order_total{node=\"dst\",box=\"s\",thread=\"0\"} 3\n"
      "boreal_sink_latency_seconds_bucket{node=\"dst\",box=\"s\",thread=\"0\",le=\"0.001\"} 5\n"
      "boreal_sink_latency_seconds_bucket{node=\"dst\",box=\"s\",thread=\"0\",le=\"+Inf\"} 6\n"
      "boreal_sink_latency_seconds_count{node=\"dst\",box=\"s\",thread=\"0\"} 6\n";
  const SoakScrape s = parse_scrape(text);
  EXPECT_EQ(s.rss_bytes, 4096000);
  EXPECT_EQ(s.tuples, 100);
  EXPECT_EQ(s.buffers_in_use, 7);
  EXPECT_EQ(s.buffers, 64);
  EXPECT_EQ(s.frames_unacknowledged, 2);
  EXPECT_EQ(s.backlog_bytes, 128);
  EXPECT_EQ(s.lost, 1);
  EXPECT_EQ(s.duplicated, 2);
  EXPECT_EQ(s.out_of_order, 3);
  ASSERT_EQ(s.latency.size(), 2U);
  EXPECT_EQ(s.latency.at(0.001), 5);
  EXPECT_EQ(s.latency.at(std::numeric_limits<double>::infinity()), 6);
}

// The p99 of the interval comes from the bucket differences, interpolated inside the bucket.
TEST(BenchSoak, P99IsTakenFromTheBucketDeltas) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::map<double, double> before = {{0.0001, 1000}, {0.0002, 1000}, {inf, 1000}};
  // 100 new values: 50 at most 100 us, 50 in (100, 200] us. Rank 99 is the 49th of the
  // second bucket's 50: 100 + 100 × 49/50 = 198 us.
  const std::map<double, double> after = {{0.0001, 1050}, {0.0002, 1100}, {inf, 1100}};
  EXPECT_NEAR(p99_between(before, after), 198.0, 1e-6);
  EXPECT_EQ(p99_between(after, after), 0.0);  // nothing new
  // In the +Inf bucket: the last finite bound.
  const std::map<double, double> slow = {{0.0001, 1000}, {0.0002, 1000}, {inf, 1100}};
  EXPECT_NEAR(p99_between(before, slow), 200.0, 1e-6);
}

std::vector<SoakRow> soak_rows(int seconds, double rss_growth_kb_per_s, double lost_at_end) {
  std::vector<SoakRow> rows;
  for (int t = 1; t <= seconds; ++t) {
    rows.push_back(
        {t, "src", 10240 + rss_growth_kb_per_s * t, 2, 4, 64, 0, 1e6, 0, 0, 0, 0, false});
    rows.push_back(
        {t, "dst", 20480, 0, 0, 0, 0, 1e6, t == seconds ? lost_at_end : 0, 0, 0, 150, true});
  }
  return rows;
}

TEST(BenchSoak, FlatMeansSteadyRssAndOccupancyAndNoLoss) {
  const auto flat = flatness(soak_rows(30, 0, 0));
  EXPECT_TRUE(flat.flat);
  EXPECT_TRUE(flat.reasons.empty());
  // Up to 4 MiB is allowed on a small process: 100 KiB/s over the 20 s between the windows'
  // medians is 2 MiB; 400 KiB/s is 7.8 MiB, too much.
  EXPECT_TRUE(flatness(soak_rows(30, 100, 0)).flat);
  const auto growing = flatness(soak_rows(30, 400, 0));
  ASSERT_FALSE(growing.flat);
  ASSERT_EQ(growing.reasons.size(), 1U);
  EXPECT_EQ(growing.reasons[0].rfind("src: RSS went from", 0), 0U) << growing.reasons[0];
  const auto lossy = flatness(soak_rows(30, 0, 7));
  ASSERT_FALSE(lossy.flat);
  EXPECT_EQ(lossy.reasons[0], "dst: 7 tuples lost and 0 duplicated at its sinks");
  EXPECT_FALSE(flatness(soak_rows(14, 0, 0)).flat);
  EXPECT_TRUE(flatness(soak_rows(15, 0, 0)).flat);
  auto filling = soak_rows(30, 0, 0);
  for (auto& row : filling) {
    if (row.node == "src" && row.elapsed_s > 20) row.buffers_in_use = 60;
  }
  EXPECT_FALSE(flatness(filling).flat);
  auto slower = soak_rows(30, 0, 0);
  for (auto& row : slower) {
    if (row.node == "dst" && row.elapsed_s > 20) row.p99_us = 9000;
  }
  EXPECT_FALSE(flatness(slower).flat);
  // A late p99 as high as a spike of the early window is noise, not growth.
  auto noisy = slower;
  for (auto& row : noisy) {
    if (row.node == "dst" && row.elapsed_s == 7) row.p99_us = 12000;
  }
  EXPECT_TRUE(flatness(noisy).flat);
  // Behind from the start: a p99 of seconds throughout is not flat, though it never grows.
  auto behind = soak_rows(30, 0, 0);
  for (auto& row : behind) {
    if (row.node == "dst") row.p99_us = 17179869;
  }
  const auto fell_behind = flatness(behind);
  ASSERT_FALSE(fell_behind.flat);
  EXPECT_EQ(
      fell_behind.reasons.at(0),
      "dst: p99 of 17179869 us at the end (a second or more: the nodes fell behind the load)");
  const std::string summary = soak_summary(soak_rows(30, 0, 0), flat, 2e6, 1.6e6);
  EXPECT_NE(summary.find("verdict: flat"), std::string::npos) << summary;
}

TEST(BenchSoak, SustainedMaximumIsTheMeanScaledToTheSlowSeconds) {
  // Two nodes; seconds 1..21. Second 1 is warm-up and 21 the end, both left out; of 2..20,
  // every node's rate is 40 M but for seconds 5..8 at 20 M, and second 12 lacks dst's row.
  std::vector<SoakRow> rows;
  for (int second = 1; second <= 21; ++second) {
    for (const char* node : {"src", "dst"}) {
      if (second == 12 && std::string(node) == "dst") continue;
      SoakRow row;
      row.elapsed_s = second;
      row.node = node;
      row.tuples_per_s = second >= 5 && second <= 8 ? 20e6 : second == 1 ? 1e6 : 40e6;
      rows.push_back(row);
    }
  }
  // 18 whole seconds (2..20 but 12): 14 at 80 M summed, 4 at 40 M; mean 71.11 M. The 10th
  // percentile by nearest rank is the 2nd slowest: 40 M, 0.5625 of the mean.
  const SustainedMaximum slow = sustained_maximum(rows, 2, 1, 20, 30e6);
  EXPECT_EQ(slow.seconds, 18U);
  EXPECT_NEAR(slow.slow_ratio, 40.0 / (14 * 80.0 + 4 * 40.0) * 18, 1e-12);
  EXPECT_NEAR(slow.rate, 30e6 * slow.slow_ratio, 1e-3);
  // Steady seconds: the mean itself.
  const SustainedMaximum steady = sustained_maximum(rows, 2, 9, 20, 30e6);
  EXPECT_EQ(steady.seconds, 10U);
  EXPECT_DOUBLE_EQ(steady.slow_ratio, 1.0);
  EXPECT_DOUBLE_EQ(steady.rate, 30e6);
  // No whole second: the run's own rate, untouched.
  const SustainedMaximum none = sustained_maximum(rows, 3, 1, 20, 30e6);
  EXPECT_EQ(none.seconds, 0U);
  EXPECT_DOUBLE_EQ(none.rate, 30e6);
}

}  // namespace
}  // namespace boreal::runtime
