#include <boreal/ops/aggregate.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// GCC 12 warns on designated initialisers that leave members to their defaults (the style
// this API is built for), and gives false -Wrestrict / -Wmaybe-uninitialized reports on
// std::string concatenation (GCC PR 105329); neither is a problem in this file.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wrestrict"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace boreal::ops {
namespace {

constexpr std::string_view kInput = "seq:i64,ts:i64,key:i64,val:i64,x:f64,b:bool,s:str8";

struct In {
  std::int64_t ts = 0;
  std::int64_t key = 0;
  std::int64_t val = 0;
  double x = 0;
  bool b = false;
  std::string s;
};

Schema input_schema() { return Schema::parse(kInput).value(); }

// Renders every output row as "v1|v2|...".
struct Collect final : BatchConsumer {
  explicit Collect(const Schema& schema) : schema_(schema) {}
  void consume(const BatchView& batch) override {
    for (Row row : batch) {
      std::string line;
      for (const Field& f : schema_.fields()) {
        if (!line.empty()) line += '|';
        const std::byte* at = row.data() + f.offset;
        switch (f.type) {
          case FieldType::i32: {
            std::int32_t v;
            std::memcpy(&v, at, 4);
            line += std::to_string(v);
            break;
          }
          case FieldType::i64:
          case FieldType::timestamp: {
            std::int64_t v;
            std::memcpy(&v, at, 8);
            line += std::to_string(v);
            break;
          }
          case FieldType::f64: {
            double v; std::memcpy(&v, at, 8);
            char buf[40]; std::snprintf(buf, sizeof buf, "%.17g", v); line += buf; break;
          }
          case FieldType::boolean:
            line += (*reinterpret_cast<const char*>(at) != 0) ? "1" : "0";
            break;
          case FieldType::str:
            line += FieldRef<std::string_view>{f.offset, f.width}.get(row);
            break;
        }
      }
      rows.push_back(line);
    }
  }
  void end() override { ++ends; }
  Schema schema_;
  std::vector<std::string> rows;
  int ends = 0;
};

OwnedBatch make_batch(const std::vector<In>& in, std::size_t from, std::size_t to) {
  const Schema schema = input_schema();
  OwnedBatch batch(schema, std::max<std::size_t>(to - from, 1));
  const auto s = FieldRef<std::string_view>::bind(schema, "s").value();
  const auto b = FieldRef<bool>::bind(schema, "b").value();
  const auto x = FieldRef<double>::bind(schema, "x").value();
  for (std::size_t i = from; i < to; ++i) {
    MutRow row = batch.append();
    const std::int64_t v[4] = {static_cast<std::int64_t>(i), in[i].ts, in[i].key, in[i].val};
    std::memcpy(row.data(), v, sizeof v);
    x.set(row, in[i].x);
    b.set(row, in[i].b);
    s.set(row, in[i].s);
  }
  return batch;
}

// Runs the box over `in` split at `cuts` (batch boundaries), with ticks after given batches.
std::vector<std::string> run(const AggregateParams& params, const std::vector<In>& in,
                             const std::vector<std::size_t>& sizes,
                             std::uint64_t* dropped = nullptr) {
  auto box = AggregateBox::make(params, input_schema());
  EXPECT_TRUE(box) << (box ? "" : box.error().message);
  if (!box) return {};
  Collect out(box.value()->output(0).schema());
  box.value()->output(0).connect(&out);
  std::size_t at = 0, k = 0;
  while (at < in.size()) {
    const std::size_t n = std::min(sizes[k++ % sizes.size()], in.size() - at);
    box.value()->process(0, make_batch(in, at, at + n));
    at += n;
  }
  box.value()->finish(0);
  EXPECT_EQ(out.ends, 1);
  if (dropped != nullptr) *dropped = box.value()->dropped_late();
  return out.rows;
}

std::vector<In> seq_input(std::vector<std::pair<std::int64_t, std::int64_t>> ts_val,
                          std::int64_t key = 0) {
  std::vector<In> in;
  for (auto [t, v] : ts_val)
    in.push_back({t, key, v, 0.5 * static_cast<double>(v), v % 2 != 0, "s" + std::to_string(v)});
  return in;
}

AggregateParams count_params(std::uint64_t size, std::uint64_t slide,
                             std::vector<AggregateField> aggs) {
  return {.group_by = {"key"}, .window = {.size = Count{size}, .slide = Count{slide}},
          .aggregates = std::move(aggs)};
}
AggregateParams time_params(std::int64_t size, std::int64_t slide,
                            std::vector<AggregateField> aggs, std::int64_t slack = 0) {
  return {.group_by = {"key"},
          .window = {.field = "ts", .size = Duration(size), .slide = Duration(slide)},
          .aggregates = std::move(aggs), .slack = Duration(slack)};
}

const std::vector<AggregateField> kAll = {
    {"count", "", "n"},    {"sum", "val", "sum"},   {"sum", "x", "sumx"},
    {"avg", "val", "avg"}, {"avg", "x", "avgx"},    {"min", "val", "mn"},
    {"max", "val", "mx"},  {"min", "s", "mns"},     {"max", "s", "mxs"},
    {"first", "val", "f"}, {"last", "val", "l"},    {"first", "x", "fx"},
    {"last", "s", "ls"},   {"max", "b", "mxb"}};

TEST(AggregateBox, OutputSchemaListsGroupsWindowAndAggregates) {
  auto p = time_params(10, 10, kAll);
  EXPECT_EQ(p.output_schema(input_schema()).value().to_string(),
            "key:i64,window_start:i64,window_end:i64,n:i64,sum:i64,sumx:f64,avg:f64,avgx:f64,"
            "mn:i64,mx:i64,mns:str8,mxs:str8,f:i64,l:i64,fx:f64,ls:str8,mxb:bool");
  auto ts = Schema::parse("t:timestamp,v:i32").value();
  AggregateParams q{.window = {.field = "t", .size = Duration(5), .slide = Duration(5)},
                    .aggregates = {{"sum", "v", "s"}, {"max", "v", "m"}}};
  EXPECT_EQ(q.output_schema(ts).value().to_string(),
            "window_start:timestamp,window_end:timestamp,s:i64,m:i32");
}

TEST(AggregateBox, TumblingCountWindowHandComputed) {
  auto in = seq_input({{0, 3}, {0, 1}, {0, 4}, {0, 1}, {0, 5}});
  auto rows = run(count_params(2, 2, {{"count", "", "n"}, {"sum", "val", "s"}, {"min", "val", "mn"},
                                      {"max", "val", "mx"}, {"avg", "val", "a"},
                                      {"first", "val", "f"}, {"last", "val", "l"}}),
                  in, {64});
  EXPECT_EQ(rows, (std::vector<std::string>{"0|0|1|2|4|1|3|2|3|1", "0|2|3|2|5|1|4|2.5|4|1",
                                            "0|4|4|1|5|5|5|5|5|5"}));
}

TEST(AggregateBox, SlidingCountWindowPerGroup) {
  std::vector<In> in = seq_input({{0, 1}, {0, 2}, {0, 3}, {0, 4}});
  auto other = seq_input({{0, 10}, {0, 20}}, 7);
  in.insert(in.begin() + 1, other[0]);
  in.insert(in.begin() + 3, other[1]);
  // key 0: 1 2 3 4; key 7: 10 20. size 3 slide 1.
  auto rows = run(count_params(3, 1, {{"sum", "val", "s"}}), in, {1});
  EXPECT_EQ(rows, (std::vector<std::string>{"0|0|2|6", "0|1|3|9", "0|2|3|7", "0|3|3|4",
                                            "7|0|1|30", "7|1|1|20"}));
}

TEST(AggregateBox, TumblingTimeWindowHandComputed) {
  auto in = seq_input({{1, 5}, {3, 2}, {9, 7}, {10, 1}, {25, 4}});
  auto rows = run(time_params(10, 10,
                              {{"count", "", "n"},
                               {"sum", "val", "s"},
                               {"min", "val", "mn"},
                               {"max", "val", "mx"},
                               {"avg", "x", "a"},
                               {"first", "val", "f"},
                               {"last", "s", "l"}}),
                  in, {2});
  EXPECT_EQ(rows, (std::vector<std::string>{"0|0|10|3|14|2|7|2.3333333333333335|5|s7",
                                            "0|10|20|1|1|1|1|0.5|1|s1",
                                            "0|20|30|1|4|4|4|2|4|s4"}));
}

TEST(AggregateBox, SlidingTimeWindowOrderedByEndThenFirstSeenGroup) {
  std::vector<In> in = {{2, 9, 1}, {3, 4, 2}, {6, 9, 3}, {11, 4, 4}};
  // size 6 slide 3: windows [-3,3) [0,6) [3,9) [6,12) [9,15)
  auto rows = run(time_params(6, 3, {{"sum", "val", "s"}}), in, {64});
  EXPECT_EQ(rows, (std::vector<std::string>{"9|-3|3|1", "9|0|6|1", "4|0|6|2", "9|3|9|3",
                                            "4|3|9|2", "9|6|12|3", "4|6|12|4", "4|9|15|4"}));
}

// ---- brute-force reference ----

std::string fmt(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// kAll over the tuples `w` (sorted by (time, arrival)).
std::string reference_row(std::int64_t key, std::int64_t start, std::int64_t end,
                          const std::vector<In>& w) {
  std::int64_t sum = 0, mn = w[0].val, mx = w[0].val;
  double sumx = 0;
  std::string mns = w[0].s, mxs = w[0].s;
  bool mxb = false;
  for (const In& t : w) {
    sum += t.val;
    sumx += t.x;
    mn = std::min(mn, t.val);
    mx = std::max(mx, t.val);
    mns = std::min(mns, t.s);
    mxs = std::max(mxs, t.s);
    mxb = mxb || t.b;
  }
  const double n = static_cast<double>(w.size());
  std::string r = std::to_string(key) + "|" + std::to_string(start) + "|" + std::to_string(end);
  for (std::string v : {std::to_string(w.size()), std::to_string(sum), fmt(sumx),
                        fmt(static_cast<double>(sum) / n), fmt(sumx / n), std::to_string(mn),
                        std::to_string(mx), mns, mxs, std::to_string(w.front().val),
                        std::to_string(w.back().val), fmt(w.front().x), w.back().s,
                        std::string(mxb ? "1" : "0")}) {
    r += "|" + v;
  }
  return r;
}

std::vector<std::int64_t> first_seen_keys(const std::vector<In>& in) {
  std::vector<std::int64_t> keys;
  for (const In& t : in) {
    if (std::find(keys.begin(), keys.end(), t.key) == keys.end()) keys.push_back(t.key);
  }
  return keys;
}

std::vector<std::string> reference_time(const std::vector<In>& in, std::int64_t size,
                                        std::int64_t slide) {
  std::vector<In> sorted = in;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const In& a, const In& b) { return a.ts < b.ts; });
  const auto fd = [](std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && (a < 0)); };
  const std::int64_t k_lo = fd(sorted.front().ts - size, slide) + 1;
  const std::int64_t k_hi = fd(sorted.back().ts, slide);
  std::vector<std::string> out;
  for (std::int64_t k = k_lo; k <= k_hi; ++k) {
    for (std::int64_t key : first_seen_keys(in)) {
      std::vector<In> w;
      for (const In& t : sorted) {
        if (t.key == key && t.ts >= k * slide && t.ts < k * slide + size) w.push_back(t);
      }
      if (!w.empty()) out.push_back(reference_row(key, k * slide, k * slide + size, w));
    }
  }
  return out;
}

