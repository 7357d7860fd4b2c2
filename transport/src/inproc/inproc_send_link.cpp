// The sending end of an inproc link: claims ring slots against credit, publishes frames in
// place, wakes a sleeping receiver from do_work(), and finishes when its end of stream is
// acknowledged.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>

#include <boreal/transport/credit_window.hpp>

#include "inproc/inproc_doorbell.hpp"
#include "inproc/inproc_ring.hpp"

namespace boreal::transport::inproc_medium {
namespace {

class InprocSendLink final : public SendLink {
 public:
  InprocSendLink(EventLoop& loop, std::shared_ptr<InprocRing> ring)
      : ring_(std::move(ring)),
        options_(ring_->options()),
        doorbell_(loop, ring_->to_sender_fd(), stats_.read_calls),
        self_(std::make_shared<InprocSendLink*>(this)) {
    // The loop keeps its sources for its whole life; this one goes quiet when the link dies.
    loop.add_source([self = self_] { return *self == nullptr || (*self)->arm(); });
    pick_up_credit();  // the initial grant, published when the receiver was made
  }

  InprocSendLink(const InprocSendLink&) = delete;
  InprocSendLink& operator=(const InprocSendLink&) = delete;

  ~InprocSendLink() override {
    *self_ = nullptr;
    close_towards_receiver();
  }

  int do_work() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return 0;
    int work = static_cast<int>(unannounced_);
    if (unannounced_ != 0) {
      unannounced_ = 0;
      // Same value again, but seq_cst: the store half of the wake-up protocol (inproc_ring.hpp).
      ring_->committed.store(last_sequence_, std::memory_order_seq_cst);
      if (InprocRing::wake_if_sleeping(ring_->receiver_sleeping, ring_->to_receiver_fd())) {
        ++stats_.write_calls;
      }
    }
    work += pick_up_credit();
    // The ack is stored before receiver_closed, so a receiver that finished and went away is
    // seen as finished here.
    if (eos_committed_ && ring_->acked.load(std::memory_order_acquire) == eos_sequence_) {
      state_ = LinkState::finished;
      ++work;
    } else if (ring_->receiver_closed.load(std::memory_order_acquire)) {
      set_failed(ErrorCategory::closed,
                 "receiver closed before the end of the stream (after frame " +
                     std::to_string(last_sequence_) + ")");
    }
    return work;
  }

  SendStatus try_claim(Claim& out) override {
    if (state_ == LinkState::failed || eos_committed_) return SendStatus::closed;
    // Credit is picked up here too, not only in do_work(): a thread that polls the receiver
    // and claims in turn (the embedded executor, a benchmark) needs no extra call.
    if (credits_.available() == 0) pick_up_credit();
    if (!credits_.try_consume()) {
      ++stats_.credit_stalls;
      return SendStatus::back_pressured;
    }
    ++claimed_;
    out.payload = {ring_->slot(claim_index_) + kSlotHeaderBytes, options_.max_payload_bytes};
    out.slot = claim_index_;
    claim_index_ = ring_->next_index(claim_index_);
    return SendStatus::ok;
  }

  void commit(const Claim& claim, std::uint32_t tuple_count, std::uint32_t payload_bytes,
              std::uint16_t flags) override {
    // Frames are published in claim order: the ring has no way to reorder them.
    assert(last_sequence_ < claimed_ && "commit without a claim");
    assert(claim.slot == commit_index_ && "commits must follow claim order");
    if (state_ == LinkState::failed) return;
    const std::uint64_t sequence = last_sequence_ + 1;
    if (auto problem = frame_problem(tuple_count, payload_bytes, flags); !problem.empty()) {
      // There is no wire to check this on the receiving side, so it is checked here and the
      // frame never reaches the receiver.
      set_failed(ErrorCategory::protocol, "frame " + std::to_string(sequence) + ": " + problem);
      return;
    }
    const FrameHeader header{.flags = flags,
                             .stream_id = options_.stream_id,
                             .tuple_count = tuple_count,
                             .sequence = sequence,
                             .payload_bytes = payload_bytes};
    std::memcpy(ring_->slot(claim.slot), &header, sizeof header);
    commit_index_ = ring_->next_index(commit_index_);
    last_sequence_ = sequence;
    ring_->committed.store(sequence, std::memory_order_release);
    ++unannounced_;
    ++stats_.frames;
    stats_.tuples += tuple_count;
    stats_.payload_bytes += payload_bytes;
    if (flags & kFlagEndOfStream) {
      eos_committed_ = true;
      eos_sequence_ = sequence;
    }
  }

