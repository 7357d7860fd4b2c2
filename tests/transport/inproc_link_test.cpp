#include <boreal/transport/inproc_medium.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <boreal/transport/agent_runner.hpp>
#include <boreal/transport/event_loop.hpp>

namespace boreal::transport {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kTupleBytes = 8;

LinkOptions small_options(std::uint32_t window, std::uint32_t credit_batch) {
  return LinkOptions{.stream_id = 7,
                     .tuple_bytes = kTupleBytes,
                     .max_payload_bytes = 16 * kTupleBytes,
                     .window = window,
                     .credit_batch = credit_batch,
                     .name = "ticks"};
}

// Deterministic contents: tuple k of frame `sequence`.
std::uint64_t tuple_value(std::uint64_t sequence, std::uint32_t k) {
  std::uint64_t x = sequence * 0x9E3779B97F4A7C15ull + k;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}
std::uint32_t tuples_of(std::uint64_t sequence) { return 1 + sequence % 16; }

// Writes frame `sequence`'s tuples into `claim` and commits it.
void fill_and_commit(SendLink& link, const Claim& claim, std::uint64_t sequence,
                     std::uint16_t flags = kFlagData) {
  const auto tuples = tuples_of(sequence);
  for (std::uint32_t k = 0; k < tuples; ++k) {
    const auto value = tuple_value(sequence, k);
    std::memcpy(claim.payload.data() + k * kTupleBytes, &value, kTupleBytes);
  }
  link.commit(claim, tuples, tuples * kTupleBytes, flags);
}

// Claims, fills and commits frame `sequence`; false if the claim was refused.
bool send_frame(SendLink& link, std::uint64_t sequence, std::uint16_t flags = kFlagData) {
  Claim claim;
  if (link.try_claim(claim) != SendStatus::ok) return false;
  fill_and_commit(link, claim, sequence, flags);
  return true;
}

// Checks every frame against what send_frame() wrote, in order.
class CheckingSink final : public FrameSink {
 public:
  void on_frame(const FrameView& frame) override {
    const auto sequence = ++frames;
    if (frame.header.sequence != sequence || frame.header.stream_id != 7 ||
        frame.header.tuple_count != tuples_of(sequence) ||
        frame.payload.size() != tuples_of(sequence) * kTupleBytes ||
        (frame.header.flags & kFlagData) == 0) {
      ++mismatches;
      return;
    }
    for (std::uint32_t k = 0; k < frame.header.tuple_count; ++k) {
      std::uint64_t value = 0;
      std::memcpy(&value, frame.payload.data() + k * kTupleBytes, kTupleBytes);
      if (value != tuple_value(sequence, k)) ++mismatches;
      checksum += value;
    }
    if (frame.header.flags & kFlagEndOfStream) ++end_of_stream;
  }
  std::uint64_t frames = 0;
  std::uint64_t mismatches = 0;
  std::uint64_t checksum = 0;
  std::uint64_t end_of_stream = 0;
};

InprocPair make_pair(EventLoop& sender_loop, EventLoop& receiver_loop,
                     const LinkOptions& options) {
  auto pair = make_inproc_link(sender_loop, receiver_loop, options);
  EXPECT_TRUE(pair.has_value()) << (pair ? "" : pair.error().describe());
  return std::move(pair).value();
}

TEST(InprocLink, SameThreadDeliversFramesInOrderWithExactContents) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(8, 2));
  EXPECT_EQ(send->state(), LinkState::established);
  EXPECT_EQ(recv->state(), LinkState::established);
  EXPECT_EQ(send->window(), 8u);
  EXPECT_EQ(send->max_payload_bytes(), 128u);
  EXPECT_EQ(recv->stream_id(), 7u);

  constexpr std::uint64_t kFrames = 1000;
  CheckingSink sink;
  std::uint64_t sent = 0;
  std::uint64_t tuples = 0;
  while (sent < kFrames) {
    // Bursts of up to 5 frames per poll, so frames wait in the ring and slots wrap.
    for (int i = 0; i < 5 && sent < kFrames; ++i) {
      if (!send_frame(*send, sent + 1)) break;
      tuples += tuples_of(++sent);
    }
    recv->poll(sink);
  }
  EXPECT_EQ(sink.frames, kFrames);
  EXPECT_EQ(sink.mismatches, 0u);
  for (const LinkStats* stats : {&send->stats(), &recv->stats()}) {
    EXPECT_EQ(stats->frames, kFrames);
    EXPECT_EQ(stats->tuples, tuples);
    EXPECT_EQ(stats->payload_bytes, tuples * kTupleBytes);
    EXPECT_EQ(stats->read_calls, 0u);  // nobody slept, so no eventfd was touched
    EXPECT_EQ(stats->write_calls, 0u);
  }
}

