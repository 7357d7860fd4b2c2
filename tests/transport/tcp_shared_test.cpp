// Links of one thread to one receiving port on one tcp connection (TcpConnections;
// docs/design.md, "One tcp connection per pair of threads"): they share it, what a pass
// commits leaves in one send, each keeps its own credit, sequence, replay and faults, and a
// lost connection is resumed by all of them.
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/tcp_medium.hpp>

#include <array>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "transport/counting_allocator.hpp"
#include "transport/cutting_relay.hpp"
#include "transport/tcp_test_support.hpp"

namespace boreal::transport {
namespace {

namespace asio = boost::asio;
using testing::CheckingSink;
using testing::Clock;
using testing::CountingSource;
using testing::CuttingRelay;
using testing::pump_until;

constexpr std::uint32_t kTupleBytes = 16;
constexpr std::uint32_t kLinks = 3;

std::string error_of(const SendLink& link) {
  return link.error() != nullptr ? link.error()->message : "";
}
std::string error_of(const RecvLink& link) {
  return link.error() != nullptr ? link.error()->message : "";
}

// kLinks streams (ids 1, 2, 3) from one thread's links, made with one TcpConnections, to one
// listener, through a relay that counts and cuts connections.
class TcpShared : public ::testing::Test {
 protected:
  // `relayed`: through the CuttingRelay (a thread of its own), else straight to the listener.
  void start(std::uint64_t frames, std::uint32_t bad_schema_stream = 0, bool relayed = true) {
    listener_ = std::move(TcpListener::open(loop_, {"127.0.0.1", 0})).value();
    for (std::uint32_t id = 1; id <= kLinks; ++id) {
      auto options = testing::small_link_options(id, kTupleBytes);
      options.window = window_;
      recvs_.push_back(&listener_->expect(options));
      sinks_.push_back(std::make_unique<CheckingSink>(kTupleBytes));
    }
    if (relayed) relay_ = std::make_unique<CuttingRelay>(listener_->port());
    const std::uint16_t port = relayed ? relay_->port() : listener_->port();
    for (std::uint32_t id = 1; id <= kLinks; ++id) {
      auto options = testing::small_link_options(id, kTupleBytes);
      if (id == bad_schema_stream) options.schema_hash ^= 1;
      options.window = window_;
      sends_.push_back(std::move(make_tcp_send_link(loop_, {"127.0.0.1", port},
                                                    options, std::chrono::seconds(10),
                                                    &connections_))
                           .value());
      sources_.push_back(
          std::make_unique<CountingSource>(*sends_.back(), frames, kTupleBytes, 8, 11 * id));
    }
  }

  void step() {
    loop_.do_work(Clock::now());
    for (auto& source : sources_) source->offer(offer_limit_);
    for (auto& send : sends_) send->do_work();
    listener_->do_work();
    for (std::size_t i = 0; i < recvs_.size(); ++i) recvs_[i]->poll(*sinks_[i]);
  }

  bool every_sink_has(std::uint64_t frames) const {
    for (const auto& sink : sinks_) {
      if (sink->frames < frames) return false;
    }
    return true;
  }

  bool all(LinkState state) const {
    for (std::size_t i = 0; i < sends_.size(); ++i) {
      if (sends_[i]->state() != state || recvs_[i]->state() != state) return false;
    }
    return true;
  }

  std::string errors() const {
    std::string text;
    for (std::size_t i = 0; i < sends_.size(); ++i) {
      text += error_of(*sends_[i]) + " / " + error_of(*recvs_[i]) + "; ";
    }
    return text;
  }

  void expect_everything_arrived_once(std::uint64_t frames) {
    for (std::size_t i = 0; i < sends_.size(); ++i) {
      SCOPED_TRACE("stream " + std::to_string(i + 1));
      EXPECT_EQ(sinks_[i]->frames, frames);
      EXPECT_EQ(sinks_[i]->tuples, sources_[i]->tuples_sent);
      EXPECT_EQ(sinks_[i]->bad_sequence_at, 0u);
      EXPECT_EQ(sinks_[i]->bad_tuples, 0u);
      EXPECT_EQ(sinks_[i]->end_of_stream, 1u);
      EXPECT_EQ(sinks_[i]->crc, sources_[i]->crc);
      EXPECT_EQ(recvs_[i]->delivered(), frames);
    }
  }

