#include <boreal/transport/fabric_medium.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/sanitizers.hpp>

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
  // With take_crc, the sink makes the one pass over each payload and the link checks the
  // frame against it; on call corrupt_call it flips a payload byte first.
  std::optional<std::uint32_t> payload_crc(std::span<const std::byte> payload) override {
    if (!take_crc) return std::nullopt;
    if (++crc_calls == corrupt_call && !payload.empty()) {
      *const_cast<std::byte*>(payload.data()) ^= std::byte{0x01};
    }
    return crc32c(payload);
  }
  std::vector<std::uint64_t> sequences;
  std::vector<std::uint32_t> crcs;
  std::uint64_t tuples = 0;
  bool take_crc = false;
  std::uint64_t crc_calls = 0;
  std::uint64_t corrupt_call = 0;  // 0 = never
};

// One sending and one receiving end of a link, with what they delivered.
struct LinkPair {
  std::unique_ptr<SendLink> send;
  RecvLink* recv = nullptr;
  RecordingSink sink;
};

// Both ends on this thread, each with its own EventLoop; every link of the test is stepped.
class FabricTest : public ::testing::Test {
 protected:
  // Opens the listener on a free port; skips when the provider is absent or lacks a
  // capability (the listener's error says which), fails on any other error.
  // A port nobody listens on, that a listener can bind later: the socket providers learn a
  // free one from a listener they close again; shm gets a name never opened (an shm peer
  // closed in this process leaves its in-process peers pointing at freed memory).
  // Until the listener binds it, the port is held by a plain socket bound to it and not
  // listening (connections to it are refused, as to a closed port): freed, another endpoint
  // (here, or in a test running beside this one) may take it meanwhile, and the listener
  // then finds it in use.
  std::uint16_t unused_port(const std::string& provider) {
    if (provider == "shm") {
      provider_ = provider;
      return static_cast<std::uint16_t>(20000 + ::getpid() % 20000 + ++shm_ports_);
    }
    for (int attempt = 0; attempt < 5; ++attempt) {
      open_listener(provider);
      if (IsSkipped() || HasFatalFailure()) return 0;
      const auto port = port_;
      listener_.reset();
      if (hold_port(port)) return port;
    }
    ADD_FAILURE() << "no free port could be held for provider " << provider;
    return 0;
  }