  bool arm() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return true;
    if (unannounced_ != 0) return false;  // do_work() must first wake a sleeping receiver
    // Only credit and the end-of-stream ack come from the receiver; with credit in hand and
    // no ack awaited there is nothing to be woken for, and the receiver is spared the write.
    if (credits_.available() != 0 && !eos_committed_) return true;
    doorbell_.listen();
    ring_->sender_sleeping.store(true, std::memory_order_seq_cst);
    const bool news =
        ring_->granted.load(std::memory_order_seq_cst) != credits_.granted() ||
        (eos_committed_ && ring_->acked.load(std::memory_order_seq_cst) == eos_sequence_) ||
        ring_->receiver_closed.load(std::memory_order_seq_cst);
    if (news) {
      ring_->sender_sleeping.store(false, std::memory_order_relaxed);
      return false;
    }
    return true;
  }

  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t max_payload_bytes() const override { return options_.max_payload_bytes; }
  std::uint64_t credits_available() const override { return credits_.available(); }
  std::uint32_t window() const override { return options_.window; }
  // The ring's slots are its buffers: those claimed and not yet granted back as credit are in
  // use; of them, the committed ones are the frames it holds.
  SendOccupancy occupancy() const override {
    // The first grant is the whole window; every later one returns freed slots.
    const std::uint64_t returned =
        credits_.granted() > options_.window ? credits_.granted() - options_.window : 0;
    const std::uint64_t held = credits_.spent() - std::min(returned, credits_.spent());
    const std::uint64_t open_claims = claimed_ - last_sequence_;
    const auto in_use = static_cast<std::uint32_t>(std::min<std::uint64_t>(held, options_.window));
    return {held > open_claims ? held - open_claims : 0, in_use, options_.window};
  }

 private:
  // Returns 1 when new credit arrived, else 0.
  int pick_up_credit() {
    const auto total = ring_->granted.load(std::memory_order_acquire);
    if (credits_.on_grant(total) == 0) return 0;
    ++stats_.credit_frames;
    if (ring_->sender_sleeping.load(std::memory_order_relaxed)) {
      ring_->sender_sleeping.store(false, std::memory_order_relaxed);
    }
    return 1;
  }

  // The receiver's checks of decode_header(), for the fields a sender fills in.
  std::string frame_problem(std::uint32_t tuple_count, std::uint32_t payload_bytes,
                            std::uint16_t flags) const {
    if ((flags & kFlagData) == 0 || (flags & ~(kFlagData | kFlagEndOfStream)) != 0) {
      return "flags " + std::to_string(flags) + " are not data, optionally with end_of_stream";
    }
    if (payload_bytes > options_.max_payload_bytes) {
      return "payload length " + std::to_string(payload_bytes) + " exceeds the limit " +
             std::to_string(options_.max_payload_bytes);
    }
    if (std::uint64_t{tuple_count} * options_.tuple_bytes != payload_bytes) {
      return "tuple count " + std::to_string(tuple_count) + " \u00D7 " +
             std::to_string(options_.tuple_bytes) + " bytes != payload length " +
             std::to_string(payload_bytes);
    }
    return {};
  }

  void set_failed(ErrorCategory category, const std::string& what) {
    if (state_ == LinkState::failed) return;
    state_ = LinkState::failed;
    error_ = Error{category, 0, ring_->describe() + ": " + what};
    close_towards_receiver();
  }

  void close_towards_receiver() {
    if (ring_->sender_closed.exchange(true, std::memory_order_seq_cst)) return;
    // Not counted in stats: the link has stopped working.
    (void)InprocRing::wake_if_sleeping(ring_->receiver_sleeping, ring_->to_receiver_fd());
  }

  std::shared_ptr<InprocRing> ring_;
  LinkOptions options_;
  LinkStats stats_;
  Doorbell doorbell_;
  std::shared_ptr<InprocSendLink*> self_;  // what the loop's arm source calls
  SenderCredits credits_;
  std::uint64_t claimed_ = 0;        // sequence of the last claim
  std::uint32_t claim_index_ = 0;    // slot of the next claim
  std::uint32_t commit_index_ = 0;   // slot of the next commit
  std::uint64_t last_sequence_ = 0;  // sequence of the last commit
  std::uint64_t unannounced_ = 0;    // commits since the last wake check
  std::uint64_t eos_sequence_ = 0;
  bool eos_committed_ = false;
  LinkState state_ = LinkState::established;
  std::optional<Error> error_;
};

}  // namespace

std::unique_ptr<SendLink> make_send_end(EventLoop& loop, std::shared_ptr<InprocRing> ring) {
  return std::make_unique<InprocSendLink>(loop, std::move(ring));
}

}  // namespace boreal::transport::inproc_medium