TEST(InprocLink, SenderIsBackPressuredAfterWindowClaimsUntilReceiverPolls) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(4, 4));
  EXPECT_EQ(send->credits_available(), 4u);
  for (std::uint64_t s = 1; s <= 4; ++s) ASSERT_TRUE(send_frame(*send, s));
  Claim claim;
  EXPECT_EQ(send->try_claim(claim), SendStatus::back_pressured);
  EXPECT_EQ(send->do_work(), 4);  // the four commits announced; no credit yet
  EXPECT_EQ(send->try_claim(claim), SendStatus::back_pressured);
  EXPECT_EQ(send->stats().credit_stalls, 2u);
  EXPECT_EQ(send->credits_available(), 0u);
  EXPECT_DOUBLE_EQ(recv->free_capacity(), 0.0);

  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 4);
  EXPECT_EQ(sink.mismatches, 0u);
  EXPECT_DOUBLE_EQ(recv->free_capacity(), 4.0);
  ASSERT_TRUE(send_frame(*send, 5));  // the claim picks the grant up itself
  EXPECT_EQ(send->credits_available(), 3u);
  EXPECT_EQ(send->stats().credit_frames, 2u);  // initial grant + one batch
  EXPECT_EQ(recv->stats().credit_frames, 2u);
  EXPECT_EQ(send->stats().credit_stalls, 2u);
}

TEST(InprocLink, CreditFlowsBackInBatches) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(8, 4));
  CheckingSink sink;
  for (std::uint64_t s = 1; s <= 3; ++s) ASSERT_TRUE(send_frame(*send, s));
  EXPECT_EQ(recv->poll(sink), 3);
  EXPECT_EQ(send->do_work(), 3);
  EXPECT_EQ(send->credits_available(), 5u);  // 3 freed < batch of 4: nothing granted
  EXPECT_DOUBLE_EQ(recv->free_capacity(), 8.0);  // 5 held by the sender + 3 freed here
  ASSERT_TRUE(send_frame(*send, 4));
  EXPECT_EQ(recv->poll(sink), 1);
  EXPECT_EQ(send->do_work(), 2);  // one frame announced + one grant picked up
  EXPECT_EQ(send->credits_available(), 8u);
  EXPECT_EQ(recv->stats().credit_frames, 2u);
  EXPECT_EQ(send->stats().credit_frames, 2u);
  EXPECT_EQ(sink.frames, 4u);
}

TEST(InprocLink, EndOfStreamFinishesBothEnds) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(4, 1));
  CheckingSink sink;
  ASSERT_TRUE(send_frame(*send, 1));
  ASSERT_TRUE(send_frame(*send, 2, kFlagData | kFlagEndOfStream));
  Claim claim;
  EXPECT_EQ(send->try_claim(claim), SendStatus::closed);  // nothing after the end
  EXPECT_EQ(send->do_work(), 2);
  EXPECT_EQ(send->state(), LinkState::established);  // not acknowledged yet
  EXPECT_EQ(recv->poll(sink), 2);
  EXPECT_EQ(recv->state(), LinkState::finished);
  EXPECT_EQ(sink.end_of_stream, 1u);
  EXPECT_EQ(sink.mismatches, 0u);
  EXPECT_EQ(send->do_work(), 1);
  EXPECT_EQ(send->state(), LinkState::finished);
  EXPECT_EQ(send->error(), nullptr);
  EXPECT_EQ(recv->error(), nullptr);
  // Finished ends stay finished, even once the peer is gone.
  recv.reset();
  EXPECT_EQ(send->do_work(), 0);
  EXPECT_EQ(send->state(), LinkState::finished);
}

