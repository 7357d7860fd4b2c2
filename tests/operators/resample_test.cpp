#include <boreal/ops/resample.hpp>

#include <boreal/ops/join.hpp>

#include <algorithm>
#include <cstdint>
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
  std::vector<std::string> rows;

 private:
  Schema schema_;
};

// ts@0 sym@8 v@16 x@24
const Schema kIn = schema_of("ts:i64,sym:str4,v:i64,x:f64");

using In = std::tuple<std::int64_t, std::string, std::int64_t, double>;

OwnedBatch rows_of(const std::vector<In>& rows) {
  OwnedBatch batch(kIn, std::max<std::size_t>(rows.size(), 1));
  for (const auto& [ts, sym, v, x] : rows) {
    MutRow row = batch.append();
    FieldRef<std::int64_t>{0}.set(row, ts);
    FieldRef<std::string_view>{8, 4}.set(row, sym);
    FieldRef<std::int64_t>{16}.set(row, v);
    FieldRef<double>{24}.set(row, x);
  }
  return batch;
}

std::unique_ptr<ResampleBox> make_ok(const ResampleParams& params) {
  auto box = ResampleBox::make(params, kIn);
  EXPECT_TRUE(box) << box.error().describe();
  return std::move(box).value();
}

std::string error_of(const ResampleParams& params) {
  auto box = ResampleBox::make(params, kIn);
  EXPECT_FALSE(box);
  return box ? std::string() : box.error().describe();
}

// Runs the rows through a box in batches of `batch_rows`, then ends the input.
std::vector<std::string> run(const ResampleParams& params, const BatchView& input,
                             std::size_t batch_rows) {
  auto box = make_ok(params);
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  for (std::size_t at = 0; at < input.size(); at += batch_rows) {
    const std::size_t n = std::min(batch_rows, input.size() - at);
    box->process(0, BatchView::wrap(input.bytes().subspan(at * input.tuple_bytes(),
                                                          n * input.tuple_bytes()),
                                    kIn)
                        .value());
  }
  box->finish(0);
  return out.rows;
}

const auto kSample = rows_of({{3, "A", 1, 0.5},
                              {7, "B", 5, 1.0},
                              {12, "A", 2, 0.0},
                              {25, "B", 6, 2.0},
                              {25, "A", 3, 0.0},
                              {40, "A", 4, 0.0}});

TEST(Resample, OutputSchema) {
  auto hold = make_ok({.time_field = "ts", .interval = 10, .group_by = {"sym"},
                       .value_fields = {"v", "x"}});
  EXPECT_EQ(hold->output(0).schema().to_string(), "ts:i64,sym:str4,v:i64,x:f64");
  auto interp = make_ok({.time_field = "ts", .interval = 10, .value_fields = {"v"},
                         .mode = "interpolate"});
  EXPECT_EQ(interp->output(0).schema().to_string(), "ts:i64,v:f64");
  EXPECT_EQ(interp->type(), "resample");
}

TEST(Resample, HoldEmitsLatestValueAtEveryGridPoint) {
  const std::vector<std::string> expected = {"10,A,1", "10,B,5", "20,A,2", "20,B,5",
                                             "30,A,3", "30,B,6", "40,A,4", "40,B,6"};
  EXPECT_EQ(run({.time_field = "ts", .interval = 10, .group_by = {"sym"}, .value_fields = {"v"}},
                kSample, 1024),
            expected);
}

TEST(Resample, HoldWithoutGroups) {
  // One stream: 10 -> latest at or before 10 is (7, B, 5); 20 -> (12, 2); 30, 40.
  const std::vector<std::string> expected = {"10,5", "20,2", "30,3", "40,4"};
  EXPECT_EQ(run({.time_field = "ts", .interval = 10, .value_fields = {"v"}}, kSample, 2),
            expected);
}