std::vector<std::string> reference_count(const std::vector<In>& in, std::int64_t size,
                                         std::int64_t slide) {
  std::map<std::size_t, std::string> complete;  // by position of the closing tuple
  std::vector<std::string> partial;
  for (std::int64_t key : first_seen_keys(in)) {
    std::vector<In> seq;
    std::vector<std::size_t> pos;
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (in[i].key == key) {
        seq.push_back(in[i]);
        pos.push_back(i);
      }
    }
    const auto n = static_cast<std::int64_t>(seq.size());
    for (std::int64_t start = 0; start < n; start += slide) {
      const std::int64_t last = std::min(start + size, n) - 1;
      std::vector<In> w(seq.begin() + start, seq.begin() + last + 1);
      std::string row = reference_row(key, start, last, w);
      if (start + size <= n) {
        complete[pos[static_cast<std::size_t>(last)]] = row;
      } else {
        partial.push_back(row);
      }
    }
  }
  std::vector<std::string> out;
  for (auto& [p, row] : complete) out.push_back(row);
  out.insert(out.end(), partial.begin(), partial.end());
  return out;
}

std::vector<In> random_input(std::mt19937_64& rng, std::size_t n, bool distinct_times) {
  std::vector<In> in;
  std::int64_t t = static_cast<std::int64_t>(rng() % 50) - 25;
  for (std::size_t i = 0; i < n; ++i) {
    t += distinct_times ? 1 + static_cast<std::int64_t>(rng() % 3)
                        : static_cast<std::int64_t>(rng() % 3);
    const auto v = static_cast<std::int64_t>(rng() % 201) - 100;
    in.push_back({t, static_cast<std::int64_t>(rng() % 5), v,
                  static_cast<double>(static_cast<std::int64_t>(rng() % 41) - 20) * 0.25,
                  rng() % 4 == 0, "s" + std::to_string(rng() % 30)});
  }
  return in;
}

