// The epoll strategies (loops.hpp): rearm, lazy (FlexPoll) and edge-triggered.
#include <sys/epoll.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "loopstudy/drivers.hpp"
#include "loopstudy/loops.hpp"

namespace boreal::runtime::loopstudy {
namespace {

using transport::Result;

constexpr std::size_t kMaxEvents = 64;

class EpollSender {
 public:
  EpollSender(EpollMode mode, SendCore& core) : mode_(mode), core_(core) {}
  EpollSender(const EpollSender&) = delete;
  EpollSender& operator=(const EpollSender&) = delete;
  ~EpollSender() {
    if (epfd_ >= 0) core_.sys().close(epfd_);
  }

  [[nodiscard]] Result<void> open() {
    epfd_ = core_.sys().epoll_create();
    if (epfd_ < 0) return os_error("sender: epoll_create1", errno);
    return transport::success();
  }

  [[nodiscard]] Result<void> watch(SendLink& link) {
    link.armed = link.blocked = false;
    link.idle_wakeups = 0;
    const std::uint32_t events = mode_ == EpollMode::edge ? EPOLLIN | EPOLLOUT | EPOLLET : 0;
    return ctl(EPOLL_CTL_ADD, link, events);
  }
  // Closing the fd removes it from the set.
  void forget(SendLink& /*link*/) noexcept {}

  [[nodiscard]] Result<void> offer(SendCore& core, SendLink& link) {
    link.idle_wakeups = 0;
    if (mode_ == EpollMode::edge) {
      if (link.blocked) return transport::success();
      auto status = core.write_all(link);
      if (!status) return status.error();
      link.blocked = status.value() == WriteStatus::blocked;
      return transport::success();
    }
    // rearm and lazy send only once epoll reports the socket writable.
    if (link.armed) return transport::success();
    link.armed = true;
    ++interest_changes_;
    return ctl(EPOLL_CTL_MOD, link, EPOLLOUT);
  }

  [[nodiscard]] Result<void> idle(SendCore& /*core*/, SendLink& link) {
    if (mode_ != EpollMode::lazy || !link.armed) return transport::success();
    if (++link.idle_wakeups < kLazyIdleWakeups) return transport::success();
    link.armed = false;
    ++interest_changes_;
    return ctl(EPOLL_CTL_MOD, link, 0);
  }

  [[nodiscard]] bool waiting() const noexcept {
    return std::any_of(core_.links().begin(), core_.links().end(), [this](const SendLink& l) {
      return mode_ == EpollMode::edge ? l.blocked : l.armed && SendCore::has_pending(l);
    });
  }

  [[nodiscard]] Result<void> wait(SendCore& core, std::int64_t deadline_ns) {
    const std::int64_t timeout = std::clamp<std::int64_t>(deadline_ns - now_ns(), 0, kWaitSliceNs);
    const int n = core.sys().epoll_wait(epfd_, events_, timeout);
    if (n < 0 && errno != EINTR) return os_error("sender: epoll_wait", errno);
    for (int i = 0; i < n; ++i) {
      auto& link = *static_cast<SendLink*>(events_[static_cast<std::size_t>(i)].data.ptr);
      if (link.closed || !link.conn) continue;
      if (mode_ == EpollMode::edge) {
        link.blocked = false;
        continue;
      }
      if (SendCore::has_pending(link)) {
        auto status = core.write_once(link);
        if (!status) return status.error();
        ++writes_;
      }
      if (mode_ == EpollMode::rearm) {
        link.armed = false;
        ++interest_changes_;
        if (auto ok = ctl(EPOLL_CTL_MOD, link, 0); !ok) return ok;
      }
    }
    return transport::success();
  }

  // What rearm would have spent (two epoll_ctl per send) minus what this poller spent.
  [[nodiscard]] std::uint64_t epoll_ctl_saved() const noexcept {
    return 2 * writes_ > interest_changes_ ? 2 * writes_ - interest_changes_ : 0;
  }