  bool hold_port(std::uint16_t port) {
    release_port();
    held_port_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (held_port_ >= 0 &&
        ::bind(held_port_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
      return true;
    }
    release_port();
    return false;
  }
  void release_port() {
    if (held_port_ >= 0) ::close(held_port_);
    held_port_ = -1;
  }
  void TearDown() override { release_port(); }

  // `port`: bind that one (0: see below).
  void open_listener(const std::string& provider, std::uint16_t port = 0) {
    provider_ = provider;
    release_port();
    // shm's addresses are names made of host:port, so it gets a port of its own choosing
    // (unique per process); the socket providers pick a free one (port 0).
    const bool named = provider == "shm" || port != 0;
    const auto wanted =
        port != 0 ? port
        : named   ? static_cast<std::uint16_t>(20000 + ::getpid() % 20000 + ++shm_ports_)
                  : std::uint16_t{0};
    auto listener = FabricListener::open(receiver_loop_, {provider, "127.0.0.1", wanted});
    if (!listener) {
      const auto& message = listener.error().message;
      if (message.find("no reliable-datagram") != std::string::npos ||
          message.find(" lacks ") != std::string::npos) {
        GTEST_SKIP() << message;
      }
      FAIL() << listener.error().describe();
    }
    listener_ = std::move(listener).value();
    port_ = named ? wanted : listener_->port();
    ASSERT_NE(port_, 0) << "provider " << provider << " reports no bound port";
  }

  // Expects `link_options` on the listener and connects a sender to it; skips when the
  // provider lacks what `transfer` needs (the error names it).
  void add_link(LinkPair& pair, const LinkOptions& link_options, FabricTransfer transfer) {
    expect_link(pair, link_options, transfer);
    if (IsSkipped() || HasFatalFailure()) return;
    connect_link(pair, link_options, transfer);
  }
  void expect_link(LinkPair& pair, const LinkOptions& link_options, FabricTransfer transfer) {
    auto recv = listener_->expect(link_options, transfer);
    if (!recv && recv.error().message.find(" lacks ") != std::string::npos) {
      GTEST_SKIP() << recv.error().message;
    }
    ASSERT_TRUE(recv) << recv.error().describe();
    pair.recv = recv.value();
  }
  void connect_link(LinkPair& pair, const LinkOptions& link_options, FabricTransfer transfer) {
    auto send = make_fabric_send_link(sender_loop_, {provider_, "127.0.0.1", port_}, link_options,
                                      transfer);
    ASSERT_TRUE(send) << send.error().describe();
    pair.send = std::move(send).value();
    pairs_.push_back(&pair);
  }

  // One round of progress on both ends of every link; receivers poll only when `receive`.
  void step(bool receive = true) {
    for (auto* pair : pairs_) pair->send->do_work();
    sender_loop_.do_work(Clock::now());
    if (receive) {
      for (auto* pair : pairs_) pair->recv->poll(pair->sink);
    }
    if (listener_) listener_->do_work();
    receiver_loop_.do_work(Clock::now());
  }

  // Drives only `link` (its peer is gone or not there yet) until `done` or kDeadline.
  template <class Done>
  bool drive_sender_until(SendLink& link, Done done) {
    const auto deadline = Clock::now() + kDeadline;
    while (!done()) {
      if (Clock::now() > deadline) return false;
      link.do_work();
      sender_loop_.do_work(Clock::now());
    }
    return true;
  }

  // The listener's name in messages: its address, with the port it got.
  [[nodiscard]] std::string local() const {
    return "fabric://" + provider_ + "/127.0.0.1:" + std::to_string(port_);
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

  // Claims and commits frames 1..frames on `pair` as far as credit allows; true once all
  // were delivered. sent_crcs collects the payload CRC of each frame committed.
  static bool feed(LinkPair& pair, std::uint64_t frames, std::vector<std::uint32_t>& sent_crcs) {
    Claim claim;
    while (sent_crcs.size() < frames && pair.send->try_claim(claim) == SendStatus::ok) {
      sent_crcs.push_back(fill_and_commit(*pair.send, claim, sent_crcs.size() + 1));
    }
    return pair.sink.sequences.size() == frames;
  }

  // What an end did, for a failure message.
  static std::string counts(const LinkStats& s) {
    return "frames " + std::to_string(s.frames) + ", credit frames " +
           std::to_string(s.credit_frames) + ", posts " + std::to_string(s.write_calls) +
           ", refused posts " + std::to_string(s.would_block) + ", CQ reads " +
           std::to_string(s.read_calls) + ", reconnects " + std::to_string(s.reconnects) +
           ", fresh endpoints " + std::to_string(s.fresh_endpoints) +
           ", replayed " + std::to_string(s.frames_replayed) + ", duplicates dropped " +
           std::to_string(s.duplicates_dropped);
  }

  // Both ends' states, errors and counts, and the listener's: for a failure message.
  std::string explain(const LinkPair& pair) const {
    std::string text = "sender ";
    text += pair.send ? std::string(to_string(pair.send->state())) : "closed";
    if (pair.send && pair.send->error()) text += " (" + pair.send->error()->describe() + ")";
    if (pair.send) text += " [" + counts(pair.send->stats()) + "]";
    text += ", receiver " + std::string(to_string(pair.recv->state()));
    if (pair.recv->error()) text += " (" + pair.recv->error()->describe() + ")";
    text += " [" + counts(pair.recv->stats()) + "]";
    if (listener_) {
      if (listener_->error()) text += "; listener: " + listener_->error()->describe();
      for (const auto& refusal : listener_->rejected()) text += "; refused: " + refusal.message;
    }
    return text;
  }

  static void expect_in_order(const LinkPair& pair, const std::vector<std::uint32_t>& sent_crcs) {
    ASSERT_EQ(pair.sink.sequences.size(), sent_crcs.size());
    for (std::uint64_t i = 0; i < sent_crcs.size(); ++i) ASSERT_EQ(pair.sink.sequences[i], i + 1);
    EXPECT_EQ(pair.sink.crcs, sent_crcs);
    EXPECT_EQ(pair.send->error(), nullptr) << pair.send->error()->describe();
    EXPECT_EQ(pair.recv->error(), nullptr) << pair.recv->error()->describe();
  }

  static inline std::uint16_t shm_ports_ = 0;
  int held_port_ = -1;  // unused_port()'s, until open_listener()
  std::string provider_;
  std::uint16_t port_ = 0;
  EventLoop sender_loop_;
  EventLoop receiver_loop_;
  std::unique_ptr<FabricListener> listener_;
  std::vector<LinkPair*> pairs_;
};

// The provider, the transfer, and whether the receiver says it never blocks (fabric-rma: its
// sender then writes frames without immediate data where the provider orders writes).
using ProviderAndTransfer = std::tuple<const char*, FabricTransfer, bool>;

// Every case runs for each provider and each transfer, and fabric-rma with ring words on
// tcp;ofi_rxm (the software stand-in for verbs;ofi_rxm) and shm (no socket under it, and
// the provider whose write order had to be asked for). The words' code is the same on every
// provider; sockets and net are left out of that third variant for CI's time, and
// fabric_bad_peer_test's ring-word cases still run on all four.
class FabricLinkTest : public FabricTest,
                       public ::testing::WithParamInterface<ProviderAndTransfer> {
 protected:
  [[nodiscard]] static const char* provider() { return std::get<0>(GetParam()); }
  [[nodiscard]] static FabricTransfer transfer() { return std::get<1>(GetParam()); }
  [[nodiscard]] static bool never_blocks() { return std::get<2>(GetParam()); }

  // Every receiving end of the case is told whether it never blocks.
  void add_link(LinkPair& pair, const LinkOptions& link_options, FabricTransfer transfer) {
    expect_link(pair, link_options, transfer);
    if (IsSkipped() || HasFatalFailure()) return;
    connect_link(pair, link_options, transfer);
  }
  void expect_link(LinkPair& pair, const LinkOptions& link_options, FabricTransfer transfer) {
    auto o = link_options;
    o.never_blocks = never_blocks();
    FabricTest::expect_link(pair, o, transfer);
  }
  // ...and its sender takes the offer on every provider here (by default only on verbs and
  // efa: LinkOptions::RingWords).
  void connect_link(LinkPair& pair, const LinkOptions& link_options, FabricTransfer transfer) {
    auto o = link_options;
    if (never_blocks()) o.ring_words = LinkOptions::RingWords::always;
    FabricTest::connect_link(pair, o, transfer);
  }

  void open(const LinkOptions& link_options) {
    open_listener(provider());
    if (IsSkipped() || HasFatalFailure()) return;
    add_link(main_, link_options, transfer());
    if (IsSkipped() || HasFatalFailure()) return;
    send_ = main_.send.get();
    recv_ = main_.recv;
  }

  void expect_healthy() {
    EXPECT_EQ(send_->error(), nullptr) << send_->error()->describe();
    EXPECT_EQ(recv_->error(), nullptr) << recv_->error()->describe();
    EXPECT_TRUE(listener_->rejected().empty()) << listener_->rejected().front().describe();
  }

  LinkPair main_;
  SendLink* send_ = nullptr;
  RecvLink* recv_ = nullptr;
  RecordingSink& sink_ = main_.sink;
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
  // fabric-rma to a receiver that never blocks: every frame without immediate data, each
  // found by its ring word (all four providers here order write after write over a whole slot
  // when asked: docs/transport-notes.md §1.5). Under ThreadSanitizer the sockets provider keeps
  // immediate data (FabricContext: TSan cannot order its threads' writes).
  const bool words = !(kUnderThreadSanitizer && std::string(provider()) == "sockets");
  // A sender left to decide keeps immediate data on these software providers.
  if (never_blocks() && transfer() == FabricTransfer::rma_writes) {
    LinkPair automatic;
    auto o = options(8, 2);
    o.stream_id = 8;
    o.never_blocks = true;
    FabricTest::expect_link(automatic, o, transfer());
    FabricTest::connect_link(automatic, o, transfer());
    if (HasFatalFailure()) return;
    std::vector<std::uint32_t> sent;
    ASSERT_TRUE(drive_until([&] { return feed(automatic, 20, sent); }));
    expect_in_order(automatic, sent);
    EXPECT_EQ(automatic.send->stats().unannounced_frames, 0u);
    EXPECT_EQ(automatic.recv->stats().unannounced_frames, 0u);
  }
  const std::uint64_t unannounced =
      transfer() == FabricTransfer::rma_writes && never_blocks() && words ? kFrames : 0;
  EXPECT_EQ(send_->stats().unannounced_frames, unannounced);
  EXPECT_EQ(recv_->stats().unannounced_frames, unannounced);
}

// A sink that takes each payload's CRC is the frame check (one pass per payload at the
// receiving end): frames arrive whole, and a byte flipped before the sink's pass (memory
// corrupted after arrival) is refused as a corrupt frame, none of it delivered.
TEST_P(FabricLinkTest, ASinkThatTakesEachPayloadsCrcIsTheFrameCheck) {
  open(options(8, 2));
  if (IsSkipped() || HasFatalFailure()) return;
  sink_.take_crc = true;
  sink_.corrupt_call = 31;
  std::vector<std::uint32_t> sent_crcs;
  const bool failed = drive_until([&] {
    Claim claim;
    while (sent_crcs.size() < 40 && send_->try_claim(claim) == SendStatus::ok) {
      sent_crcs.push_back(fill_and_commit(*send_, claim, sent_crcs.size() + 1));
    }
    return recv_->state() == LinkState::failed;
  });
  ASSERT_TRUE(failed) << "received " << sink_.sequences.size() << ", link "
                      << to_string(recv_->state());
  ASSERT_NE(recv_->error(), nullptr);
  EXPECT_NE(recv_->error()->describe().find("checksum mismatch"), std::string::npos)
      << recv_->error()->describe();
  EXPECT_EQ(sink_.crc_calls, 31u);
  ASSERT_EQ(sink_.sequences.size(), 30u);
  for (std::uint64_t i = 0; i < 30; ++i) ASSERT_EQ(sink_.sequences[i], i + 1);
  EXPECT_EQ(sink_.crcs, std::vector<std::uint32_t>(sent_crcs.begin(), sent_crcs.begin() + 30));
}

// Large frames alternate with small ones. rxm sends a large message by rendezvous and a small
// one eagerly, so the small one can complete first; frames must still come out in order.
TEST_P(FabricLinkTest, LargeAndSmallFramesArriveInTheOrderSent) {
  auto big = options(16, 4);
  big.max_payload_bytes = 32 * 1024;
  open(big);
  if (IsSkipped() || HasFatalFailure()) return;
  constexpr std::uint64_t kFrames = 200;
  std::vector<std::uint32_t> sent_crcs;
  const bool all = drive_until([&] {
    Claim claim;
    while (sent_crcs.size() < kFrames && send_->try_claim(claim) == SendStatus::ok) {
      const auto sequence = sent_crcs.size() + 1;
      // Odd frames fill the whole 32 KiB, even ones carry one tuple.
      const std::uint32_t tuples = sequence % 2 == 1 ? big.max_payload_bytes / kTupleBytes : 1;
      for (std::uint32_t k = 0; k < tuples; ++k) {
        const std::uint64_t value = sequence * 0x9E3779B97F4A7C15ull + k;
        std::memcpy(claim.payload.data() + k * kTupleBytes, &value, kTupleBytes);
      }
      sent_crcs.push_back(crc32c(claim.payload.first(tuples * kTupleBytes)));
      send_->commit(claim, tuples, tuples * kTupleBytes, kFlagData);
    }
    return sink_.sequences.size() == kFrames || recv_->state() == LinkState::failed;
  });
  ASSERT_TRUE(all) << "received " << sink_.sequences.size() << " of " << kFrames;
  expect_healthy();
  ASSERT_EQ(sink_.sequences.size(), kFrames);
  for (std::uint64_t i = 0; i < kFrames; ++i) ASSERT_EQ(sink_.sequences[i], i + 1);
  EXPECT_EQ(sink_.crcs, sent_crcs);
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
  ASSERT_TRUE(listener_->expect(options(8, 4), transfer()).has_error());  // stream 7 twice
  auto other = options(8, 4);
  other.stream_id = 9;
  ASSERT_TRUE(listener_->expect(other, transfer()));
  auto wrong_hash = other;
  wrong_hash.schema_hash = 0xBAD;
  auto send = make_fabric_send_link(sender_loop_, {provider(), "127.0.0.1", port_}, wrong_hash,
                                    transfer());
  ASSERT_TRUE(send) << send.error().describe();
  auto& refused = *send.value();
  ASSERT_TRUE(drive_until([&] {
    refused.do_work();
    return !listener_->rejected().empty();
  }));
  ASSERT_EQ(listener_->rejected().size(), 1u);
  EXPECT_NE(listener_->rejected()[0].message.find(
                "stream 9 'ticks': schema hash 2989 differs from 23630"),
            std::string::npos)
      << listener_->rejected()[0].message;
  EXPECT_EQ(refused.state(), LinkState::connecting);
}

// The receiver blocks in its EventLoop (fi_trywait + the CQ's wait fd, or the timed
// re-poll of a provider without one) while another thread sends: no wake-up may be lost,
// so no 2 s wait may time out.
TEST_P(FabricLinkTest, BlockedReceiverWakesForEveryFrame) {
  if (never_blocks()) GTEST_SKIP() << "the receiver blocks, so it does not say it never does";
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

// Liveness settings short enough for a test: a lost peer is noticed after 300 ms.
LinkOptions lively(std::uint32_t window, std::uint32_t credit_batch) {
  auto o = options(window, credit_batch);
  o.heartbeat = 50ms;
  o.peer_timeout = 300ms;
  o.reconnect_timeout = 400ms;
  return o;
}

// The receiving node may close its endpoint as soon as its link reports finished: the ack
// must have left by then (sockets transmits from its progress thread, so an injected ack
// could still be waiting when the endpoint closes).
TEST_P(FabricLinkTest, ReceiverThatClosesRightAfterFinishingStillFinishesTheSender) {
  open(options(8, 4));
  if (IsSkipped() || HasFatalFailure()) return;
  Claim claim;
  std::uint64_t sequence = 0;
  constexpr std::uint64_t kFrames = 10;
  ASSERT_TRUE(drive_until([&] {
    if (sequence < kFrames && send_->try_claim(claim) == SendStatus::ok) {
      ++sequence;
      fill_and_commit(*send_, claim, sequence,
                      sequence == kFrames ? kFlagData | kFlagEndOfStream : kFlagData);
    }
    return recv_->state() == LinkState::finished || recv_->state() == LinkState::failed;
  })) << to_string(recv_->state());
  ASSERT_EQ(recv_->state(), LinkState::finished) << recv_->error()->describe();
  EXPECT_EQ(sink_.sequences.size(), kFrames);
  listener_.reset();  // the receiving node exits at once
  pairs_.clear();
  recv_ = nullptr;
  ASSERT_TRUE(drive_sender_until(*send_, [&] { return send_->state() != LinkState::established; }))
      << "the sender never got its ack";
  EXPECT_EQ(send_->state(), LinkState::finished)
      << (send_->error() ? send_->error()->describe() : std::string());
}

// A node that closes its listener as soon as its sink saw the end-of-stream frame (not
// waiting for the link to finish) still lets the sender finish: the closing listener
// progresses the ack that is in flight.
TEST_P(FabricLinkTest, ListenerClosedRightAfterTheLastFrameStillSendsTheAck) {
  if (std::string(provider()) == "shm") {
    GTEST_SKIP() << "shm: an endpoint closed in this process leaves its peers in this process "
                    "writing to freed memory (libfabric 1.17 crashes)";
  }
  open(options(8, 4));
  if (IsSkipped() || HasFatalFailure()) return;
  Claim claim;
  std::uint64_t sequence = 0;
  constexpr std::uint64_t kFrames = 10;
  ASSERT_TRUE(drive_until([&] {
    if (sequence < kFrames && send_->try_claim(claim) == SendStatus::ok) {
      ++sequence;
      fill_and_commit(*send_, claim, sequence,
                      sequence == kFrames ? kFlagData | kFlagEndOfStream : kFlagData);
    }
    return sink_.sequences.size() == kFrames || recv_->state() == LinkState::failed;
  }));
  ASSERT_EQ(sink_.sequences.size(), kFrames);
  listener_.reset();
  pairs_.clear();
  recv_ = nullptr;
  ASSERT_TRUE(drive_sender_until(*send_, [&] { return send_->state() != LinkState::established; }))
      << "the sender never got its ack";
  EXPECT_EQ(send_->state(), LinkState::finished)
      << (send_->error() ? send_->error()->describe() : std::string());
}

// A sender started before its receiver listens keeps sending its hello (with a backoff, and
// from a fresh endpoint after a second of the provider refusing it) until the listener is
// there, then delivers.
TEST_P(FabricLinkTest, SenderStartedBeforeTheListenerConnectsOnceItListens) {
  const auto port = unused_port(provider());
  if (IsSkipped() || HasFatalFailure()) return;
  port_ = port;
  connect_link(main_, options(8, 2), transfer());
  if (HasFatalFailure()) return;
  // 1.5 s: long enough that a provider refusing the hello for now (all but sockets, which
  // fails it at once) has the sender open a fresh endpoint (kFreshEndpointAfter).
  const auto until = Clock::now() + 1500ms;
  ASSERT_TRUE(drive_sender_until(*main_.send, [&] {
    return Clock::now() >= until || main_.send->state() != LinkState::connecting;
  }));
  ASSERT_EQ(main_.send->state(), LinkState::connecting)
      << (main_.send->error() ? main_.send->error()->describe() : std::string());
  // Paced, not polled: each hello the provider refuses (rxm: each one starts a connection
  // attempt) is tried again after a pause doubling from 100 µs to 200 ms, afresh on each new
  // endpoint: about 30 in 1.5 s. Polled on every pass, as before, they were thousands.
  EXPECT_LE(main_.send->stats().write_calls, 60u)
      << main_.send->stats().would_block << " refused, "
      << main_.send->stats().fresh_endpoints << " fresh endpoints";
  open_listener(provider(), port);
  if (IsSkipped() || HasFatalFailure()) return;
  expect_link(main_, options(8, 2), transfer());
  if (IsSkipped() || HasFatalFailure()) return;
  send_ = main_.send.get();
  recv_ = main_.recv;
  constexpr std::uint64_t kFrames = 50;
  std::vector<std::uint32_t> sent;
  ASSERT_TRUE(drive_until([&] {
    return feed(main_, kFrames, sent) || send_->state() == LinkState::failed;
  })) << "received " << sink_.sequences.size() << " of " << kFrames << "; sender "
         << to_string(send_->state()) << ", " << send_->stats().write_calls << " posts, "
         << send_->stats().would_block << " refused; " << listener_->rejected().size()
         << " refusals";
  expect_in_order(main_, sent);
  expect_healthy();
  if (std::string(provider()) == "sockets") {
    EXPECT_EQ(send_->stats().fresh_endpoints, 0u);
  } else {
    EXPECT_GE(send_->stats().fresh_endpoints, 1u);
  }
}

// The other way round, nobody ever listens: the timeout says what the hellos ran into.
TEST_P(FabricLinkTest, ConnectTimeoutNamesTheLastHelloFailure) {
  const auto port = unused_port(provider());
  if (IsSkipped() || HasFatalFailure()) return;
  const auto started = std::chrono::steady_clock::now();
  auto send = make_fabric_send_link(sender_loop_, {provider(), "127.0.0.1", port}, options(8, 2),
                                    transfer(), 400ms);
  if (!send && send.error().message.find(" lacks ") != std::string::npos) {
    GTEST_SKIP() << send.error().message;
  }
  ASSERT_TRUE(send) << send.error().describe();
  auto& link = *send.value();
  ASSERT_TRUE(drive_sender_until(link, [&] { return link.state() != LinkState::connecting; }));
  const auto lived = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  ASSERT_EQ(link.state(), LinkState::failed);
  const std::string prefix = "link 'ticks' (stream 7) to fabric://" + std::string(provider()) +
                             "/127.0.0.1:" + std::to_string(port) +
                             ": no credit from the receiver within 400 ms (is it listening, and "
                             "does it expect this stream?)";
  const std::string& message = link.error()->message;
  ASSERT_EQ(message.substr(0, prefix.size()), prefix) << message;
  // sockets refuses at once, and the hello is retried; the others refuse for now
  // (-FI_EAGAIN) while they try to connect, and the error says for how long.
  const std::string rest = message.substr(prefix.size());
  const std::string refused = "; the provider has refused the hello for the last ";
  if (std::string(provider()) == "sockets") {
    EXPECT_EQ(rest,
              "; the last hello failed: fi_tsend (provider sockets): No such file or directory");
  } else {
    EXPECT_EQ(rest.substr(0, refused.size()), refused) << message;
    const std::string tail = " ms (still connecting?): fi_tsend (provider " +
                             std::string(provider()) + "): Resource temporarily unavailable";
    ASSERT_GT(rest.size(), refused.size() + tail.size()) << message;
    EXPECT_EQ(rest.substr(rest.size() - tail.size()), tail) << message;
    const auto ms = std::stoi(rest.substr(refused.size()));
    EXPECT_GT(ms, 0) << message;
    EXPECT_LE(ms, lived.count()) << message;  // never more than the link has lived
  }
  RecordProperty("error", message);
}

// A sender that goes away is noticed by its receiver's silence detection, waited for the
// reconnect timeout, and then the link fails; another link on the same listener keeps
// delivering every frame, once and in order. That link waits longer for a lost peer (a
// reconnect timeout of 3 s): twice, in CI under ThreadSanitizer, tcp;ofi_rxm with fabric-rma
// lost the surviving sender's connection in both directions when the other sender's endpoint
// closed (no completion said so on either end; never reproduced here, in ~600 runs with and
// without load). Its ends then noticed the silence, and the sender reconnected, but later than
// the 400 ms this test gives the lost one. A link that heals (reconnects and replays what was
// not acknowledged) is what a node does about a dropped connection, so that is what is
// asserted; the failure message counts the link's reconnects.
TEST_P(FabricLinkTest, ReceiverWaitsForItsLostSenderThenFailsWhileAnotherLinkDelivers) {
  if (std::string(provider()) == "shm") {
    GTEST_SKIP() << "shm: an endpoint closed in this process leaves its peers in this process "
                    "writing to freed memory (libfabric 1.17 crashes in fi_tinject)";
  }
  open(lively(8, 2));
  if (IsSkipped() || HasFatalFailure()) return;
  LinkPair other;
  auto other_options = lively(8, 2);
  other_options.stream_id = 9;
  other_options.name = "quotes";
  other_options.reconnect_timeout = 3s;
  add_link(other, other_options, transfer());
  if (HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] {
    return send_->state() == LinkState::established &&
           other.send->state() == LinkState::established;
  }));
  pairs_.erase(pairs_.begin());  // main_: its sender goes now
  main_.send.reset();
  constexpr std::uint64_t kFrames = 300;
  std::vector<std::uint32_t> sent;
  const bool done = drive_until([&] {
    recv_->poll(sink_);
    return feed(other, kFrames, sent) && recv_->state() == LinkState::failed;
  });
  ASSERT_TRUE(done) << "received " << other.sink.sequences.size() << " of " << kFrames << " ("
                    << explain(other) << "); gone sender's link: " << explain(main_);
  ASSERT_NE(recv_->error(), nullptr);
  EXPECT_EQ(recv_->error()->category, ErrorCategory::closed);
  EXPECT_EQ(recv_->error()->message,
            "link 'ticks' (stream 7) from fabric://" + std::string(provider()) +
                "/peer of " + local() +
                ": peer silent for 300 ms (gone, or the network is down); the sender did not "
                "come back within 400 ms (after frame 0)");
  expect_in_order(other, sent);
  EXPECT_EQ(listener_->error(), nullptr) << listener_->error()->describe();
}

// A hello that goes unanswered is said again from a fresh endpoint a second after it went
// out. Here the receiving node refuses the first (it does not expect the stream yet, and a
// refusal sends nothing back) and then expects it: the sender's second endpoint connects and
// every frame arrives once, in order. The same path serves an answer lost with the connection
// that carried it, which the first endpoint would wait for until its connect timeout.
TEST_P(FabricLinkTest, UnansweredHelloIsSaidAgainFromAFreshEndpoint) {
  open_listener(provider());
  if (IsSkipped() || HasFatalFailure()) return;
  const auto o = options(8, 2);
  connect_link(main_, o, transfer());  // nobody expects stream 7 yet
  if (HasFatalFailure()) return;
  send_ = main_.send.get();
  const auto deadline = Clock::now() + kDeadline;
  while (listener_->rejected().empty() && Clock::now() < deadline) {
    send_->do_work();
    sender_loop_.do_work(Clock::now());
    listener_->do_work();
    receiver_loop_.do_work(Clock::now());
  }
  ASSERT_EQ(listener_->rejected().size(), 1u);
  EXPECT_EQ(listener_->rejected().front().message,
            "hello refused on fabric listener " + local() +
                ": unknown stream id 7 (this node expects none)");
  expect_link(main_, o, transfer());
  if (IsSkipped() || HasFatalFailure()) return;
  recv_ = main_.recv;
  constexpr std::uint64_t kFrames = 40;
  std::vector<std::uint32_t> sent;
  ASSERT_TRUE(drive_until([&] { return feed(main_, kFrames, sent); }))
      << "received " << sink_.sequences.size() << " of " << kFrames << " (" << explain(main_)
      << ")";
  expect_in_order(main_, sent);
  EXPECT_EQ(send_->stats().fresh_endpoints, 1u);
  EXPECT_EQ(send_->stats().reconnects, 0u);
  EXPECT_EQ(recv_->stats().reconnects, 0u);
  EXPECT_EQ(listener_->rejected().size(), 1u);
  EXPECT_EQ(listener_->error(), nullptr) << listener_->error()->describe();
}

// A sender whose receiver went away tries to reconnect for the reconnect timeout, then fails
// naming the loss, the timeout and what it still holds.
TEST_P(FabricLinkTest, SenderReconnectsToAGoneReceiverThenFails) {
  if (std::string(provider()) == "shm") {
    GTEST_SKIP() << "shm: an endpoint closed in this process leaves its peers in this process "
                    "writing to freed memory (libfabric 1.17 crashes in fi_tinject)";
  }
  open(lively(8, 2));
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] { return send_->state() == LinkState::established; }));
  listener_.reset();
  pairs_.clear();
  recv_ = nullptr;
  ASSERT_TRUE(drive_sender_until(*send_, [&] { return send_->state() == LinkState::failed; }));
  EXPECT_EQ(send_->error()->category, ErrorCategory::closed) << send_->error()->describe();
  const std::string& message = send_->error()->message;
  const std::string prefix = "link 'ticks' (stream 7) to fabric://" + std::string(provider()) +
                             "/127.0.0.1:" + std::to_string(port_) + ": ";
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
  EXPECT_NE(message.find("; no connection within 400 ms after that (last attempt: "),
            std::string::npos)
      << message;
  const std::string suffix = "); 0 frames were not acknowledged";
  ASSERT_GE(message.size(), suffix.size());
  EXPECT_EQ(message.substr(message.size() - suffix.size()), suffix) << message;
}

