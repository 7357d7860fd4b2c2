#include "inproc/inproc_ring.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <new>

namespace boreal::transport::inproc_medium {
namespace {

std::string errno_text(int code) { return std::strerror(code); }

}  // namespace

Result<std::shared_ptr<InprocRing>> InprocRing::create(const LinkOptions& options) {
  const std::string what = "link '" + options.name + "' (stream " +
                           std::to_string(options.stream_id) + ", inproc)";
  if (options.max_payload_bytes == 0 || options.window == 0 || options.tuple_bytes == 0 ||
      options.max_payload_bytes < options.tuple_bytes) {
    return fail(ErrorCategory::config, 0,
                what + ": batch bytes must hold at least one tuple and the window must be > 0");
  }
  const std::size_t slot_bytes =
      (kSlotHeaderBytes + options.max_payload_bytes + kCacheLineBytes - 1) / kCacheLineBytes *
      kCacheLineBytes;
  if (slot_bytes > std::numeric_limits<std::size_t>::max() / options.window) {
    return fail(ErrorCategory::config, 0, what + ": window × batch bytes is too large");
  }
  const int to_receiver = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (to_receiver < 0) {
    const int code = errno;
    return fail(ErrorCategory::io, code, what + ": cannot create an eventfd: " + errno_text(code));
  }
  const int to_sender = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (to_sender < 0) {
    const int code = errno;
    ::close(to_receiver);
    return fail(ErrorCategory::io, code, what + ": cannot create an eventfd: " + errno_text(code));
  }
  const std::size_t total = slot_bytes * options.window;
  auto* base = static_cast<std::byte*>(
      ::operator new(total, std::align_val_t{kCacheLineBytes}, std::nothrow));
  if (base == nullptr) {
    ::close(to_receiver);
    ::close(to_sender);
    return fail(ErrorCategory::io, ENOMEM,
                what + ": cannot allocate " + std::to_string(total) + " bytes of slots");
  }
  // Touch every page now so that the first lap of the ring never page-faults.
  std::memset(base, 0, total);
  return std::shared_ptr<InprocRing>(
      new InprocRing(options, slot_bytes, base, to_receiver, to_sender));
}

InprocRing::InprocRing(const LinkOptions& options, std::size_t slot_bytes, std::byte* base,
                       int to_receiver_fd, int to_sender_fd) noexcept
    : options_(options),
      slot_bytes_(slot_bytes),
      base_(base),
      to_receiver_fd_(to_receiver_fd),
      to_sender_fd_(to_sender_fd) {}

InprocRing::~InprocRing() {
  ::operator delete(base_, std::align_val_t{kCacheLineBytes});
  ::close(to_receiver_fd_);
  ::close(to_sender_fd_);
}

bool InprocRing::wake_if_sleeping(std::atomic<bool>& sleeping, int fd) noexcept {
  // The caller's seq_cst store and this seq_cst load are one half of Dekker's protocol, the
  // sleeper's seq_cst flag store and re-check loads the other: in the single total order of
  // seq_cst operations one of the two loads comes last and sees the other side's store.
  // (Operations, not a fence: ThreadSanitizer does not model fences.)
  if (!sleeping.load(std::memory_order_seq_cst)) return false;
  if (!sleeping.exchange(false, std::memory_order_acq_rel)) return false;
  const std::uint64_t one = 1;
  // Cannot fail short of a programmer error: the counter would need 2^64 - 1 unread writes
  // for EAGAIN, and the fd lives as long as this ring.
  [[maybe_unused]] const auto written = ::write(fd, &one, sizeof one);
  return true;
}

std::string InprocRing::describe() const {
  return "link '" + options_.name + "' (stream " + std::to_string(options_.stream_id) +
         ", inproc)";
}

}  // namespace boreal::transport::inproc_medium