 private:
  [[nodiscard]] Result<void> ctl(int op, SendLink& link, std::uint32_t events) {
    epoll_event event{};
    event.events = events;
    event.data.ptr = &link;
    if (core_.sys().epoll_ctl(epfd_, op, link.conn->fd, events, event.data.u64) != 0) {
      return os_error("sender: link " + std::to_string(link.index) + ": epoll_ctl", errno);
    }
    return transport::success();
  }

  EpollMode mode_;
  SendCore& core_;
  int epfd_ = -1;
  std::array<epoll_event, kMaxEvents> events_{};
  std::uint64_t writes_ = 0;
  std::uint64_t interest_changes_ = 0;
};

class EpollReceiver {
 public:
  EpollReceiver(EpollMode mode, RecvCore& core) : edge_(mode == EpollMode::edge), core_(core) {}
  EpollReceiver(const EpollReceiver&) = delete;
  EpollReceiver& operator=(const EpollReceiver&) = delete;
  ~EpollReceiver() {
    if (epfd_ >= 0) core_.sys().close(epfd_);
  }

  [[nodiscard]] Result<void> open() {
    epfd_ = core_.sys().epoll_create();
    if (epfd_ < 0) return os_error("receiver: epoll_create1", errno);
    return transport::success();
  }

  [[nodiscard]] Result<void> watch_listener(RecvLink& link) {
    return ctl(link.listener, link, true, EPOLLIN | (edge_ ? EPOLLET : 0u));
  }
  [[nodiscard]] Result<void> watch(RecvLink& link) {
    return ctl(link.conn->fd, link, false, edge_ ? EPOLLIN | EPOLLOUT | EPOLLET : EPOLLIN);
  }

  [[nodiscard]] Result<void> wait(RecvCore& core, std::int64_t timeout_ns) {
    const int n = core.sys().epoll_wait(epfd_, events_, timeout_ns);
    if (n < 0 && errno != EINTR) return os_error("receiver: epoll_wait", errno);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t data = events_[static_cast<std::size_t>(i)].data.u64;
      RecvLink& link = core.links()[data >> 1];
      if ((data & 1) != 0) {
        // One connection per link at a time (the sender waits for our close), so one
        // accept per event suffices even edge-triggered.
        if (link.conn) continue;
        auto accepted = core.accept(link);
        if (!accepted) return accepted.error();
        // EPOLL_CTL_ADD reports data that arrived before it, edge-triggered or not.
        if (accepted.value()) {
          if (auto ok = watch(link); !ok) return ok;
        }
        continue;
      }
      const std::uint32_t ready = events_[static_cast<std::size_t>(i)].events;
      if ((ready & (EPOLLIN | EPOLLHUP | EPOLLERR)) == 0) continue;
      if (auto open = on_readable(core, link, edge_); !open) return open.error();
    }
    return transport::success();
  }

 private:
  [[nodiscard]] Result<void> ctl(int fd, RecvLink& link, bool listener, std::uint32_t events) {
    const auto position = static_cast<std::uint64_t>(&link - core_.links().data());
    const std::uint64_t data = position << 1 | (listener ? 1 : 0);
    if (core_.sys().epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, events, data) != 0) {
      return os_error("receiver: link " + std::to_string(link.index) + ": epoll_ctl", errno);
    }
    return transport::success();
  }

  bool edge_;
  RecvCore& core_;
  int epfd_ = -1;
  std::array<epoll_event, kMaxEvents> events_{};
};

}  // namespace

Result<void> run_epoll_sender(EpollMode mode, SendCore& core, const StudyControl& control,
                              std::uint64_t& epoll_ctl_saved) {
  EpollSender poller(mode, core);
  if (auto ok = poller.open(); !ok) return ok;
  auto result = drive_sender(core, poller, control);
  if (mode == EpollMode::lazy) epoll_ctl_saved = poller.epoll_ctl_saved();
  return result;
}

Result<void> run_epoll_receiver(EpollMode mode, RecvCore& core, const StudyControl& control) {
  EpollReceiver poller(mode, core);
  if (auto ok = poller.open(); !ok) return ok;
  return drive_receiver(core, poller, control);
}

}  // namespace boreal::runtime::loopstudy
