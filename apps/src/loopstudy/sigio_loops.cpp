// The sigio strategy (loops.hpp): signal-driven I/O. Every socket gets O_ASYNC,
// F_SETSIG(SIGRTMIN) and F_SETOWN_EX naming the thread that owns it, so the kernel queues
// one SIGRTMIN per readiness event (siginfo names the fd) to that thread; the thread keeps
// SIGRTMIN blocked and takes the signals with sigtimedwait. If the real-time signal queue
// overflows the kernel sends SIGIO instead, which means "look at everything"
// (docs/transport-notes.md §3 never saw it). Readiness is reported as edges, so reads drain and a
// socket is checked once right after it is armed: what arrived before raised no signal.
//
// The owning thread closes its sockets before it exits (run_study calls close_all() on
// it), so no signal can reach a later thread that reuses the id.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string>

#include "loopstudy/drivers.hpp"
#include "loopstudy/loops.hpp"

namespace boreal::runtime::loopstudy {
namespace {

using transport::Result;

class SignalSource {
 public:
  explicit SignalSource(Syscalls& sys) : sys_(sys) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGRTMIN);
    sigaddset(&set_, SIGIO);
  }

  [[nodiscard]] Result<void> open(const char* end) {
    if (sys_.block_signals(set_) != 0) {
      return os_error(std::string{end} + ": pthread_sigmask", errno);
    }
    tid_ = ::gettid();
    return transport::success();
  }

  // Signal-driven mode for one socket, owned by this thread.
  [[nodiscard]] Result<void> arm(int fd, const std::string& what) {
    if (sys_.fcntl(fd, F_SETSIG, SIGRTMIN) != 0) return os_error(what + ": F_SETSIG", errno);
    if (sys_.fcntl_owner_thread(fd, tid_) != 0) return os_error(what + ": F_SETOWN_EX", errno);
    if (sys_.fcntl(fd, F_SETFL, O_NONBLOCK | O_ASYNC) != 0) {
      return os_error(what + ": O_ASYNC", errno);
    }
    return transport::success();
  }

  // The fd of the next readiness event; -1 after a queue overflow (SIGIO: check all);
  // no value when the timeout passed.
  enum class Got { fd, overflow, nothing };
  [[nodiscard]] Result<Got> wait(std::int64_t timeout_ns, int& fd) {
    siginfo_t info{};
    const int signal = sys_.sigwait(set_, info, timeout_ns);
    if (signal < 0) {
      if (errno == EAGAIN || errno == EINTR) return Got::nothing;
      return os_error("sigtimedwait", errno);
    }
    if (signal == SIGIO) return Got::overflow;
    fd = info.si_fd;
    return Got::fd;
  }

 private:
  Syscalls& sys_;
  sigset_t set_{};
  pid_t tid_ = 0;
};

class SigioSender {
 public:
  explicit SigioSender(SendCore& core) : core_(core), signals_(core.sys()) {}

  [[nodiscard]] Result<void> open() { return signals_.open("sender"); }
  [[nodiscard]] Result<void> watch(SendLink& link) {
    link.blocked = false;
    return signals_.arm(link.conn->fd, "sender: link " + std::to_string(link.index));
  }
  void forget(SendLink& /*link*/) noexcept {}

  // Sends speculatively; a send that would block sets the socket's NOSPACE flag, and the
  // kernel signals POLL_OUT once space frees up, so the wake-up cannot be lost.
  [[nodiscard]] Result<void> offer(SendCore& core, SendLink& link) {
    if (link.blocked) return transport::success();
    auto status = core.write_all(link);
    if (!status) return status.error();
    link.blocked = status.value() == WriteStatus::blocked;
    return transport::success();
  }
  [[nodiscard]] Result<void> idle(SendCore& /*core*/, SendLink& /*link*/) {
    return transport::success();
  }
  [[nodiscard]] bool waiting() const noexcept {
    return core_.any_blocked();
  }
  [[nodiscard]] Result<void> wait(SendCore& core, std::int64_t deadline_ns) {
    int fd = -1;
    auto got = signals_.wait(std::clamp<std::int64_t>(deadline_ns - now_ns(), 0, kWaitSliceNs), fd);
    if (!got) return got.error();
    for (auto& link : core.links()) {
      // A stale signal (for an earlier event) only costs one send that would block.
      if (got.value() == SignalSource::Got::overflow ||
          (got.value() == SignalSource::Got::fd && link.conn && link.conn->fd == fd)) {
        link.blocked = false;
      }
    }
    return transport::success();
  }

 private:
  SendCore& core_;
  SignalSource signals_;
};

class SigioReceiver {
 public:
  explicit SigioReceiver(RecvCore& core) : core_(core), signals_(core.sys()) {}

  [[nodiscard]] Result<void> open() { return signals_.open("receiver"); }
  [[nodiscard]] Result<void> watch_listener(RecvLink& link) {
    return signals_.arm(link.listener,
                        "receiver: link " + std::to_string(link.index) + " listener");
  }
  // Arms, then reads what came before the arming.
  [[nodiscard]] Result<void> watch(RecvLink& link) {
    const std::string what = "receiver: link " + std::to_string(link.index);
    if (auto ok = signals_.arm(link.conn->fd, what); !ok) return ok;
    if (auto open = on_readable(core_, link, true); !open) return open.error();
    return transport::success();
  }

  [[nodiscard]] Result<void> wait(RecvCore& core, std::int64_t timeout_ns) {
    int fd = -1;
    auto got = signals_.wait(timeout_ns, fd);
    if (!got) return got.error();
    if (got.value() == SignalSource::Got::nothing) return transport::success();
    for (auto& link : core.links()) {
      const bool all = got.value() == SignalSource::Got::overflow;
      if (link.conn && (all || link.conn->fd == fd)) {
        if (auto open = on_readable(core, link, true); !open) return open.error();
      } else if (!link.conn && !link.finished && (all || link.listener == fd)) {
        auto accepted = core.accept(link);
        if (!accepted) return accepted.error();
        if (accepted.value()) {
          if (auto ok = watch(link); !ok) return ok;
        }
      }
    }
    return transport::success();
  }

 private:
  RecvCore& core_;
  SignalSource signals_;
};

}  // namespace

Result<void> run_sigio_sender(SendCore& core, const StudyControl& control) {
  return run_sender_with<SigioSender>(core, control);
}

Result<void> run_sigio_receiver(RecvCore& core, const StudyControl& control) {
  return run_receiver_with<SigioReceiver>(core, control);
}

}  // namespace boreal::runtime::loopstudy