  EventLoop loop_;
  std::unique_ptr<TcpListener> listener_;
  TcpConnections connections_;
  std::unique_ptr<CuttingRelay> relay_;
  std::vector<RecvLink*> recvs_;
  std::vector<std::unique_ptr<CheckingSink>> sinks_;
  std::vector<std::unique_ptr<SendLink>> sends_;
  std::vector<std::unique_ptr<CountingSource>> sources_;
  std::uint64_t offer_limit_ = ~std::uint64_t{0};  // step() offers frames up to this many
  std::uint32_t window_ = 16;                       // every link's, set before start()
};

TEST_F(TcpShared, LinksOfOneThreadToOnePortShareOneConnection) {
  constexpr std::uint64_t kFrames = 3'000;
  start(kFrames);
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return all(LinkState::finished); }))
      << errors();
  expect_everything_arrived_once(kFrames);
  EXPECT_EQ(relay_->accepted(), 1);
  EXPECT_TRUE(listener_->rejected().empty());
  // The connection's system calls are counted on its first link, at each end.
  EXPECT_GT(sends_[0]->stats().write_calls, 0u);
  EXPECT_GT(recvs_[0]->stats().read_calls, 0u);
  for (std::size_t i = 1; i < sends_.size(); ++i) {
    EXPECT_EQ(sends_[i]->stats().write_calls, 0u);
    EXPECT_EQ(sends_[i]->stats().read_calls, 0u);
    EXPECT_EQ(recvs_[i]->stats().write_calls, 0u);
    EXPECT_EQ(recvs_[i]->stats().read_calls, 0u);
  }
  // Arrivals as a waiting thread sees them: the connection's reads that brought data, on its
  // first link; the others, whose frames came in those reads, count none.
  const LinkStats& first = recvs_[0]->stats();
  EXPECT_GT(first.read_calls, first.would_block);
  EXPECT_EQ(recvs_[0]->arrivals(), first.read_calls - first.would_block);
  for (std::size_t i = 1; i < recvs_.size(); ++i) {
    EXPECT_EQ(recvs_[i]->stats().frames, kFrames);
    EXPECT_EQ(recvs_[i]->arrivals(), 0u);
  }
}

// Only the connection reads, at each end: the loop's readiness (event_loop.hpp) counts two
// readers, not one per receiving link as well.
TEST_F(TcpShared, TheLoopCountsOneReaderPerConnectionEnd) {
  constexpr std::uint64_t kFrames = 200;
  start(kFrames, /*bad_schema_stream=*/0, /*relayed=*/false);
  offer_limit_ = 1;
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return every_sink_has(1); })) << errors();
  EXPECT_EQ(loop_.readiness_readers(), 2);
  offer_limit_ = ~std::uint64_t{0};
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return all(LinkState::finished); }))
      << errors();
  expect_everything_arrived_once(kFrames);
}

TEST_F(TcpShared, TheSteadyDataPathAllocatesNothing) {
  constexpr std::uint64_t kFrames = 20'000;
  start(kFrames, /*bad_schema_stream=*/0, /*relayed=*/false);
  // Counted from the 1000th frame of the first stream to the 1000th before its end: set-up
  // (connect, hellos, first credit) and teardown are left out, the steady data path is not.
  std::uint64_t allocations = 0;
  ASSERT_TRUE(pump_until(
      [&] {
        const auto sent = sources_[0]->frames_sent;
        if (sent >= 1000 && sent < kFrames - 1000) {
          g_counting = true;
        } else if (g_counting) {
          g_counting = false;
          allocations = g_allocations.exchange(0);
        }
        step();
      },
      [&] { return all(LinkState::finished); }))
      << errors();
  g_counting = false;
  expect_everything_arrived_once(kFrames);
  EXPECT_EQ(allocations, 0u) << "the steady-state data path allocated";
}