TEST(InprocLink, EndOfStreamMayCarryNoTuples) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(4, 1));
  Claim claim;
  ASSERT_EQ(send->try_claim(claim), SendStatus::ok);
  send->commit(claim, 0, 0, kFlagData | kFlagEndOfStream);
  struct : FrameSink {
    void on_frame(const FrameView& frame) override { views.push_back(frame.header); }
    std::vector<FrameHeader> views;
  } sink;
  EXPECT_EQ(recv->poll(sink), 1);
  ASSERT_EQ(sink.views.size(), 1u);
  EXPECT_EQ(sink.views[0].sequence, 1u);
  EXPECT_EQ(sink.views[0].tuple_count, 0u);
  EXPECT_EQ(sink.views[0].payload_bytes, 0u);
  EXPECT_EQ(sink.views[0].flags, kFlagData | kFlagEndOfStream);
  EXPECT_EQ(recv->state(), LinkState::finished);
  (void)send->do_work();
  EXPECT_EQ(send->state(), LinkState::finished);
}

TEST(InprocLink, MalformedCommitFailsTheSenderAndNeverReachesTheReceiver) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(4, 1));
  Claim claim;
  ASSERT_EQ(send->try_claim(claim), SendStatus::ok);
  send->commit(claim, 1, 10);
  EXPECT_EQ(send->state(), LinkState::failed);
  ASSERT_NE(send->error(), nullptr);
  EXPECT_EQ(send->error()->describe(),
            "protocol error: link 'ticks' (stream 7, inproc): frame 1: tuple count 1 \u00D7 8 "
            "bytes != payload length 10");
  EXPECT_EQ(send->try_claim(claim), SendStatus::closed);
  EXPECT_EQ(send->stats().frames, 0u);
  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 0);
  EXPECT_EQ(sink.frames, 0u);
  EXPECT_EQ(recv->state(), LinkState::failed);
  ASSERT_NE(recv->error(), nullptr);
  EXPECT_EQ(recv->error()->describe(),
            "closed error: link 'ticks' (stream 7, inproc): sender closed before the end of the "
            "stream (after frame 0)");
}

TEST(InprocLink, OversizedPayloadIsRefused) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(4, 1));
  Claim claim;
  ASSERT_EQ(send->try_claim(claim), SendStatus::ok);
  send->commit(claim, 17, 17 * kTupleBytes);
  ASSERT_NE(send->error(), nullptr);
  EXPECT_EQ(send->error()->message,
            "link 'ticks' (stream 7, inproc): frame 1: payload length 136 exceeds the limit 128");
}

TEST(InprocLink, ReceiverGoneBeforeEndOfStreamFailsTheSender) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(4, 1));
  ASSERT_TRUE(send_frame(*send, 1));
  recv.reset();
  EXPECT_EQ(send->do_work(), 1);
  EXPECT_EQ(send->state(), LinkState::failed);
  ASSERT_NE(send->error(), nullptr);
  EXPECT_EQ(send->error()->category, ErrorCategory::closed);
  EXPECT_EQ(send->error()->message,
            "link 'ticks' (stream 7, inproc): receiver closed before the end of the stream "
            "(after frame 1)");
}

TEST(InprocLink, SenderGoneFailsTheReceiverOnlyAfterItDrainedTheRing) {
  EventLoop loop;
  auto [send, recv] = make_pair(loop, loop, small_options(4, 1));
  ASSERT_TRUE(send_frame(*send, 1));
  ASSERT_TRUE(send_frame(*send, 2));
  send.reset();
  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 2);  // what was committed is still delivered
  EXPECT_EQ(recv->state(), LinkState::established);
  EXPECT_EQ(recv->poll(sink), 0);
  EXPECT_EQ(recv->state(), LinkState::failed);
  ASSERT_NE(recv->error(), nullptr);
  EXPECT_EQ(recv->error()->message,
            "link 'ticks' (stream 7, inproc): sender closed before the end of the stream "
            "(after frame 2)");
  EXPECT_EQ(sink.mismatches, 0u);
}