struct Shape {
  std::uint64_t size, slide;
};
const Shape kShapes[] = {{1, 1}, {5, 5}, {6, 2}, {7, 3}, {10, 1}, {4, 3}};

TEST(AggregateBox, MatchesBruteForceReferenceOnRandomInput) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 4; ++round) {
    const std::vector<In> in = random_input(rng, 300, false);
    for (Shape sh : kShapes) {
      SCOPED_TRACE("size " + std::to_string(sh.size) + " slide " + std::to_string(sh.slide));
      EXPECT_EQ(run(time_params(sh.size, sh.slide, kAll), in, {64}),
                reference_time(in, static_cast<std::int64_t>(sh.size),
                               static_cast<std::int64_t>(sh.slide)));
      EXPECT_EQ(run(count_params(sh.size, sh.slide, kAll), in, {64}),
                reference_count(in, static_cast<std::int64_t>(sh.size),
                                static_cast<std::int64_t>(sh.slide)));
    }
  }
}

TEST(AggregateBox, OutputDoesNotDependOnBatching) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<In> in = random_input(rng, 2000, false);
  std::vector<std::size_t> random_sizes;
  for (int i = 0; i < 50; ++i) random_sizes.push_back(1 + rng() % 100);
  for (bool time : {false, true}) {
    const AggregateParams p = time ? time_params(6, 2, kAll, 3) : count_params(6, 2, kAll);
    const auto whole = run(p, in, {in.size()});
    ASSERT_FALSE(whole.empty());
    for (std::vector<std::size_t> sizes :
         std::vector<std::vector<std::size_t>>{{1}, {7}, {64}, {1024}, random_sizes}) {
      EXPECT_EQ(run(p, in, sizes), whole) << "first batch size " << sizes[0];
    }
  }
}

