#include <boreal/ops/join.hpp>

#include <boreal/ops/bsort.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "operators/ops_test_support.hpp"

namespace boreal::ops {
namespace {

using test_support::schema_of;
using test_support::format_row;

class Collect final : public BatchConsumer {
 public:
  explicit Collect(const Schema& schema) : schema_(schema) {}
  void consume(const BatchView& batch) override {
    for (Row row : batch) rows.push_back(format_row(schema_, row));
  }
  void end() override { ended = true; }
  std::vector<std::string> rows;
  bool ended = false;

 private:
  Schema schema_;
};

const Schema kLeft = schema_of("ts:timestamp,sym:str4,k:i32,px:f64");
const Schema kRight = schema_of("ts:timestamp,sym:str8,q:i64");

OwnedBatch left_rows(const std::vector<std::tuple<std::int64_t, std::string, int, double>>& rows) {
  OwnedBatch batch(kLeft, std::max<std::size_t>(rows.size(), 1));
  for (const auto& [ts, sym, k, px] : rows) {
    MutRow row = batch.append();
    FieldRef<Timestamp>{0}.set(row, Timestamp(std::chrono::nanoseconds(ts)));
    FieldRef<std::string_view>{8, 4}.set(row, sym);
    FieldRef<std::int32_t>{12}.set(row, k);
    FieldRef<double>{16}.set(row, px);
  }
  return batch;
}

OwnedBatch right_rows(
    const std::vector<std::tuple<std::int64_t, std::string, std::int64_t>>& rows) {
  OwnedBatch batch(kRight, std::max<std::size_t>(rows.size(), 1));
  for (const auto& [ts, sym, q] : rows) {
    MutRow row = batch.append();
    FieldRef<Timestamp>{0}.set(row, Timestamp(std::chrono::nanoseconds(ts)));
    FieldRef<std::string_view>{8, 8}.set(row, sym);
    FieldRef<std::int64_t>{16}.set(row, q);
  }
  return batch;
}

std::unique_ptr<JoinBox> make_ok(const JoinParams& params, const Schema& l = kLeft,
                                 const Schema& r = kRight) {
  auto box = JoinBox::make(params, l, r);
  EXPECT_TRUE(box) << box.error().describe();
  return std::move(box).value();
}

std::string error_of(const JoinParams& params, const Schema& l = kLeft, const Schema& r = kRight) {
  auto box = JoinBox::make(params, l, r);
  EXPECT_FALSE(box);
  return box ? std::string() : box.error().describe();
}

const auto kLeftData = left_rows({{0, "A", 1, 1.0}, {5, "B", 2, 2.0}, {12, "A", 3, 3.0}});
const auto kRightData = right_rows({{8, "A", 3}, {9, "B", 0}, {30, "A", 5}});

TEST(Join, OutputSchemaPrefixesEachSide) {
  auto box = make_ok({.left_time = "ts", .right_time = "ts", .window = Duration(10)});
  EXPECT_EQ(box->output(0).schema().to_string(),
            "l_ts:timestamp,l_sym:str4,l_k:i32,l_px:f64,r_ts:timestamp,r_sym:str8,r_q:i64");
  EXPECT_EQ(box->type(), "join");
  EXPECT_EQ(box->input_count(), 2u);
}

TEST(Join, EqualityWithinWindowLeftThenRight) {
  auto box = make_ok(
      {.left_time = "ts", .right_time = "ts", .window = Duration(10), .equal = {{"sym", "sym"}}});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, kLeftData);
  EXPECT_TRUE(out.rows.empty());
  box->process(1, kRightData);
  // r@30 evicted every left tuple (< 30 - 10) before probing.
  EXPECT_EQ(box->stored(0), 0u);
  box->finish(0);
  box->finish(1);
  EXPECT_TRUE(out.ended);
  const std::vector<std::string> expected = {
      "12,A,3,3.000000,8,A,3", "0,A,1,1.000000,8,A,3", "5,B,2,2.000000,9,B,0"};
  EXPECT_EQ(out.rows, expected);
}

TEST(Join, AnUnboundedWindowMatchesAnyTimesAndEvictsNothing) {
  auto box = make_ok({.left_time = "ts", .right_time = "ts", .window = Duration::max(),
                      .equal = {{"sym", "sym"}}});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, left_rows({{-4'000'000'000'000'000'000, "A", 1, 1.0}}));
  box->process(
      1, right_rows({{4'000'000'000'000'000'000, "A", 7}, {4'000'000'000'000'000'001, "B", 8}}));
  box->process(0, left_rows({{4'000'000'000'000'000'002, "B", 2, 2.0}}));
  box->process(1, right_rows({{-5'000'000'000'000'000'000, "A", 9}}));  // older: not late
  EXPECT_EQ(box->stored(0), 2u);
  EXPECT_EQ(box->stored(1), 3u);
  box->finish(0);
  box->finish(1);
  EXPECT_EQ(out.rows, (std::vector<std::string>{
                          "-4000000000000000000,A,1,1.000000,4000000000000000000,A,7",
                          "4000000000000000002,B,2,2.000000,4000000000000000001,B,8",
                          "-4000000000000000000,A,1,1.000000,-5000000000000000000,A,9"}));
  EXPECT_EQ(box->dropped_late(1), 0u);
}

