// Misuse of a box that would otherwise emit garbage or end a box early is refused in every
// build type (Box::process, Box::finish): the process prints what is wrong and aborts.
#include <boreal/ops/box.hpp>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <boreal/ops/filter.hpp>
#include <boreal/ops/graph.hpp>
#include <boreal/ops/join.hpp>

#include "operators/ops_test_support.hpp"

namespace boreal::ops {
namespace {

using test_support::ok;
using test_support::schema_of;

OwnedBatch batch_of(const Schema& schema, std::size_t rows) {
  OwnedBatch batch(schema, rows == 0 ? 1 : rows);
  for (std::size_t i = 0; i < rows; ++i) batch.append();
  return batch;
}

std::unique_ptr<JoinBox> a_join() {
  const Schema side = schema_of("ts:timestamp,k:i64");
  return ok(JoinBox::make(
      {.left_time = "ts", .right_time = "ts", .window = Duration(10), .equal = {{"k", "k"}}}, side,
      side));
}

TEST(BoxMisuseDeathTest, ABatchOfAnotherSchemaIsRefusedNamingBoth) {
  // Same row size, other field names: the bytes alone would pass, the schema hash does not.
  auto filter = ok(Filter::make({.predicate = "x > 1"}, schema_of("x:i64")));
  const OwnedBatch other = batch_of(schema_of("y:i64"), 3);
  EXPECT_DEATH(filter->process(0, other),
               "^boreal: filter box: process\\(0\\): the batch was made with another schema "
               "\\(8-byte rows\\) than input 0 takes: 'x:i64' \\(8-byte rows\\)\n");
  const OwnedBatch wider = batch_of(schema_of("x:i64,pad:str8"), 1);
  EXPECT_DEATH(filter->process(0, wider), "another schema \\(16-byte rows\\) than input 0 takes");
}

TEST(BoxMisuseDeathTest, AnEmptyBatchOfAnySchemaIsAccepted) {
  auto filter = ok(Filter::make({.predicate = "x > 1"}, schema_of("x:i64")));
  CollectingConsumer out;
  filter->output(0).connect(&out);
  filter->process(0, BatchView{});
  filter->process(0, batch_of(schema_of("y:i64"), 0));
  filter->finish(0);
  EXPECT_EQ(out.rows(), 0u);
  EXPECT_EQ(out.ends(), 1u);
}

TEST(BoxMisuseDeathTest, FinishingAPortTwiceIsRefusedAndDoesNotEndTheJoin) {
  auto join = a_join();
  CollectingConsumer out;
  join->output(0).connect(&out);
  join->finish(0);
  EXPECT_TRUE(join->finished(0));
  EXPECT_FALSE(join->finished(1));
  EXPECT_DEATH(join->finish(0), "^boreal: join box: finish\\(0\\): input 0 has already finished\n");
  EXPECT_FALSE(out.ended());  // input 1 is still open
  join->finish(1);
  EXPECT_EQ(out.ends(), 1u);
}

TEST(BoxMisuseDeathTest, ABatchAfterItsPortFinishedIsRefused) {
  auto join = a_join();
  join->finish(1);
  const OwnedBatch rows = batch_of(schema_of("ts:timestamp,k:i64"), 2);
  join->process(0, rows);  // port 0 is still open
  EXPECT_DEATH(join->process(1, rows),
               "^boreal: join box: process\\(1\\): input 1 has already finished\n");
}

TEST(BoxMisuseDeathTest, APortThatDoesNotExistIsRefused) {
  auto filter = ok(Filter::make({.predicate = "x > 1"}, schema_of("x:i64")));
  const OwnedBatch rows = batch_of(schema_of("x:i64"), 1);
  EXPECT_DEATH(filter->process(1, rows),
               "^boreal: filter box: process\\(1\\): there is no input 1 \\(the box has 1\\)\n");
  EXPECT_DEATH(filter->finish(2),
               "^boreal: filter box: finish\\(2\\): there is no input 2 \\(the box has 1\\)\n");
}

}  // namespace
}  // namespace boreal::ops
