// Upstream backup on the tcp medium: a sender keeps every frame until the receiver
// acknowledges it; when the connection breaks it reconnects and replays, and the receiver
// drops what it had already. Connections are broken by a relay between the two ends
// (CuttingRelay, cutting_relay.hpp).
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/tcp_medium.hpp>

#include <array>
#include <atomic>
#include <future>
#include <list>
#include <memory>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "transport/cutting_relay.hpp"
#include "transport/tcp_test_support.hpp"

namespace boreal::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using testing::CheckingSink;
using testing::CuttingRelay;
using testing::Clock;
using testing::CountingSource;
using testing::pump_until;

constexpr std::uint32_t kTupleBytes = 16;

LinkOptions options() { return testing::small_link_options(1, kTupleBytes); }

TEST(TcpResume, ConnectionResetsMidStreamLoseAndRepeatNothing) {
  constexpr std::uint64_t kFrames = 6'000;
  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  RecvLink& recv = listener->expect(options());
  CuttingRelay relay(listener->port());
  auto send = std::move(make_tcp_send_link(loop, {"127.0.0.1", relay.port()}, options())).value();
  CountingSource source(*send, kFrames, kTupleBytes, 8, 7);
  CheckingSink sink(kTupleBytes);
  auto step = [&] {
    source.offer();
    loop.do_work(Clock::now());
    listener->do_work();
    send->do_work();
    recv.poll(sink);
  };

  for (const std::uint64_t cut_at : {kFrames / 4, kFrames / 2, 3 * kFrames / 4}) {
    ASSERT_TRUE(pump_until(step, [&] { return sink.frames >= cut_at; }));
    relay.cut();
  }
  ASSERT_TRUE(pump_until(step, [&] {
    return send->state() == LinkState::finished && recv.state() == LinkState::finished;
  })) << (send->error() ? send->error()->message : "") << " / "
      << (recv.error() ? recv.error()->message : "");

  EXPECT_EQ(sink.frames, kFrames);
  EXPECT_EQ(sink.tuples, source.tuples_sent);
  EXPECT_EQ(sink.bad_sequence_at, 0u);
  EXPECT_EQ(sink.bad_tuples, 0u);
  EXPECT_EQ(sink.end_of_stream, 1u);
  EXPECT_EQ(sink.crc, source.crc);
  EXPECT_EQ(relay.accepted(), 4);
  EXPECT_EQ(send->stats().reconnects, 3u);
  EXPECT_EQ(recv.stats().reconnects, 3u);
  EXPECT_EQ(recv.delivered(), kFrames);
  // Every replayed frame the receiver already had is dropped, never delivered twice.
  EXPECT_LE(recv.stats().duplicates_dropped, send->stats().frames_replayed);
  EXPECT_EQ(recv.stats().frames, kFrames);
}

TEST(TcpResume, BothEndsFailNamingTheTimeoutWhenNoConnectionComesBack) {
  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  auto o = options();
  o.reconnect_timeout = std::chrono::milliseconds(300);
  RecvLink& recv = listener->expect(o);
  CuttingRelay relay(listener->port());
  auto send = std::move(make_tcp_send_link(loop, {"127.0.0.1", relay.port()}, o)).value();
  CountingSource source(*send, 1'000'000, kTupleBytes, 8, 7);
  CheckingSink sink(kTupleBytes);
  auto step = [&] {
    source.offer();
    loop.do_work(Clock::now());
    listener->do_work();
    send->do_work();
    recv.poll(sink);
  };
  ASSERT_TRUE(pump_until(step, [&] { return sink.frames >= 100; }));
  relay.refuse();
  ASSERT_TRUE(pump_until(step, [&] {
    return send->state() == LinkState::failed && recv.state() == LinkState::failed;
  }));
  const std::string sender_error = send->error()->message;
  EXPECT_NE(sender_error.find("link 's1' (stream 1) to 127.0.0.1:"), std::string::npos)
      << sender_error;
  EXPECT_NE(sender_error.find("; no connection within 300 ms after that (last attempt: "),
            std::string::npos)
      << sender_error;
  EXPECT_NE(sender_error.find(" frames were not acknowledged"), std::string::npos) << sender_error;
  const std::string receiver_error = recv.error()->message;
  EXPECT_NE(receiver_error.find("connection lost after frame "), std::string::npos)
      << receiver_error;
  EXPECT_NE(receiver_error.find("; it did not reconnect within 300 ms"), std::string::npos)
      << receiver_error;
  // What arrived before the cut arrived whole and in order.
  EXPECT_EQ(sink.bad_sequence_at, 0u);
  EXPECT_EQ(sink.bad_tuples, 0u);
}

