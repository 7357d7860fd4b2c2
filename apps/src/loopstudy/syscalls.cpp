#include "loopstudy/syscalls.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cstring>

namespace boreal::runtime::loopstudy {

std::string_view to_string(Sys kind) noexcept {
  switch (kind) {
    case Sys::send: return "send";
    case Sys::recv: return "recv";
    case Sys::epoll_create: return "epoll_create";
    case Sys::epoll_ctl: return "epoll_ctl";
    case Sys::epoll_wait: return "epoll_wait";
    case Sys::io_uring_enter: return "io_uring_enter";
    case Sys::poll: return "poll";
    case Sys::sigwaitinfo: return "sigwaitinfo";
    case Sys::sigprocmask: return "sigprocmask";
    case Sys::fcntl: return "fcntl";
    case Sys::accept: return "accept";
    case Sys::connect: return "connect";
    case Sys::socket: return "socket";
    case Sys::bind: return "bind";
    case Sys::listen: return "listen";
    case Sys::getsockname: return "getsockname";
    case Sys::setsockopt: return "setsockopt";
    case Sys::shutdown: return "shutdown";
    case Sys::close: return "close";
    case Sys::clock_nanosleep: return "clock_nanosleep";
    case Sys::kCount: break;
  }
  return "?";
}

std::uint64_t Syscalls::total() const noexcept {
  std::uint64_t sum = 0;
  for (const auto n : counts_) sum += n;
  return sum;
}

void Syscalls::merge(const Syscalls& other) noexcept {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
}

std::map<std::string, std::uint64_t> Syscalls::by_name() const {
  std::map<std::string, std::uint64_t> out;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) out.emplace(to_string(static_cast<Sys>(i)), counts_[i]);
  }
  return out;
}

int Syscalls::epoll_create() noexcept {
  add(Sys::epoll_create);
  return ::epoll_create1(EPOLL_CLOEXEC);
}

int Syscalls::epoll_ctl(int epfd, int op, int fd, std::uint32_t events,
                        std::uint64_t data) noexcept {
  add(Sys::epoll_ctl);
  epoll_event event{};
  event.events = events;
  event.data.u64 = data;
  return ::epoll_ctl(epfd, op, fd, &event);
}

int Syscalls::epoll_wait(int epfd, std::span<epoll_event> events,
                         std::int64_t timeout_ns) noexcept {
  add(Sys::epoll_wait);
  const timespec timeout{static_cast<time_t>(timeout_ns / 1'000'000'000),
                         static_cast<long>(timeout_ns % 1'000'000'000)};
  return ::epoll_pwait2(epfd, events.data(), static_cast<int>(events.size()), &timeout, nullptr);
}

int Syscalls::poll_in(int fd, int timeout_ms) noexcept {
  add(Sys::poll);
  pollfd entry{fd, POLLIN, 0};
  return ::poll(&entry, 1, timeout_ms);
}

int Syscalls::sigwait(const sigset_t& set, siginfo_t& info, std::int64_t timeout_ns) noexcept {
  add(Sys::sigwaitinfo);
  const timespec timeout{static_cast<time_t>(timeout_ns / 1'000'000'000),
                         static_cast<long>(timeout_ns % 1'000'000'000)};
  return ::sigtimedwait(&set, &info, &timeout);
}

int Syscalls::block_signals(const sigset_t& set) noexcept {
  add(Sys::sigprocmask);
  const int rc = ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (rc != 0) errno = rc;
  return rc == 0 ? 0 : -1;
}

int Syscalls::fcntl(int fd, int cmd, long arg) noexcept {
  add(Sys::fcntl);
  return ::fcntl(fd, cmd, arg);
}

int Syscalls::fcntl_owner_thread(int fd, pid_t tid) noexcept {
  add(Sys::fcntl);
  f_owner_ex owner{F_OWNER_TID, tid};
  return ::fcntl(fd, F_SETOWN_EX, &owner);
}

int Syscalls::accept(int listener, int flags) noexcept {
  add(Sys::accept);
  return ::accept4(listener, nullptr, nullptr, flags | SOCK_CLOEXEC);
}

int Syscalls::connect(int fd, const sockaddr* address, socklen_t length) noexcept {
  add(Sys::connect);
  return ::connect(fd, address, length);
}

int Syscalls::socket() noexcept {
  add(Sys::socket);
  return ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

int Syscalls::bind(int fd, const sockaddr_in& address) noexcept {
  add(Sys::bind);
  return ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
}

int Syscalls::listen(int fd, int backlog) noexcept {
  add(Sys::listen);
  return ::listen(fd, backlog);
}

int Syscalls::getsockname(int fd, sockaddr_in& address) noexcept {
  add(Sys::getsockname);
  socklen_t length = sizeof address;
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
}

int Syscalls::setsockopt(int fd, int level, int name, const void* value,
                         socklen_t length) noexcept {
  add(Sys::setsockopt);
  return ::setsockopt(fd, level, name, value, length);
}

int Syscalls::shutdown_write(int fd) noexcept {
  add(Sys::shutdown);
  return ::shutdown(fd, SHUT_WR);
}

int Syscalls::close(int fd) noexcept {
  add(Sys::close);
  return ::close(fd);
}

void Syscalls::sleep_until(std::int64_t deadline_ns, std::int64_t now) noexcept {
  if (deadline_ns <= now) return;
  add(Sys::clock_nanosleep);
  const timespec at{static_cast<time_t>(deadline_ns / 1'000'000'000),
                    static_cast<long>(deadline_ns % 1'000'000'000)};
  // EINTR only ends the sleep early; the caller recomputes its deadline.
  ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
}

std::int64_t now_ns() noexcept {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

transport::Error os_error(const std::string& what, int error_number) {
  return {transport::ErrorCategory::io, error_number, what + ": " + std::strerror(error_number)};
}

}  // namespace boreal::runtime::loopstudy