TEST(Resample, InterpolateBetweenNeighbours) {
  const std::vector<std::string> expected = {
      "10,A,1.777778",  // 1 + (2 - 1) * 7 / 9, when (12, A) arrives
      "10,B,5.166667",  // 5 + (6 - 5) * 3 / 18
      "20,B,5.722222",  // 5 + (6 - 5) * 13 / 18
      "20,A,2.615385",  // 2 + (3 - 2) * 8 / 13
      "30,A,3.333333",  // 3 + (4 - 3) * 5 / 15
      "40,A,4.000000",  // at the end: A's last tuple is on the grid
  };
  EXPECT_EQ(run({.time_field = "ts", .interval = 10, .group_by = {"sym"}, .value_fields = {"v"},
                 .mode = "interpolate"},
                kSample, 1024),
            expected);
}

TEST(Resample, NegativeTimesAlignToMultiples) {
  const auto input = rows_of({{-15, "A", 1, 0}, {-5, "A", 3, 0}, {6, "A", 5, 0}});
  EXPECT_EQ(run({.time_field = "ts", .interval = 10, .value_fields = {"v"}}, input, 1),
            (std::vector<std::string>{"-10,1", "0,3"}));
  EXPECT_EQ(run({.time_field = "ts", .interval = 10, .value_fields = {"v"},
                 .mode = "interpolate"},
                input, 1),
            (std::vector<std::string>{"-10,2.000000", "0,3.909091"}));
}

TEST(Resample, LateTuplesAreDroppedAndCounted) {
  auto box = make_ok({.time_field = "ts", .interval = 10, .value_fields = {"v"}});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, rows_of({{5, "A", 1, 0}, {21, "A", 2, 0}, {15, "A", 99, 0}}));
  EXPECT_EQ(box->late_dropped(), 1u);
  EXPECT_EQ(out.rows, (std::vector<std::string>{"10,1", "20,1"}));
}

TEST(Resample, TickEmitsHeldValuesWhileInputIsQuiet) {
  auto box = make_ok({.time_field = "ts", .interval = 10, .group_by = {"sym"},
                      .value_fields = {"v"}});
  Collect out(box->output(0).schema());
  box->output(0).connect(&out);
  box->process(0, rows_of({{5, "A", 1, 0}}));
  box->tick(30);  // 10 and 20 are due; 30 is not (a tuple at 30 may still come)
  EXPECT_EQ(out.rows, (std::vector<std::string>{"10,A,1", "20,A,1"}));
  box->process(0, rows_of({{29, "A", 7, 0}, {30, "A", 8, 0}}));
  EXPECT_EQ(box->late_dropped(), 1u);
  box->finish(0);
  EXPECT_EQ(out.rows, (std::vector<std::string>{"10,A,1", "20,A,1", "30,A,8"}));
}

// ---- random inputs against a reference that recomputes every grid point ----

std::int64_t ceil_grid(std::int64_t t, std::int64_t interval) {
  std::int64_t g = t / interval * interval;
  return g < t ? g + interval : g;
}

std::vector<In> random_input(std::mt19937_64& rng, std::size_t n) {
  const char* syms[] = {"A", "B", "C", "DDDD", "E"};
  std::vector<In> rows;
  std::int64_t t = -100 + static_cast<std::int64_t>(rng() % 50);
  for (std::size_t i = 0; i < n; ++i) {
    t += static_cast<std::int64_t>(rng() % 5);  // ties included
    rows.emplace_back(t, syms[rng() % 5], static_cast<std::int64_t>(rng() % 1000) - 500,
                      static_cast<double>(rng() % 1000) / 8);
  }
  return rows;
}

