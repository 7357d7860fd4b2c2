// The receiving end of an inproc link: hands published slots to the sink in order, returns
// them as credit in batches, acknowledges the end of stream.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>

#include <boreal/transport/credit_window.hpp>

#include "inproc/inproc_doorbell.hpp"
#include "inproc/inproc_ring.hpp"

namespace boreal::transport::inproc_medium {
namespace {

class InprocRecvLink final : public RecvLink {
 public:
  InprocRecvLink(EventLoop& loop, std::shared_ptr<InprocRing> ring)
      : ring_(std::move(ring)),
        options_(ring_->options()),
        doorbell_(loop, ring_->to_receiver_fd(), stats_.read_calls),
        self_(std::make_shared<InprocRecvLink*>(this)),
        credits_(options_.window,
                 std::max<std::uint32_t>(1, std::min(options_.credit_batch, options_.window))) {
    loop.add_source([self = self_] { return *self == nullptr || (*self)->arm(); });
    ring_->granted.store(credits_.initial_grant(), std::memory_order_release);
    ++stats_.credit_frames;
  }

  InprocRecvLink(const InprocRecvLink&) = delete;
  InprocRecvLink& operator=(const InprocRecvLink&) = delete;

  ~InprocRecvLink() override {
    *self_ = nullptr;
    close_towards_sender();
  }

  int poll(FrameSink& sink) override {
    if (state_ != LinkState::established) return 0;
    if (ring_->receiver_sleeping.load(std::memory_order_relaxed)) {
      ring_->receiver_sleeping.store(false, std::memory_order_relaxed);  // awake: no rings
    }
    // One load per poll bounds the call to at most `window` frames.
    const auto committed = ring_->committed.load(std::memory_order_acquire);
    int frames = 0;
    while (delivered_ < committed) {
      const std::uint64_t sequence = delivered_ + 1;
      const std::byte* slot = ring_->slot(read_index_);
      read_index_ = ring_->next_index(read_index_);
      FrameHeader header;
      std::memcpy(&header, slot, sizeof header);
      assert(header.sequence == sequence && "the ring delivers in commit order");
      delivered_ = sequence;
      credits_.on_frame();
      ++stats_.frames;
      stats_.tuples += header.tuple_count;
      stats_.payload_bytes += header.payload_bytes;
      sink.on_frame(FrameView{header, {slot + kSlotHeaderBytes, header.payload_bytes}});
      credits_.on_consumed();
      ++frames;
      if (header.flags & kFlagEndOfStream) {
        state_ = LinkState::finished;
        ring_->acked.store(sequence, std::memory_order_seq_cst);
        if (InprocRing::wake_if_sleeping(ring_->sender_sleeping, ring_->to_sender_fd())) {
          ++stats_.write_calls;
        }
        return frames;
      }
    }
    // A sleeping sender has spent all its credit: waiting for a full batch would only keep it
    // asleep longer.
    grant(ring_->sender_sleeping.load(std::memory_order_relaxed));
    if (frames == 0 && ring_->sender_closed.load(std::memory_order_acquire) &&
        ring_->committed.load(std::memory_order_acquire) == delivered_) {
      fail("sender closed before the end of the stream (after frame " +
           std::to_string(delivered_) + ")");
    }
    return frames;
  }

  bool arm() override {
    if (state_ != LinkState::established || paused_) return true;
    // Going idle: give back every free slot now rather than holding it for a batch.
    grant(/*force=*/true);
    if (has_news(std::memory_order_acquire)) return false;
    doorbell_.listen();
    ring_->receiver_sleeping.store(true, std::memory_order_seq_cst);
    if (has_news(std::memory_order_seq_cst)) {
      ring_->receiver_sleeping.store(false, std::memory_order_relaxed);
      return false;
    }
    return true;
  }

  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t stream_id() const override { return options_.stream_id; }
  double free_capacity() const override {
    // Credit the sender still holds (granted, not yet committed: claimed frames count as
    // spent only once published), plus slots freed here but not yet granted.
    const auto committed = ring_->committed.load(std::memory_order_relaxed);
    return static_cast<double>(credits_.granted() - committed) +
           static_cast<double>(credits_.freed_not_granted());
  }

 private:
  bool has_news(std::memory_order order) const {
    return ring_->committed.load(order) != delivered_ || ring_->sender_closed.load(order);
  }

  void grant(bool force) {
    const auto total = credits_.take_grant(force);
    if (total == 0) return;
    ring_->granted.store(total, std::memory_order_seq_cst);
    ++stats_.credit_frames;
    if (InprocRing::wake_if_sleeping(ring_->sender_sleeping, ring_->to_sender_fd())) {
      ++stats_.write_calls;
    }
  }

  void fail(const std::string& what) {
    if (state_ == LinkState::failed) return;
    state_ = LinkState::failed;
    error_ = Error{ErrorCategory::closed, 0, ring_->describe() + ": " + what};
    close_towards_sender();
  }

  void close_towards_sender() {
    if (ring_->receiver_closed.exchange(true, std::memory_order_seq_cst)) return;
    (void)InprocRing::wake_if_sleeping(ring_->sender_sleeping, ring_->to_sender_fd());
  }

  std::shared_ptr<InprocRing> ring_;
  LinkOptions options_;
  LinkStats stats_;
  Doorbell doorbell_;
  std::shared_ptr<InprocRecvLink*> self_;  // what the loop's arm source calls
  ReceiverCredits credits_;
  std::uint64_t delivered_ = 0;  // sequence of the last frame handed to the sink
  std::uint32_t read_index_ = 0;  // slot of frame delivered_ + 1
  LinkState state_ = LinkState::established;
  std::optional<Error> error_;
};

}  // namespace

std::unique_ptr<RecvLink> make_recv_end(EventLoop& loop, std::shared_ptr<InprocRing> ring) {
  return std::make_unique<InprocRecvLink>(loop, std::move(ring));
}

}  // namespace boreal::transport::inproc_medium
