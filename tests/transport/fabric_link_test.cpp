#include <boreal/transport/fabric_medium.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/event_loop.hpp>

namespace boreal::transport {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kTupleBytes = 8;
constexpr auto kDeadline = 5s;

LinkOptions options(std::uint32_t window, std::uint32_t credit_batch) {
  return LinkOptions{.stream_id = 7,
                     .tuple_bytes = kTupleBytes,
                     .schema_hash = 0x5C4E,
                     .cluster_token = 42,
                     .max_payload_bytes = 16 * kTupleBytes,
                     .window = window,
                     .credit_batch = credit_batch,
                     .name = "ticks"};
}

std::uint32_t tuples_of(std::uint64_t sequence) { return 1 + sequence % 16; }

// Fills frame `sequence` with tuples derived from it and commits it; returns its payload CRC.
std::uint32_t fill_and_commit(SendLink& link, const Claim& claim, std::uint64_t sequence,
                              std::uint16_t flags = kFlagData) {
  const auto tuples = tuples_of(sequence);
  for (std::uint32_t k = 0; k < tuples; ++k) {
    const std::uint64_t value = sequence * 0x9E3779B97F4A7C15ull + k;
    std::memcpy(claim.payload.data() + k * kTupleBytes, &value, kTupleBytes);
  }
  const auto bytes = tuples * kTupleBytes;
  link.commit(claim, tuples, bytes, flags);
  return crc32c(claim.payload.first(bytes));
}

struct RecordingSink final : FrameSink {
  void on_frame(const FrameView& frame) override {
    sequences.push_back(frame.header.sequence);
    crcs.push_back(crc32c(frame.payload));
    tuples += frame.header.tuple_count;
  }
  std::vector<std::uint64_t> sequences;
  std::vector<std::uint32_t> crcs;
  std::uint64_t tuples = 0;
};

// Both ends on this thread, each with its own EventLoop.
class FabricLinkTest : public ::testing::TestWithParam<const char*> {
 protected:
  // Opens the listener on a free port; skips when the provider is absent or lacks a
  // capability (the listener's error says which), fails on any other error.
  void open(const LinkOptions& link_options) {
    // shm's addresses are names made of host:port, so it gets a port of its own choosing
    // (unique per process); the socket providers pick a free one (port 0).
    const bool named = std::string(GetParam()) == "shm";
    const auto wanted = named ? static_cast<std::uint16_t>(20000 + ::getpid() % 20000 + ++shm_ports_)
                              : std::uint16_t{0};
    auto listener = FabricListener::open(receiver_loop_, {GetParam(), "127.0.0.1", wanted});
    if (!listener) {
      const auto& message = listener.error().message;
      if (message.find("no reliable-datagram") != std::string::npos ||
          message.find(" lacks ") != std::string::npos) {
        GTEST_SKIP() << message;
      }
      FAIL() << listener.error().describe();
    }
    listener_ = std::move(listener).value();
    auto recv = listener_->expect(link_options);
    ASSERT_TRUE(recv) << recv.error().describe();
    recv_ = recv.value();
    port_ = named ? wanted : listener_->port();
    ASSERT_NE(port_, 0) << "provider " << GetParam() << " reports no bound port";
    auto send = make_fabric_send_link(sender_loop_, {GetParam(), "127.0.0.1", port_}, link_options);
    ASSERT_TRUE(send) << send.error().describe();
    send_ = std::move(send).value();
  }

  // One round of progress on both ends; the receiver polls only when `receive`.
  void step(bool receive = true) {
    send_->do_work();
    sender_loop_.do_work(Clock::now());
    if (receive) recv_->poll(sink_);
    listener_->do_work();
    receiver_loop_.do_work(Clock::now());
  }

  template <class Done>
  bool drive_until(Done done, bool receive = true) {
    const auto deadline = Clock::now() + kDeadline;
    while (!done()) {
      if (Clock::now() > deadline) return false;
      step(receive);
    }
    return true;
  }

  void expect_healthy() {
    EXPECT_EQ(send_->error(), nullptr) << send_->error()->describe();
    EXPECT_EQ(recv_->error(), nullptr) << recv_->error()->describe();
    EXPECT_TRUE(listener_->rejected().empty()) << listener_->rejected().front().describe();
  }