TEST(TcpResume, ASecondSenderOfAConnectedStreamIsRefused) {
  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  RecvLink& recv = listener->expect(options());
  auto first = std::move(make_tcp_send_link(loop, {"127.0.0.1", listener->port()}, options()))
                   .value();
  auto second = std::move(make_tcp_send_link(loop, {"127.0.0.1", listener->port()}, options()))
                    .value();
  CheckingSink sink(kTupleBytes);
  ASSERT_TRUE(pump_until(
      [&] {
        loop.do_work(Clock::now());
        listener->do_work();
        first->do_work();
        second->do_work();
        recv.poll(sink);
      },
      [&] { return !listener->rejected().empty() && second->state() == LinkState::failed; }));
  EXPECT_EQ(first->state(), LinkState::established);
  ASSERT_EQ(listener->rejected().size(), 1u);
  const std::string why = listener->rejected()[0].message;
  EXPECT_NE(why.find("refused: stream 1 's1' cannot take this connection: it is already connected"),
            std::string::npos)
      << why;
  EXPECT_NE(second->error()->message.find("closed the connection during the handshake"),
            std::string::npos)
      << second->error()->message;
}

// A receiving node that acknowledges by hand (after a checkpoint) is replaced by a new one
// that resumes after the last acknowledged frame: the sender replays from there.
// Frames that had credit on a lost connection but were not written yet (the socket was full)
// must not follow the hello on the next connection: the receiver's ack says where to resume,
// and anything before it would arrive out of sequence. A raw receiver that never reads fills
// the sender's socket, resets the connection, and on the next one sees nothing but the hello
// until it answers.
TEST(TcpResume, NothingFollowsTheHelloUntilTheReceiverSaysWhereToResume) {
  auto o = options();
  o.max_payload_bytes = 60'000 / kTupleBytes * kTupleBytes;
  o.window = 256;  // 15 MB: more than the loopback socket buffers hold
  EventLoop loop;
  asio::io_context raw;
  tcp::acceptor acceptor(raw, {asio::ip::make_address("127.0.0.1"), 0});
  auto send =
      std::move(make_tcp_send_link(loop, {"127.0.0.1", acceptor.local_endpoint().port()}, o))
          .value();
  const auto accept_hello = [&] {
    tcp::socket peer(raw);
    acceptor.accept(peer);
    std::array<std::byte, 2 * kFrameHeaderBytes> hello{};  // header + HelloPayload
    asio::read(peer, asio::buffer(hello));
    peer.non_blocking(true);
    return peer;
  };
  const auto answer = [&](tcp::socket& peer, std::uint64_t resume_after, std::uint64_t credit) {
    std::array<std::byte, 2 * kFrameHeaderBytes> control{};
    encode_header({.flags = kFlagAck, .stream_id = o.stream_id, .sequence = resume_after}, {},
                  std::span<std::byte, kFrameHeaderBytes>(control.data(), kFrameHeaderBytes));
    encode_header({.flags = kFlagCredit, .stream_id = o.stream_id, .sequence = credit}, {},
                  std::span<std::byte, kFrameHeaderBytes>(control.data() + kFrameHeaderBytes,
                                                          kFrameHeaderBytes));
    asio::write(peer, asio::buffer(control));
  };
  auto step = [&] {
    loop.do_work(Clock::now());
    send->do_work();
  };
  std::future<tcp::socket> first = std::async(std::launch::async, accept_hello);
  ASSERT_TRUE(pump_until(step, [&] {
    return first.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }));
  tcp::socket peer = first.get();
  answer(peer, 0, o.window);
  // 256 frames of 60 kB with credit for all; the peer reads nothing, so the socket fills and
  // some credited frames stay unwritten.
  CountingSource source(*send, o.window, kTupleBytes, o.max_payload_bytes / kTupleBytes, 5);
  ASSERT_TRUE(pump_until([&] {
    source.offer();
    step();
  }, [&] { return source.frames_sent == o.window && send->stats().would_block > 0; }));
  peer.set_option(asio::socket_base::linger(true, 0));
  peer.close();  // a reset: the sender reconnects

  std::future<tcp::socket> second = std::async(std::launch::async, accept_hello);
  ASSERT_TRUE(pump_until(step, [&] {
    return second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }));
  tcp::socket again = second.get();
  for (int i = 0; i < 50; ++i) {
    step();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(again.available(), 0U) << "the sender wrote after its hello without an ack";
  EXPECT_EQ(send->state(), LinkState::connecting);
}

TEST(TcpResume, ARestartedReceiverResumesAfterItsLastAcknowledgement) {
  constexpr std::uint64_t kFrames = 3'000;
  constexpr std::uint64_t kAcked = 1'000;
  auto o = options();
  o.manual_ack = true;
  o.backup_frames = 64;
  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  const std::uint16_t port = listener->port();
  RecvLink* recv = &listener->expect(o);
  auto send = std::move(make_tcp_send_link(loop, {"127.0.0.1", port}, o)).value();
  CountingSource source(*send, kFrames, kTupleBytes, 8, 11);
  CheckingSink before(kTupleBytes);
  before.mark_frame = kAcked;
  auto step = [&](CheckingSink& sink) {
    source.offer();
    loop.do_work(Clock::now());
    listener->do_work();
    send->do_work();
    recv->poll(sink);
  };
  // The node acknowledges as it goes, up to frame kAcked (its last checkpoint).
  ASSERT_TRUE(pump_until(
      [&] {
        step(before);
        recv->acknowledge(std::min(recv->delivered(), kAcked));
      },
      [&] { return before.frames >= kAcked; }));
  recv->acknowledge(kAcked);
  // Deliver more without acknowledging: these are lost with the receiver and replayed.
  const std::uint64_t seen = before.frames;
  ASSERT_TRUE(pump_until([&] { step(before); }, [&] { return before.frames >= seen + 40; }));
  EXPECT_LE(source.frames_sent - kAcked, o.window + o.backup_frames);

  // The receiving node dies and a new one starts on the same port from its checkpoint.
  listener.reset();
  auto resumed = o;
  resumed.resume_after = kAcked;
  listener = std::move(TcpListener::open(loop, {"127.0.0.1", port})).value();
  recv = &listener->expect(resumed);
  // The new receiver's sink continues the old one's numbering at frame kAcked + 1.
  CheckingSink after(kTupleBytes);
  after.frames = kAcked;
  after.tuples = before.tuples_at_mark;
  ASSERT_TRUE(pump_until([&] { step(after); }, [&] {
    recv->acknowledge(recv->delivered());
    return send->state() == LinkState::finished;
  })) << (send->error() ? send->error()->message : "");
  EXPECT_EQ(after.frames, kFrames);
  EXPECT_EQ(after.tuples, source.tuples_sent);
  EXPECT_EQ(after.bad_sequence_at, 0u);
  EXPECT_EQ(after.bad_tuples, 0u);
  EXPECT_EQ(after.end_of_stream, 1u);
  EXPECT_EQ(recv->stats().duplicates_dropped, 0u);
  EXPECT_GE(send->stats().frames_replayed, 40u);
  EXPECT_EQ(send->stats().reconnects, 1u);
}

TEST(TcpResume, ARestartedReceiverWithoutItsCheckpointIsNamedAsSuch) {
  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  const std::uint16_t port = listener->port();
  RecvLink* recv = &listener->expect(options());
  auto send = std::move(make_tcp_send_link(loop, {"127.0.0.1", port}, options())).value();
  CountingSource source(*send, 1'000'000, kTupleBytes, 8, 3);
  CheckingSink sink(kTupleBytes);
  auto step = [&] {
    source.offer();
    loop.do_work(Clock::now());
    listener->do_work();
    send->do_work();
    recv->poll(sink);
  };
  ASSERT_TRUE(pump_until(step, [&] { return sink.frames >= 200; }));
  listener.reset();
  listener = std::move(TcpListener::open(loop, {"127.0.0.1", port})).value();
  recv = &listener->expect(options());  // no resume_after: it starts from frame 1
  ASSERT_TRUE(pump_until(step, [&] { return send->state() == LinkState::failed; }));
  const std::string why = send->error()->message;
  EXPECT_NE(why.find("the receiver resumes after frame 0, but it had acknowledged frames up to "),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("did the receiving node restart without its checkpoint?"), std::string::npos)
      << why;
}

// A reconnect is a handshake like the first: a restarted receiver that expects another schema
// refuses it naming the difference, reads nothing of it, and the sender gives up at its
// reconnect timeout saying its hello was refused.
TEST(TcpResume, AReconnectIsRefusedLikeAFirstConnection) {
  auto o = options();
  o.reconnect_timeout = std::chrono::milliseconds(400);
  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  const std::uint16_t port = listener->port();
  RecvLink* recv = &listener->expect(o);
  auto send = std::move(make_tcp_send_link(loop, {"127.0.0.1", port}, o)).value();
  CountingSource source(*send, 1'000'000, kTupleBytes, 8, 5);
  CheckingSink before(kTupleBytes);
  CheckingSink after(kTupleBytes);
  CheckingSink* sink = &before;
  auto step = [&] {
    source.offer();
    loop.do_work(Clock::now());
    listener->do_work();
    send->do_work();
    recv->poll(*sink);
  };
  ASSERT_TRUE(pump_until(step, [&] { return before.frames >= 100; }));
  listener.reset();
  auto other = o;
  other.schema_hash = 0xBEEF;
  listener = std::move(TcpListener::open(loop, {"127.0.0.1", port})).value();
  recv = &listener->expect(other);
  sink = &after;
  ASSERT_TRUE(pump_until(step, [&] { return send->state() == LinkState::failed; }));
  ASSERT_FALSE(listener->rejected().empty());
  for (const Error& refused : listener->rejected()) {
    EXPECT_NE(refused.message.find("refused: schema hash mismatch for stream 1 's1': sender has "
                                   "0x000000000000FEED, receiver expects 0x000000000000BEEF"),
              std::string::npos)
        << refused.message;
  }
  EXPECT_EQ(after.frames, 0u);
  EXPECT_EQ(recv->state(), LinkState::connecting);
  const std::string why = send->error()->message;
  EXPECT_NE(why.find("no connection within 400 ms after that (last attempt: the receiver closed "
                     "the connection during the handshake (hello refused?)"),
            std::string::npos)
      << why;
}

// Output commit: a held frame is written only once released.
TEST(TcpResume, HeldFramesLeaveOnlyWhenReleased) {
  auto o = options();
  o.hold_until_released = true;
  o.backup_frames = 32;  // 48 buffers
  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  RecvLink& recv = listener->expect(o);
  auto send = std::move(make_tcp_send_link(loop, {"127.0.0.1", listener->port()}, o)).value();
  CountingSource source(*send, 40, kTupleBytes, 8, 9);
  CheckingSink sink(kTupleBytes);
  auto step = [&] {
    source.offer();
    loop.do_work(Clock::now());
    listener->do_work();
    send->do_work();
    recv.poll(sink);
  };
  // Held frames need no credit, only buffers: all 40 are committed (window 16, 48 buffers).
  ASSERT_TRUE(pump_until(step, [&] { return source.done(); }));
  for (int i = 0; i < 50; ++i) step();
  EXPECT_EQ(send->committed(), 40u);
  EXPECT_EQ(sink.frames, 0u);
  send->release(25);
  ASSERT_TRUE(pump_until(step, [&] { return sink.frames == 25; }));
  for (int i = 0; i < 50; ++i) step();
  EXPECT_EQ(sink.frames, 25u);
  send->release(40);
  ASSERT_TRUE(pump_until(step, [&] { return send->state() == LinkState::finished; }));
  EXPECT_EQ(sink.frames, 40u);
  EXPECT_EQ(sink.bad_sequence_at, 0u);
  EXPECT_EQ(sink.bad_tuples, 0u);
}

// A sending node that checkpointed its held output and died: a new sending end restored from
// that checkpoint (same sender id, the unacknowledged frames, the committed count) carries on,
// and the receiver, which never died, gets every frame once, in order.
TEST(TcpResume, ASenderRestoredFromItsCheckpointCarriesOn) {
  constexpr std::uint64_t kFrames = 2'000;
  auto o = options();
  o.hold_until_released = true;
  o.backup_frames = 64;
  o.sender_id = 0x51DE;
  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  RecvLink& recv = listener->expect(o);
  CheckingSink sink(kTupleBytes);
  auto send = std::move(make_tcp_send_link(loop, {"127.0.0.1", listener->port()}, o)).value();
  CountingSource source(*send, kFrames, kTupleBytes, 8, 13);
  std::vector<std::byte> saved;
  std::uint64_t saved_committed = 0;
  std::uint64_t saved_tuples = 0;
  // Checkpoint every 30 frames: save, then release what the checkpoint holds.
  auto step = [&] {
    source.offer(std::min<std::uint64_t>(kFrames, send->committed() + 30));
    if (send->committed() >= saved_committed + 30 && send->committed() < 700) {
      saved.clear();
      send->append_unacknowledged(saved);
      saved_committed = send->committed();
      saved_tuples = source.tuples_sent;
      send->release(saved_committed);
    }
    loop.do_work(Clock::now());
    listener->do_work();
    send->do_work();
    recv.poll(sink);
  };
  ASSERT_TRUE(pump_until(step, [&] { return source.frames_sent >= 720; }));
  ASSERT_GE(saved_committed, 600u);
  EXPECT_LE(sink.frames, saved_committed);  // nothing past the checkpoint left
  // The sending node dies: its frames after the checkpoint are lost with it.
  send.reset();
  auto again = std::move(make_tcp_send_link(loop, {"127.0.0.1", listener->port()}, o)).value();
  ASSERT_TRUE(again->restore(saved, saved_committed)) << "restore";
  EXPECT_EQ(again->committed(), saved_committed);
  CountingSource rest(*again, kFrames, kTupleBytes, 8, 17);
  rest.frames_sent = saved_committed;
  rest.tuples_sent = saved_tuples;
  ASSERT_TRUE(pump_until(
      [&] {
        rest.offer();
        again->release(again->committed());
        loop.do_work(Clock::now());
        listener->do_work();
        again->do_work();
        recv.poll(sink);
      },
      [&] { return again->state() == LinkState::finished; }))
      << (again->error() ? again->error()->message : "");
  EXPECT_EQ(sink.frames, kFrames);
  EXPECT_EQ(sink.tuples, rest.tuples_sent);
  EXPECT_EQ(sink.bad_sequence_at, 0u);
  EXPECT_EQ(sink.bad_tuples, 0u);
  EXPECT_EQ(sink.end_of_stream, 1u);
  EXPECT_EQ(recv.stats().reconnects, 1u);

  // A checkpoint that is not a run of frames is refused, naming the problem.
  auto broken = saved;
  broken[kFrameHeaderBytes + 3] ^= std::byte{1};
  auto third = std::move(make_tcp_send_link(loop, {"127.0.0.1", 1}, o)).value();
  auto refused = third->restore(broken, saved_committed);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("the checkpoint's frame at byte 0: checksum mismatch"),
            std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace boreal::transport
