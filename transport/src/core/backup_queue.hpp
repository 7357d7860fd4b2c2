// Upstream backup (docs/faults.md), the part every sending medium with reconnects shares (tcp,
// fabric-msg, fabric-rma): the committed frames in order, kept in their pool buffers until
// the receiver acknowledges them, with where the current connection stands. How a frame
// leaves, and how acknowledgements arrive, stays in the medium. Private to the transport.
//
// Positions count frames since the start of the stream: the frame at position p has
// sequence p + 1, and
//   [acked, sent)      went out on some connection, not acknowledged yet;
//   [sent, credited)   spent a credit of the current connection, not (wholly) sent yet;
//   [credited, tail)   waiting for credit or, held (LinkOptions::hold_until_released), for
//                      release().
// A frame spends a credit of the connection it is sent on, so a replay after a reconnect
// never exceeds the new receiver's window; only the pool bounds how far commits run ahead.
// One thread (the link's) uses it.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/error.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/link.hpp>

#include "core/send_path.hpp"

namespace boreal::transport::detail {

// A sender id for the hello: the configured one, else a random non-zero one (a receiver
// tells a reconnecting sender from a second one by it).
inline std::uint32_t pick_sender_id(std::uint32_t configured) {
  if (configured != 0) return configured;
  std::random_device entropy;
  for (;;) {
    if (const std::uint32_t id = entropy(); id != 0) return id;
  }
}

class BackupQueue {
 public:
  struct Frame {
    std::uint32_t slot = 0;
    std::uint32_t bytes = 0;  // header + payload
  };

  // `frames`: how many committed frames it holds at most (the buffers of `pool` it may use).
  BackupQueue(BufferPool& pool, std::uint32_t frames, bool hold_until_released)
      : pool_(pool), ring_(frames), hold_(hold_until_released) {}

  // SendLink::try_claim: a credit that no queued frame has a claim on yet (held output waits
  // for a checkpoint instead, bounded by the pool), and a free buffer.
  SendStatus claim(LinkState state, const SenderCredits& credits, std::uint32_t max_payload,
                   LinkStats& stats, Claim& out) noexcept {
    if (state == LinkState::failed || eos_committed_) return SendStatus::closed;
    if (state != LinkState::established) return SendStatus::not_connected;
    if (!hold_ && credits.available() <= (tail_ - credited_) + open_claims_) {
      ++stats.credit_stalls;
      return SendStatus::back_pressured;
    }
    if (tail_ - acked_ + open_claims_ == ring_.size()) return SendStatus::back_pressured;
    auto buffer = pool_.acquire();
    if (!buffer) return SendStatus::back_pressured;
    ++open_claims_;
    out.payload = {buffer->data + kFrameHeaderBytes, max_payload};
    out.slot = buffer->index;
    return SendStatus::ok;
  }

  // SendLink::commit: seals the frame (the next sequence) and queues it.
  FrameHeader commit(const Claim& claim, std::uint32_t stream_id, std::uint32_t tuple_count,
                     std::uint32_t payload_bytes, std::uint16_t flags, LinkStats& stats) noexcept {
    assert(open_claims_ > 0 && !eos_committed_);
    --open_claims_;
    const FrameHeader header = seal_frame(pool_.at(claim.slot), stream_id, tail_ + 1, tuple_count,
                                          payload_bytes, flags, claim.payload_crc, stats);
    ring_[tail_ % ring_.size()] = {claim.slot,
                                   static_cast<std::uint32_t>(kFrameHeaderBytes + payload_bytes)};
    ++tail_;
    if (flags & kFlagEndOfStream) {
      eos_committed_ = true;
      eos_sequence_ = header.sequence;
    }
    return header;
  }