  static inline std::uint16_t shm_ports_ = 0;
  std::uint16_t port_ = 0;
  EventLoop sender_loop_;
  EventLoop receiver_loop_;
  std::unique_ptr<FabricListener> listener_;
  RecvLink* recv_ = nullptr;
  std::unique_ptr<SendLink> send_;
  RecordingSink sink_;
};

TEST_P(FabricLinkTest, DeliversEveryFrameInOrderWithItsBytes) {
  open(options(8, 2));
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] { return send_->state() == LinkState::established; }))
      << to_string(send_->state());
  constexpr std::uint64_t kFrames = 500;
  std::vector<std::uint32_t> sent_crcs;
  std::uint64_t sent_tuples = 0;
  const bool all = drive_until([&] {
    Claim claim;
    while (sent_crcs.size() < kFrames && send_->try_claim(claim) == SendStatus::ok) {
      const auto sequence = sent_crcs.size() + 1;
      sent_crcs.push_back(fill_and_commit(*send_, claim, sequence));
      sent_tuples += tuples_of(sequence);
    }
    return sink_.sequences.size() == kFrames;
  });
  ASSERT_TRUE(all) << "received " << sink_.sequences.size() << " of " << kFrames;
  expect_healthy();
  for (std::uint64_t i = 0; i < kFrames; ++i) ASSERT_EQ(sink_.sequences[i], i + 1);
  EXPECT_EQ(sink_.crcs, sent_crcs);
  EXPECT_EQ(sink_.tuples, sent_tuples);
  EXPECT_EQ(recv_->stats().frames, kFrames);
  EXPECT_EQ(recv_->stats().tuples, sent_tuples);
  EXPECT_EQ(send_->stats().frames, kFrames);
  EXPECT_EQ(send_->stats().tuples, sent_tuples);
}

TEST_P(FabricLinkTest, SenderStallsOnCreditWhileTheReceiverDoesNotPoll) {
  constexpr std::uint32_t kWindow = 4;
  open(options(kWindow, 2));
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] { return send_->state() == LinkState::established; }));
  EXPECT_EQ(send_->credits_available(), kWindow);
  std::uint64_t sequence = 0;
  Claim claim;
  while (send_->try_claim(claim) == SendStatus::ok) fill_and_commit(*send_, claim, ++sequence);
  EXPECT_EQ(sequence, kWindow);  // exactly the window, not one more
  // A slow receiver: the sender keeps working for a while, but gets no credit.
  for (int i = 0; i < 2000; ++i) step(/*receive=*/false);
  EXPECT_EQ(send_->try_claim(claim), SendStatus::back_pressured);
  EXPECT_GE(send_->stats().credit_stalls, 2u);
  EXPECT_TRUE(sink_.sequences.empty());
  // The receiver catches up: credit returns and the stream continues.
  constexpr std::uint64_t kFrames = 40;
  const bool all = drive_until([&] {
    while (sequence < kFrames && send_->try_claim(claim) == SendStatus::ok) {
      fill_and_commit(*send_, claim, ++sequence);
    }
    return sink_.sequences.size() == kFrames;
  });
  ASSERT_TRUE(all) << "received " << sink_.sequences.size() << " of " << kFrames;
  expect_healthy();
  EXPECT_EQ(sink_.sequences.back(), kFrames);
  EXPECT_LE(recv_->free_capacity(), kWindow);
}

TEST_P(FabricLinkTest, EndOfStreamFinishesBothEnds) {
  open(options(8, 4));
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] { return send_->state() == LinkState::established; }));
  Claim claim;
  std::uint64_t sequence = 0;
  constexpr std::uint64_t kFrames = 10;
  const bool finished = drive_until([&] {
    if (sequence < kFrames && send_->try_claim(claim) == SendStatus::ok) {
      ++sequence;
      fill_and_commit(*send_, claim, sequence,
                      sequence == kFrames ? kFlagData | kFlagEndOfStream : kFlagData);
    }
    return send_->state() == LinkState::finished && recv_->state() == LinkState::finished;
  });
  ASSERT_TRUE(finished) << to_string(send_->state()) << " / " << to_string(recv_->state());
  expect_healthy();
  EXPECT_EQ(sink_.sequences.size(), kFrames);
  EXPECT_EQ(send_->try_claim(claim), SendStatus::closed);
}