TEST(Join, InterleavedArrivalGivesSameSetInArrivalOrder) {
  auto box = make_ok(
      {.left_time = "ts", .right_time = "ts", .window = Duration(10), .equal = {{"sym", "sym"}}});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  for (std::size_t i = 0; i < 3; ++i) {
    box->process(0, BatchView::wrap(kLeftData.bytes().subspan(i * 24, 24), kLeft).value());
    box->process(1, BatchView::wrap(kRightData.bytes().subspan(i * 24, 24), kRight).value());
  }
  const std::vector<std::string> expected = {
      "0,A,1,1.000000,8,A,3", "5,B,2,2.000000,9,B,0", "12,A,3,3.000000,8,A,3"};
  EXPECT_EQ(out.rows, expected);
}

TEST(Join, IntegerBandWithoutEquality) {
  auto box = make_ok({.left_time = "ts", .right_time = "ts", .window = Duration(100),
                      .band = Band{"k", "q", 2.0}});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, kLeftData);
  box->process(1, kRightData);
  const std::vector<std::string> expected = {
      "12,A,3,3.000000,8,A,3", "5,B,2,2.000000,8,A,3", "0,A,1,1.000000,8,A,3",
      "5,B,2,2.000000,9,B,0",  "0,A,1,1.000000,9,B,0", "12,A,3,3.000000,30,A,5"};
  EXPECT_EQ(out.rows, expected);
}

TEST(Join, DoubleBandComparesAsDoubles) {
  auto box = make_ok({.left_time = "ts", .right_time = "ts", .window = Duration(100),
                      .band = Band{"px", "q", 0.5}});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, kLeftData);
  box->process(1, kRightData);
  EXPECT_EQ(out.rows, std::vector<std::string>{"12,A,3,3.000000,8,A,3"});
}

TEST(Join, WindowZeroNeedsEqualTimes) {
  auto box = make_ok({.left_time = "ts", .right_time = "ts", .window = Duration(0)});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, left_rows({{7, "A", 1, 1.0}, {8, "B", 2, 2.0}}));
  box->process(1, right_rows({{8, "C", 1}}));
  EXPECT_EQ(out.rows, std::vector<std::string>{"8,B,2,2.000000,8,C,1"});
  EXPECT_EQ(box->stored(0), 1u);  // 7 < 8 - 0 was evicted
}