  // Spends credits of the current connection on the frames that may go next.
  void spend(SenderCredits& credits) noexcept {
    while (credited_ < writable() && credits.try_consume()) ++credited_;
  }
  // Whether a frame could be sent now or once a credit comes.
  [[nodiscard]] bool has_unsent() const noexcept { return sent_ < writable(); }
  // How many (not counting frames held until released).
  [[nodiscard]] std::uint64_t unsent() const noexcept {
    return sent_ < writable() ? writable() - sent_ : 0;
  }
  [[nodiscard]] bool can_send(const SenderCredits& credits) const noexcept {
    return sent_ < writable() && (sent_ < credited_ || credits.available() > 0);
  }
  // The frame at position p (acked() <= p < tail()).
  [[nodiscard]] const Frame& at(std::uint64_t p) const noexcept { return ring_[p % ring_.size()]; }
  // The frame at sent() went out: true when it was sent before (a replay).
  bool mark_sent() noexcept {
    assert(sent_ < credited_);
    ++sent_;
    if (sent_ <= highest_sent_) return true;
    highest_sent_ = sent_;
    return false;
  }

  // "" when the receiver may acknowledge frames up to `sequence` now, else what is wrong.
  [[nodiscard]] std::string ack_problem(std::uint64_t sequence) const {
    if (sequence <= highest_sent_) return {};
    return "acknowledgement of frame " + std::to_string(sequence) +
           ", which was not sent yet (sent " + std::to_string(highest_sent_) + ")";
  }
  // "" when a new connection's receiver may resume after `sequence`, else why not.
  [[nodiscard]] std::string resume_problem(std::uint64_t sequence) const {
    if (sequence < acked_) {
      return "the receiver resumes after frame " + std::to_string(sequence) +
             ", but it had acknowledged frames up to " + std::to_string(acked_) +
             " and they are gone (did the receiving node restart without its checkpoint?)";
    }
    if (sequence > highest_sent_) {
      return "the receiver has frames up to " + std::to_string(sequence) +
             " but this sender sent only " + std::to_string(highest_sent_) +
             " (did the sending node restart without its checkpoint? a restarted sender "
             "cannot resume its stream)";
    }
    return {};
  }

  // The receiver has frames up to `sequence`: their buffers go, through `drop(slot)` (a
  // medium whose operation on the buffer is still in flight releases it later). Cumulative;
  // a lower sequence than before changes nothing.
  template <class Drop>
  void acknowledge(std::uint64_t sequence, Drop&& drop) {
    const std::uint64_t through = std::min(sequence, highest_sent_);
    for (; acked_ < through; ++acked_) drop(ring_[acked_ % ring_.size()].slot);
    sent_ = std::max(sent_, acked_);
    credited_ = std::max(credited_, acked_);
  }
  // The connection is gone: nothing is credited on the next one until its receiver says
  // where to resume (resume()), and a frame written in part goes again whole.
  void connection_lost() noexcept { sent_ = credited_ = acked_; }
  // A new connection's receiver resumes after `sequence` (resume_problem() said ""):
  // acknowledges up to it and sends (again) from the frame after it, with the new
  // connection's credit.
  template <class Drop>
  void resume(std::uint64_t sequence, Drop&& drop) {
    acknowledge(sequence, drop);
    sent_ = credited_ = acked_;
  }

  // Output commit: held frames are sent no further than `through`.
  void release(std::uint64_t through) noexcept {
    released_ = std::max(released_, std::min(through, tail_));
  }
  [[nodiscard]] bool finished() const noexcept { return eos_committed_ && acked_ >= eos_sequence_; }
  [[nodiscard]] bool eos_committed() const noexcept { return eos_committed_; }
  [[nodiscard]] std::uint64_t acked() const noexcept { return acked_; }
  [[nodiscard]] std::uint64_t sent() const noexcept { return sent_; }
  [[nodiscard]] std::uint64_t credited() const noexcept { return credited_; }
  [[nodiscard]] std::uint64_t tail() const noexcept { return tail_; }
  [[nodiscard]] std::uint64_t highest_sent() const noexcept { return highest_sent_; }
  [[nodiscard]] std::uint64_t unacknowledged() const noexcept { return tail_ - acked_; }