// Upstream backup (docs/faults.md): a receiving node killed and restarted from its checkpoint
// (here: a new listener on the same port whose link resumes after the frames the old one
// acknowledged) gets every later frame exactly once, replayed by the sender, which kept
// everything unacknowledged.
TEST_P(FabricLinkTest, RestartedReceiverResumesAfterItsLastAcknowledgement) {
  if (std::string(provider()) == "shm") {
    GTEST_SKIP() << "shm: an endpoint closed in this process leaves its peers in this process "
                    "writing to freed memory (libfabric 1.17 crashes in fi_tinject)";
  }
  auto o = lively(8, 2);
  o.reconnect_timeout = 3s;  // a loaded machine may take a while to bring the receiver back
  // One thread drives both ends: a stall of it as long as the peer timeout looks like a
  // second loss, and the sender reconnects twice (seen once in CI under ThreadSanitizer,
  // beside the fuzzers' build, with sockets: reconnects 2).
  o.peer_timeout = kUnderThreadSanitizer ? 1000ms : 300ms;
  o.manual_ack = true;
  o.backup_frames = 64;
  open(o);
  if (IsSkipped() || HasFatalFailure()) return;
  constexpr std::uint64_t kFrames = 60;
  constexpr std::uint64_t kDelivered = 20;
  constexpr std::uint64_t kCheckpointed = 12;
  std::vector<std::uint32_t> sent;
  ASSERT_TRUE(drive_until([&] { return feed(main_, kDelivered, sent); }));
  recv_->acknowledge(kCheckpointed);
  for (int i = 0; i < 50; ++i) step();  // the ack reaches the sender
  // The receiving node dies: frames 13..20 were delivered but not checkpointed.
  listener_.reset();
  pairs_.clear();
  const auto first_sink = sink_.sequences;
  // Its restart: the same port, the link resuming after its checkpoint.
  open_listener(provider(), port_);
  if (HasFatalFailure()) return;
  LinkPair restarted;
  auto resumed = o;
  resumed.resume_after = kCheckpointed;
  expect_link(restarted, resumed, transfer());
  if (HasFatalFailure()) return;
  restarted.send = std::move(main_.send);
  pairs_.push_back(&restarted);
  const bool all = drive_until([&] {
    feed(restarted, kFrames, sent);
    restarted.recv->acknowledge(restarted.recv->delivered());
    return restarted.sink.sequences.size() == kFrames - kCheckpointed;
  });
  ASSERT_TRUE(all) << "received " << restarted.sink.sequences.size() << " of "
                   << kFrames - kCheckpointed << ", sender "
                   << to_string(restarted.send->state()) << " "
                   << (restarted.send->error() ? restarted.send->error()->message : "")
                   << ", receiver " << to_string(restarted.recv->state()) << " "
                   << (restarted.recv->error() ? restarted.recv->error()->message : "");
  ASSERT_EQ(first_sink.size(), kDelivered);
  for (std::uint64_t i = 0; i < restarted.sink.sequences.size(); ++i) {
    ASSERT_EQ(restarted.sink.sequences[i], kCheckpointed + 1 + i);
  }
  EXPECT_EQ(restarted.sink.crcs,
            std::vector<std::uint32_t>(sent.begin() + kCheckpointed, sent.end()));
  EXPECT_EQ(restarted.send->error(), nullptr) << restarted.send->error()->describe();
  EXPECT_EQ(restarted.recv->error(), nullptr) << restarted.recv->error()->describe();
  EXPECT_EQ(restarted.send->stats().reconnects, 1u);
  EXPECT_GE(restarted.send->stats().frames_replayed, kDelivered - kCheckpointed);
  EXPECT_TRUE(listener_->rejected().empty()) << listener_->rejected().front().describe();
}