TEST(Join, StringsOfDifferentWidthsCompareByValue) {
  const Schema wide = schema_of("t:i64,s:str16");
  const Schema narrow = schema_of("t:i32,s:str2");
  auto box =
      make_ok({.left_time = "t", .right_time = "t", .window = Duration(5), .equal = {{"s", "s"}}},
              wide, narrow);
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  OwnedBatch l(wide, 2);
  for (std::string_view s : {"ab", "abc"}) {
    MutRow row = l.append();
    FieldRef<std::int64_t>{0}.set(row, 1);
    FieldRef<std::string_view>{8, 16}.set(row, s);
  }
  OwnedBatch r(narrow, 1);
  MutRow row = r.append();
  FieldRef<std::int32_t>{0}.set(row, 3);
  FieldRef<std::string_view>{4, 2}.set(row, "ab");
  box->process(0, l);
  box->process(1, r);
  EXPECT_EQ(out.rows, std::vector<std::string>{"1,ab,3,ab"});
}

// ---- random inputs against a nested-loop reference ----

struct Event {
  std::size_t port;
  std::size_t index;
};

struct RandomCase {
  OwnedBatch left{kLeft, 1};
  OwnedBatch right{kRight, 1};
  std::vector<Event> arrival;  // a random interleaving, each port in time order
};

RandomCase random_case(std::mt19937_64& rng, std::size_t n_left, std::size_t n_right) {
  const char* syms[] = {"A", "B", "C", "DD"};
  std::vector<std::tuple<std::int64_t, std::string, int, double>> l;
  std::vector<std::tuple<std::int64_t, std::string, std::int64_t>> r;
  std::int64_t t = 0;
  for (std::size_t i = 0; i < n_left; ++i) {
    t += static_cast<std::int64_t>(rng() % 4);
    l.emplace_back(t, syms[rng() % 4], static_cast<int>(rng() % 20),
                   static_cast<double>(rng() % 40) / 2);
  }
  t = 0;
  for (std::size_t i = 0; i < n_right; ++i) {
    t += static_cast<std::int64_t>(rng() % 4);
    r.emplace_back(t, syms[rng() % 4], static_cast<std::int64_t>(rng() % 20));
  }
  RandomCase c{left_rows(l), right_rows(r), {}};
  std::size_t i = 0, j = 0;
  while (i < n_left || j < n_right) {
    const bool take_left = j == n_right || (i < n_left && rng() % 2 == 0);
    c.arrival.push_back(take_left ? Event{0, i++} : Event{1, j++});
  }
  return c;
}

// Feeds the arrival order, each run of one port cut into batches of at most `batch_rows`.
std::vector<std::string> run(const JoinParams& params, const RandomCase& c,
                             std::size_t batch_rows) {
  auto box = make_ok(params);
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  const BatchView inputs[2] = {c.left, c.right};
  const Schema* schemas[2] = {&kLeft, &kRight};
  std::size_t k = 0;
  while (k < c.arrival.size()) {
    const std::size_t port = c.arrival[k].port;
    OwnedBatch batch(*schemas[port], batch_rows);
    while (k < c.arrival.size() && c.arrival[k].port == port && !batch.full()) {
      batch.append_copy(inputs[port].row(c.arrival[k].index));
      ++k;
    }
    box->process(port, batch);
  }
  box->finish(0);
  box->finish(1);
  return out.rows;
}

