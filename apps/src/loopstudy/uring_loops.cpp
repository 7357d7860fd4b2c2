// The uring-batched strategy (loops.hpp), after AIX's pollset: interest changes are not
// made one syscall each (epoll_ctl) but collected as IORING_OP_POLL_ADD entries during a
// loop iteration and submitted together with the wait, in one io_uring_enter. Polls are
// one-shot, so a completion also removes the interest: a receiver re-arms every socket it
// read from, all in the next enter; a sender arms only a socket whose send would block.
#include <liburing.h>
#include <poll.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>

#include "loopstudy/drivers.hpp"
#include "loopstudy/loops.hpp"

namespace boreal::runtime::loopstudy {
namespace {

using transport::Result;

class Ring {
 public:
  explicit Ring(Syscalls& sys) : sys_(sys) {}
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    if (open_) io_uring_queue_exit(&ring_);
  }

  [[nodiscard]] Result<void> open(unsigned entries, const char* end) {
    const int rc = io_uring_queue_init(entries, &ring_, 0);
    if (rc < 0) return os_error(std::string{end} + ": io_uring_queue_init", -rc);
    open_ = true;
    return transport::success();
  }

  // Queues a one-shot poll; it reaches the kernel with the next wait().
  [[nodiscard]] Result<void> poll_add(int fd, unsigned mask, std::uint64_t data) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      return transport::fail(transport::ErrorCategory::io, 0, "io_uring submission queue full");
    }
    io_uring_prep_poll_add(sqe, fd, mask);
    io_uring_sqe_set_data64(sqe, data);
    return transport::success();
  }

  // Submits the queued entries and waits for a completion or the timeout. When a
  // completion is already there and nothing is queued, liburing makes no syscall, and
  // neither do we; otherwise it is exactly one io_uring_enter (IORING_FEAT_EXT_ARG carries
  // the timeout, so no timeout entry is needed).
  [[nodiscard]] Result<void> wait(std::int64_t timeout_ns) {
    if (io_uring_cq_ready(&ring_) > 0 && io_uring_sq_ready(&ring_) == 0) {
      return transport::success();
    }
    __kernel_timespec timeout{timeout_ns / 1'000'000'000, timeout_ns % 1'000'000'000};
    io_uring_cqe* cqe = nullptr;
    sys_.add(Sys::io_uring_enter);
    const int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &timeout, nullptr);
    if (rc < 0 && rc != -ETIME && rc != -EINTR) return os_error("io_uring_enter", -rc);
    return transport::success();
  }

  // Calls handle(user_data, res) for every completion; stops at the first error.
  template <class Handle>
  [[nodiscard]] Result<void> complete(Handle handle) {
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
      const std::uint64_t data = io_uring_cqe_get_data64(cqe);
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if (auto ok = handle(data, res); !ok) return ok;
    }
    return transport::success();
  }

 private:
  Syscalls& sys_;
  io_uring ring_{};
  bool open_ = false;
};

unsigned ring_entries(std::size_t links) {
  return std::bit_ceil(static_cast<unsigned>(2 * links + 2));
}

Result<void> poll_failed(const char* end, int link, int res) {
  return os_error(std::string{end} + ": link " + std::to_string(link) + ": poll", -res);
}

class UringSender {
 public:
  explicit UringSender(SendCore& core) : core_(core), ring_(core.sys()) {}

  [[nodiscard]] Result<void> open() {
    return ring_.open(ring_entries(core_.links().size()), "sender");
  }
  [[nodiscard]] Result<void> watch(SendLink& link) {
    link.blocked = false;
    return transport::success();
  }
  void forget(SendLink& /*link*/) noexcept {}  // no poll is pending: nothing was left to send

  [[nodiscard]] Result<void> offer(SendCore& core, SendLink& link) {
    if (link.blocked) return transport::success();
    auto status = core.write_all(link);
    if (!status) return status.error();
    if (status.value() != WriteStatus::blocked) return transport::success();
    link.blocked = true;
    return ring_.poll_add(link.conn->fd, POLLOUT, position(link));
  }
  [[nodiscard]] Result<void> idle(SendCore& /*core*/, SendLink& /*link*/) {
    return transport::success();
  }
  [[nodiscard]] bool waiting() const noexcept {
    return core_.any_blocked();
  }
  [[nodiscard]] Result<void> wait(SendCore& core, std::int64_t deadline_ns) {
    const std::int64_t timeout = std::clamp<std::int64_t>(deadline_ns - now_ns(), 0, kWaitSliceNs);
    if (auto ok = ring_.wait(timeout); !ok) return ok;
    return ring_.complete([&core](std::uint64_t data, int res) -> Result<void> {
      SendLink& link = core.links()[data];
      if (res < 0) return poll_failed("sender", link.index, res);
      link.blocked = false;
      return transport::success();
    });
  }

 private:
  [[nodiscard]] std::uint64_t position(const SendLink& link) const noexcept {
    return static_cast<std::uint64_t>(&link - core_.links().data());
  }

  SendCore& core_;
  Ring ring_;
};

class UringReceiver {
 public:
  explicit UringReceiver(RecvCore& core) : core_(core), ring_(core.sys()) {}

  [[nodiscard]] Result<void> open() {
    return ring_.open(ring_entries(core_.links().size()), "receiver");
  }
  [[nodiscard]] Result<void> watch_listener(RecvLink& link) {
    return ring_.poll_add(link.listener, POLLIN, position(link) << 1 | 1);
  }
  [[nodiscard]] Result<void> watch(RecvLink& link) {
    return ring_.poll_add(link.conn->fd, POLLIN, position(link) << 1);
  }

  [[nodiscard]] Result<void> wait(RecvCore& core, std::int64_t timeout_ns) {
    if (auto ok = ring_.wait(timeout_ns); !ok) return ok;
    return ring_.complete([this, &core](std::uint64_t data, int res) -> Result<void> {
      RecvLink& link = core.links()[data >> 1];
      if (res < 0) return poll_failed("receiver", link.index, res);
      if ((data & 1) != 0) {
        auto accepted = core.accept(link);
        if (!accepted) return accepted.error();
        if (accepted.value()) {
          if (auto ok = watch(link); !ok) return ok;
        }
        return link.finished ? Result<void>{transport::success()} : watch_listener(link);
      }
      auto open = on_readable(core, link, false);
      if (!open) return open.error();
      return open.value() ? watch(link) : Result<void>{transport::success()};
    });
  }

 private:
  [[nodiscard]] std::uint64_t position(const RecvLink& link) const noexcept {
    return static_cast<std::uint64_t>(&link - core_.links().data());
  }

  RecvCore& core_;
  Ring ring_;
};

}  // namespace

Result<void> uring_available() {
  io_uring ring{};
  const int rc = io_uring_queue_init(4, &ring, 0);
  if (rc < 0) {
    return transport::fail(transport::ErrorCategory::io, -rc,
                           std::string{"io_uring is unavailable: io_uring_queue_init: "} +
                               std::strerror(-rc));
  }
  io_uring_queue_exit(&ring);
  return transport::success();
}

Result<void> run_uring_sender(SendCore& core, const StudyControl& control) {
  return run_sender_with<UringSender>(core, control);
}

Result<void> run_uring_receiver(RecvCore& core, const StudyControl& control) {
  return run_receiver_with<UringReceiver>(core, control);
}

}  // namespace boreal::runtime::loopstudy
