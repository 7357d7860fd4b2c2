// Window lengths in types (window.hpp): the aggregate and the join take std::chrono durations
// for time, Count for tuples.
#include <boreal/ops/window.hpp>

#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <boreal/ops/aggregate.hpp>
#include <boreal/ops/join.hpp>

#include "operators/ops_test_support.hpp"

namespace boreal::ops {
namespace {

using namespace std::chrono_literals;
using test_support::format_row;
using test_support::schema_of;

// A bare number is not a length: 10 meaning 10 s or 10 ns is what this type rules out.
static_assert(!std::is_convertible_v<int, WindowLength>);
static_assert(!std::is_convertible_v<std::uint64_t, Duration>);
static_assert(std::is_convertible_v<std::chrono::seconds, WindowLength>);

TEST(WindowLength, PrintsInTheLargestExactUnit) {
  EXPECT_EQ(to_string(Duration(10s)), "10s");
  EXPECT_EQ(to_string(Duration(1500ms)), "1500ms");
  EXPECT_EQ(to_string(Duration(2min)), "2min");
  EXPECT_EQ(to_string(Duration(3h)), "3h");
  EXPECT_EQ(to_string(Duration(7)), "7ns");
  EXPECT_EQ(to_string(Duration(0)), "0ns");
  EXPECT_EQ(to_string(Duration(-2us)), "-2us");
  EXPECT_EQ(to_string(WindowLength{Count{100}}), "100 tuples");
  EXPECT_EQ(to_string(WindowLength{Count{1}}), "1 tuple");
  EXPECT_EQ(window_units(Count{5}), 5u);
  EXPECT_EQ(window_units(Duration(2us)), 2000u);
  EXPECT_EQ(window_units(Duration(-1)), 0u);
}

TEST(WindowLength, SecondsOnATimestampFieldAreSeconds) {
  const Schema in = schema_of("ts:timestamp,v:i64");
  auto box = AggregateBox::make({.window = {.field = "ts", .size = 10s, .slide = 5s},
                                 .aggregates = {{"count", "", "n"}, {"sum", "v", "s"}}},
                                in)
                 .value();
  std::vector<std::string> rows;
  struct Out : BatchConsumer {
    Out(const Schema& s, std::vector<std::string>& r) : schema(s), rows(r) {}
    void consume(const BatchView& b) override {
      for (Row row : b) rows.push_back(format_row(schema, row));
    }
    Schema schema;
    std::vector<std::string>& rows;
  } out(box->output(0).schema(), rows);
  box->output(0).connect(&out);
  OwnedBatch batch(in, 4);
  for (auto [t, v] : {std::pair{1s, 1}, {6s, 2}, {12s, 4}, {14s, 8}}) {
    MutRow row = batch.append();
    FieldRef<Timestamp>{0}.set(row, Timestamp(t));
    FieldRef<std::int64_t>{8}.set(row, v);
  }
  box->process(0, batch);
  box->finish(0);
  // Windows [-5s, 5s), [0, 10s), [5s, 15s), [10s, 20s): seconds, not nanoseconds.
  EXPECT_EQ(rows, (std::vector<std::string>{"-5000000000,5000000000,1,1", "0,10000000000,2,3",
                                            "5000000000,15000000000,3,14",
                                            "10000000000,20000000000,2,12"}));
}

TEST(WindowLength, CountWindowsCountTuples) {
  const Schema in = schema_of("v:i64");
  auto box = AggregateBox::make({.window = {.size = Count{2}, .slide = Count{2}},
                                 .aggregates = {{"sum", "v", "s"}}},
                                in)
                 .value();
  EXPECT_EQ(box->output(0).schema().to_string(), "window_start:i64,window_end:i64,s:i64");
}

TEST(WindowLength, TheJoinTakesTheSameDurations) {
  const Schema side = schema_of("ts:timestamp,k:i64");
  auto join = JoinBox::make({.left_time = "ts", .right_time = "ts", .window = 1s, .slack = 500ms,
                             .equal = {{"k", "k"}}},
                            side, side);
  ASSERT_TRUE(join);
  EXPECT_EQ(describe(AggregateParams{.window = {.field = "ts", .size = 1s, .slide = Count{1}},
                                     .aggregates = {{"count", "", "n"}}}
                         .validate(side)),
            "params.window.slide: slide is 1 tuple but size is 1s: a window is either a Duration "
            "(time) or a Count (tuples) in both");
}

}  // namespace
}  // namespace boreal::ops