std::vector<std::string> nested_loop(const JoinParams& p, const RandomCase& c) {
  std::vector<std::string> rows;
  for (Row l : BatchView(c.left)) {
    for (Row r : BatchView(c.right)) {
      const auto lt = FieldRef<std::int64_t>{0}.get(l);
      const auto rt = FieldRef<std::int64_t>{0}.get(r);
      if (std::abs(lt - rt) > p.window.count()) continue;
      if (!p.equal.empty() &&
          FieldRef<std::string_view>{8, 4}.get(l) != FieldRef<std::string_view>{8, 8}.get(r)) {
        continue;
      }
      if (p.band) {
        const double x = p.band->left == "k" ? FieldRef<std::int32_t>{12}.get(l)
                                             : FieldRef<double>{16}.get(l);
        if (std::abs(x - static_cast<double>(FieldRef<std::int64_t>{16}.get(r))) >
            p.band->width) {
          continue;
        }
      }
      rows.push_back(format_row(kLeft, l) + "," + format_row(kRight, r));
    }
  }
  return rows;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

const std::vector<JoinParams> kRandomParams = {
    {.left_time = "ts", .right_time = "ts", .window = Duration(3), .equal = {{"sym", "sym"}}},
    {.left_time = "ts", .right_time = "ts", .window = Duration(0)},
    {.left_time = "ts", .right_time = "ts", .window = Duration(5), .band = Band{"k", "q", 1.0}},
    {.left_time = "ts", .right_time = "ts", .window = Duration(8), .equal = {{"sym", "sym"}},
     .band = Band{"px", "q", 2.5}},
};

TEST(Join, MatchesNestedLoopReferenceOnRandomInput) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << '\n';
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 10; ++round) {
    const RandomCase c = random_case(rng, 200 + rng() % 300, 200 + rng() % 300);
    for (std::size_t p = 0; p < kRandomParams.size(); ++p) {
      SCOPED_TRACE("round " + std::to_string(round) + " params " + std::to_string(p));
      const auto expected = sorted(nested_loop(kRandomParams[p], c));
      EXPECT_FALSE(expected.empty());
      EXPECT_EQ(sorted(run(kRandomParams[p], c, 64)), expected);
      // Every left tuple before any right one: the same set.
      RandomCase all_left{OwnedBatch(kLeft, c.left.size()), OwnedBatch(kRight, c.right.size()), {}};
      for (Row row : BatchView(c.left)) all_left.left.append_copy(row);
      for (Row row : BatchView(c.right)) all_left.right.append_copy(row);
      for (std::size_t i = 0; i < c.left.size(); ++i) all_left.arrival.push_back({0, i});
      for (std::size_t i = 0; i < c.right.size(); ++i) all_left.arrival.push_back({1, i});
      EXPECT_EQ(sorted(run(kRandomParams[p], all_left, 64)), expected);
    }
  }
}

TEST(Join, OutputDoesNotDependOnBatchSize) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << '\n';
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const RandomCase c = random_case(rng, 2000, 2000);
  for (const JoinParams& params : kRandomParams) {
    const auto reference = run(params, c, 1);
    EXPECT_FALSE(reference.empty());
    for (std::size_t batch_rows : {7u, 64u, 1024u}) {
      EXPECT_EQ(run(params, c, batch_rows), reference) << "batch rows " << batch_rows;
    }
  }
}

// ---- bad parameters ----

TEST(JoinParams, UnknownFields) {
  EXPECT_EQ(error_of({.left_time = "t", .right_time = "ts", .equal = {{"sym", "nope"}},
                      .band = Band{"x", "q", 1}}),
            "params.left_time: no field 't' in schema ts:timestamp,sym:str4,k:i32,px:f64\n"
            "params.equal[0].right: no field 'nope' in schema ts:timestamp,sym:str8,q:i64\n"
            "params.band.left: no field 'x' in schema ts:timestamp,sym:str4,k:i32,px:f64");
}

TEST(JoinParams, TimeFieldWrongType) {
  EXPECT_EQ(error_of({.left_time = "px", .right_time = "sym"}),
            "params.left_time: field 'px' is f64; a join time field must be timestamp, i64 or "
            "i32\n"
            "params.right_time: field 'sym' is str8; a join time field must be timestamp, i64 "
            "or i32");
}

TEST(JoinParams, TimestampJoinsOnlyTimestamp) {
  EXPECT_EQ(error_of({.left_time = "k", .right_time = "ts"}),
            "params.right_time: left time field 'k' is i32 but right time field 'ts' is "
            "timestamp; a timestamp joins only with a timestamp");
}

