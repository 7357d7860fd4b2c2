// The tcp medium end to end over loopback: both ends on this thread, sharing one EventLoop,
// so every interleaving is decided by the test's own pump (deterministic apart from how the
// kernel splits reads, which the links must handle anyway).
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/tcp_medium.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>

#include "transport/counting_allocator.hpp"
#include "transport/tcp_test_support.hpp"

namespace boreal::transport {
namespace {

using testing::CheckingSink;
using testing::Clock;
using testing::CountingSource;
using testing::pump_until;

const TcpEndpoint kAnyLoopback{"127.0.0.1", 0};

LinkOptions options_for(std::uint32_t stream_id, std::uint32_t tuple_bytes,
                        std::uint32_t max_payload_bytes, std::uint32_t window,
                        std::uint32_t credit_batch) {
  LinkOptions o;
  o.stream_id = stream_id;
  o.tuple_bytes = tuple_bytes;
  o.schema_hash = 0x5EED'0000'0000'0001ull;
  o.cluster_token = 0xC1A5'7E12ull;
  o.max_payload_bytes = max_payload_bytes;
  o.window = window;
  o.credit_batch = credit_batch;
  o.name = "s" + std::to_string(stream_id);
  return o;
}

// One node pair on this thread: a listener expecting `options`, a sender to it.
struct Pair {
  explicit Pair(const LinkOptions& options,
                std::chrono::milliseconds connect_timeout = std::chrono::seconds(5)) {
    auto l = TcpListener::open(loop, kAnyLoopback);
    EXPECT_TRUE(l) << (l ? "" : l.error().describe());
    listener = std::move(l).value();
    recv = &listener->expect(options);
    auto s = make_tcp_send_link(loop, {"127.0.0.1", listener->port()}, options, connect_timeout);
    EXPECT_TRUE(s) << (s ? "" : s.error().describe());
    send = std::move(s).value();
  }
  ~Pair() {
    // Links before the loop they are registered in.
    send.reset();
    listener.reset();
  }

  void step(FrameSink& sink, bool poll_receiver = true) {
    loop.do_work(Clock::now());
    listener->do_work();
    send->do_work();
    if (poll_receiver) recv->poll(sink);
  }

  EventLoop loop;
  std::unique_ptr<TcpListener> listener;
  RecvLink* recv = nullptr;
  std::unique_ptr<SendLink> send;
};

TEST(TcpLink, TwoHundredThousandSmallFramesArriveInOrderWithoutAllocating) {
  constexpr std::uint64_t kFrames = 200'000;
  constexpr std::uint64_t kSeed = 20240601;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  const auto options = options_for(1, 8, 4 * 8, 64, 16);
  Pair pair(options);
  CountingSource source(*pair.send, kFrames, 8, 4, kSeed);
  CheckingSink sink(8);

  // Allocations are counted from the 1000th frame sent to the 1000th before the end: set-up
  // (connect, hello, first credit) and teardown are excluded, the steady data path is not.
  std::uint64_t allocations = 0;
  const bool done = pump_until(
      [&] {
        if (source.frames_sent >= 1000 && source.frames_sent < kFrames - 1000) {
          g_counting = true;
        } else if (g_counting) {
          g_counting = false;
          allocations = g_allocations.exchange(0);
        }
        source.offer();
        pair.step(sink);
      },
      [&] {
        return pair.send->state() == LinkState::finished &&
               pair.recv->state() == LinkState::finished;
      });
  g_counting = false;
  ASSERT_TRUE(done) << "send " << to_string(pair.send->state()) << ", recv "
                    << to_string(pair.recv->state()) << ", delivered " << sink.frames
                    << (pair.send->error() ? " " + pair.send->error()->describe() : "")
                    << (pair.recv->error() ? " " + pair.recv->error()->describe() : "");

  EXPECT_EQ(source.frames_sent, kFrames);
  EXPECT_EQ(sink.frames, kFrames);
  EXPECT_EQ(sink.tuples, source.tuples_sent);
  EXPECT_EQ(sink.crc, source.crc);
  EXPECT_EQ(sink.bad_sequence_at, 0u);
  EXPECT_EQ(sink.bad_frames, 0u);
  EXPECT_EQ(sink.bad_tuples, 0u);
  EXPECT_EQ(sink.end_of_stream, 1u);
  EXPECT_EQ(pair.send->stats().frames, kFrames);
  EXPECT_EQ(pair.send->stats().tuples, source.tuples_sent);
  EXPECT_EQ(pair.recv->stats().frames, kFrames);
  EXPECT_EQ(pair.recv->arrivals(), kFrames);  // a connection of its own: frames
  EXPECT_EQ(pair.recv->stats().tuples, source.tuples_sent);
  EXPECT_EQ(pair.recv->stats().duplicates_dropped, 0u);
  EXPECT_EQ(allocations, 0u) << "the steady-state data path allocated";
  EXPECT_EQ(pair.send->error(), nullptr);
  EXPECT_EQ(pair.recv->error(), nullptr);
}

// A block-mode thread arms its waits once per wake-up, outside io_context::run (where asio
// would recycle handler memory): every wait, the socket's and the loop's timer, must still
// allocate nothing. One frame per round: arm, send, block until the receiver's socket is
// readable, read.
TEST(TcpLink, BlockingOncePerFrameAllocatesNothing) {
  const auto options = options_for(10, 8, 64, 16, 4);
  Pair pair(options);
  CheckingSink sink(8);
  std::uint64_t allocations = 0;
  std::uint64_t blocked = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    Claim claim;
    ASSERT_TRUE(pump_until([&] { pair.step(sink); },
                           [&] { return pair.send->try_claim(claim) == SendStatus::ok; }));
    // Counted from the 100th round on: set-up and the first waits are excluded.
    g_counting = i >= 100;
    // Nothing has arrived: the receiver's arm issues its read wait.
    const bool armed = pair.loop.try_arm();
    testing::fill_tuple(claim.payload.data(), 8, i);
    pair.send->commit(claim, 1, 8);
    pair.send->do_work();
    if (armed) {
      blocked += pair.loop.wait(std::chrono::seconds(5)) ? 1 : 0;
    }
    pair.loop.disarm();
    ASSERT_TRUE(pump_until([&] { pair.step(sink); }, [&] { return sink.frames == i + 1; }));
    g_counting = false;
  }
  allocations = g_allocations.exchange(0);
  EXPECT_EQ(sink.frames, 300U);
  EXPECT_EQ(sink.bad_sequence_at, 0U);
  EXPECT_GT(blocked, 150U);  // most rounds really blocked and were woken
  EXPECT_EQ(allocations, 0U) << "arming and blocking allocated";
}

// Four tcp streams on one loop, its sending and receiving ends alike, for the readiness tests
// below; pass() is one pass of a node's duty cycle, beginning with loop.do_work().
class TcpReadiness : public ::testing::Test {
 protected:
  static constexpr int kStreams = 4;
  static_assert(kStreams >= EventLoop::kReadinessReaders);