TEST(AggregateBox, OutOfOrderWithinSlackMatchesSortedInput) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<In> sorted = random_input(rng, 1000, true);
  // Keys 0..4 first, unshuffled, so both runs see the groups in the same first-seen order.
  for (std::size_t i = 0; i < 8; ++i) sorted[i].key = static_cast<std::int64_t>(i % 5);
  // Shuffle inside blocks of 4 tuples: times of distinct-time tuples 1..3 apart, so a tuple is
  // at most 3 * 3 = 9 behind the highest time seen.
  std::vector<In> shuffled = sorted;
  for (std::size_t i = 8; i + 4 <= shuffled.size(); i += 4) {
    std::shuffle(shuffled.begin() + static_cast<std::ptrdiff_t>(i),
                 shuffled.begin() + static_cast<std::ptrdiff_t>(i) + 4, rng);
  }
  for (Shape sh : kShapes) {
    std::uint64_t dropped = 99;
    EXPECT_EQ(run(time_params(sh.size, sh.slide, kAll, 9), shuffled, {7}, &dropped),
              run(time_params(sh.size, sh.slide, kAll, 0), sorted, {7}));
    EXPECT_EQ(dropped, 0u);
  }
}

TEST(AggregateBox, LateTuplesBeyondSlackAreDroppedAndCounted) {
  auto in = seq_input({{10, 1}, {20, 2}, {14, 3}, {15, 4}, {12, 5}, {30, 6}});
  // slack 5: after 20, watermark 15: 14 and 12 are late, 15 is kept.
  std::uint64_t dropped = 0;
  auto rows = run(time_params(10, 10, {{"count", "", "n"}, {"sum", "val", "s"}}, 5), in, {1},
                  &dropped);
  EXPECT_EQ(rows, (std::vector<std::string>{"0|10|20|2|5", "0|20|30|1|2", "0|30|40|1|6"}));
  EXPECT_EQ(dropped, 2u);
}

TEST(AggregateBox, TimeoutClosesQuietWindowsOnTick) {
  auto p = time_params(10, 10, {{"count", "", "n"}});
  p.timeout = Duration(100);
  auto box = AggregateBox::make(p, input_schema()).value();
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, make_batch(seq_input({{3, 1}, {5, 1}}), 0, 2));
  box->tick(104);  // 99 after the highest time: not yet
  box->output(0).flush();
  EXPECT_TRUE(out.rows.empty());
  box->tick(105);
  box->output(0).flush();
  EXPECT_EQ(out.rows, (std::vector<std::string>{"0|0|10|2"}));
  // The window is closed: a tuple for it is late; a later one opens a new window.
  box->process(0, make_batch(seq_input({{8, 1}, {12, 1}}), 0, 2));
  box->tick(1000);
  box->output(0).flush();
  EXPECT_EQ(out.rows, (std::vector<std::string>{"0|0|10|2", "0|10|20|1"}));
  EXPECT_EQ(box->dropped_late(), 1u);
  box->finish(0);
  EXPECT_EQ(out.rows.size(), 2u);
}

TEST(AggregateBox, LongGapsAndNegativeTimes) {
  auto in = seq_input({{-7, 1}, {-1, 2}, {1'000'000'000, 3}, {1'000'000'001, 4}});
  auto rows = run(time_params(4, 2, {{"sum", "val", "s"}}), in, {64});
  EXPECT_EQ(rows,
            (std::vector<std::string>{"0|-10|-6|1", "0|-8|-4|1", "0|-4|0|2", "0|-2|2|2",
                                      "0|999999998|1000000002|7", "0|1000000000|1000000004|7"}));
}

TEST(AggregateBox, NoGroupByAndCompositeKeys) {
  std::vector<In> in = {{0, 1, 1, 0, false, "a"},
                        {1, 2, 2, 0, false, "b"},
                        {2, 1, 3, 0, false, "a"},
                        {3, 1, 4, 0, false, "b"}};
  AggregateParams none{.window = {.size = Count{4}, .slide = Count{4}},
                       .aggregates = {{"sum", "val", "s"}}};
  EXPECT_EQ(run(none, in, {3}), (std::vector<std::string>{"0|3|10"}));
  AggregateParams two{.group_by = {"s", "key"},
                      .window = {.size = Count{4}, .slide = Count{4}},
                      .aggregates = {{"sum", "val", "s2"}}};
  EXPECT_EQ(run(two, in, {3}), (std::vector<std::string>{"a|1|0|1|4", "b|2|0|0|2", "b|1|0|0|4"}));
}