// A sending node killed and restarted from its checkpoint (a new link with the same sender
// id, restored with the frames it had not seen acknowledged) is taken back by the receiver,
// which drops what it had already delivered: the stream arrives once, in order.
TEST_P(FabricLinkTest, RestartedSenderIsTakenBackAndItsReplaysAreDropped) {
  if (std::string(provider()) == "shm") {
    GTEST_SKIP() << "shm: an endpoint closed in this process leaves its peers in this process "
                    "writing to freed memory (libfabric 1.17 crashes in fi_tinject)";
  }
  auto o = lively(8, 2);
  o.reconnect_timeout = 3s;
  // One thread drives both ends: under ThreadSanitizer a stall of it as long as the peer
  // timeout looks like a second loss of the restarted sender, whose writes the receiver then
  // drops (seen on every run under ThreadSanitizer on one host, tcp;ofi_rxm with fabric-rma:
  // reconnects 2, duplicates dropped 8 against no replays).
  o.peer_timeout = kUnderThreadSanitizer ? 1000ms : 300ms;
  o.sender_id = 77;
  o.backup_frames = 64;
  o.hold_until_released = true;
  open(o);
  if (IsSkipped() || HasFatalFailure()) return;
  constexpr std::uint64_t kFrames = 40;
  std::vector<std::uint32_t> sent;
  // Ten frames committed and released (the sender's checkpoint holds them), all delivered.
  ASSERT_TRUE(drive_until([&] {
    feed(main_, 10, sent);
    send_->release(send_->committed());
    return sink_.sequences.size() == 10;
  }));
  const auto committed = send_->committed();
  std::vector<std::byte> unacknowledged;
  send_->append_unacknowledged(unacknowledged);
  // The sending node dies, and comes back from that checkpoint.
  main_.send.reset();
  auto again_options = o;
  if (never_blocks()) again_options.ring_words = LinkOptions::RingWords::always;
  auto again = make_fabric_send_link(sender_loop_, {provider_, "127.0.0.1", port_}, again_options,
                                     transfer());
  ASSERT_TRUE(again) << again.error().describe();
  main_.send = std::move(again).value();
  ASSERT_TRUE(main_.send->restore(unacknowledged, committed));
  const bool all = drive_until([&] {
    if (main_.send->state() == LinkState::established) feed(main_, kFrames, sent);
    main_.send->release(main_.send->committed());
    return sink_.sequences.size() == kFrames;
  });
  ASSERT_TRUE(all) << "received " << sink_.sequences.size() << " of " << kFrames << ", sender "
                   << to_string(main_.send->state()) << ", receiver " << to_string(recv_->state())
                   << " " << (recv_->error() ? recv_->error()->message : "");
  expect_in_order(main_, sent);
  EXPECT_EQ(recv_->stats().reconnects, 1u);
  EXPECT_EQ(recv_->stats().duplicates_dropped, main_.send->stats().frames_replayed);
  EXPECT_TRUE(listener_->rejected().empty()) << listener_->rejected().front().describe();
}

