// A node that receives two streams on one tcp listener. Stream 1 comes from a healthy boreal
// sender that keeps sending; stream 2's connection is a raw socket that misbehaves in one way
// per case. The misbehaving connection must be refused (before its hello is accepted) or its
// link failed (after), with an error naming the problem and the peer, while stream 1 delivers
// every tuple exactly once and in order, to the end.
//
// Everything but the raw peer runs on this thread through one EventLoop; the raw peer writes
// a few hundred bytes with blocking calls, which the kernel buffers without a reader.
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/tcp_medium.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/endian/conversion.hpp>
#include <gtest/gtest.h>

#include "transport/tcp_test_support.hpp"

namespace boreal::transport {
namespace {

using testing::CheckingSink;
using testing::Clock;
using testing::CountingSource;
using testing::pump_until;
using Bytes = std::vector<std::byte>;

constexpr std::uint32_t kTupleBytes = 8;

LinkOptions stream_options(std::uint32_t id) {
  return testing::small_link_options(id, kTupleBytes);
}

Bytes encode(FrameHeader header, const Bytes& payload) {
  header.payload_bytes = static_cast<std::uint32_t>(payload.size());
  Bytes out(kFrameHeaderBytes);
  encode_header(header, payload, std::span<std::byte, kFrameHeaderBytes>(out.data(),
                                                                         kFrameHeaderBytes));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Bytes hello(std::uint16_t version = kFrameVersion) {
  const auto o = stream_options(2);
  Bytes body(kHelloPayloadBytes);
  encode_hello({.schema_hash = o.schema_hash,
                .cluster_token = o.cluster_token,
                .stream_id = 2,
                .tuple_bytes = o.tuple_bytes,
                .max_payload_bytes = o.max_payload_bytes},
               std::span<std::byte, kHelloPayloadBytes>(body.data(), kHelloPayloadBytes));
  return encode({.version = version, .flags = kFlagHello, .stream_id = 2}, body);
}

// A well-formed data frame of stream 2 with `tuples` tuples numbered from `first`.
Bytes data(std::uint64_t sequence, std::uint32_t tuples, std::uint64_t first,
           std::uint16_t version = kFrameVersion, std::uint32_t stream_id = 2) {
  Bytes payload(std::size_t{tuples} * kTupleBytes);
  for (std::uint32_t t = 0; t < tuples; ++t) {
    testing::fill_tuple(payload.data() + std::size_t{t} * kTupleBytes, kTupleBytes, first + t);
  }
  return encode({.version = version, .flags = kFlagData, .stream_id = stream_id,
                 .tuple_count = tuples, .sequence = sequence},
                payload);
}

void set_u32(Bytes& frame, std::size_t at, std::uint32_t value) {
  const auto wire = boost::endian::native_to_little(value);
  std::memcpy(frame.data() + at, &wire, sizeof wire);
}

Bytes join(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

enum class Where { rejected, link_failed };

struct BadInput {
  const char* name;
  Bytes (*bytes)();
  bool close_after;  // close the raw connection after writing
  Where where;
  const char* expected;                // substring of the error message
  std::uint64_t frames_on_stream_2;    // valid frames sent before the bad input
};

// After a valid hello and one valid frame (sequence 1, tuples 0..2), the bad input.
Bytes after_hello(const Bytes& bad) { return join({hello(), data(1, 3, 0), bad}); }

const BadInput kCases[] = {
    {"GarbageBytes",
     [] {
       const char text[] = "GET / HTTP/1.1\r\nHost: not-a-boreal-node\r\n\r\n";
       Bytes out(sizeof text);
       std::memcpy(out.data(), text, sizeof text);
       return out;
     },
     false, Where::rejected, "bad magic 0x20544547 (expected 0x464C5242)", 0},
    {"HelloWithWrongVersion", [] { return hello(2); }, false, Where::rejected,
     "unsupported version 2 (this build speaks 1)", 0},
    {"TruncatedHelloThenClose",
     [] {
       auto h = hello();
       h.resize(20);
       return h;
     },
     true, Where::rejected, "closed before its hello", 0},
    {"DataBeforeHello", [] { return data(1, 1, 0); }, false, Where::rejected,
     "first frame is not a hello (flags 1, stream 2)", 0},
    {"TruncatedFrameThenClose",
     [] {
       auto d = data(2, 4, 3);
       d.resize(kFrameHeaderBytes + 10);
       return after_hello(d);
     },
     true, Where::link_failed,
     "peer closed the connection in the middle of a frame (42 bytes of a truncated frame "
     "after frame 1)",
     1},
    {"PayloadLengthExceedsLimit",
     [] {
       auto d = data(2, 4, 3);
       set_u32(d, 24, 1u << 20);
       return after_hello(d);
     },
     false, Where::link_failed, "payload length 1048576 exceeds the limit 64", 1},
    {"PayloadLengthDisagreesWithTupleCount",
     [] {
       auto d = data(2, 4, 3);
       set_u32(d, 12, 3);  // tuple count 3, payload still 4 tuples
       return after_hello(d);
     },
     false, Where::link_failed, "tuple count 3 \u00D7 8 bytes != payload length 32", 1},
    {"DataForUnknownStreamAfterHello", [] { return after_hello(data(2, 1, 3, kFrameVersion, 9)); },
     false, Where::link_failed, "unknown stream id 9 (this link carries 2)", 1},
    {"WrongVersionAfterHello", [] { return after_hello(data(2, 1, 3, 7)); }, false,
     Where::link_failed, "unsupported version 7", 1},
    {"CorruptPayload",
     [] {
       auto d = data(2, 2, 3);
       d[kFrameHeaderBytes + 5] ^= std::byte{0x40};
       return after_hello(d);
     },
     false, Where::link_failed, "checksum mismatch", 1},
    {"SequenceGap", [] { return after_hello(data(5, 1, 3)); }, false, Where::link_failed,
     "sequence gap: expected frame 2, got 5", 1},
    {"SecondHello", [] { return after_hello(hello()); }, false, Where::link_failed,
     "unexpected second hello", 1},
};

class TcpBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(TcpBadInput, ClosesOnlyTheBadConnectionAndStreamOneLosesNothing) {
  constexpr std::uint64_t kFrames = 4'000;
  const BadInput& bad = GetParam();

  EventLoop loop;
  auto listener = std::move(TcpListener::open(loop, {"127.0.0.1", 0})).value();
  RecvLink& recv1 = listener->expect(stream_options(1));
  RecvLink& recv2 = listener->expect(stream_options(2));
  auto send1 = std::move(make_tcp_send_link(loop, {"127.0.0.1", listener->port()},
                                            stream_options(1)))
                   .value();
  CountingSource source(*send1, kFrames, kTupleBytes, 8, 99);
  CheckingSink sink1(kTupleBytes);
  CheckingSink sink2(kTupleBytes);
  std::uint64_t offer_until = kFrames / 2;
  auto step = [&] {
    source.offer(offer_until);
    loop.do_work(Clock::now());
    listener->do_work();
    send1->do_work();
    recv1.poll(sink1);
    recv2.poll(sink2);
  };

  // Stream 1 is half way through when the bad peer arrives.
  ASSERT_TRUE(pump_until(step, [&] { return sink1.frames >= kFrames / 2; }));
  boost::asio::io_context raw_context;
  boost::asio::ip::tcp::socket raw(raw_context);
  raw.connect({boost::asio::ip::make_address("127.0.0.1"), listener->port()});
  boost::asio::write(raw, boost::asio::buffer(bad.bytes()));
  if (bad.close_after) raw.close();

  // Stream 1 keeps sending while the bad connection is dealt with.
  offer_until = kFrames / 2 + 500;
  auto failed = [&] {
    return bad.where == Where::rejected ? !listener->rejected().empty()
                                        : recv2.state() == LinkState::failed;
  };
  ASSERT_TRUE(pump_until(step, failed));
  offer_until = kFrames;
  ASSERT_TRUE(pump_until(step, [&] {
    return send1->state() == LinkState::finished && recv1.state() == LinkState::finished;
  })) << "stream 1: send " << to_string(send1->state()) << ", recv " << to_string(recv1.state());

  const std::string peer_prefix = bad.where == Where::rejected
                                      ? "connection from 127.0.0.1:"
                                      : "link 's2' (stream 2) from 127.0.0.1:";
  std::string message;
  if (bad.where == Where::rejected) {
    ASSERT_EQ(listener->rejected().size(), 1u);
    message = listener->rejected()[0].message;
    EXPECT_EQ(listener->rejected()[0].category, ErrorCategory::protocol);
    EXPECT_EQ(recv2.state(), LinkState::connecting);
  } else {
    EXPECT_TRUE(listener->rejected().empty());
    ASSERT_NE(recv2.error(), nullptr);
    message = recv2.error()->message;
    EXPECT_EQ(recv2.error()->category, ErrorCategory::protocol);
  }
  EXPECT_NE(message.find(bad.expected), std::string::npos) << message;
  EXPECT_EQ(message.rfind(peer_prefix, 0), 0u) << message;
  // The valid frame before the bad input was delivered, nothing after it.
  EXPECT_EQ(sink2.frames, bad.frames_on_stream_2);
  EXPECT_EQ(sink2.bad_tuples, 0u);
  EXPECT_EQ(sink2.bad_sequence_at, 0u);

  // Stream 1: every tuple, once, in order.
  EXPECT_EQ(recv1.error(), nullptr);
  EXPECT_EQ(send1->error(), nullptr);
  EXPECT_EQ(sink1.frames, kFrames);
  EXPECT_EQ(sink1.tuples, source.tuples_sent);
  EXPECT_EQ(sink1.crc, source.crc);
  EXPECT_EQ(sink1.bad_sequence_at, 0u);
  EXPECT_EQ(sink1.bad_tuples, 0u);
  EXPECT_EQ(sink1.end_of_stream, 1u);
  EXPECT_EQ(recv1.stats().duplicates_dropped, 0u);

  send1.reset();
  listener.reset();
}

INSTANTIATE_TEST_SUITE_P(OneCaseEach, TcpBadInput, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BadInput>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
}  // namespace boreal::transport