TEST(AggregateBox, ManyGroupsGrowTheTable) {
  std::vector<In> in;
  for (int r = 0; r < 3; ++r) {
    for (std::int64_t k = 0; k < 5000; ++k) in.push_back({0, k * 7919, 1, 0, false, ""});
  }
  auto box = AggregateBox::make(count_params(3, 3, {{"sum", "val", "s"}}), input_schema()).value();
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, make_batch(in, 0, in.size()));
  box->finish(0);
  EXPECT_EQ(box->group_count(), 5000u);
  ASSERT_EQ(out.rows.size(), 5000u);
  EXPECT_EQ(out.rows[4999], std::to_string(4999 * 7919) + "|0|2|3");
}

TEST(AggregateBox, TimestampAndI32TimeFields) {
  const Schema ts_schema = Schema::parse("t:timestamp,v:i32").value();
  for (const char* type : {"timestamp", "i32"}) {
    SCOPED_TRACE(type);
    const Schema schema = Schema::parse(std::string("t:") + type + ",v:i32").value();
    AggregateParams p{.window = {.field = "t", .size = Duration(100), .slide = Duration(50)},
                      .aggregates = {{"sum", "v", "s"}, {"last", "v", "l"}}};
    auto box = AggregateBox::make(p, schema).value();
    Collect out(box->output(0).schema());
    box->output(0).connect(&out);
    OwnedBatch batch(schema, 3);
    for (std::int64_t t : {-20, 40, 170}) {
      MutRow row = batch.append();
      if (schema == ts_schema) {
        FieldRef<Timestamp>{0}.set(row, Timestamp(std::chrono::nanoseconds(t)));
      } else {
        FieldRef<std::int32_t>{0}.set(row, static_cast<std::int32_t>(t));
      }
      FieldRef<std::int32_t>::bind(schema, "v").value().set(row, static_cast<std::int32_t>(t / 10));
    }
    box->process(0, batch);
    box->finish(0);
    EXPECT_EQ(out.rows, (std::vector<std::string>{"-100|0|-2|-2", "-50|50|2|4", "0|100|4|4",
                                                  "100|200|17|17", "150|250|17|17"}));
    EXPECT_EQ(box->output(0).schema().field(0).type,
              schema == ts_schema ? FieldType::timestamp : FieldType::i64);
  }
}

TEST(AggregateBox, TickWithoutTimeoutDoesNothing) {
  for (bool time : {false, true}) {
    auto p = time ? time_params(10, 10, {{"count", "", "n"}})
                  : count_params(10, 10, {{"count", "", "n"}});
    auto box = AggregateBox::make(p, input_schema()).value();
    Collect out(box->output(0).schema());
    box->output(0).connect(&out);
    box->process(0, make_batch(seq_input({{3, 1}, {5, 1}}), 0, 2));
    box->tick(std::numeric_limits<std::int64_t>::max());
    box->output(0).flush();
    EXPECT_TRUE(out.rows.empty());
    box->finish(0);
    EXPECT_EQ(out.rows.size(), 1u);
  }
}

// ---- bad parameters ----

std::string errors_of(const AggregateParams& p) {
  return describe(p.validate(input_schema()));
}

TEST(AggregateParams, ReportsEveryProblemAtOnce) {
  AggregateParams p{.group_by = {"nope"},
                    .window = {.field = "s", .size = Duration(0), .slide = Duration(0)},
                    .aggregates = {{"median", "val", "m"}, {"sum", "s", "m"}}};
  EXPECT_EQ(errors_of(p),
            "params.group_by[0]: unknown field 'nope'\n"
            "params.window.field: time field 's' is str8; expected timestamp, i64 or i32\n"
            "params.window.size: size must be positive; got 0ns\n"
            "params.window.slide: slide must be positive; got 0ns\n"
            "params.aggregates[0].function: unknown function 'median'; expected count, sum, min, "
            "max, avg, first or last\n"
            "params.aggregates[1].field: sum needs an i32, i64 or f64 field; 's' is str8\n"
            "params.aggregates[1].as: duplicate output name 'm'");
  auto made = AggregateBox::make(p, input_schema());
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().message, errors_of(p));
}