// A consumer that does not poll its link for a second holds the sender's credit; as long as
// the listener is progressed, heartbeats flow both ways and neither end fails.
TEST_P(FabricLinkTest, SlowConsumerDoesNotLookLikeALostPeer) {
  constexpr std::uint32_t kWindow = 4;
  auto o = lively(kWindow, 2);
  // One thread drives both ends and sends both heartbeats, so a stall of that thread as long
  // as the peer timeout looks like a lost peer to each end: under ThreadSanitizer, beside
  // other tests' nodes, 300 ms was once not enough. The consumer stays away twice as long.
  o.peer_timeout = kUnderThreadSanitizer ? 1000ms : 500ms;
  open(o);
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] { return send_->state() == LinkState::established; }));
  std::vector<std::uint32_t> sent;
  feed(main_, 40, sent);
  ASSERT_EQ(sent.size(), kWindow);
  const auto until = Clock::now() + 2 * o.peer_timeout;
  while (Clock::now() < until) step(/*receive=*/false);
  EXPECT_EQ(send_->state(), LinkState::established)
      << (send_->error() ? send_->error()->describe() : std::string());
  EXPECT_EQ(recv_->state(), LinkState::established)
      << (recv_->error() ? recv_->error()->describe() : std::string());
  EXPECT_TRUE(sink_.sequences.empty());
  ASSERT_TRUE(drive_until([&] {
    return feed(main_, 40, sent) || send_->state() == LinkState::failed;
  })) << "received " << sink_.sequences.size();
  expect_in_order(main_, sent);
}