std::vector<std::string> reference(const std::vector<In>& input, std::int64_t interval,
                                   bool interpolate) {
  std::vector<std::string> groups;  // in order of first appearance
  for (const auto& row : input) {
    if (std::find(groups.begin(), groups.end(), std::get<1>(row)) == groups.end()) {
      groups.push_back(std::get<1>(row));
    }
  }
  const std::int64_t max_t = std::get<0>(input.back());
  std::vector<std::tuple<std::int64_t, std::size_t, std::string>> rows;  // (g, group, text)
  for (std::size_t k = 0; k < groups.size(); ++k) {
    std::vector<In> mine;
    for (const auto& row : input) {
      if (std::get<1>(row) == groups[k]) mine.push_back(row);
    }
    for (std::int64_t g = ceil_grid(std::get<0>(mine.front()), interval); g <= max_t;
         g += interval) {
      const In* p = nullptr;  // last at or before g
      const In* n = nullptr;  // first after g
      for (const auto& row : mine) {
        if (std::get<0>(row) <= g) p = &row;
        if (std::get<0>(row) > g && n == nullptr) n = &row;
      }
      std::string text = std::to_string(g) + "," + groups[k] + ",";
      if (!interpolate) {
        text += std::to_string(std::get<2>(*p)) + "," + std::to_string(std::get<3>(*p));
      } else {
        if (n == nullptr && std::get<0>(*p) != g) break;
        const double frac = n == nullptr
                                ? 0.0
                                : static_cast<double>(g - std::get<0>(*p)) /
                                      static_cast<double>(std::get<0>(*n) - std::get<0>(*p));
        const double pv = static_cast<double>(std::get<2>(*p));
        const double px = std::get<3>(*p);
        const double v =
            n == nullptr ? pv : pv + (static_cast<double>(std::get<2>(*n)) - pv) * frac;
        const double x = n == nullptr ? px : px + (std::get<3>(*n) - px) * frac;
        text += std::to_string(v) + "," + std::to_string(x);
      }
      rows.emplace_back(g, k, std::move(text));
    }
  }
  std::sort(rows.begin(), rows.end());
  std::vector<std::string> out;
  for (auto& row : rows) out.push_back(std::move(std::get<2>(row)));
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Resample, MatchesReferenceOnRandomInput) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << '\n';
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 20; ++round) {
    const std::vector<In> input = random_input(rng, 1 + rng() % 400);
    const OwnedBatch batch = rows_of(input);
    const std::int64_t interval = 1 + static_cast<std::int64_t>(rng() % 12);
    SCOPED_TRACE("round " + std::to_string(round) + " interval " + std::to_string(interval));
    // Hold: the exact order (grid point, then group by first appearance).
    EXPECT_EQ(run({.time_field = "ts", .interval = interval, .group_by = {"sym"},
                   .value_fields = {"v", "x"}},
                  batch, 64),
              reference(input, interval, false));
    // Interpolate: rows come as each group's next tuple arrives, so compare as multisets.
    EXPECT_EQ(sorted(run({.time_field = "ts", .interval = interval, .group_by = {"sym"},
                          .value_fields = {"v", "x"}, .mode = "interpolate"},
                         batch, 64)),
              sorted(reference(input, interval, true)));
  }
}

TEST(Resample, OutputDoesNotDependOnBatchSize) {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << '\n';
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const OwnedBatch batch = rows_of(random_input(rng, 3000));
  for (const char* mode : {"hold", "interpolate"}) {
    const ResampleParams params{.time_field = "ts", .interval = 7, .group_by = {"sym"},
                                .value_fields = {"v", "x"}, .mode = mode};
    const auto one = run(params, batch, 1);
    EXPECT_GT(one.size(), 1000u);
    for (std::size_t rows : {7u, 64u, 1024u}) {
      EXPECT_EQ(run(params, batch, rows), one) << mode << " batch rows " << rows;
    }
  }
}

// ---- bad parameters ----

TEST(ResampleParams, UnknownFields) {
  EXPECT_EQ(error_of({.time_field = "t", .interval = 1, .group_by = {"g"}, .value_fields = {"w"}}),
            "params.time_field: no field 't' in schema ts:i64,sym:str4,v:i64,x:f64\n"
            "params.group_by[0]: no field 'g' in schema ts:i64,sym:str4,v:i64,x:f64\n"
            "params.value_fields[0]: no field 'w' in schema ts:i64,sym:str4,v:i64,x:f64");
}