TEST(AggregateParams, EachErrorKindHasItsMessage) {
  const auto base = time_params(10, 5, {{"count", "", "n"}});
  const auto count = count_params(10, 10, {{"count", "", "n"}});
  EXPECT_EQ(errors_of(base), "");
  // Each case: the parameters it starts from, what it changes, the errors expected.
  struct Case {
    const AggregateParams& start;
    std::function<void(AggregateParams&)> change;
    std::string expected;
  };
  using P = AggregateParams;
  const Case cases[] = {
      {base, [](P& p) { p.window.slide = Duration(11); },
       "params.window.slide: slide 11ns is larger than size 10ns"},
      {base, [](P& p) { p.window.field = ""; },
       "params.window.field: a time window needs a time field"},
      {base, [](P& p) { p.window.field = "zz"; }, "params.window.field: unknown field 'zz'"},
      {base,
       [](P& p) {
         p.window.size = Duration((1ll << 61) + 1);
         p.window.slide = Duration(1);
       },
       "params.window.size: size must be at most 2^61 ns"},
      {base, [](P& p) { p.timeout = Duration(0); },
       "params.timeout: timeout must be positive; got 0ns"},
      {base,
       [](P& p) {
         p.window.size = Duration(5000);
         p.window.slide = Duration(1);
       },
       "params.window: size + slack spans 5002 panes of gcd(size, slide) = 1ns; at most 4096 "
       "are supported"},
      {base, [](P& p) { p.window.slide = Count{5}; },
       "params.window.slide: slide is 5 tuples but size is 10ns: a window is either a Duration "
       "(time) or a Count (tuples) in both"},
      {base, [](P& p) { p.slack = Duration(-3); },
       "params.slack: slack must not be negative; got -3ns"},
      {base,
       [](P& p) {
         p.window.size = Duration(-10);
         p.window.slide = Duration(-10);
       },
       "params.window.size: size must be positive; got -10ns\n"
       "params.window.slide: slide must be positive; got -10ns"},
      {base, [](P& p) { p.aggregates = {}; },
       "params.aggregates: at least one aggregate is needed"},
      {base, [](P& p) { p.aggregates = {{"count", "val", "n"}}; },
       "params.aggregates[0].field: count takes no field; got 'val'"},
      {base, [](P& p) { p.aggregates = {{"max", "", "n"}}; },
       "params.aggregates[0].field: max needs a field"},
      {base, [](P& p) { p.aggregates = {{"min", "zz", "n"}}; },
       "params.aggregates[0].field: unknown field 'zz'"},
      {base, [](P& p) { p.aggregates = {{"avg", "b", "n"}}; },
       "params.aggregates[0].field: avg needs an i32, i64 or f64 field; 'b' is bool"},
      {base, [](P& p) { p.aggregates = {{"count", "", "1x"}}; },
       "params.aggregates[0].as: output name '1x' is not an identifier (letters, digits, '_', "
       "not starting with a digit)"},
      {base, [](P& p) { p.aggregates = {{"count", "", "key"}}; },
       "params.aggregates[0].as: duplicate output name 'key'"},
      {base, [](P& p) { p.aggregates = {{"count", "", "window_end"}}; },
       "params.aggregates[0].as: duplicate output name 'window_end'"},
      {count, [](P& p) { p.window.field = "ts"; },
       "params.window.field: a count window has no time field; got 'ts'"},
      {count, [](P& p) { p.timeout = Duration(5); },
       "params.timeout: a timeout needs a time window"},
      {count, [](P& p) { p.slack = Duration(5); }, "params.slack: slack needs a time window"},
  };
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    auto p = cases[i].start;
    cases[i].change(p);
    EXPECT_EQ(errors_of(p), cases[i].expected) << "case " << i;
  }
}

// ---- expression arguments ----

TEST(AggregateBox, ExpressionArgumentsHandComputed) {
  // x = val / 2, b = val is odd; windows [0,10): 5 2 7, [10,20): 1, [20,30): 4.
  auto in = seq_input({{1, 5}, {3, 2}, {9, 7}, {10, 1}, {25, 4}});
  const auto p = time_params(10, 10, {{"sum", "val * 2", "s2"}, {"sum", "x * 0.5", "sx"},
                                      {"avg", "val + 1", "a1"}, {"min", "val - 10", "mn"},
                                      {"max", "abs(val - 4)", "mx"}, {"first", "x * 2", "fx"},
                                      {"last", "val > 3", "lb"}, {"max", "b and val > 5", "mxb"},
                                      {"sum", "int(val BETWEEN 3 AND 7)", "hits"},
                                      {"sum", "val", "plain"}});
  EXPECT_EQ(p.output_schema(input_schema()).value().to_string(),
            "key:i64,window_start:i64,window_end:i64,s2:i64,sx:f64,a1:f64,mn:i64,mx:i64,fx:f64,"
            "lb:bool,mxb:bool,hits:i64,plain:i64");
  EXPECT_EQ(run(p, in, {2}),
            (std::vector<std::string>{"0|0|10|28|3.5|5.666666666666667|-8|3|5|1|1|2|14",
                                      "0|10|20|2|0.25|2|-9|3|1|0|0|0|1",
                                      "0|20|30|8|1|5|-6|0|4|1|0|1|4"}));
}