TEST_F(TcpShared, WhatAPassCommitsLeavesInOneSend) {
  start(/*frames=*/4);
  offer_limit_ = 1;
  ASSERT_TRUE(pump_until([&] { step(); },
                         [&] {
                           for (auto& source : sources_) {
                             if (source->frames_sent == 0) return false;
                           }
                           return every_sink_has(1);
                         }))
      << errors();
  // Every link has a first frame across; each now commits one more in the same pass.
  for (std::size_t i = 0; i < sends_.size(); ++i) ASSERT_EQ(sources_[i]->frames_sent, 1u);
  loop_.do_work(Clock::now());
  const auto writes_before = sends_[0]->stats().write_calls;
  for (auto& source : sources_) ASSERT_EQ(source->offer(2), 1);
  for (auto& send : sends_) send->do_work();
  EXPECT_EQ(sends_[0]->stats().write_calls, writes_before + 1);
  offer_limit_ = 2;
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return every_sink_has(2); })) << errors();
}

// A sender that outruns its receiver queues a send's worth on the connection, not a window
// per link: once its links hold 128 committed frames not yet written
// (SendConnection::kMostUnsentFrames), none of them takes another until the connection has
// written, although their credit would allow it.
TEST_F(TcpShared, LinksStopTakingFramesOnceTheConnectionHoldsASendsWorth) {
  constexpr std::uint64_t kMostUnsent = 128;
  window_ = 64;  // three windows of credit hold more than that
  start(/*frames=*/1'000, /*bad_schema_stream=*/0, /*relayed=*/false);
  offer_limit_ = 1;
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return every_sink_has(1); })) << errors();
  // Every link has its first frame across and the rest of its window as credit; the
  // connection wrote what was committed. No I/O from here until every source is refused.
  // A frame of each in turn.
  std::uint64_t committed = 0;
  for (bool any = true; any;) {
    any = false;
    for (auto& source : sources_) {
      ASSERT_LE(source->frames_sent, 60u) << "the connection took more than it should";
      const int took = source->offer(source->frames_sent + 1);
      committed += static_cast<std::uint64_t>(took);
      any = any || took > 0;
    }
  }
  EXPECT_EQ(committed, kMostUnsent);
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    EXPECT_EQ(sources_[i]->offer(), 0) << "stream " << i + 1;
    EXPECT_EQ(sources_[i]->last_status, SendStatus::back_pressured) << "stream " << i + 1;
    EXPECT_LT(sources_[i]->frames_sent, 64u) << "stream " << i + 1 << " ran out of credit";
  }
  // One pass of the connection's I/O writes them (the socket takes a few KiB): the links
  // take frames again.
  loop_.do_work(Clock::now());
  for (auto& send : sends_) send->do_work();
  EXPECT_GT(sources_[2]->offer(sources_[2]->frames_sent + 1), 0);
  offer_limit_ = ~std::uint64_t{0};
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return all(LinkState::finished); }))
      << errors();
  expect_everything_arrived_once(1'000);
}

TEST_F(TcpShared, ACutConnectionIsResumedByEveryLinkOnIt) {
  constexpr std::uint64_t kFrames = 4'000;
  start(kFrames);
  for (const std::uint64_t cut_at : {kFrames / 3, 2 * kFrames / 3}) {
    ASSERT_TRUE(pump_until([&] { step(); }, [&] { return sinks_[0]->frames >= cut_at; }))
        << errors();
    relay_->cut();
  }
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return all(LinkState::finished); }))
      << errors();
  expect_everything_arrived_once(kFrames);
  EXPECT_EQ(relay_->accepted(), 3);
  for (std::size_t i = 0; i < sends_.size(); ++i) {
    EXPECT_EQ(sends_[i]->stats().reconnects, 2u) << "stream " << i + 1;
    EXPECT_EQ(recvs_[i]->stats().reconnects, 2u) << "stream " << i + 1;
  }
}