// A sender blocked in its EventLoop with nothing to send wakes by itself to send its
// heartbeat (a timer), so each wait ends well before its 2 s timeout.
TEST_P(FabricLinkTest, BlockedSenderWakesForItsHeartbeats) {
  auto o = lively(8, 2);
  o.peer_timeout = 5s;
  open(o);
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] { return send_->state() == LinkState::established; }));
  const auto writes = send_->stats().write_calls;
  int timeouts = 0;
  // (net's fi_trywait keeps failing here, so its thread polls instead of blocking: the loop
  // is bounded in time as well.)
  // shm has no wait fd: its waits end every 50 µs to re-poll, which is no timeout either.
  const auto until = Clock::now() + 1s;
  while (send_->stats().write_calls < writes + 3 && Clock::now() < until) {
    send_->do_work();
    recv_->poll(sink_);  // the receiver is polled, never waited for
    if (sender_loop_.try_arm() && !sender_loop_.wait(2s)) ++timeouts;
    sender_loop_.disarm();
  }
  EXPECT_EQ(timeouts, 0);
  EXPECT_GE(send_->stats().write_calls, writes + 3);  // heartbeats went out
  EXPECT_EQ(send_->state(), LinkState::established);
}

// Whether or not the good sender attached first, a bad one is refused for what is wrong
// with it.
TEST_P(FabricLinkTest, RefusalNamesTheMismatchEvenAfterTheGoodSenderAttached) {
  open(options(8, 4));
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(drive_until([&] { return send_->state() == LinkState::established; }));
  auto wrong_hash = options(8, 4);
  wrong_hash.schema_hash = 0xBAD;
  auto send = make_fabric_send_link(sender_loop_, {provider(), "127.0.0.1", port_}, wrong_hash,
                                    transfer());
  ASSERT_TRUE(send) << send.error().describe();
  auto& refused = *send.value();
  ASSERT_TRUE(drive_until([&] {
    refused.do_work();
    return !listener_->rejected().empty();
  }));
  ASSERT_EQ(listener_->rejected().size(), 1u);
  EXPECT_EQ(listener_->rejected()[0].message,
            "hello refused on fabric listener " + local() +
                ": stream 7 'ticks': schema hash 2989 differs from 23630");
  // A second sender with everything right is refused because the stream has one.
  auto twin = make_fabric_send_link(sender_loop_, {provider(), "127.0.0.1", port_}, options(8, 4),
                                    transfer());
  ASSERT_TRUE(twin) << twin.error().describe();
  ASSERT_TRUE(drive_until([&] {
    twin.value()->do_work();
    return listener_->rejected().size() == 2;
  }));
  EXPECT_EQ(listener_->rejected()[1].message, "hello refused on fabric listener " + local() +
                                                  ": stream 7 'ticks': it already has a sender");
  EXPECT_EQ(send_->state(), LinkState::established);
}