// Each expression equals the field it wraps, so the box must give the same rows as with plain
// fields, whatever the batching (chunks of Expr::kChunkRows rows inside a batch, batches of
// one row) and with late tuples dropped between chunks.
TEST(AggregateBox, ExpressionArgumentsMatchPlainFieldsAcrossBatching) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<In> in = random_input(rng, 1500, false);
  const std::vector<AggregateField> with_exprs = {
      {"count", "", "n"},              {"sum", "val + 0", "sum"},  {"sum", "x * 1", "sumx"},
      {"avg", "val - 0", "avg"},       {"avg", "1 * x", "avgx"},   {"min", "val * 1", "mn"},
      {"max", "(val)", "mx"},          {"min", "s", "mns"},        {"max", "s", "mxs"},
      {"first", "val - 0 * 5", "f"},   {"last", "val / 1", "l"},   {"first", "x / 1", "fx"},
      {"last", "s", "ls"},             {"max", "b == true", "mxb"}};
  ASSERT_EQ(with_exprs.size(), kAll.size());
  for (bool time : {false, true}) {
    const AggregateParams fields = time ? time_params(6, 2, kAll, 3) : count_params(6, 2, kAll);
    AggregateParams expressions = fields;
    expressions.aggregates = with_exprs;
    const auto want = run(fields, in, {in.size()});
    ASSERT_FALSE(want.empty());
    for (std::vector<std::size_t> sizes :
         std::vector<std::vector<std::size_t>>{{in.size()}, {1}, {255}, {256}, {257}, {7, 300}}) {
      EXPECT_EQ(run(expressions, in, sizes), want) << "first batch size " << sizes[0];
    }
  }
}

TEST(AggregateParams, ExpressionArgumentErrors) {
  const auto one = [](AggregateParams p) { return errors_of(p); };
  const auto base = time_params(10, 5, {{"count", "", "n"}});
  { auto p = base; p.aggregates = {{"sum", "val *", "n"}};
    EXPECT_EQ(
        one(p),
        "params.aggregates[0].field col 6: expected a value after '*', got end of expression");
  }
  { auto p = base; p.aggregates = {{"sum", "pric * 2", "n"}};
    EXPECT_EQ(one(p),
              "params.aggregates[0].field col 1: unknown field 'pric' (fields: seq, ts, key, val, "
              "x, b, s)");
  }
  { auto p = base; p.aggregates = {{"avg", "price mod 2", "n"}};
    EXPECT_EQ(one(p),
              "params.aggregates[0].field col 1: unknown field 'price' (fields: seq, ts, key, val, "
              "x, b, s)");
  }
  { auto p = base; p.aggregates = {{"avg", "val mod 2", "n"}};
    EXPECT_EQ(one(p),
              "params.aggregates[0].field col 5: expected an operator after 'val', got 'mod' (the "
              "remainder is '%')");
  }
  { auto p = base; p.aggregates = {{"sum", "val > 1", "n"}};
    EXPECT_EQ(one(p),
              "params.aggregates[0].field: sum needs a number; expression 'val > 1' is bool");
  }
  { auto p = base; p.aggregates = {{"max", "(s)", "n"}};
    EXPECT_EQ(
        one(p),
        "params.aggregates[0].field: max needs a number or a bool; expression '(s)' is string");
  }
  // A bare name is still a field name.
  {
    auto p = base;
    p.aggregates = {{"min", "zz", "n"}};
    EXPECT_EQ(one(p), "params.aggregates[0].field: unknown field 'zz'");
  }
  // Every problem at once: the expression's and the others'.
  { auto p = base; p.aggregates = {{"sum", "val + ", "n"}, {"avg", "b or b", "n"}};
    EXPECT_EQ(
        one(p),
        "params.aggregates[0].field col 7: expected a value after '+', got end of expression\n"
        "params.aggregates[1].field: avg needs a number; expression 'b or b' is bool\n"
        "params.aggregates[1].as: duplicate output name 'n'");
  }
  { auto p = base; p.aggregates = {{"sum", "val * 2", "n"}};
    auto made = AggregateBox::make(p, input_schema());
    EXPECT_TRUE(made) << (made ? "" : made.error().message); }
}

}  // namespace
}  // namespace boreal::ops