TEST_F(TcpShared, ARefusedHelloFailsOnlyItsLink) {
  constexpr std::uint64_t kFrames = 500;
  start(kFrames, /*bad_schema_stream=*/2);
  ASSERT_TRUE(pump_until([&] { step(); },
                         [&] {
                           return sends_[0]->state() == LinkState::finished &&
                                  sends_[2]->state() == LinkState::finished &&
                                  sends_[1]->state() == LinkState::failed;
                         }))
      << errors();
  EXPECT_EQ(error_of(*sends_[1]),
            "link 's2' (stream 2) to 127.0.0.1:" + std::to_string(relay_->port()) +
                ": the receiver refused its hello on the shared connection (the receiving "
                "node's log says why)");
  ASSERT_EQ(listener_->rejected().size(), 1u);
  const std::string& why = listener_->rejected()[0].message;
  EXPECT_EQ(why.rfind("hello for stream 2 on the shared connection from 127.0.0.1:", 0), 0u)
      << why;
  EXPECT_NE(why.find(" refused: schema hash mismatch for stream 2 's2': sender has "
                     "0x000000000000FEEC, receiver expects 0x000000000000FEED"),
            std::string::npos)
      << why;
  EXPECT_EQ(recvs_[1]->state(), LinkState::connecting);
  EXPECT_EQ(sinks_[0]->frames, kFrames);
  EXPECT_EQ(sinks_[2]->frames, kFrames);
  EXPECT_EQ(sinks_[0]->crc, sources_[0]->crc);
  EXPECT_EQ(sinks_[2]->crc, sources_[2]->crc);
  EXPECT_EQ(relay_->accepted(), 1);
}

// A sender made of a plain socket, to put bad frames on a shared connection.
class RawSharedSender {
 public:
  explicit RawSharedSender(std::uint16_t port) : socket_(context_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
    socket_.set_option(asio::ip::tcp::no_delay(true));  // each write leaves at once
  }

  void hello(std::uint32_t stream) {
    std::array<std::byte, kFrameHeaderBytes + kHelloPayloadBytes> bytes{};
    auto body = std::span<std::byte, kHelloPayloadBytes>(bytes.data() + kFrameHeaderBytes,
                                                         kHelloPayloadBytes);
    encode_hello({.schema_hash = 0xFEED,
                  .cluster_token = 77,
                  .stream_id = stream,
                  .tuple_bytes = kTupleBytes,
                  .max_payload_bytes = 8 * kTupleBytes,
                  .sender_id = 5},
                 body);
    encode_header({.flags = kFlagHello,
                   .stream_id = stream,
                   .sequence = kHelloOnSharedConnection,
                   .payload_bytes = kHelloPayloadBytes},
                  body, std::span<std::byte, kFrameHeaderBytes>(bytes.data(), kFrameHeaderBytes));
    asio::write(socket_, asio::buffer(bytes));
  }

  // Frame `sequence` of `stream`: one tuple, numbered sequence - 1; `corrupt` flips a byte
  // of its payload after the checksum was taken.
  void frame(std::uint32_t stream, std::uint64_t sequence, bool corrupt = false) {
    raw(frame_bytes(stream, sequence, corrupt));
  }

  using FrameBytes = std::array<std::byte, kFrameHeaderBytes + kTupleBytes>;
  static FrameBytes frame_bytes(std::uint32_t stream, std::uint64_t sequence,
                                bool corrupt = false) {
    FrameBytes bytes{};
    testing::fill_tuple(bytes.data() + kFrameHeaderBytes, kTupleBytes, sequence - 1);
    encode_header({.flags = kFlagData,
                   .stream_id = stream,
                   .tuple_count = 1,
                   .sequence = sequence,
                   .payload_bytes = kTupleBytes},
                  std::span<const std::byte>(bytes.data() + kFrameHeaderBytes, kTupleBytes),
                  std::span<std::byte, kFrameHeaderBytes>(bytes.data(), kFrameHeaderBytes));
    if (corrupt) bytes[kFrameHeaderBytes + 3] ^= std::byte{0x40};
    return bytes;
  }

