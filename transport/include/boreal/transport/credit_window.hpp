// Credit-based flow control, both ends.
//
// The receiver grants one credit per frame slot it has free. Grants are cumulative totals,
// so a repeated or reordered credit message can never inflate the window. The sender spends
// one credit per data frame and never sends without one (SenderCredits::try_consume).
#pragma once

#include <cassert>
#include <cstdint>

namespace boreal::transport {

class SenderCredits {
 public:
  // Credits the sender may still spend.
  [[nodiscard]] std::uint64_t available() const noexcept { return granted_ - spent_; }
  // Spends one credit; false (and nothing spent) when none is left.
  [[nodiscard]] bool try_consume() noexcept {
    if (granted_ == spent_) return false;
    ++spent_;
    return true;
  }
  // Applies a cumulative grant; stale grants (lower totals) are ignored. Returns the
  // number of new credits.
  std::uint64_t on_grant(std::uint64_t granted_total) noexcept {
    if (granted_total <= granted_) return 0;
    const auto added = granted_total - granted_;
    granted_ = granted_total;
    return added;
  }
  [[nodiscard]] std::uint64_t spent() const noexcept { return spent_; }
  [[nodiscard]] std::uint64_t granted() const noexcept { return granted_; }

 private:
  std::uint64_t granted_ = 0;
  std::uint64_t spent_ = 0;
};

class ReceiverCredits {
 public:
  // window: frame slots the receiver owns; batch: how many freed slots to collect before
  // granting them (1 = grant every slot at once; window/4 is a good default).
  ReceiverCredits(std::uint32_t window, std::uint32_t batch) noexcept
      : window_(window), batch_(batch == 0 ? 1 : batch) {
    assert(window_ > 0 && batch_ <= window_);
  }

  // Total to announce in the first grant: the whole window.
  [[nodiscard]] std::uint64_t initial_grant() noexcept {
    granted_ = window_;
    return granted_;
  }
  // A data frame arrived: it occupies one slot until on_consumed().
  void on_frame() noexcept { ++in_use_; }
  // A frame's slot is free again.
  void on_consumed() noexcept {
    assert(in_use_ > 0);
    --in_use_;
    ++freed_;
  }
  // The cumulative total to send now, or 0 when fewer than `batch` slots were freed since
  // the last grant. force: grant whatever is free (used when the sender is known to stall).
  [[nodiscard]] std::uint64_t take_grant(bool force = false) noexcept {
    if (freed_ == 0 || (!force && freed_ < batch_)) return 0;
    granted_ += freed_;
    freed_ = 0;
    return granted_;
  }
  [[nodiscard]] std::uint32_t window() const noexcept { return window_; }
  [[nodiscard]] std::uint32_t in_use() const noexcept { return in_use_; }
  [[nodiscard]] std::uint64_t granted() const noexcept { return granted_; }
  // Slots neither holding a frame nor granted yet; plus outstanding credit gives free capacity.
  [[nodiscard]] std::uint32_t freed_not_granted() const noexcept { return freed_; }

 private:
  std::uint32_t window_;
  std::uint32_t batch_;
  std::uint32_t in_use_ = 0;
  std::uint32_t freed_ = 0;
  std::uint64_t granted_ = 0;
};

}  // namespace boreal::transport
