// ArgMax: the largest rows of each run of equal `by` values, every tie, in arrival order,
// however the input is cut into batches; and its parameter errors.
#include <boreal/ops/argmax.hpp>

#include <boreal/ops/bsort.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boreal/ops/graph.hpp>

#include "ops_test_support.hpp"

namespace boreal::ops {
namespace {

using test_support::format_row;
using test_support::ok;
using test_support::schema_of;

const Schema kSchema = schema_of("win:i64,id:i32,price:f64,count:i64");

struct In {
  std::int64_t win;
  std::int32_t id;
  double price;
  std::int64_t count;
};

OwnedBatch batch_of(const std::vector<In>& rows) {
  OwnedBatch batch(kSchema, rows.size() + 1);
  for (const In& in : rows) {
    MutRow r = batch.append();
    FieldRef<std::int64_t>{0}.set(r, in.win);
    FieldRef<std::int32_t>{8}.set(r, in.id);
    FieldRef<double>{16}.set(r, in.price);
    FieldRef<std::int64_t>{24}.set(r, in.count);
  }
  return batch;
}

// The output rows as "win,id" for rows fed in batches of `cut` rows.
std::vector<std::string> run(const ArgMaxParams& params, const std::vector<In>& rows,
                             std::size_t cut) {
  auto box = ok(ArgMax::make(params, kSchema, 2));
  CollectingConsumer out;
  box->output(0).connect(&out);
  for (std::size_t i = 0; i < rows.size(); i += cut) {
    const std::vector<In> part(
        rows.begin() + static_cast<std::ptrdiff_t>(i),
        rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), i + cut)));
    box->process(0, batch_of(part));
  }
  box->finish(0);
  EXPECT_EQ(out.ends(), 1u);
  std::vector<std::string> got;
  for (std::size_t i = 0; i < out.rows(); ++i) {
    const Row row(out.bytes().data() + i * kSchema.tuple_bytes());
    got.push_back(std::to_string(FieldRef<std::int64_t>{0}.get(row)) + "," +
                  std::to_string(FieldRef<std::int32_t>{8}.get(row)));
  }
  return got;
}

TEST(ArgMaxTest, KeepsEveryTieOfEachRunInArrivalOrder) {
  const std::vector<In> rows = {
      {10, 1, 0, 3}, {10, 2, 0, 5}, {10, 3, 0, 5}, {10, 4, 0, 1},  // two rows tie at 5
      {20, 5, 0, 7},                                               // a group of one
      {30, 6, 0, -2}, {30, 7, 0, -1}, {30, 8, 0, -9},              // negative values
      {10, 9, 0, 4},                                               // 10 again: a new group
  };
  const std::vector<std::string> want = {"10,2", "10,3", "20,5", "30,7", "10,9"};
  for (std::size_t cut : {1u, 2u, 3u, 9u}) {
    EXPECT_EQ(run({.by = "win", .field = "count"}, rows, cut), want) << "batches of " << cut;
  }
}

TEST(ArgMaxTest, AFloatFieldIgnoresNaNAndALargerValueDropsTheTies) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<In> rows = {
      {1, 1, 2.5, 0}, {1, 2, 2.5, 0}, {1, 3, nan, 0}, {1, 4, 3.0, 0}, {1, 5, 3.0, 0},
      {2, 6, nan, 0},                   // only NaN: nothing
      {3, 7, -0.5, 0}, {3, 8, -1.5, 0},
  };
  EXPECT_EQ(run({.by = "win", .field = "price"}, rows, 3),
            (std::vector<std::string>{"1,4", "1,5", "3,7"}));
}

TEST(ArgMaxTest, NothingInNothingOut) {
  EXPECT_EQ(run({.by = "win", .field = "count"}, {}, 1), std::vector<std::string>{});
}

TEST(ArgMaxTest, ParamsAreValidated) {
  EXPECT_EQ(
      ArgMax::make({.by = "", .field = "sym"}, schema_of("sym:str4,x:f64")).error().describe(),
      "params.by: is required\n"
      "params.field: 'sym' is str4; the largest value needs a number (i32, i64, timestamp or f64)");
  EXPECT_EQ(ArgMax::make({.by = "x", .field = "y"}, schema_of("sym:str4,x:f64")).error().describe(),
            "params.by: 'x' is f64; a group is a run of equal values, which doubles are rarely "
            "meant to be (group by an integer or a string)\n"
            "params.field: no field 'y' in the input (sym:str4,x:f64)");
}

}  // namespace
}  // namespace boreal::ops

