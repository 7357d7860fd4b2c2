#include <boreal/transport/credit_window.hpp>

#include <cstdint>

#include <gtest/gtest.h>

namespace boreal::transport {
namespace {

TEST(CreditWindow, SenderStartsWithNoCredit) {
  SenderCredits sender;
  EXPECT_EQ(sender.available(), 0u);
  EXPECT_FALSE(sender.try_consume());
  EXPECT_EQ(sender.spent(), 0u);
}

TEST(CreditWindow, SenderStallsWhenCreditsRunOut) {
  SenderCredits sender;
  EXPECT_EQ(sender.on_grant(3), 3u);
  EXPECT_TRUE(sender.try_consume());
  EXPECT_TRUE(sender.try_consume());
  EXPECT_TRUE(sender.try_consume());
  EXPECT_FALSE(sender.try_consume());
  EXPECT_EQ(sender.spent(), 3u);  // the refused attempt spent nothing
  EXPECT_EQ(sender.available(), 0u);
}

TEST(CreditWindow, GrantsAreCumulativeTotals) {
  SenderCredits sender;
  EXPECT_EQ(sender.on_grant(4), 4u);
  EXPECT_EQ(sender.on_grant(10), 6u);
  EXPECT_EQ(sender.granted(), 10u);
  EXPECT_EQ(sender.available(), 10u);
}

TEST(CreditWindow, StaleOrRepeatedGrantIsIgnored) {
  SenderCredits sender;
  sender.on_grant(8);
  ASSERT_TRUE(sender.try_consume());
  EXPECT_EQ(sender.on_grant(8), 0u);  // repeated
  EXPECT_EQ(sender.on_grant(5), 0u);  // reordered, older
  EXPECT_EQ(sender.granted(), 8u);
  EXPECT_EQ(sender.available(), 7u);
}

TEST(CreditWindow, ReorderedGrantsEndAtTheNewestTotal) {
  SenderCredits in_order;
  SenderCredits reordered;
  for (std::uint64_t total : {4u, 6u, 9u}) in_order.on_grant(total);
  for (std::uint64_t total : {9u, 4u, 6u}) reordered.on_grant(total);
  EXPECT_EQ(reordered.granted(), in_order.granted());
  EXPECT_EQ(reordered.available(), in_order.available());
}

TEST(CreditWindow, InitialGrantIsTheWholeWindow) {
  ReceiverCredits receiver{16, 4};
  EXPECT_EQ(receiver.window(), 16u);
  EXPECT_EQ(receiver.initial_grant(), 16u);
  EXPECT_EQ(receiver.granted(), 16u);
}

TEST(CreditWindow, ReceiverGrantsOnlyAfterBatchFreedSlots) {
  ReceiverCredits receiver{8, 3};
  (void)receiver.initial_grant();
  for (int i = 0; i < 3; ++i) receiver.on_frame();
  receiver.on_consumed();
  receiver.on_consumed();
  EXPECT_EQ(receiver.take_grant(), 0u);
  EXPECT_EQ(receiver.freed_not_granted(), 2u);
  receiver.on_consumed();
  EXPECT_EQ(receiver.take_grant(), 11u);
  EXPECT_EQ(receiver.freed_not_granted(), 0u);
  EXPECT_EQ(receiver.take_grant(), 0u);  // nothing new since
}

TEST(CreditWindow, ForcedGrantReleasesFewerThanABatch) {
  ReceiverCredits receiver{8, 4};
  (void)receiver.initial_grant();
  receiver.on_frame();
  receiver.on_consumed();
  EXPECT_EQ(receiver.take_grant(), 0u);
  EXPECT_EQ(receiver.take_grant(/*force=*/true), 9u);
}

TEST(CreditWindow, ForcedGrantWithNothingFreedSendsNothing) {
  ReceiverCredits receiver{8, 4};
  (void)receiver.initial_grant();
  receiver.on_frame();
  EXPECT_EQ(receiver.take_grant(/*force=*/true), 0u);
  EXPECT_EQ(receiver.granted(), 8u);
}

TEST(CreditWindow, BatchOfZeroMeansGrantEverySlot) {
  ReceiverCredits receiver{4, 0};
  (void)receiver.initial_grant();
  receiver.on_frame();
  receiver.on_consumed();
  EXPECT_EQ(receiver.take_grant(), 5u);
}

TEST(CreditWindow, FreeCapacityIsWindowMinusFramesHeld) {
  ReceiverCredits receiver{8, 4};
  SenderCredits sender;
  sender.on_grant(receiver.initial_grant());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(sender.try_consume());
    receiver.on_frame();
  }
  receiver.on_consumed();
  receiver.on_consumed();
  EXPECT_EQ(receiver.in_use(), 3u);
  // Outstanding credit (granted, not yet spent) plus freed-not-granted slots are exactly the
  // slots not holding a frame.
  const std::uint64_t outstanding = receiver.granted() - sender.spent();
  EXPECT_EQ(outstanding + receiver.freed_not_granted() + receiver.in_use(), receiver.window());
}

// Sender and receiver joined by a perfect in-order channel: the receiver never holds more
// frames than its window, whatever the consumer's pace.
TEST(CreditWindow, ReceiverNeverHoldsMoreThanItsWindow) {
  constexpr std::uint32_t kWindow = 6;
  ReceiverCredits receiver{kWindow, 2};
  SenderCredits sender;
  sender.on_grant(receiver.initial_grant());
  std::uint64_t delivered = 0;
  for (int step = 0; step < 1000; ++step) {
    // The sender sends as much as it may; the consumer frees one slot every third step.
    while (sender.try_consume()) receiver.on_frame();
    ASSERT_LE(receiver.in_use(), kWindow);
    if (step % 3 == 0 && receiver.in_use() > 0) {
      receiver.on_consumed();
      ++delivered;
    }
    if (const auto total = receiver.take_grant()) sender.on_grant(total);
  }
  EXPECT_GT(delivered, 300u);
  EXPECT_EQ(sender.spent(), delivered + receiver.in_use());
}

}  // namespace
}  // namespace boreal::transport