TEST(InprocLink, OptionsThatCannotMakeALinkAreConfigErrors) {
  EventLoop loop;
  auto options = small_options(0, 1);
  auto pair = make_inproc_link(loop, loop, options);
  ASSERT_FALSE(pair.has_value());
  EXPECT_EQ(pair.error().describe(),
            "config error: link 'ticks' (stream 7, inproc): batch bytes must hold at least one "
            "tuple and the window must be > 0");
  options = small_options(4, 1);
  options.max_payload_bytes = kTupleBytes - 1;
  EXPECT_FALSE(make_inproc_link(loop, loop, options).has_value());
}

// The lost-wake-up race, both orders, deterministically (two loops on one thread).

TEST(InprocLink, ReceiverWithAFrameWaitingRefusesToArm) {
  EventLoop sender_loop;
  EventLoop receiver_loop;
  auto [send, recv] = make_pair(sender_loop, receiver_loop, small_options(4, 1));
  ASSERT_TRUE(send_frame(*send, 1));  // published before the receiver arms
  EXPECT_FALSE(receiver_loop.try_arm());
  EXPECT_FALSE(sender_loop.try_arm());  // the commit is not announced yet
  EXPECT_EQ(send->do_work(), 1);
  EXPECT_EQ(send->stats().write_calls, 0u);  // the receiver never said it sleeps
}

TEST(InprocLink, ArmedReceiverIsWokenByTheSendersNextDoWork) {
  EventLoop sender_loop;
  EventLoop receiver_loop;
  auto [send, recv] = make_pair(sender_loop, receiver_loop, small_options(4, 1));
  ASSERT_TRUE(receiver_loop.try_arm());  // asleep from here on
  ASSERT_TRUE(send_frame(*send, 1));     // published after the receiver's re-check
  EXPECT_EQ(send->do_work(), 1);
  EXPECT_EQ(send->stats().write_calls, 1u);
  // A lost wake-up would show as a timeout (false) here.
  EXPECT_TRUE(receiver_loop.wait(5s));
  receiver_loop.disarm();
  EXPECT_EQ(recv->stats().read_calls, 1u);
  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 1);
  // Awake and polling again: further frames cost the sender no system call.
  ASSERT_TRUE(send_frame(*send, 2));
  EXPECT_EQ(send->do_work(), 2);  // one frame + the credit for frame 1
  EXPECT_EQ(send->stats().write_calls, 1u);
  EXPECT_EQ(recv->poll(sink), 1);
  EXPECT_EQ(sink.mismatches, 0u);
}

TEST(InprocLink, ReceiverThatTimedOutAndPolledIsNotRung) {
  EventLoop sender_loop;
  EventLoop receiver_loop;
  auto [send, recv] = make_pair(sender_loop, receiver_loop, small_options(4, 1));
  ASSERT_TRUE(receiver_loop.try_arm());
  EXPECT_FALSE(receiver_loop.wait(1ms));  // nothing came
  receiver_loop.disarm();
  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 0);  // polling again withdraws "asleep"
  ASSERT_TRUE(send_frame(*send, 1));
  EXPECT_EQ(send->do_work(), 1);
  EXPECT_EQ(send->stats().write_calls, 0u);
}

TEST(InprocLink, SenderOutOfCreditIsWokenByTheGrant) {
  EventLoop sender_loop;
  EventLoop receiver_loop;
  auto [send, recv] = make_pair(sender_loop, receiver_loop, small_options(2, 2));
  ASSERT_TRUE(send_frame(*send, 1));
  ASSERT_TRUE(send_frame(*send, 2));
  EXPECT_FALSE(send_frame(*send, 3));
  EXPECT_EQ(send->do_work(), 2);
  ASSERT_TRUE(sender_loop.try_arm());  // waiting for credit
  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 2);
  EXPECT_EQ(recv->stats().write_calls, 1u);
  EXPECT_TRUE(sender_loop.wait(5s));
  sender_loop.disarm();
  EXPECT_EQ(send->stats().read_calls, 1u);
  EXPECT_TRUE(send_frame(*send, 3));
}