  void raw(std::span<const std::byte> bytes) {
    asio::write(socket_, asio::buffer(bytes.data(), bytes.size()));
  }

 private:
  asio::io_context context_;
  asio::ip::tcp::socket socket_;
};

class TcpSharedBadPeer : public ::testing::Test {
 protected:
  void SetUp() override {
    listener_ = std::move(TcpListener::open(loop_, {"127.0.0.1", 0})).value();
    for (std::uint32_t id = 1; id <= 2; ++id) {
      recvs_.push_back(&listener_->expect(testing::small_link_options(id, kTupleBytes)));
      sinks_.push_back(std::make_unique<CheckingSink>(kTupleBytes));
    }
    peer_ = std::make_unique<RawSharedSender>(listener_->port());
    peer_->hello(1);
    peer_->hello(2);
    peer_->frame(1, 1);
    peer_->frame(2, 1);
    ASSERT_TRUE(pump_until([&] { step(); },
                           [&] { return sinks_[0]->frames == 1 && sinks_[1]->frames == 1; }))
        << error_of(*recvs_[0]) << " / " << error_of(*recvs_[1]);
  }

  void step() {
    loop_.do_work(Clock::now());
    listener_->do_work();
    for (std::size_t i = 0; i < recvs_.size(); ++i) recvs_[i]->poll(*sinks_[i]);
  }

  EventLoop loop_;
  std::unique_ptr<TcpListener> listener_;
  std::vector<RecvLink*> recvs_;
  std::vector<std::unique_ptr<CheckingSink>> sinks_;
  std::unique_ptr<RawSharedSender> peer_;
};

TEST_F(TcpSharedBadPeer, AFrameThatBreaksItsLinksRulesFailsOnlyThatLink) {
  peer_->frame(1, 2, /*corrupt=*/true);
  peer_->frame(2, 2);
  peer_->frame(1, 3);  // after its link failed: dropped
  peer_->frame(2, 3);
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return sinks_[1]->frames == 3; }))
      << error_of(*recvs_[0]) << " / " << error_of(*recvs_[1]);
  EXPECT_EQ(recvs_[0]->state(), LinkState::failed);
  EXPECT_NE(error_of(*recvs_[0]).find("checksum mismatch"), std::string::npos)
      << error_of(*recvs_[0]);
  EXPECT_NE(error_of(*recvs_[0]).find(" in frame 2"), std::string::npos) << error_of(*recvs_[0]);
  EXPECT_EQ(sinks_[0]->frames, 1u);
  EXPECT_EQ(recvs_[1]->state(), LinkState::established);
  EXPECT_EQ(sinks_[1]->bad_sequence_at, 0u);
  EXPECT_EQ(sinks_[1]->bad_tuples, 0u);
}

TEST_F(TcpSharedBadPeer, AHeaderThatCannotBeParsedFailsEveryLinkOnTheConnection) {
  std::array<std::byte, kFrameHeaderBytes> garbage{};
  garbage.fill(std::byte{0x5A});
  peer_->raw(garbage);
  ASSERT_TRUE(pump_until([&] { step(); },
                         [&] {
                           return recvs_[0]->state() == LinkState::failed &&
                                  recvs_[1]->state() == LinkState::failed;
                         }));
  for (auto* recv : recvs_) {
    EXPECT_NE(error_of(*recv).find(": frame for stream 1515870810: bad magic 0x5A5A5A5A"),
              std::string::npos)
        << error_of(*recv);
  }
  EXPECT_EQ(sinks_[0]->frames, 1u);
  EXPECT_EQ(sinks_[1]->frames, 1u);
}

TEST_F(TcpSharedBadPeer, AFrameOfAStreamThatSaidNoHelloFailsEveryLinkOnTheConnection) {
  peer_->frame(9, 1);
  ASSERT_TRUE(pump_until([&] { step(); },
                         [&] {
                           return recvs_[0]->state() == LinkState::failed &&
                                  recvs_[1]->state() == LinkState::failed;
                         }));
  for (auto* recv : recvs_) {
    EXPECT_NE(error_of(*recv).find(
                  ": frame for stream 9, which has not said hello on this connection"),
              std::string::npos)
        << error_of(*recv);
  }
}