TEST(JoinParams, NegativeWindowOrSlack) {
  EXPECT_EQ(error_of({.left_time = "ts", .right_time = "ts", .window = Duration(-1)}),
            "params.window: window must not be negative; got -1ns");
  EXPECT_EQ(
      error_of({.left_time = "ts", .right_time = "ts", .slack = std::chrono::milliseconds(-2)}),
      "params.slack: slack must not be negative; got -2ms");
}

TEST(JoinParams, EqualityTypes) {
  const Schema r = schema_of("ts:timestamp,sym:str8,q:i64,y:f64");
  EXPECT_EQ(error_of({.left_time = "ts", .right_time = "ts",
                      .equal = {{"k", "q"}, {"px", "y"}}},
                     kLeft, r),
            "params.equal[0]: left field 'k' is i32 but right field 'q' is i64; equality "
            "needs one type\n"
            "params.equal[1]: equality on f64 fields ('px', 'y') is not supported; use a band "
            "of width 0");
}

TEST(JoinParams, BandOnStringsAndBadWidth) {
  EXPECT_EQ(error_of({.left_time = "ts", .right_time = "ts", .band = Band{"sym", "q", -2}}),
            "params.band.left: field 'sym' is str4; a band needs a numeric field (i32, i64, "
            "f64, timestamp)\n"
            "params.band.width: width must be a finite number >= 0, got -2.000000");
  EXPECT_EQ(error_of({.left_time = "ts", .right_time = "ts",
                      .band = Band{"k", "q", std::numeric_limits<double>::quiet_NaN()}}),
            "params.band.width: width must be a finite number >= 0, got nan");
}

TEST(JoinParams, ValidParamsHaveNoErrors) {
  const JoinParams params{.left_time = "ts", .right_time = "ts", .window = Duration(1),
                          .equal = {{"sym", "sym"}}, .band = Band{"px", "q", 0}};
  EXPECT_TRUE(params.validate(kLeft, kRight).empty());
}

}  // namespace
}  // namespace boreal::ops

namespace boreal::ops {
namespace {

// Each port's tuples arrive out of time order, none more than `disorder` behind the greatest
// time its port has seen before it: each tuple arrives at its time plus a random delay in
// [0, disorder], the two ports merged by arrival.
RandomCase shuffled(const RandomCase& c, std::mt19937_64& rng, std::int64_t disorder) {
  struct Arrival {
    std::int64_t at;
    Event event;
  };
  std::vector<Arrival> arrivals;
  const BatchView inputs[2] = {c.left, c.right};
  for (std::size_t port = 0; port < 2; ++port) {
    for (std::size_t i = 0; i < inputs[port].size(); ++i) {
      const std::int64_t t = FieldRef<std::int64_t>{0}.get(inputs[port].row(i));
      arrivals.push_back(
          {t + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(disorder + 1)),
           Event{port, i}});
    }
  }
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
  RandomCase out{OwnedBatch(kLeft, c.left.size()), OwnedBatch(kRight, c.right.size()), {}};
  for (Row row : BatchView(c.left)) out.left.append_copy(row);
  for (Row row : BatchView(c.right)) out.right.append_copy(row);
  for (const Arrival& a : arrivals) out.arrival.push_back(a.event);
  return out;
}

TEST(Join, SlackJoinsShuffledInputLikeTheSortedInput) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << '\n';
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  constexpr std::int64_t kDisorder = 40;  // times advance about 1.5 per tuple
  for (int round = 0; round < 5; ++round) {
    const RandomCase c = shuffled(random_case(rng, 1000, 1000), rng, kDisorder);
    for (JoinParams params : kRandomParams) {
      const auto expected = sorted(nested_loop(params, c));
      ASSERT_FALSE(expected.empty());
      params.slack = Duration(kDisorder);
      EXPECT_EQ(sorted(run(params, c, 64)), expected);
      // Without slack the late tuples are dropped: a subset, and fewer.
      params.slack = Duration(0);
      const auto without = sorted(run(params, c, 64));
      EXPECT_LT(without.size(), expected.size());
      EXPECT_TRUE(std::includes(expected.begin(), expected.end(), without.begin(), without.end()));
    }
  }
}