TEST(InprocLink, SleepingSenderGetsCreditWithoutWaitingForABatch) {
  EventLoop sender_loop;
  EventLoop receiver_loop;
  auto [send, recv] = make_pair(sender_loop, receiver_loop, small_options(4, 4));
  // The sender claims the whole window ahead but commits only half of it: it is out of
  // credit with fewer than a batch of frames for the receiver to free.
  std::vector<Claim> claims(4);
  for (auto& claim : claims) ASSERT_EQ(send->try_claim(claim), SendStatus::ok);
  fill_and_commit(*send, claims[0], 1);
  fill_and_commit(*send, claims[1], 2);
  EXPECT_EQ(send->do_work(), 2);
  ASSERT_TRUE(sender_loop.try_arm());
  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 2);  // 2 freed < batch of 4, but the sender sleeps: grant now
  EXPECT_EQ(recv->stats().credit_frames, 2u);
  EXPECT_EQ(recv->stats().write_calls, 1u);
  EXPECT_TRUE(sender_loop.wait(5s));
  sender_loop.disarm();
  EXPECT_EQ(send->do_work(), 1);
  EXPECT_EQ(send->credits_available(), 2u);
  fill_and_commit(*send, claims[2], 3);
  fill_and_commit(*send, claims[3], 4);
  EXPECT_EQ(recv->poll(sink), 2);
  EXPECT_EQ(sink.frames, 4u);
  EXPECT_EQ(sink.mismatches, 0u);
}

TEST(InprocLink, IdleReceiverReturnsEveryFreeSlotBeforeSleeping) {
  EventLoop sender_loop;
  EventLoop receiver_loop;
  auto [send, recv] = make_pair(sender_loop, receiver_loop, small_options(8, 4));
  ASSERT_TRUE(send_frame(*send, 1));
  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 1);
  EXPECT_EQ(recv->stats().credit_frames, 1u);  // 1 freed < batch of 4
  ASSERT_TRUE(receiver_loop.try_arm());        // going to sleep: grant it anyway
  EXPECT_EQ(recv->stats().credit_frames, 2u);
  EXPECT_EQ(recv->stats().write_calls, 0u);  // the sender was not asleep
  EXPECT_EQ(send->do_work(), 2);             // frame 1 announced (rings) + grant picked up
  EXPECT_EQ(send->stats().write_calls, 1u);
  EXPECT_EQ(send->credits_available(), 8u);
}

TEST(InprocLink, SenderAwaitingTheAckIsWokenByIt) {
  EventLoop sender_loop;
  EventLoop receiver_loop;
  auto [send, recv] = make_pair(sender_loop, receiver_loop, small_options(4, 4));
  ASSERT_TRUE(send_frame(*send, 1, kFlagData | kFlagEndOfStream));
  EXPECT_EQ(send->do_work(), 1);
  ASSERT_TRUE(sender_loop.try_arm());
  CheckingSink sink;
  EXPECT_EQ(recv->poll(sink), 1);
  EXPECT_EQ(recv->state(), LinkState::finished);
  EXPECT_EQ(recv->stats().write_calls, 1u);
  EXPECT_TRUE(sender_loop.wait(5s));
  sender_loop.disarm();
  EXPECT_EQ(send->do_work(), 1);
  EXPECT_EQ(send->state(), LinkState::finished);
}

// Two I/O threads, each with its own loop and the block wait: everything the sender wrote
// arrives once, in order, intact.