TEST(ResampleParams, TimeFieldWrongType) {
  EXPECT_EQ(error_of({.time_field = "x", .interval = 1}),
            "params.time_field: field 'x' is f64; the time field must be timestamp, i64 or i32");
}

TEST(ResampleParams, IntervalMustBePositive) {
  EXPECT_EQ(error_of({.time_field = "ts", .interval = 0}),
            "params.interval: interval must be > 0, got 0");
  EXPECT_EQ(error_of({.time_field = "ts", .interval = -5}),
            "params.interval: interval must be > 0, got -5");
}

TEST(ResampleParams, UnknownMode) {
  EXPECT_EQ(error_of({.time_field = "ts", .interval = 1, .mode = "linear"}),
            "params.mode: unknown mode 'linear'; expected 'hold' or 'interpolate'");
}

TEST(ResampleParams, InterpolateNeedsNumbers) {
  EXPECT_EQ(error_of({.time_field = "ts", .interval = 1, .value_fields = {"x", "sym"},
                      .mode = "interpolate"}),
            "params.value_fields[1]: field 'sym' is str4; interpolate needs i32, i64 or f64");
  // Hold takes any type.
  EXPECT_TRUE((ResampleParams{.time_field = "ts", .interval = 1, .value_fields = {"sym"}})
                  .validate(kIn)
                  .empty());
}

TEST(ResampleParams, FieldTwiceInOutput) {
  EXPECT_EQ(error_of({.time_field = "ts", .interval = 1, .group_by = {"sym"},
                      .value_fields = {"sym", "ts"}}),
            "params.value_fields[0]: field 'sym' appears more than once among time_field, "
            "group_by and value_fields\n"
            "params.value_fields[1]: field 'ts' appears more than once among time_field, "
            "group_by and value_fields");
}

TEST(ResampleParams, EveryProblemAtOnce) {
  EXPECT_EQ(error_of({.time_field = "sym", .interval = -1, .value_fields = {"nope"},
                      .mode = "x"}),
            "params.time_field: field 'sym' is str4; the time field must be timestamp, i64 or "
            "i32\n"
            "params.interval: interval must be > 0, got -1\n"
            "params.value_fields[0]: no field 'nope' in schema ts:i64,sym:str4,v:i64,x:f64\n"
            "params.mode: unknown mode 'x'; expected 'hold' or 'interpolate'");
}

}  // namespace
}  // namespace boreal::ops