constexpr const char* kProviders[] = {"tcp;ofi_rxm", "sockets", "net", "shm"};

std::string provider_name(std::string name) {
  for (auto& c : name) {
    if (c == ';') c = '_';
  }
  return name;
}

std::vector<ProviderAndTransfer> provider_and_transfers() {
  std::vector<ProviderAndTransfer> all;
  for (const char* provider : kProviders) {
    all.emplace_back(provider, FabricTransfer::messages, false);
    all.emplace_back(provider, FabricTransfer::rma_writes, false);
    const std::string name = provider;
    if (name == "tcp;ofi_rxm" || name == "shm") {
      all.emplace_back(provider, FabricTransfer::rma_writes, true);
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Providers, FabricLinkTest, ::testing::ValuesIn(provider_and_transfers()),
                         [](const auto& param_info) {
                           const auto transfer = std::get<1>(param_info.param);
                           return provider_name(std::get<0>(param_info.param)) +
                                  (transfer == FabricTransfer::messages ? "_msg"
                                   : std::get<2>(param_info.param) ? "_rma_polled"
                                                                   : "_rma");
                         });

// fabric-rma cases that need a listener but not both transfers as a parameter.
class FabricRmaTest : public FabricTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // Opens the listener; skips (saying why) when the provider cannot carry fabric-rma.
  void open() {
    open_listener(GetParam());
    if (IsSkipped() || HasFatalFailure()) return;
    auto probe = options(1, 1);
    probe.stream_id = 1000;
    auto recv = listener_->expect(probe, FabricTransfer::rma_writes);
    if (!recv && recv.error().message.find(" lacks ") != std::string::npos) {
      GTEST_SKIP() << recv.error().message;
    }
    ASSERT_TRUE(recv) << recv.error().describe();
  }
};

TEST_P(FabricRmaTest, RefusesWhatTheImmediateDataCannotCarry) {
  open();
  if (IsSkipped() || HasFatalFailure()) return;
  auto wide = options(257, 4);
  auto send = make_fabric_send_link(sender_loop_, {GetParam(), "127.0.0.1", port_}, wide,
                                    FabricTransfer::rma_writes);
  ASSERT_FALSE(send);
  EXPECT_EQ(send.error().category, ErrorCategory::config);
  EXPECT_EQ(send.error().message,
            "link 'ticks' to fabric://" + std::string(GetParam()) + "/127.0.0.1:" +
                std::to_string(port_) +
                ": fabric-rma allows a window of at most 256 frames (an 8-bit slot in the "
                "immediate data), not 257");
  auto recv = listener_->expect(wide, FabricTransfer::rma_writes);
  ASSERT_FALSE(recv);
  EXPECT_EQ(recv.error().category, ErrorCategory::config);
  EXPECT_EQ(recv.error().message,
            "link 'ticks' on " + local() +
                ": fabric-rma allows a window of at most 256 frames (an 8-bit slot in the "
                "immediate data), not 257");
  // The same window is fine for fabric-msg, and 256 for fabric-rma.
  EXPECT_TRUE(listener_->expect(wide, FabricTransfer::messages));
  auto most = options(256, 4);
  most.stream_id = 8;
  EXPECT_TRUE(listener_->expect(most, FabricTransfer::rma_writes));

  auto big = options(8, 4);
  big.stream_id = 9;
  big.max_payload_bytes = 65504;  // + 32 header bytes = 65536
  auto big_send = make_fabric_send_link(sender_loop_, {GetParam(), "127.0.0.1", port_}, big,
                                        FabricTransfer::rma_writes);
  ASSERT_FALSE(big_send);
  EXPECT_EQ(big_send.error().message,
            "link 'ticks' to fabric://" + std::string(GetParam()) + "/127.0.0.1:" +
                std::to_string(port_) +
                ": fabric-rma allows frames of at most 65535 bytes (a 16-bit length in the "
                "immediate data), not 32 + 65504");
  big.max_payload_bytes = 65496;  // 65528: fits
  EXPECT_TRUE(listener_->expect(big, FabricTransfer::rma_writes));
}

TEST_P(FabricRmaTest, AListenerTakesAtMost255RmaLinks) {
  open();  // expects one rma link (stream 1000)
  if (IsSkipped() || HasFatalFailure()) return;
  auto link = options(1, 1);
  for (std::uint32_t i = 1; i < 255; ++i) {
    link.stream_id = i;
    ASSERT_TRUE(listener_->expect(link, FabricTransfer::rma_writes)) << "link " << i;
  }
  link.stream_id = 255;
  auto refused = listener_->expect(link, FabricTransfer::rma_writes);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().category, ErrorCategory::config);
  EXPECT_EQ(refused.error().message,
            "link 'ticks' on " + local() +
                ": fabric-rma allows at most 255 links per listener (an 8-bit link index in the "
                "immediate data)");
  EXPECT_TRUE(listener_->expect(link, FabricTransfer::messages));  // msg links are not counted
}