  // Opens the listener and the four links (stream ids first_id...), then passes until every
  // sender is established with credit in hand.
  void open(std::uint32_t first_id) {
    auto l = TcpListener::open(loop, kAnyLoopback);
    ASSERT_TRUE(l) << l.error().describe();
    listener = std::move(l).value();
    for (std::uint32_t i = 0; i < kStreams; ++i) {
      const auto options = options_for(first_id + i, 8, 64, 16, 4);
      recv.push_back(&listener->expect(options));
      auto s = make_tcp_send_link(loop, {"127.0.0.1", listener->port()}, options,
                                  std::chrono::seconds(5));
      ASSERT_TRUE(s) << s.error().describe();
      send.push_back(std::move(s).value());
      sinks.push_back(std::make_unique<CheckingSink>(8));
    }
    ASSERT_TRUE(pump_until([&] { pass(); }, [&] {
      return std::all_of(send.begin(), send.end(), [](const auto& link) {
        return link->state() == LinkState::established && link->credits_available() > 0;
      });
    }));
  }
  void pass() {
    loop.do_work(Clock::now());
    listener->do_work();
    for (auto& link : send) link->do_work();
    for (int i = 0; i < kStreams; ++i) recv[i]->poll(*sinks[i]);
  }
  void send_one(int stream, std::uint64_t tuple) {
    Claim claim;
    ASSERT_EQ(send[stream]->try_claim(claim), SendStatus::ok);
    testing::fill_tuple(claim.payload.data(), 8, tuple);
    send[stream]->commit(claim, 1, 8);
  }

