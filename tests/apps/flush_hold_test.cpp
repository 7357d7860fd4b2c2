// runtime/flush_hold.hpp: how long a sender holds a partly filled frame.
#include "runtime/flush_hold.hpp"

#include <gtest/gtest.h>

#include <boreal/transport/recent_quantile.hpp>

namespace boreal::runtime {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

TEST(FlushHold, AFixedHoldIgnoresReportsAndLateness) {
  FlushHold hold(microseconds{100});
  EXPECT_FALSE(hold.adapts());
  hold.receiver_reports(20);
  for (int i = 0; i < 200; ++i) hold.left_late(microseconds{50});
  EXPECT_EQ(hold.get(), microseconds{100});
  EXPECT_EQ(hold.lateness_p99(), nanoseconds{0});
}

TEST(FlushHold, HalfTheBudgetUntilTheReceiverReports) {
  FlushHold hold(microseconds{500}, microseconds{1000});
  EXPECT_TRUE(hold.adapts());
  EXPECT_EQ(hold.get(), microseconds{500});
  for (int i = 0; i < 200; ++i) hold.left_late(microseconds{30});
  EXPECT_EQ(hold.get(), microseconds{500});
}

TEST(FlushHold, TheBudgetLessThePickupTheLatenessAndTheMargin) {
  // 1 ms: the margin is 100 + 10 µs.
  EXPECT_EQ(FlushHold::margin(microseconds{1000}), microseconds{110});
  FlushHold hold(microseconds{500}, microseconds{1000});
  hold.receiver_reports(40);
  EXPECT_EQ(hold.get(), microseconds{1000 - 110 - 40});
  // The sender's own lateness counts once it knows its p99 (the bucket's upper edge).
  for (int i = 0; i < 64; ++i) hold.left_late(microseconds{30});
  const auto late = transport::RecentQuantile::upper_edge(
      transport::RecentQuantile::bucket_of(microseconds{30}));
  EXPECT_EQ(hold.lateness_p99(), late);
  EXPECT_EQ(late, nanoseconds{32768});
  // Pickup and lateness combine as sqrt(40000^2 + 32768^2) = 51708 ns.
  EXPECT_EQ(hold.get(), microseconds{1000 - 110} - nanoseconds{51708});
  // A later report replaces the earlier one; 0 ("none") goes back to the first hold.
  hold.receiver_reports(100);  // sqrt(100000^2 + 32768^2) = 105231 ns
  EXPECT_EQ(hold.get(), microseconds{1000 - 110} - nanoseconds{105231});
  hold.receiver_reports(0);
  EXPECT_EQ(hold.get(), microseconds{500});
}

TEST(FlushHold, NeverUnderTheHalfItStartsFrom) {
  FlushHold hold(microseconds{100}, microseconds{200});
  hold.receiver_reports(180);  // a receiver that sleeps through most of the budget
  EXPECT_EQ(hold.get(), microseconds{100});
  hold.receiver_reports(20);  // 200 - 30 - 20
  EXPECT_EQ(hold.get(), microseconds{150});
  // A budget smaller than the margin: the least it was given.
  EXPECT_EQ(FlushHold::within(microseconds{8}, nanoseconds{0}, nanoseconds{0}, microseconds{4}),
            microseconds{4});
}

}  // namespace
}  // namespace boreal::runtime