TEST(Join, LateTuplesAreDroppedAndCountedPerPort) {
  auto box = make_ok({.left_time = "ts", .right_time = "ts", .window = Duration(10),
                      .slack = Duration(5), .equal = {{"sym", "sym"}}});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  // Left: 100, then 96 (4 behind: within the slack), then 94 (6 behind: late).
  box->process(0, left_rows({{100, "A", 1, 1.0}, {96, "A", 2, 2.0}, {94, "A", 3, 3.0}}));
  // Right: 90 matches 100 and 96 (|d| <= 10); 80 is 10 behind 90, late, though it would
  // match 94's partner window.
  box->process(1, right_rows({{90, "A", 7}, {80, "A", 8}}));
  box->finish(0);
  box->finish(1);
  EXPECT_EQ(box->dropped_late(0), 1u);
  EXPECT_EQ(box->dropped_late(1), 1u);
  EXPECT_EQ(out.rows,
            (std::vector<std::string>{"96,A,2,2.000000,90,A,7", "100,A,1,1.000000,90,A,7"}));
}

}  // namespace
}  // namespace boreal::ops

namespace boreal::ops {
namespace {

using test_support::expect_restores_exactly;
using test_support::Feed;
using test_support::restore_error;
using test_support::saved;

// Batches of 1 to 9 tuples to either port, times rising about 1.5 a tuple per port with some
// tuples up to 8 behind (with a slack of 5, some are late), on three symbols.
struct JoinInput {
  std::vector<OwnedBatch> batches;
  std::vector<Feed> feed;
};
JoinInput join_input(std::uint64_t seed, int batches) {
  std::mt19937_64 rng(seed);
  const char* syms[] = {"A", "B", "C"};
  std::int64_t time[2] = {0, 0};
  JoinInput in;
  in.batches.reserve(static_cast<std::size_t>(batches));
  for (int b = 0; b < batches; ++b) {
    const std::size_t port = rng() % 2;
    const std::size_t rows = 1 + rng() % 9;
    std::vector<std::tuple<std::int64_t, std::string, int, double>> left;
    std::vector<std::tuple<std::int64_t, std::string, std::int64_t>> right;
    for (std::size_t i = 0; i < rows; ++i) {
      time[port] += static_cast<std::int64_t>(rng() % 4);
      const std::int64_t ts =
          time[port] - (rng() % 5 == 0 ? static_cast<std::int64_t>(rng() % 9) : 0);
      const std::string sym = syms[rng() % 3];
      const auto v = static_cast<std::int64_t>(rng() % 100);
      if (port == 0) {
        left.emplace_back(ts, sym, static_cast<int>(v), 0.5 * static_cast<double>(v));
      } else {
        right.emplace_back(ts, sym, v);
      }
    }
    in.batches.push_back(port == 0 ? left_rows(left) : right_rows(right));
    in.feed.push_back({port, in.batches.back()});
  }
  return in;
}

TEST(JoinState, ARestoredJoinCarriesOnExactlyLikeTheUninterruptedOne) {
  const JoinInput in = join_input(31, 120);
  const JoinParams by_sym{.left_time = "ts", .right_time = "ts", .window = Duration(20),
                          .slack = Duration(5), .equal = {{"sym", "sym"}}};
  const JoinParams band_only{.left_time = "ts", .right_time = "ts", .window = Duration(6),
                             .band = Band{"k", "q", 10}};
  // Nothing is evicted: each side's ring grows past its first 64 slots.
  const JoinParams unbounded{.left_time = "ts", .right_time = "ts", .window = Duration::max(),
                             .equal = {{"sym", "sym"}}};
  for (const JoinParams* params : {&by_sym, &band_only, &unbounded}) {
    expect_restores_exactly([&] { return make_ok(*params); }, in.feed, {0, 1, 17, 60, 119});
  }
}

TEST(JoinState, ARestoredJoinHoldsWhatTheOriginalHeld) {
  const JoinInput in = join_input(5, 80);
  const JoinParams params{.left_time = "ts", .right_time = "ts", .window = Duration(20),
                          .slack = Duration(5), .equal = {{"sym", "sym"}}};
  auto box = make_ok(params);
  for (const Feed& f : in.feed) box->process(f.port, f.batch);
  ASSERT_GT(box->dropped_late(0) + box->dropped_late(1), 0u);
  auto restored = make_ok(params);
  ASSERT_EQ(restore_error(*restored, saved(*box)), "restored");
  for (std::size_t port = 0; port < 2; ++port) {
    EXPECT_EQ(restored->stored(port), box->stored(port));
    EXPECT_EQ(restored->dropped_late(port), box->dropped_late(port));
  }
}

TEST(JoinState, ALateTupleAfterARestoreIsStillLate) {
  // Left 90 is 10 behind left 100, more than the slack: dropped, though it would match 92.
  const auto first = left_rows({{100, "A", 1, 1.0}});
  const auto late = left_rows({{90, "A", 2, 2.0}});
  const auto partner = right_rows({{92, "A", 3}});
  const std::vector<Feed> feed = {{0, first}, {0, late}, {1, partner}};
  const JoinParams params{.left_time = "ts", .right_time = "ts", .window = Duration(10),
                          .slack = Duration(5), .equal = {{"sym", "sym"}}};
  const auto whole = test_support::run_cut([&] { return make_ok(params); }, feed, std::nullopt);
  EXPECT_EQ(whole.text, std::vector<std::string>{"100,A,1,1.000000,92,A,3"});
  expect_restores_exactly([&] { return make_ok(params); }, feed, {1, 2});
}

TEST(JoinState, ABrokenStateIsRefusedNamingWhy) {
  const JoinParams params{.left_time = "ts", .right_time = "ts", .window = Duration(10),
                          .equal = {{"sym", "sym"}}};
  auto box = make_ok(params);
  box->process(0, kLeftData);
  const std::vector<std::byte> good = saved(*box);
  auto state = good;
  state.pop_back();
  EXPECT_EQ(restore_error(*make_ok(params), state),
            "join state: truncated or followed by other bytes");
  state = good;
  state.push_back(std::byte{0});
  EXPECT_EQ(restore_error(*make_ok(params), state),
            "join state: truncated or followed by other bytes");
  state = good;
  state[0] = std::byte{0};
  EXPECT_EQ(restore_error(*make_ok(params), state), "join state: not a join's saved state");
  auto sort = test_support::ok(BSortBox::make({.field = "ts", .slack = 4}, kLeft));
  sort->process(0, kLeftData);
  EXPECT_EQ(restore_error(*make_ok(params), saved(*sort)), "join state: not a join's saved state");
  // The left side's rows cut short by a byte: no longer whole tuples.
  state = good;
  std::uint64_t left_bytes;
  std::memcpy(&left_bytes, state.data() + 4, 8);
  ASSERT_EQ(left_bytes, 3u * 24);  // kLeftData's three tuples
  --left_bytes;
  std::memcpy(state.data() + 4, &left_bytes, 8);
  state.erase(state.begin() + 12);
  EXPECT_EQ(restore_error(*make_ok(params), state),
            "join state: sizes do not fit this join's inputs");
  EXPECT_EQ(restore_error(*box, good), "restore_state on a join that has run");
  EXPECT_EQ(restore_error(*make_ok(params), good), "restored");
}

}  // namespace
}  // namespace boreal::ops