class SenderAgent {
 public:
  SenderAgent(SendLink& link, EventLoop& loop, std::uint64_t frames)
      : link_(link), loop_(loop), frames_(frames) {}
  int do_work() {
    int work = link_.do_work();
    for (int i = 0; i < 64 && sent_ < frames_; ++i) {
      const auto flags = static_cast<std::uint16_t>(
          sent_ + 1 == frames_ ? kFlagData | kFlagEndOfStream : kFlagData);
      if (!send_frame(link_, sent_ + 1, flags)) break;
      ++sent_;
      for (std::uint32_t k = 0; k < tuples_of(sent_); ++k) checksum += tuple_value(sent_, k);
      ++work;
    }
    return work;
  }
  bool done() const {
    return link_.state() == LinkState::finished || link_.state() == LinkState::failed;
  }
  Waitable& waitable() { return loop_; }
  const LoadHints& hints() const { return hints_; }
  std::uint64_t checksum = 0;

 private:
  SendLink& link_;
  EventLoop& loop_;
  std::uint64_t frames_;
  std::uint64_t sent_ = 0;
  LoadHints hints_;
};

class ReceiverAgent {
 public:
  ReceiverAgent(RecvLink& link, EventLoop& loop) : link_(link), loop_(loop) {}
  int do_work() { return link_.poll(sink); }
  bool done() const {
    return link_.state() == LinkState::finished || link_.state() == LinkState::failed;
  }
  Waitable& waitable() { return loop_; }
  const LoadHints& hints() const { return hints_; }
  CheckingSink sink;

 private:
  RecvLink& link_;
  EventLoop& loop_;
  LoadHints hints_;
};

TEST(InprocLink, TwoThreadsWithBlockWaitDeliverEveryFrameInOrder) {
  constexpr std::uint64_t kFrames = 100'000;
  EventLoop sender_loop;
  EventLoop receiver_loop;
  auto [send, recv] = make_pair(sender_loop, receiver_loop, small_options(64, 16));
  SenderAgent sender{*send, sender_loop, kFrames};
  ReceiverAgent receiver{*recv, receiver_loop};
  AnyWait sender_wait = make_wait(WaitConfig{.mode = WaitMode::block});
  AnyWait receiver_wait = make_wait(WaitConfig{.mode = WaitMode::block});
  std::atomic<bool> stop{false};
  auto sender_done = std::async(std::launch::async, [&] { run_agent(sender, sender_wait, stop); });
  auto receiver_done =
      std::async(std::launch::async, [&] { run_agent(receiver, receiver_wait, stop); });
  // Bounds the test: a wedged link is stopped (each block ends within kMaxBlock) and fails.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  const bool in_time = sender_done.wait_until(deadline) == std::future_status::ready &&
                       receiver_done.wait_until(deadline) == std::future_status::ready;
  stop = true;
  sender_done.wait();
  receiver_done.wait();
  ASSERT_TRUE(in_time) << "frames delivered before the deadline: " << receiver.sink.frames;

  EXPECT_EQ(send->state(), LinkState::finished);
  EXPECT_EQ(recv->state(), LinkState::finished);
  EXPECT_EQ(receiver.sink.frames, kFrames);
  EXPECT_EQ(receiver.sink.mismatches, 0u);
  EXPECT_EQ(receiver.sink.end_of_stream, 1u);
  EXPECT_EQ(receiver.sink.checksum, sender.checksum);
  std::uint64_t tuples = 0;
  for (std::uint64_t s = 1; s <= kFrames; ++s) tuples += tuples_of(s);
  for (const LinkStats* stats : {&send->stats(), &recv->stats()}) {
    EXPECT_EQ(stats->frames, kFrames);
    EXPECT_EQ(stats->tuples, tuples);
    EXPECT_EQ(stats->payload_bytes, tuples * kTupleBytes);
  }
  // Each eventfd read answers at least one write of the peer.
  EXPECT_LE(send->stats().read_calls, recv->stats().write_calls);
  EXPECT_LE(recv->stats().read_calls, send->stats().write_calls);
  // No block ran into its timeout: one that did would mean a lost wake-up (a 1 s stall of a
  // runnable thread is far beyond any scheduling delay).
  EXPECT_EQ(stats_of(sender_wait).timeouts, 0u);
  EXPECT_EQ(stats_of(receiver_wait).timeouts, 0u);
}

}  // namespace
}  // namespace boreal::transport