  // Every committed frame not acknowledged yet, header and payload, in order.
  void append_unacknowledged(std::vector<std::byte>& out) const {
    for (auto p = acked_; p != tail_; ++p) {
      const std::byte* frame = pool_.at(at(p).slot).data;
      out.insert(out.end(), frame, frame + at(p).bytes);
    }
  }

  // SendLink::restore on a queue that holds nothing yet: `frames` (from
  // append_unacknowledged()) are the checked frames up to `committed`, which an earlier run
  // of this sender committed and may have sent. `who` names the link in errors.
  Result<void> restore(std::span<const std::byte> frames, std::uint64_t committed,
                       const FrameLimits& limits, const std::string& who) {
    assert(tail_ == 0 && open_claims_ == 0);
    std::vector<std::pair<FrameHeader, std::span<const std::byte>>> parsed;
    for (std::size_t at = 0; at < frames.size();) {
      auto bad = [&](const std::string& what) {
        return fail(ErrorCategory::protocol, 0,
                    who + ": the checkpoint's frame at byte " + std::to_string(at) + ": " + what);
      };
      if (frames.size() - at < kFrameHeaderBytes) return bad("truncated header");
      const auto raw =
          std::span<const std::byte, kFrameHeaderBytes>(frames.data() + at, kFrameHeaderBytes);
      auto header = decode_header(raw, limits);
      if (!header) return bad(header.error().message);
      const FrameHeader& h = header.value();
      if (!(h.flags & kFlagData)) return bad("not a data frame");
      if (frames.size() - at - kFrameHeaderBytes < h.payload_bytes) return bad("truncated payload");
      const auto payload = frames.subspan(at + kFrameHeaderBytes, h.payload_bytes);
      if (auto ok = verify_checksum(h, raw, payload); !ok) return bad(ok.error().message);
      parsed.emplace_back(h, frames.subspan(at, kFrameHeaderBytes + h.payload_bytes));
      at += kFrameHeaderBytes + h.payload_bytes;
    }
    if (parsed.size() > committed || parsed.size() > ring_.size()) {
      return fail(ErrorCategory::config, 0,
                  who + ": the checkpoint holds " + std::to_string(parsed.size()) +
                      " frames, more than " +
                      (parsed.size() > committed ? "it committed" : "this link's buffers hold"));
    }
    const std::uint64_t first = committed + 1 - parsed.size();
    for (std::size_t i = 0; i < parsed.size(); ++i) {
      if (parsed[i].first.sequence != first + i) {
        return fail(ErrorCategory::protocol, 0,
                    who + ": the checkpoint's frames are not frames " + std::to_string(first) +
                        ".." + std::to_string(committed) + " in order");
      }
    }
    acked_ = sent_ = credited_ = first - 1;
    for (const auto& [header, bytes] : parsed) {
      auto buffer = pool_.acquire();
      assert(buffer);
      std::memcpy(buffer->data, bytes.data(), bytes.size());
      ring_[(header.sequence - 1) % ring_.size()] = {buffer->index,
                                                     static_cast<std::uint32_t>(bytes.size())};
      if (header.flags & kFlagEndOfStream) {
        eos_committed_ = true;
        eos_sequence_ = header.sequence;
      }
    }
    tail_ = released_ = highest_sent_ = committed;
    return success();
  }

 private:
  [[nodiscard]] std::uint64_t writable() const noexcept { return hold_ ? released_ : tail_; }

  BufferPool& pool_;
  std::vector<Frame> ring_;  // sized once
  bool hold_;
  std::uint64_t acked_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t credited_ = 0;
  std::uint64_t tail_ = 0;
  std::uint64_t released_ = 0;      // hold_until_released: sent no further than this
  std::uint64_t highest_sent_ = 0;  // frames up to it are replays when sent again
  std::uint32_t open_claims_ = 0;   // claimed, not committed
  std::uint64_t eos_sequence_ = 0;
  bool eos_committed_ = false;
};

}  // namespace boreal::transport::detail