namespace boreal::ops {
namespace {

using test_support::expect_restores_exactly;
using test_support::Feed;
using test_support::restore_error;
using test_support::saved;

// 500 tuples on five symbols (a new one now and then), ts rising 0 to 6 a tuple with one
// tuple in 15 stepping back (late), in batches of 0 to 9.
struct ResampleInput {
  OwnedBatch all{kIn, 1};
  std::vector<Feed> feed;
};
ResampleInput resample_input() {
  std::mt19937_64 rng(23);
  std::vector<In> rows;
  std::int64_t ts = -40;
  for (int i = 0; i < 500; ++i) {
    ts += static_cast<std::int64_t>(rng() % 7);
    const std::int64_t t = rng() % 15 == 0 ? ts - 5 : ts;
    const std::string sym(
        1, static_cast<char>('A' + rng() % static_cast<std::uint64_t>(std::min(5, 1 + i / 40))));
    const auto v = static_cast<std::int64_t>(rng() % 1000) - 500;
    rows.emplace_back(t, sym, v, 0.125 * static_cast<double>(v));
  }
  ResampleInput in;
  in.all = rows_of(rows);
  const std::uint32_t bytes = kIn.tuple_bytes();
  for (std::size_t at = 0; at < in.all.size();) {
    const std::size_t n = std::min<std::size_t>(rng() % 10, in.all.size() - at);
    in.feed.push_back(
        {0, BatchView::wrap(in.all.bytes().subspan(at * bytes, n * bytes), kIn).value()});
    at += n;
  }
  return in;
}

TEST(ResampleState, ARestoredResampleCarriesOnExactlyLikeTheUninterruptedOne) {
  const ResampleInput in = resample_input();
  const std::size_t last = in.feed.size() - 1;
  const ResampleParams hold{.time_field = "ts", .interval = 10, .group_by = {"sym"},
                            .value_fields = {"v", "x"}};
  const ResampleParams hold_ungrouped{.time_field = "ts", .interval = 7, .value_fields = {"x"}};
  const ResampleParams interpolate{.time_field = "ts", .interval = 4, .group_by = {"sym"},
                                   .value_fields = {"v", "x"}, .mode = "interpolate"};
  for (const ResampleParams* params : {&hold, &hold_ungrouped, &interpolate}) {
    SCOPED_TRACE(params->mode + " every " + std::to_string(params->interval));
    expect_restores_exactly([&] { return make_ok(*params); }, in.feed, {0, 1, 9, last / 2, last});
  }
}

TEST(ResampleState, ARestoredResampleCountsWhatTheOriginalDropped) {
  const ResampleInput in = resample_input();
  const ResampleParams params{.time_field = "ts", .interval = 10, .group_by = {"sym"},
                              .value_fields = {"v"}};
  auto box = make_ok(params);
  for (const Feed& f : in.feed) box->process(0, f.batch);
  ASSERT_GT(box->late_dropped(), 0u);
  auto restored = make_ok(params);
  ASSERT_EQ(restore_error(*restored, saved(*box)), "restored");
  EXPECT_EQ(restored->late_dropped(), box->late_dropped());
  EXPECT_EQ(restored->group_count(), 5u);
}

TEST(ResampleState, ABrokenStateIsRefusedNamingWhy) {
  const ResampleParams params{.time_field = "ts", .interval = 10, .group_by = {"sym"},
                              .value_fields = {"v", "x"}};
  auto box = make_ok(params);
  box->process(0, kSample);
  const std::vector<std::byte> good = saved(*box);
  auto state = good;
  state.pop_back();
  EXPECT_EQ(restore_error(*make_ok(params), state),
            "resample state: truncated or followed by other bytes");
  state = good;
  state.push_back(std::byte{0});
  EXPECT_EQ(restore_error(*make_ok(params), state),
            "resample state: truncated or followed by other bytes");
  state = good;
  state[0] = std::byte{0};
  EXPECT_EQ(restore_error(*make_ok(params), state), "resample state: not a resample's saved state");
  auto join = test_support::ok(JoinBox::make({.left_time = "ts", .right_time = "ts",
                                              .window = Duration(1)}, kIn, kIn));
  EXPECT_EQ(restore_error(*make_ok(params), saved(*join)),
            "resample state: not a resample's saved state");
  EXPECT_EQ(restore_error(*make_ok({.time_field = "ts", .interval = 10, .group_by = {"sym"},
                                    .value_fields = {"v"}}),
                          good),
            "resample state: sizes do not fit this resample's fields");
  // Two groups with one key: "A" written over "B" in the second group's row. The state:
  // magic, count, then per group [row bytes][start][next][last_time][2 doubles' bytes].
  state = good;
  const Schema& out = box->output(0).schema();
  const std::size_t second_row = 4 + 8 + (8 + out.tuple_bytes() + 24 + 8 + 16) + 8;
  const std::size_t sym_at = second_row + out.field(1).offset;
  ASSERT_EQ(static_cast<char>(state[sym_at]), 'B');
  state[sym_at] = std::byte{'A'};
  EXPECT_EQ(restore_error(*make_ok(params), state), "resample state: group keys repeat");
  EXPECT_EQ(restore_error(*box, good), "restore_state on a resample that has run");
  EXPECT_EQ(restore_error(*make_ok(params), good), "restored");
}

}  // namespace
}  // namespace boreal::ops