  // Declared in this order so that the links go before the loop they are registered in.
  EventLoop loop;
  std::unique_ptr<TcpListener> listener;
  std::vector<RecvLink*> recv;
  std::vector<std::unique_ptr<SendLink>> send;
  std::vector<std::unique_ptr<CheckingSink>> sinks;
};

// Readiness (event_loop.hpp): a thread with many connections that wakes for one of them
// reads only that one. Four streams on one loop; the loop blocks and a frame on stream 0
// wakes it. In the passes after (each beginning with loop.do_work(), as a node's do), the
// other three receiving ends make no read (their waits are pending on sockets seen empty),
// the frame arrives, and a frame sent to stream 2 afterwards, with no wait re-armed, still
// arrives within a few passes: a skipped read delays bytes by a pass, never loses them.
TEST_F(TcpReadiness, AWakeUpReadsOnlyTheConnectionsThatAreReady) {
  ASSERT_NO_FATAL_FAILURE(open(20));
  // Quiet: nothing left to read or write, so every end can arm.
  for (int i = 0; i < 20; ++i) pass();
  ASSERT_TRUE(loop.try_arm()) << "some link still had work";
  send_one(0, 0);
  send[0]->do_work();
  ASSERT_TRUE(loop.wait(std::chrono::seconds(5))) << "the frame did not wake the loop";
  std::vector<std::uint64_t> reads_before;
  for (auto* link : recv) reads_before.push_back(link->stats().read_calls);
  ASSERT_TRUE(pump_until([&] { pass(); }, [&] { return sinks[0]->frames == 1; }));
  for (int i = 1; i < kStreams; ++i) {
    EXPECT_EQ(recv[i]->stats().read_calls, reads_before[i]) << "stream " << i << " was read";
  }
  EXPECT_GT(recv[0]->stats().read_calls, reads_before[0]);
  // Stream 0's wait has run, and its reads armed the next one first: once they found the
  // socket empty, the passes skip stream 0 as well (and its sender, whose credit came back).
  for (int i = 0; i < 5; ++i) pass();
  std::vector<std::uint64_t> recv_reads;
  std::vector<std::uint64_t> send_reads;
  for (int i = 0; i < kStreams; ++i) {
    recv_reads.push_back(recv[i]->stats().read_calls);
    send_reads.push_back(send[i]->stats().read_calls);
  }
  for (int i = 0; i < 10; ++i) pass();
  for (int i = 0; i < kStreams; ++i) {
    EXPECT_EQ(recv[i]->stats().read_calls, recv_reads[i]) << "receiver " << i << " was read";
    EXPECT_EQ(send[i]->stats().read_calls, send_reads[i]) << "sender " << i << " was read";
  }
  // No wait re-armed since: stream 2's read wait is still the one armed before the block.
  send_one(2, 0);
  int passes = 0;
  ASSERT_TRUE(pump_until([&] { pass(); ++passes; }, [&] { return sinks[2]->frames == 1; }));
  EXPECT_LE(passes, 50);
  EXPECT_GT(recv[2]->stats().read_calls, reads_before[2]);
  for (int i = 0; i < kStreams; ++i) {
    EXPECT_EQ(sinks[i]->bad_frames + sinks[i]->bad_tuples + sinks[i]->bad_sequence_at, 0U);
  }
  EXPECT_EQ(sinks[1]->frames + sinks[3]->frames, 0U);
}

// A read that returns less than it had room for emptied the socket (Linux's TCP stops short
// only then), so an end does not read again to find it empty. Four frames (the credit batch)
// wake the receiving end, whose reads all return data; the credit and ack they earn come back
// in one write, which the sender takes with one read. (Before, each end's last read of a
// wake-up found nothing: one would_block per wake-up on either side.)
TEST_F(TcpReadiness, AReadThatStopsShortNeedsNoEmptyReadAfterIt) {
  ASSERT_NO_FATAL_FAILURE(open(40));
  for (int i = 0; i < 20; ++i) pass();
  ASSERT_TRUE(loop.try_arm()) << "some link still had work";
  const auto recv_before = recv[0]->stats();
  for (std::uint64_t t = 0; t < 4; ++t) send_one(0, t);
  send[0]->do_work();
  ASSERT_TRUE(loop.wait(std::chrono::seconds(5))) << "the frames did not wake the loop";
  // The sender may read (and find nothing) before the credit comes; the pass that takes the
  // credit reads once.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> credit_pass;  // reads, empty reads
  ASSERT_TRUE(pump_until(
      [&] {
        const auto before = send[0]->stats();
        pass();
        const auto& after = send[0]->stats();
        if (!credit_pass && send[0]->credits_available() == 16) {
          credit_pass.emplace(after.read_calls - before.read_calls,
                              after.would_block - before.would_block);
        }
      },
      [&] { return sinks[0]->frames == 4 && credit_pass; }));
  const auto& r = recv[0]->stats();
  EXPECT_GE(r.read_calls - recv_before.read_calls, 1U);
  EXPECT_LE(r.read_calls - recv_before.read_calls, 4U);
  EXPECT_EQ(r.would_block, recv_before.would_block);
  EXPECT_EQ(credit_pass->first, 1U);
  EXPECT_EQ(credit_pass->second, 0U);
  EXPECT_EQ(sinks[0]->bad_frames + sinks[0]->bad_tuples + sinks[0]->bad_sequence_at, 0U);
}

// The same after a sleep (sleep and adaptive modes), where nothing was armed before: the
// passes after the first sleep arm each end's wait before its read, so after the next sleep
// only the connection that has something is read.
TEST_F(TcpReadiness, AfterASleepAPassReadsOnlyTheConnectionsThatAreReady) {
  ASSERT_NO_FATAL_FAILURE(open(30));
  for (int i = 0; i < 20; ++i) pass();
  loop.slept();
  pass();  // every end arms its read wait, then reads and finds nothing
  Claim claim;
  ASSERT_EQ(send[1]->try_claim(claim), SendStatus::ok);
  testing::fill_tuple(claim.payload.data(), 8, 0);
  send[1]->commit(claim, 1, 8);
  send[1]->do_work();
  loop.slept();
  std::vector<std::uint64_t> reads_before;
  for (auto* link : recv) reads_before.push_back(link->stats().read_calls);
  ASSERT_TRUE(pump_until([&] { pass(); }, [&] { return sinks[1]->frames == 1; }));
  EXPECT_GT(recv[1]->stats().read_calls, reads_before[1]);
  for (int i = 0; i < kStreams; ++i) {
    if (i != 1) {
      EXPECT_EQ(recv[i]->stats().read_calls, reads_before[i]) << "stream " << i;
    }
    EXPECT_EQ(sinks[i]->bad_frames + sinks[i]->bad_tuples + sinks[i]->bad_sequence_at, 0U);
  }
}

TEST(TcpLink, SlowReceiverBackPressuresSenderWithinItsWindow) {
  constexpr std::uint64_t kFrames = 1'500;
  constexpr std::uint32_t kWindow = 8;
  const auto options = options_for(3, 16, 4 * 16, kWindow, 2);
  Pair pair(options);
  CountingSource source(*pair.send, kFrames, 16, 4, 7);
  CheckingSink sink(16);

  // The receiver is polled once every 2 ms; the sender spins in between. Memory stays
  // bounded when the sender never has more than `window` frames outstanding (committed but
  // not yet delivered), and the pool's fixed size is never exceeded (no allocation at all).
  std::uint64_t max_outstanding = 0;
  std::uint64_t max_credits = 0;
  double max_free_capacity = 0;
  auto next_poll = Clock::now();
  std::uint64_t allocations = 0;
  const bool done = pump_until(
      [&] {
        g_counting = pair.send->state() == LinkState::established && source.frames_sent > 0;
        source.offer();
        const bool poll_now = Clock::now() >= next_poll;
        pair.step(sink, poll_now);
        if (poll_now) next_poll = Clock::now() + std::chrono::milliseconds(2);
        if (g_counting) allocations += g_allocations.exchange(0);
        g_counting = false;
        max_outstanding = std::max(max_outstanding, source.frames_sent - sink.frames);
        max_credits = std::max(max_credits, pair.send->credits_available());
        max_free_capacity = std::max(max_free_capacity, pair.recv->free_capacity());
      },
      [&] {
        return pair.send->state() == LinkState::finished &&
               pair.recv->state() == LinkState::finished;
      });
  ASSERT_TRUE(done) << "send " << to_string(pair.send->state()) << ", recv "
                    << to_string(pair.recv->state()) << ", delivered " << sink.frames;

  EXPECT_GT(source.back_pressured, 0u);
  EXPECT_GT(pair.send->stats().credit_stalls, 0u);
  EXPECT_LE(max_outstanding, kWindow);
  EXPECT_LE(max_credits, kWindow);
  EXPECT_LE(max_free_capacity, static_cast<double>(kWindow));
  EXPECT_EQ(pair.send->window(), kWindow);
  EXPECT_EQ(allocations, 0u);
  EXPECT_GT(pair.recv->stats().credit_frames, kFrames / kWindow);
  EXPECT_EQ(pair.send->stats().credit_frames, pair.recv->stats().credit_frames);
  EXPECT_EQ(sink.frames, kFrames);
  EXPECT_EQ(sink.tuples, source.tuples_sent);
  EXPECT_EQ(sink.crc, source.crc);
  EXPECT_EQ(sink.bad_sequence_at, 0u);
  EXPECT_EQ(sink.bad_tuples, 0u);
}

// 32 KiB frames and a receiver that reads every 20 ms: the sender's window (8 MiB) is more
// than the socket takes at once, so its sends hit EAGAIN and must be retried by a caller that
// only ever busy-polls (never arms a wait).
TEST(TcpLink, LargeFramesSurviveAFullSocketBufferWhileBusyPolling) {
  constexpr std::uint64_t kFrames = 600;
  const auto options = options_for(4, 64, 32 * 1024, 256, 64);
  Pair pair(options);
  CountingSource source(*pair.send, kFrames, 64, 512, 3);
  CheckingSink sink(64);
  auto next_poll = Clock::now();
  ASSERT_TRUE(pump_until(
      [&] {
        source.offer();
        const bool poll_now = Clock::now() >= next_poll;
        pair.step(sink, poll_now);
        if (poll_now) next_poll = Clock::now() + std::chrono::milliseconds(20);
      },
      [&] {
        return pair.send->state() == LinkState::finished &&
               pair.recv->state() == LinkState::finished;
      }))
      << "send " << to_string(pair.send->state()) << ", recv " << to_string(pair.recv->state())
      << ", sent " << source.frames_sent << ", delivered " << sink.frames;
  EXPECT_EQ(sink.frames, kFrames);
  EXPECT_EQ(sink.tuples, source.tuples_sent);
  EXPECT_EQ(sink.crc, source.crc);
  EXPECT_EQ(sink.bad_sequence_at, 0u);
  EXPECT_EQ(sink.bad_tuples, 0u);
  // The socket holds megabytes at each poll, yet no read asks for more than two of the
  // largest frames (tcp/socket_io.hpp, read_room_bytes()), so the bytes take at least that
  // many reads. Reading into the whole window's staging took a few reads per poll.
  const LinkStats& stats = pair.recv->stats();
  const std::uint64_t wire_bytes = stats.payload_bytes + kFrameHeaderBytes * kFrames;
  const std::uint64_t room = 2 * (kFrameHeaderBytes + 32 * 1024);
  EXPECT_GE(stats.read_calls - stats.would_block, (wire_bytes + room - 1) / room)
      << wire_bytes << " bytes";
}

// The blocking path, on two threads with a loop each: whenever a round did no work, the
// thread arms its sources (listener and receiver, or sender) and blocks in its EventLoop. A
// lost wake-up shows as a 1 s timeout; a healthy run never times out.
TEST(TcpLink, BlockingBetweenRoundsLosesNoWakeUp) {
  constexpr std::uint64_t kFrames = 3'000;
  const auto options = options_for(6, 8, 8 * 8, 16, 4);
  auto block_if_idle = [](EventLoop& loop, int work, std::uint64_t& timeouts) {
    if (work == 0 && loop.try_arm() && !loop.wait(std::chrono::seconds(1))) ++timeouts;
    loop.disarm();
  };

  std::promise<std::uint16_t> port;
  auto port_future = port.get_future();
  struct Received {
    CheckingSink sink{8};
    std::uint64_t timeouts = 0;
    std::uint64_t runs = 0;
    LinkState state = LinkState::connecting;
  };
  auto receiver = std::async(std::launch::async, [&] {
    Received r;
    EventLoop loop;
    auto listener = std::move(TcpListener::open(loop, kAnyLoopback)).value();
    RecvLink& recv = listener->expect(options);
    port.set_value(listener->port());
    pump_until(
        [&] {
          int work = loop.poll_now();
          work += listener->do_work();
          work += recv.poll(r.sink);
          block_if_idle(loop, work, r.timeouts);
        },
        [&] { return recv.state() == LinkState::finished || recv.state() == LinkState::failed; });
    // Keep flushing for a moment in case the end-of-stream ack met a full socket.
    for (int i = 0; i < 50; ++i) {
      recv.poll(r.sink);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    r.state = recv.state();
    r.runs = loop.stats().runs;
    listener.reset();
    return r;
  });

  EventLoop loop;
  auto send = std::move(make_tcp_send_link(loop, {"127.0.0.1", port_future.get()}, options))
                  .value();
  CountingSource source(*send, kFrames, 8, 8, 11);
  std::uint64_t timeouts = 0;
  const bool done = pump_until(
      [&] {
        int work = source.offer();
        work += loop.poll_now();
        work += send->do_work();
        block_if_idle(loop, work, timeouts);
      },
      [&] { return send->state() == LinkState::finished || send->state() == LinkState::failed; });
  const Received r = receiver.get();
  ASSERT_TRUE(done);
  EXPECT_EQ(send->state(), LinkState::finished);
  EXPECT_EQ(r.state, LinkState::finished);
  EXPECT_EQ(timeouts, 0u);
  EXPECT_EQ(r.timeouts, 0u);
  EXPECT_GT(loop.stats().runs + r.runs, 0u);  // somebody really blocked
  EXPECT_EQ(r.sink.frames, kFrames);
  EXPECT_EQ(r.sink.tuples, source.tuples_sent);
  EXPECT_EQ(r.sink.crc, source.crc);
  EXPECT_EQ(r.sink.bad_sequence_at, 0u);
  send.reset();
}

TEST(TcpLink, AllocationCounterSeesAllocations) {
  // Guards the zero-allocation assertions above against a counter that never counts.
  g_allocations = 0;
  g_counting = true;
  auto* volatile p = new int(1);
  g_counting = false;
  delete p;
  EXPECT_GE(g_allocations.exchange(0), 1u);
}

TEST(TcpLink, EndOfStreamFinishesBothEndsAndClosesTheSender) {
  const auto options = options_for(5, 8, 64, 4, 1);
  Pair pair(options);
  CheckingSink sink(8);
  Claim claim;
  ASSERT_TRUE(pump_until([&] { pair.step(sink); },
                         [&] { return pair.send->try_claim(claim) == SendStatus::ok; }));
  EXPECT_EQ(pair.send->state(), LinkState::established);
  EXPECT_EQ(pair.recv->state(), LinkState::established);
  pair.send->commit(claim, 0, 0, kFlagData | kFlagEndOfStream);
  ASSERT_TRUE(pump_until([&] { pair.step(sink); }, [&] {
    return pair.send->state() == LinkState::finished && pair.recv->state() == LinkState::finished;
  }));
  EXPECT_EQ(sink.frames, 1u);
  EXPECT_EQ(sink.tuples, 0u);
  EXPECT_EQ(sink.end_of_stream, 1u);
  EXPECT_EQ(pair.send->try_claim(claim), SendStatus::closed);
  // Finished ends stay finished (no spurious "connection lost" once the peers let go).
  for (int i = 0; i < 100; ++i) pair.step(sink);
  EXPECT_EQ(pair.send->state(), LinkState::finished);
  EXPECT_EQ(pair.recv->state(), LinkState::finished);
  EXPECT_TRUE(pair.listener->rejected().empty());
}

// The pickup report (frame.hpp): a receiver that reads every frame 2 ms after it arrived
// says so in its credit frames once it has counted enough of them, and the sender keeps the
// last report it got.
TEST(TcpLink, CreditFramesCarryTheReceiversPickupLatency) {
  const auto options = options_for(9, 8, 64, 8, 1);  // a credit frame for every frame read
  Pair pair(options);
  CheckingSink sink(8);
  for (std::uint64_t i = 0; i < 40; ++i) {
    Claim claim;
    ASSERT_TRUE(pump_until([&] { pair.step(sink, false); },
                           [&] { return pair.send->try_claim(claim) == SendStatus::ok; }));
    testing::fill_tuple(claim.payload.data(), 8, i);
    pair.send->commit(claim, 1, 8);
    pair.send->do_work();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_TRUE(pump_until([&] { pair.step(sink); }, [&] { return sink.frames == i + 1; }));
    if (i == 20) {
      // Too few frames for a p99: no report yet.
      EXPECT_EQ(pair.recv->stats().pickup_p99_us, 0U);
      EXPECT_EQ(pair.send->stats().pickup_p99_us, 0U);
    }
  }
  ASSERT_TRUE(pump_until([&] { pair.step(sink); }, [&] {
    return pair.send->stats().credit_frames == pair.recv->stats().credit_frames;
  }));
  EXPECT_GE(pair.recv->stats().pickup_p99_us, 2000U);
  EXPECT_EQ(pair.send->stats().pickup_p99_us, pair.recv->stats().pickup_p99_us);
  EXPECT_EQ(sink.bad_frames, 0U);
}

// The latency breakdown (frame.hpp, FrameView): every frame says when the kernel took it in
// and when the read that completed it returned, both after the frame was committed and
// before the poll that delivered it ended, arrival first. Linux turns receive stamps on for
// the whole host in deferred work once the first socket asks, so the first frames on a host
// where no socket had them may come unstamped (both 0, "unknown"); frames are sent until one
// is stamped, and from then on every frame must be.
TEST(TcpLink, FramesSayWhenTheyArrivedAndWereRead) {
  struct StampSink final : FrameSink {
    std::vector<std::pair<std::int64_t, std::int64_t>> stamps;
    void on_frame(const FrameView& frame) override {
      stamps.emplace_back(frame.arrived_ns, frame.read_ns);
    }
  };
  const auto options = options_for(12, 8, 64, 8, 1);
  Pair pair(options);
  StampSink sink;
  std::uint64_t sent = 0;
  // Sends one frame and waits for it; the bounds of its stamps are checked by the caller.
  const auto send_one = [&](timespec& before, timespec& after) {
    Claim claim;
    ASSERT_TRUE(pump_until([&] { pair.step(sink, false); },
                           [&] { return pair.send->try_claim(claim) == SendStatus::ok; }));
    testing::fill_tuple(claim.payload.data(), 8, sent);
    ::clock_gettime(CLOCK_REALTIME, &before);
    pair.send->commit(claim, 1, 8);
    pair.send->do_work();
    ++sent;
    ASSERT_TRUE(pump_until([&] { pair.step(sink); }, [&] { return sink.stamps.size() == sent; }));
    ::clock_gettime(CLOCK_REALTIME, &after);
  };
  timespec before{};
  timespec after{};
  while (sent < 200 && (sink.stamps.empty() || sink.stamps.back().first == 0)) {
    send_one(before, after);
    if (HasFatalFailure()) return;
    const auto [arrived, read] = sink.stamps.back();
    if (arrived == 0) {
      EXPECT_EQ(read, 0) << "frame " << sent - 1 << ": a read time without an arrival";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ASSERT_NE(sink.stamps.back().first, 0) << "no frame of " << sent << " was stamped";
  for (int i = 0; i < 20; ++i) {
    send_one(before, after);
    if (HasFatalFailure()) return;
    const auto [arrived, read] = sink.stamps.back();
    EXPECT_LE(realtime_ns_of(before), arrived) << "frame " << sent - 1;
    EXPECT_LE(arrived, read) << "frame " << sent - 1;
    EXPECT_LE(read, realtime_ns_of(after)) << "frame " << sent - 1;
  }
}

// One pass per payload at the receiving end: a sink that takes each payload's CRC (as a check
// sink does) is the frame check. Every frame is checked against the sink's value and arrives
// whole, and the sink's total is the sender's.
TEST(TcpLink, ASinkThatTakesEachPayloadsCrcIsTheFrameCheck) {
  const auto options = options_for(6, 16, 8 * 16, 16, 4);
  Pair pair(options);
  CheckingSink sink(16);
  sink.take_crc = true;
  CountingSource source(*pair.send, 100, 16, 8, 11);
  ASSERT_TRUE(pump_until([&] { source.offer(); pair.step(sink); },
                         [&] { return pair.recv->state() == LinkState::finished; }))
      << (pair.recv->error() != nullptr ? pair.recv->error()->describe() : "no error");
  EXPECT_EQ(sink.frames, 100u);
  EXPECT_EQ(sink.payload_crc_calls, 100u);
  EXPECT_EQ(sink.tuples, source.tuples_sent);
  EXPECT_EQ(sink.crc, source.crc);
  EXPECT_EQ(sink.bad_tuples, 0u);
  EXPECT_EQ(sink.bad_sequence_at, 0u);
}

// Sends 100 frames to `sink`, which takes each payload's CRC, until the receiving end fails;
// returns its error, or what went wrong instead.
std::string error_when_refused(CheckingSink& sink, std::uint32_t stream_id, std::uint64_t seed) {
  Pair pair(options_for(stream_id, 16, 8 * 16, 16, 4));
  sink.take_crc = true;
  CountingSource source(*pair.send, 100, 16, 8, seed);
  if (!pump_until([&] { source.offer(); pair.step(sink); },
                  [&] { return pair.recv->state() == LinkState::failed; })) {
    return "the receiving end did not fail";
  }
  return pair.recv->error() != nullptr ? pair.recv->error()->describe() : "failed without an error";
}

// The link checks the frame against the sink's CRC rather than reading the payload again: a
// wrong answer refuses an intact frame.
TEST(TcpLink, TheFrameIsCheckedAgainstTheSinksCrcNotASecondPass) {
  CheckingSink sink(16);
  sink.wrong_crc_call = 10;
  const std::string error = error_when_refused(sink, 8, 17);
  EXPECT_NE(error.find("checksum mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find(" in frame 10"), std::string::npos) << error;
  EXPECT_EQ(sink.frames, 9u);
}

// ...and so a byte corrupted after the frame arrived but before the sink's pass (where the
// link's own check used to be) is caught by it: the frame is refused, named, and none of it
// reaches the sink; the frames before it arrived whole.
TEST(TcpLink, AByteCorruptedBeforeTheSinksPassIsRefusedAsACorruptFrame) {
  CheckingSink sink(16);
  sink.corrupt_payload_call = 40;
  const std::string error = error_when_refused(sink, 7, 13);
  EXPECT_NE(error.find("checksum mismatch"), std::string::npos) << error;
  EXPECT_NE(error.find(" in frame 40"), std::string::npos) << error;
  EXPECT_EQ(sink.payload_crc_calls, 40u);
  EXPECT_EQ(sink.frames, 39u);
  EXPECT_EQ(sink.bad_tuples, 0u);
  EXPECT_EQ(sink.bad_sequence_at, 0u);
}

TEST(TcpLink, ConnectToClosedPortFailsNamingTheAddressAfterTheTimeout) {
  EventLoop loop;
  // A port held bound for the whole test and never listened on: connects to it are refused.
  // A port merely free a moment before could be taken meanwhile by a test running beside
  // this one, or become this link's own source port (a self-connect): once in CI under
  // AddressSanitizer the link then met a peer that closed during the handshake.
  boost::asio::ip::tcp::socket holder(loop.context());
  holder.open(boost::asio::ip::tcp::v4());
  holder.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
  const std::uint16_t port = holder.local_endpoint().port();
  const auto options = options_for(1, 8, 64, 4, 1);
  const auto started = Clock::now();
  auto made = make_tcp_send_link(loop, {"127.0.0.1", port}, options,
                                 std::chrono::milliseconds(300));
  ASSERT_TRUE(made);
  auto link = std::move(made).value();
  Claim claim;
  EXPECT_EQ(link->try_claim(claim), SendStatus::not_connected);
  ASSERT_TRUE(pump_until(
      [&] {
        loop.do_work(Clock::now());
        link->do_work();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      [&] { return link->state() == LinkState::failed; }));
  // Refusals are retried until the timeout: failing sooner would be a bug.
  EXPECT_GE(Clock::now() - started, std::chrono::milliseconds(300));
  ASSERT_NE(link->error(), nullptr);
  const std::string message = link->error()->message;
  EXPECT_NE(message.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << message;
  EXPECT_NE(message.find("cannot connect"), std::string::npos) << message;
  EXPECT_EQ(link->error()->category, ErrorCategory::io);
  EXPECT_EQ(link->try_claim(claim), SendStatus::closed);
  link.reset();
}

struct HelloCase {
  const char* name;
  void (*spoil)(LinkOptions&);
  const char* expected;  // substring of the listener's rejection
};

class TcpHello : public ::testing::TestWithParam<HelloCase> {};

TEST_P(TcpHello, MismatchIsRejectedNamingTheProblemAndTheListenerKeepsServing) {
  const auto good = options_for(1, 16, 16 * 8, 8, 2);
  auto bad = good;
  GetParam().spoil(bad);

  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, kAnyLoopback)).value();
  RecvLink& recv = listener->expect(good);
  const TcpEndpoint to{"127.0.0.1", listener->port()};
  auto bad_send = std::move(make_tcp_send_link(loop, to, bad)).value();
  CheckingSink sink(16);
  auto step = [&] {
    loop.do_work(Clock::now());
    listener->do_work();
    bad_send->do_work();
    recv.poll(sink);
  };
  ASSERT_TRUE(pump_until(step, [&] { return bad_send->state() == LinkState::failed; }));
  ASSERT_EQ(listener->rejected().size(), 1u);
  const std::string why = listener->rejected()[0].message;
  EXPECT_NE(why.find(GetParam().expected), std::string::npos) << why;
  EXPECT_NE(why.find("connection from 127.0.0.1:"), std::string::npos) << why;
  EXPECT_EQ(listener->rejected()[0].category, ErrorCategory::protocol);
  ASSERT_NE(bad_send->error(), nullptr);
  EXPECT_NE(bad_send->error()->message.find("handshake"), std::string::npos)
      << bad_send->error()->message;
  EXPECT_EQ(recv.state(), LinkState::connecting);

  // The stream is still free: a correct sender attaches and delivers.
  auto good_send = std::move(make_tcp_send_link(loop, to, good)).value();
  CountingSource source(*good_send, 100, 16, 8, 1);
  ASSERT_TRUE(pump_until(
      [&] {
        source.offer();
        step();
        good_send->do_work();
      },
      [&] { return good_send->state() == LinkState::finished; }));
  EXPECT_EQ(sink.frames, 100u);
  EXPECT_EQ(sink.crc, source.crc);
  EXPECT_EQ(listener->rejected().size(), 1u);
  good_send.reset();
  bad_send.reset();
  listener.reset();
}

INSTANTIATE_TEST_SUITE_P(
    Mismatches, TcpHello,
    ::testing::Values(
        HelloCase{"SchemaHash", [](LinkOptions& o) { o.schema_hash ^= 0xFF; },
                  "schema hash mismatch for stream 1 's1': sender has 0x5EED0000000000FE, "
                  "receiver expects 0x5EED000000000001"},
        HelloCase{"TupleSize", [](LinkOptions& o) { o.tuple_bytes = 24; },
                  "tuple size mismatch for stream 1 's1': sender has 24 bytes, receiver "
                  "expects 16"},
        HelloCase{"ClusterToken", [](LinkOptions& o) { o.cluster_token = 1; },
                  "cluster token mismatch for stream 1 's1'"},
        HelloCase{"UnknownStream", [](LinkOptions& o) { o.stream_id = 7; },
                  "unknown stream id 7 (this node expects streams 1)"},
        HelloCase{"BatchTooLarge", [](LinkOptions& o) { o.max_payload_bytes *= 2; },
                  "batch of 256 bytes for stream 1 's1' exceeds the 128"}),
    [](const ::testing::TestParamInfo<HelloCase>& param_info) {
      return std::string(param_info.param.name);
    });

}  // namespace
}  // namespace boreal::transport