namespace boreal::ops {
namespace {

TEST(AggregateBox, PartialFieldTellsFlushedWindowsFromClosedOnes) {
  // Time: [0,10) and [10,20) close as time passes 20; [20,30) is flushed by finish().
  auto p = time_params(10, 10, {{"count", "", "n"}});
  p.partial_field = "partial";
  EXPECT_EQ(p.output_schema(input_schema()).value().to_string(),
            "key:i64,window_start:i64,window_end:i64,n:i64,partial:bool");
  EXPECT_EQ(run(p, seq_input({{1, 1}, {12, 1}, {25, 1}}), {1}),
            (std::vector<std::string>{"0|0|10|1|0", "0|10|20|1|0", "0|20|30|1|1"}));
  // Count: windows of 2, the third holds one tuple when the input ends.
  auto c = count_params(2, 2, {{"count", "", "n"}});
  c.partial_field = "partial";
  EXPECT_EQ(run(c, seq_input({{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}}), {2}),
            (std::vector<std::string>{"0|0|1|2|0", "0|2|3|2|0", "0|4|4|1|1"}));
}

TEST(AggregateBox, PartialFieldMarksWindowsTheTimeoutFlushes) {
  auto p = time_params(10, 10, {{"count", "", "n"}});
  p.partial_field = "partial";
  p.timeout = Duration(100);
  auto box = AggregateBox::make(p, input_schema()).value();
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, make_batch(seq_input({{3, 1}, {15, 1}}), 0, 2));
  box->tick(200);  // quiet for 185 > 100: [10,20) is flushed
  box->process(0, make_batch(seq_input({{31, 1}, {45, 1}}), 0, 2));
  box->finish(0);
  EXPECT_EQ(out.rows, (std::vector<std::string>{"0|0|10|1|0", "0|10|20|1|1", "0|30|40|1|0",
                                                "0|40|50|1|1"}));
}

TEST(AggregateParams, PartialFieldMustBeANewIdentifier) {
  auto p = time_params(10, 10, {{"count", "", "n"}});
  p.partial_field = "n";
  EXPECT_EQ(describe(p.validate(input_schema())),
            "params.partial_field: duplicate output name 'n'");
  p.partial_field = "9x";
  EXPECT_EQ(describe(p.validate(input_schema())),
            "params.partial_field: output name '9x' is not an identifier (letters, digits, '_', "
            "not starting with a digit)");
}

}  // namespace
}  // namespace boreal::ops

namespace boreal::ops {
namespace {

// Runs `in` through one aggregate up to `cut` rows, saves its state, and carries on in a fresh
// box restored from it: the rows of both boxes together are the uninterrupted box's rows.
std::vector<std::string> run_with_restart(const AggregateParams& params, const std::vector<In>& in,
                                          std::size_t cut) {
  auto first = AggregateBox::make(params, input_schema()).value();
  Collect out(first->output(0).schema());
  first->output(0).connect(&out);
  for (std::size_t at = 0; at < cut; at += 7)
    first->process(0, make_batch(in, at, std::min(cut, at + 7)));
  first->output(0).flush();
  std::vector<std::byte> state;
  EXPECT_TRUE(first->save_state(state));
  auto second = AggregateBox::make(params, input_schema()).value();
  EXPECT_TRUE(second->restore_state(state));
  second->output(0).connect(&out);
  for (std::size_t at = cut; at < in.size(); at += 5) {
    second->process(0, make_batch(in, at, std::min(in.size(), at + 5)));
  }
  second->finish(0);
  return out.rows;
}

TEST(AggregateState, ARestoredBoxCarriesOnExactlyLikeTheUninterruptedOne) {
  std::mt19937_64 rng(21);
  std::vector<In> in;
  std::int64_t ts = 0;
  for (int i = 0; i < 3000; ++i) {
    ts += static_cast<std::int64_t>(rng() % 5);
    const auto v = static_cast<std::int64_t>(rng() % 1000);
    in.push_back({ts, static_cast<std::int64_t>(rng() % 17), v, 0.25 * static_cast<double>(v),
                  v % 3 == 0, "k" + std::to_string(v % 11)});
  }
  const AggregateParams time_sliding = time_params(100, 30, kAll, 20);
  const AggregateParams count_sliding = count_params(50, 20, kAll);
  AggregateParams no_groups = time_params(64, 64, kAll);
  no_groups.group_by = {};
  AggregateParams two_keys = count_params(10, 10, kAll);
  two_keys.group_by = {"key", "s"};
  for (const AggregateParams* params : std::initializer_list<const AggregateParams*>{
           &time_sliding, &count_sliding, &no_groups, &two_keys}) {
    const auto whole = run(*params, in, {64});
    ASSERT_FALSE(whole.empty());
    for (std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{777}, std::size_t{2999}}) {
      EXPECT_EQ(run_with_restart(*params, in, cut), whole) << "cut at " << cut;
    }
  }
}

TEST(AggregateState, ABrokenStateIsRefusedNamingWhy) {
  auto box = AggregateBox::make(count_params(4, 4, kAll), input_schema()).value();
  box->process(0, make_batch(seq_input({{1, 1}, {2, 2}}), 0, 2));
  std::vector<std::byte> state;
  ASSERT_TRUE(box->save_state(state));
  auto fresh = [] { return AggregateBox::make(count_params(4, 4, kAll), input_schema()).value(); };
  state.pop_back();
  EXPECT_EQ(fresh()->restore_state(state).error().message,
            "aggregate state: truncated or followed by other bytes");
  state[0] = std::byte{0};
  EXPECT_EQ(fresh()->restore_state(state).error().message,
            "aggregate state: not an aggregate's saved state");
  auto other = AggregateBox::make(time_params(10, 10, kAll), input_schema()).value();
  std::vector<std::byte> good;
  ASSERT_TRUE(box->save_state(good));
  EXPECT_EQ(other->restore_state(good).error().message,
            "aggregate state: sizes do not fit this aggregate's groups and windows");
  EXPECT_EQ(box->restore_state(good).error().message, "restore_state on an aggregate that has run");
}

}  // namespace
}  // namespace boreal::ops