// Frames that reads return in pieces (a header cut anywhere, payloads in parts) are read on
// in place into their links' staging buffers (recv_connection.hpp) and arrive whole.
TEST_F(TcpSharedBadPeer, FramesReadInPiecesArriveWholeAndInOrder) {
  std::vector<std::byte> bytes;
  // 12 frames of each stream: within the credit a raw sender never waits for.
  for (std::uint64_t sequence = 2; sequence <= 13; ++sequence) {
    for (std::uint32_t stream = 1; stream <= 2; ++stream) {
      const auto frame = RawSharedSender::frame_bytes(stream, sequence);
      bytes.insert(bytes.end(), frame.begin(), frame.end());
    }
  }
  // Pieces of 1 to 53 bytes, each sent once the receiver has read what came before it.
  std::size_t at = 0;
  for (std::size_t piece = 1; at < bytes.size(); piece = piece % 53 + 7) {
    const std::size_t n = std::min(piece, bytes.size() - at);
    peer_->raw({bytes.data() + at, n});
    at += n;
    for (int i = 0; i < 3; ++i) {
      step();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  ASSERT_TRUE(pump_until([&] { step(); },
                         [&] { return sinks_[0]->frames == 13 && sinks_[1]->frames == 13; }))
      << sinks_[0]->frames << " and " << sinks_[1]->frames << " frames; "
      << error_of(*recvs_[0]) << " / " << error_of(*recvs_[1]);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("stream " + std::to_string(i + 1));
    EXPECT_EQ(recvs_[i]->state(), LinkState::established);
    EXPECT_EQ(sinks_[i]->tuples, 13u);
    EXPECT_EQ(sinks_[i]->bad_sequence_at, 0u);
    EXPECT_EQ(sinks_[i]->bad_tuples, 0u);
    EXPECT_EQ(recvs_[i]->delivered(), 13u);
  }
}

// A link that fails while its next frame is being read in place lets go of it: the rest of
// that frame is read and dropped, and the connection finds the next frame after it.
TEST_F(TcpSharedBadPeer, ALinkThatFailsWhileItsFrameIsReadInPlaceDropsTheRest) {
  const auto bad = RawSharedSender::frame_bytes(1, 2, /*corrupt=*/true);
  const auto next = RawSharedSender::frame_bytes(1, 3);
  constexpr std::size_t kCut = kFrameHeaderBytes + 5;
  std::vector<std::byte> first(bad.begin(), bad.end());
  first.insert(first.end(), next.begin(), next.begin() + kCut);
  peer_->raw(first);
  ASSERT_TRUE(pump_until([&] { step(); },
                         [&] { return recvs_[0]->state() == LinkState::failed; }));
  std::vector<std::byte> rest(next.begin() + kCut, next.end());
  for (std::uint64_t sequence = 2; sequence <= 3; ++sequence) {
    const auto frame = RawSharedSender::frame_bytes(2, sequence);
    rest.insert(rest.end(), frame.begin(), frame.end());
  }
  peer_->raw(rest);
  ASSERT_TRUE(pump_until([&] { step(); }, [&] { return sinks_[1]->frames == 3; }))
      << error_of(*recvs_[0]) << " / " << error_of(*recvs_[1]);
  EXPECT_NE(error_of(*recvs_[0]).find("checksum mismatch"), std::string::npos)
      << error_of(*recvs_[0]);
  EXPECT_NE(error_of(*recvs_[0]).find(" in frame 2"), std::string::npos) << error_of(*recvs_[0]);
  EXPECT_EQ(sinks_[0]->frames, 1u);
  EXPECT_EQ(recvs_[1]->state(), LinkState::established);
  EXPECT_EQ(sinks_[1]->bad_sequence_at, 0u);
  EXPECT_EQ(sinks_[1]->bad_tuples, 0u);
}

}  // namespace
}  // namespace boreal::transport