TEST_P(FabricLinkTest, HelloWithAnotherSchemaIsRefused) {
  open(options(8, 4));
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(listener_->expect(options(8, 4)).has_error());  // stream 7 twice
  auto other = options(8, 4);
  other.stream_id = 9;
  ASSERT_TRUE(listener_->expect(other));
  auto wrong_hash = other;
  wrong_hash.schema_hash = 0xBAD;
  auto send = make_fabric_send_link(sender_loop_, {GetParam(), "127.0.0.1", port_},
                                    wrong_hash);
  ASSERT_TRUE(send) << send.error().describe();
  auto& refused = *send.value();
  ASSERT_TRUE(drive_until([&] {
    refused.do_work();
    return !listener_->rejected().empty();
  }));
  ASSERT_EQ(listener_->rejected().size(), 1u);
  EXPECT_NE(listener_->rejected()[0].message.find("stream 9 'ticks': schema hash 2989 differs from 23630"),
            std::string::npos)
      << listener_->rejected()[0].message;
  EXPECT_EQ(refused.state(), LinkState::connecting);
}

// The receiver blocks in its EventLoop (fi_trywait + the CQ's wait fd, or the timed
// re-poll of a provider without one) while another thread sends: no wake-up may be lost,
// so no 2 s wait may time out.
TEST_P(FabricLinkTest, BlockedReceiverWakesForEveryFrame) {
  open(options(4, 1));
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] { return send_->state() == LinkState::established; }));
  constexpr std::uint64_t kFrames = 200;
  std::atomic<bool> sender_done{false};
  std::thread sender([&] {
    const auto deadline = Clock::now() + kDeadline;
    std::uint64_t sequence = 0;
    Claim claim;
    while (send_->state() != LinkState::finished && send_->state() != LinkState::failed &&
           Clock::now() < deadline) {
      if (sequence < kFrames && send_->try_claim(claim) == SendStatus::ok) {
        ++sequence;
        fill_and_commit(*send_, claim, sequence,
                        sequence == kFrames ? kFlagData | kFlagEndOfStream : kFlagData);
      }
      send_->do_work();
      sender_loop_.do_work(Clock::now());
    }
    sender_done = true;
  });
  int timeouts = 0;
  int blocks = 0;
  const auto deadline = Clock::now() + kDeadline;
  while (recv_->state() != LinkState::finished && recv_->state() != LinkState::failed &&
         Clock::now() < deadline) {
    if (recv_->poll(sink_) > 0) continue;
    receiver_loop_.do_work(Clock::now());
    if (receiver_loop_.try_arm()) {
      ++blocks;
      if (!receiver_loop_.wait(2s)) ++timeouts;
    }
    receiver_loop_.disarm();
  }
  // Keep polling so the final ack goes out while the sender waits for it.
  while (!sender_done) recv_->poll(sink_);  // the sender's own deadline bounds this
  sender.join();
  expect_healthy();
  EXPECT_EQ(sink_.sequences.size(), kFrames);
  EXPECT_EQ(send_->state(), LinkState::finished);
  EXPECT_EQ(timeouts, 0) << "of " << blocks << " blocks";
}

INSTANTIATE_TEST_SUITE_P(Providers, FabricLinkTest,
                         ::testing::Values("tcp;ofi_rxm", "sockets", "net", "shm"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (auto& c : name) {
                             if (c == ';') c = '_';
                           }
                           return name;
                         });

TEST(FabricMedium, UnknownProviderIsAnErrorNamingIt) {
  EventLoop loop;
  auto send = make_fabric_send_link(loop, {"no-such-provider", "127.0.0.1", 7100}, options(8, 2));
  ASSERT_FALSE(send);
  EXPECT_EQ(send.error().category, ErrorCategory::fabric);
  EXPECT_NE(send.error().message.find("provider 'no-such-provider'"), std::string::npos)
      << send.error().message;
  EXPECT_NE(send.error().message.find("fi_getinfo"), std::string::npos) << send.error().message;
  auto listener = FabricListener::open(loop, {"no-such-provider", "127.0.0.1", 0});
  ASSERT_FALSE(listener);
  EXPECT_NE(listener.error().message.find("provider 'no-such-provider'"), std::string::npos)
      << listener.error().message;
}

}  // namespace
}  // namespace boreal::transport