// Stream 9 is expected as fabric-msg but its sender uses fabric-rma, stream 11 the other way
// round: both hellos are refused, naming the transfers, while stream 7 keeps delivering.
TEST_P(FabricRmaTest, TransferMismatchIsRefusedWhileAnotherStreamDelivers) {
  open();
  if (IsSkipped() || HasFatalFailure()) return;
  LinkPair good;
  add_link(good, options(8, 2), FabricTransfer::rma_writes);
  if (HasFatalFailure()) return;
  auto msg_expected = options(8, 2);
  msg_expected.stream_id = 9;
  msg_expected.name = "quotes";
  ASSERT_TRUE(listener_->expect(msg_expected, FabricTransfer::messages));
  auto rma_expected = options(8, 2);
  rma_expected.stream_id = 11;
  rma_expected.name = "trades";
  ASSERT_TRUE(listener_->expect(rma_expected, FabricTransfer::rma_writes));
  const FabricEndpoint peer{GetParam(), "127.0.0.1", port_};
  auto wrong_rma =
      make_fabric_send_link(sender_loop_, peer, msg_expected, FabricTransfer::rma_writes);
  ASSERT_TRUE(wrong_rma) << wrong_rma.error().describe();
  auto wrong_msg =
      make_fabric_send_link(sender_loop_, peer, rma_expected, FabricTransfer::messages);
  ASSERT_TRUE(wrong_msg) << wrong_msg.error().describe();

  constexpr std::uint64_t kFrames = 200;
  std::vector<std::uint32_t> sent;
  const bool done = drive_until([&] {
    wrong_rma.value()->do_work();
    wrong_msg.value()->do_work();
    return feed(good, kFrames, sent) && listener_->rejected().size() >= 2;
  });
  ASSERT_TRUE(done) << "received " << good.sink.sequences.size() << " of " << kFrames << ", "
                    << listener_->rejected().size() << " refusals";
  expect_in_order(good, sent);
  ASSERT_EQ(listener_->rejected().size(), 2u);
  std::vector<std::string> reasons;
  for (const auto& e : listener_->rejected()) reasons.push_back(e.message);
  std::sort(reasons.begin(), reasons.end());
  const std::string prefix = "hello refused on fabric listener " + local() + ": ";
  EXPECT_EQ(
      reasons[0],
      prefix + "stream 11 'trades': the sender uses fabric-msg, this node expects fabric-rma");
  EXPECT_EQ(reasons[1],
            prefix + "stream 9 'quotes': the sender uses fabric-rma, this node expects fabric-msg");
  EXPECT_EQ(wrong_rma.value()->state(), LinkState::connecting);
  EXPECT_EQ(wrong_msg.value()->state(), LinkState::connecting);
  EXPECT_EQ(listener_->error(), nullptr);
}

TEST_P(FabricRmaTest, MsgAndRmaLinksOnOneListenerBothDeliverInOrder) {
  open();
  if (IsSkipped() || HasFatalFailure()) return;
  LinkPair msg;
  add_link(msg, options(8, 2), FabricTransfer::messages);
  if (HasFatalFailure()) return;
  auto rma_options = options(16, 4);
  rma_options.stream_id = 8;
  LinkPair rma;
  add_link(rma, rma_options, FabricTransfer::rma_writes);
  if (HasFatalFailure()) return;
  constexpr std::uint64_t kFrames = 300;
  std::vector<std::uint32_t> msg_sent;
  std::vector<std::uint32_t> rma_sent;
  const bool done = drive_until([&] {
    const bool msg_done = feed(msg, kFrames, msg_sent);
    const bool rma_done = feed(rma, kFrames, rma_sent);
    return msg_done && rma_done;
  });
  ASSERT_TRUE(done) << "received " << msg.sink.sequences.size() << " (msg) and "
                    << rma.sink.sequences.size() << " (rma) of " << kFrames;
  expect_in_order(msg, msg_sent);
  expect_in_order(rma, rma_sent);
  EXPECT_EQ(rma.recv->stats().frames, kFrames);
  EXPECT_EQ(rma.send->stats().frames, kFrames);
  EXPECT_GT(rma.send->stats().credit_frames, 0u);
  EXPECT_TRUE(listener_->rejected().empty()) << listener_->rejected().front().describe();
}

INSTANTIATE_TEST_SUITE_P(Providers, FabricRmaTest, ::testing::ValuesIn(kProviders),
                         [](const auto& param_info) { return provider_name(param_info.param); });

TEST(FabricMedium, TransfersAreNamedAsInLinkUris) {
  EXPECT_EQ(to_string(FabricTransfer::messages), "fabric-msg");
  EXPECT_EQ(to_string(FabricTransfer::rma_writes), "fabric-rma");
}

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

// fabric-msg posts a window of receives per link on the listener's one endpoint. A link whose
// receives the provider refuses (rxm holds 2048 unless FI_OFI_RXM_RX_SIZE says otherwise) is
// refused at set-up with what holds the queue; the links before it are untouched.
TEST(FabricMedium, ALinkWhoseReceivesOverflowTheEndpointIsRefusedSayingWhy) {
  if (std::getenv("FI_OFI_RXM_RX_SIZE") != nullptr) {
    GTEST_SKIP() << "FI_OFI_RXM_RX_SIZE is set: the queue is not rxm's default";
  }
  EventLoop loop;
  auto listener = FabricListener::open(loop, {"tcp;ofi_rxm", "127.0.0.1", 0});
  if (!listener) GTEST_SKIP() << listener.error().describe();
  auto wide = options(1024, 256);
  wide.stream_id = 1;
  wide.name = "first";
  auto first = listener.value()->expect(wide, FabricTransfer::messages);
  ASSERT_TRUE(first) << first.error().describe();
  wide.stream_id = 2;
  wide.name = "second";
  auto second = listener.value()->expect(wide, FabricTransfer::messages);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().category, ErrorCategory::config);
  EXPECT_EQ(second.error().message,
            "link 'second' (stream 2) on fabric://tcp;ofi_rxm/127.0.0.1:" +
                std::to_string(listener.value()->port()) +
                ": cannot post its 1024 receives (fi_trecv (provider tcp;ofi_rxm): Resource "
                "temporarily unavailable): provider tcp;ofi_rxm holds at most 2048 posted "
                "receives per endpoint and this node's 4 hello slots and earlier fabric-msg "
                "links hold 1028; fewer or smaller windows (`window`), fabric-rma, or a larger "
                "receive queue (tcp;ofi_rxm, verbs;ofi_rxm: FI_OFI_RXM_RX_SIZE) fit them");
  EXPECT_EQ(first.value()->state(), LinkState::connecting);
  EXPECT_EQ(listener.value()->error(), nullptr);
  // The refused stream stays known: its id cannot be expected a second time.
  auto again = listener.value()->expect(wide, FabricTransfer::messages);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message,
            "stream 2 is expected twice on fabric://tcp;ofi_rxm/127.0.0.1:" +
                std::to_string(listener.value()->port()));
}

}  // namespace
}  // namespace boreal::transport
