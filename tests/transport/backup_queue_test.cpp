// The upstream backup's queue (transport/src/core/backup_queue.hpp): where a connection
// stands, and what a lost one leaves for the next.
#include <cstdint>

#include <gtest/gtest.h>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/link.hpp>

#include "core/backup_queue.hpp"

namespace boreal::transport::detail {
namespace {

constexpr std::uint32_t kPayload = 64;

// Commits `n` frames of 8 bytes each.
void commit_frames(BackupQueue& queue, SenderCredits& credits, LinkStats& stats, int n) {
  for (int i = 0; i < n; ++i) {
    Claim claim;
    ASSERT_EQ(queue.claim(LinkState::established, credits, kPayload, stats, claim), SendStatus::ok);
    queue.commit(claim, 1, 1, 8, kFlagData, stats);
  }
}

// Frames that spent a credit of a lost connection, written or not, are credited again only by
// the next connection, after its receiver said where to resume: until then nothing may go.
TEST(BackupQueue, ALostConnectionLeavesNothingCreditedUntilTheResume) {
  BufferPool pool(8, kFrameHeaderBytes + kPayload);
  BackupQueue queue(pool, 8, false);
  SenderCredits credits;
  LinkStats stats;
  credits.on_grant(6);
  commit_frames(queue, credits, stats, 5);
  queue.spend(credits);
  ASSERT_EQ(queue.credited(), 5u);
  EXPECT_FALSE(queue.mark_sent());  // frames 1 and 2 went out
  EXPECT_FALSE(queue.mark_sent());
  queue.acknowledge(1, [](std::uint32_t) {});
  ASSERT_EQ(queue.sent(), 2u);

  queue.connection_lost();
  SenderCredits fresh;  // the new connection's, nothing granted yet
  EXPECT_EQ(queue.acked(), 1u);
  EXPECT_EQ(queue.sent(), 1u);
  EXPECT_EQ(queue.credited(), 1u);
  EXPECT_FALSE(queue.can_send(fresh));  // 3, 4 and 5 had credit, but of the lost connection
  EXPECT_TRUE(queue.has_unsent());
  EXPECT_EQ(queue.unacknowledged(), 4u);

  // The receiver has frame 2: the replay starts at 3, with the new connection's credit.
  queue.resume(2, [](std::uint32_t) {});
  fresh.on_grant(2);
  queue.spend(fresh);
  EXPECT_EQ(queue.sent(), 2u);
  EXPECT_EQ(queue.credited(), 4u);
  EXPECT_FALSE(queue.mark_sent());  // frame 3 was never sent: not a replay
}

}  // namespace
}  // namespace boreal::transport::detail
