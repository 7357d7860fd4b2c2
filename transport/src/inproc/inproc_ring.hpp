// The state both ends of an inproc link share. Private to the medium.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <boreal/transport/error.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/link.hpp>

namespace boreal::transport::inproc_medium {

// Each atomic below sits on its own cache line so that the producer's and the consumer's
// writes never share one (false sharing would cost a line transfer per frame).
inline constexpr std::size_t kCacheLineBytes = 64;
// A slot is [FrameHeader, padded to a cache line][payload]: the header travels with its
// payload (no separate descriptor array whose neighbouring entries the two threads would
// write and read at once) and the payload starts line-aligned.
inline constexpr std::size_t kSlotHeaderBytes = kCacheLineBytes;
static_assert(sizeof(FrameHeader) <= kSlotHeaderBytes);

// Ownership: one shared_ptr per end; the last end to go frees the slots and closes the
// eventfds, so a late wake-up never writes to a closed (or reused) descriptor.
//
// Protocol, with counts that only grow (no wrap-around in 2^64 frames):
// - The sender writes slot (sequence - 1) mod window, then stores `committed` = sequence
//   (release). The receiver loads `committed` (acquire) and reads every slot below it.
// - The receiver frees slots by raising `granted`, the cumulative credit (release). The
//   sender claims only while spent < granted, and granted <= delivered + window, so it
//   never writes a slot the receiver has not finished with.
// - Sleeping: an end that is about to block stores true in its `*_sleeping` flag
//   (seq_cst) and then loads the other end's counters once more (seq_cst). An end that
//   published something stores it (again) with seq_cst and then reads the flag
//   (wake_if_sleeping). One of the two sees the other's store, so no wake-up is lost; the
//   flag is reset by whoever rings, so a sleeper is rung at most once per arm(). The sender
//   publishes each frame with a cheap release store and pays for the seq_cst store once per
//   do_work(), not per frame.
class InprocRing {
 public:
  // Allocates window × (kSlotHeaderBytes + max_payload_bytes) bytes and two eventfds.
  static Result<std::shared_ptr<InprocRing>> create(const LinkOptions& options);
  InprocRing(const InprocRing&) = delete;
  InprocRing& operator=(const InprocRing&) = delete;
  ~InprocRing();

  [[nodiscard]] const LinkOptions& options() const noexcept { return options_; }
  // Slot `index` (< window) holds frames with sequence ≡ index + 1 (mod window). The ends
  // keep wrapping indices rather than dividing sequences: a division costs more than the
  // rest of a claim.
  [[nodiscard]] std::byte* slot(std::uint32_t index) const noexcept {
    return base_ + static_cast<std::size_t>(index) * slot_bytes_;
  }
  [[nodiscard]] std::uint32_t next_index(std::uint32_t index) const noexcept {
    return index + 1 == options_.window ? 0 : index + 1;
  }
  // The eventfd the sender rings to wake the receiver, and the other way round.
  [[nodiscard]] int to_receiver_fd() const noexcept { return to_receiver_fd_; }
  [[nodiscard]] int to_sender_fd() const noexcept { return to_sender_fd_; }

  // If the end owning `sleeping` said it is asleep, clears the flag and writes `fd`.
  // Returns true when it wrote (one system call). Call right after a seq_cst store of what
  // the sleeper waits for; any thread.
  static bool wake_if_sleeping(std::atomic<bool>& sleeping, int fd) noexcept;

  // "link 'ticks' (stream 3, inproc)", for error messages.
  [[nodiscard]] std::string describe() const;

  // Written by the sender.
  alignas(kCacheLineBytes) std::atomic<std::uint64_t> committed{0};  // last sequence published
  alignas(kCacheLineBytes) std::atomic<bool> sender_closed{false};   // gone or failed
  // Written by the receiver.
  alignas(kCacheLineBytes) std::atomic<std::uint64_t> granted{0};  // cumulative credit
  std::atomic<std::uint64_t> acked{0};  // sequence of the end-of-stream frame delivered
  alignas(kCacheLineBytes) std::atomic<bool> receiver_closed{false};  // gone or failed
  // Set by the sleeper in its arm(), cleared by the waker or by the sleeper once it polls.
  alignas(kCacheLineBytes) std::atomic<bool> receiver_sleeping{false};
  alignas(kCacheLineBytes) std::atomic<bool> sender_sleeping{false};

 private:
  InprocRing(const LinkOptions& options, std::size_t slot_bytes, std::byte* base,
             int to_receiver_fd, int to_sender_fd) noexcept;

  LinkOptions options_;
  std::size_t slot_bytes_;
  std::byte* base_;
  int to_receiver_fd_;
  int to_sender_fd_;
};

// The two ends; each registers itself in its loop. Defined in inproc_send_link.cpp and
// inproc_recv_link.cpp.
std::unique_ptr<SendLink> make_send_end(EventLoop& loop, std::shared_ptr<InprocRing> ring);
std::unique_ptr<RecvLink> make_recv_end(EventLoop& loop, std::shared_ptr<InprocRing> ring);

}  // namespace boreal::transport::inproc_medium