namespace boreal::ops {
namespace {

using test_support::expect_restores_exactly;
using test_support::Feed;
using test_support::restore_error;
using test_support::saved;

// 400 rows in runs of 1 to 30 equal `win` values (so runs span batches), count from 0 to 5
// (many ties), price from 8 values and now and then NaN, in batches of 0 to 11.
struct ArgMaxInput {
  std::vector<OwnedBatch> batches;
  std::vector<Feed> feed;
};
ArgMaxInput argmax_input() {
  std::mt19937_64 rng(41);
  std::vector<In> rows;
  std::int64_t win = 0;
  std::uint64_t run_left = 0;
  for (int i = 0; i < 400; ++i) {
    if (run_left == 0) {
      win += 1 + static_cast<std::int64_t>(rng() % 3);
      run_left = 1 + rng() % 30;
    }
    --run_left;
    const double price = rng() % 9 == 0 ? std::nan("") : 0.5 * static_cast<double>(rng() % 8);
    rows.push_back({win, i, price, static_cast<std::int64_t>(rng() % 6)});
  }
  ArgMaxInput in;
  for (std::size_t at = 0; at < rows.size();) {
    const std::size_t n = std::min<std::size_t>(rng() % 12, rows.size() - at);
    const auto from = rows.begin() + static_cast<std::ptrdiff_t>(at);
    in.batches.push_back(batch_of(std::vector<In>(from, from + static_cast<std::ptrdiff_t>(n))));
    at += n;
  }
  for (const OwnedBatch& batch : in.batches) in.feed.push_back({0, batch});
  return in;
}

TEST(ArgMaxState, ARestoredArgMaxCarriesOnExactlyLikeTheUninterruptedOne) {
  const ArgMaxInput in = argmax_input();
  const std::size_t last = in.feed.size() - 1;
  for (const ArgMaxParams& params : {ArgMaxParams{.by = "win", .field = "count"},
                                     ArgMaxParams{.by = "win", .field = "price"},
                                     ArgMaxParams{.by = "id", .field = "count"}}) {
    SCOPED_TRACE(params.by + " " + params.field);
    expect_restores_exactly([&] { return ok(ArgMax::make(params, kSchema, 3)); }, in.feed,
                            {0, 1, 7, last / 2, last});
  }
}

TEST(ArgMaxState, ABrokenStateIsRefusedNamingWhy) {
  const ArgMaxParams params{.by = "win", .field = "count"};
  auto box = ok(ArgMax::make(params, kSchema));
  box->process(0, batch_of({{1, 1, 0, 4}, {2, 2, 0, 5}, {2, 3, 0, 5}}));
  const std::vector<std::byte> good = saved(*box);
  auto fresh = [&] { return ok(ArgMax::make(params, kSchema)); };
  auto state = good;
  state.pop_back();
  EXPECT_EQ(restore_error(*fresh(), state), "argmax state: truncated or followed by other bytes");
  state = good;
  state.push_back(std::byte{0});
  EXPECT_EQ(restore_error(*fresh(), state), "argmax state: truncated or followed by other bytes");
  state = good;
  state[0] = std::byte{0};
  EXPECT_EQ(restore_error(*fresh(), state), "argmax state: not an argmax's saved state");
  auto sort = ok(BSortBox::make({.field = "count", .slack = 2}, kSchema));
  EXPECT_EQ(restore_error(*fresh(), saved(*sort)), "argmax state: not an argmax's saved state");
  // `id` is an i32: the saved `win` key has 8 bytes, not 4.
  EXPECT_EQ(restore_error(*ok(ArgMax::make({.by = "id", .field = "count"}, kSchema)), good),
            "argmax state: sizes do not fit this argmax's input");
  EXPECT_EQ(restore_error(*box, good), "restore_state on an argmax that has run");
  EXPECT_EQ(restore_error(*fresh(), good), "restored");
}

}  // namespace
}  // namespace boreal::ops
