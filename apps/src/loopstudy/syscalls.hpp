// Counted syscalls: every system call the loop study makes goes through one Syscalls object
// owned by the thread that makes it, so the per-tuple figures are counted in code rather
// than sampled with perf. Not thread-safe: one object per thread, merged after the join.
#pragma once

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include <boreal/transport/error.hpp>

namespace boreal::runtime::loopstudy {

enum class Sys : std::uint8_t {
  send,
  recv,
  epoll_create,
  epoll_ctl,
  epoll_wait,
  io_uring_enter,
  poll,
  sigwaitinfo,  // rt_sigtimedwait: sigwaitinfo and sigtimedwait are the same syscall
  sigprocmask,
  fcntl,
  accept,
  connect,
  socket,
  bind,
  listen,
  getsockname,
  setsockopt,
  shutdown,
  close,
  clock_nanosleep,
  kCount,
};

[[nodiscard]] std::string_view to_string(Sys kind) noexcept;

class Syscalls {
 public:
  void add(Sys kind, std::uint64_t n = 1) noexcept { counts_[static_cast<std::size_t>(kind)] += n; }
  [[nodiscard]] std::uint64_t count(Sys kind) const noexcept {
    return counts_[static_cast<std::size_t>(kind)];
  }
  [[nodiscard]] std::uint64_t total() const noexcept;
  void merge(const Syscalls& other) noexcept;
  // Kinds with a nonzero count, by name.
  [[nodiscard]] std::map<std::string, std::uint64_t> by_name() const;

  // Thin wrappers: same arguments and return values as the libc calls, errno untouched.
  // send always passes MSG_NOSIGNAL (a closed peer is an error, never SIGPIPE).
  ssize_t send(int fd, std::span<const std::byte> bytes) noexcept {
    add(Sys::send);
    return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  ssize_t recv(int fd, std::span<std::byte> bytes) noexcept {
    add(Sys::recv);
    return ::recv(fd, bytes.data(), bytes.size(), 0);
  }
  int epoll_create() noexcept;
  int epoll_ctl(int epfd, int op, int fd, std::uint32_t events, std::uint64_t data) noexcept;
  // Waits at most `timeout` ns (≥ 0) with epoll_pwait2's nanosecond timeout.
  int epoll_wait(int epfd, std::span<epoll_event> events, std::int64_t timeout_ns) noexcept;
  int poll_in(int fd, int timeout_ms) noexcept;  // poll(2) for POLLIN on one fd
  // sigtimedwait(2) for the signals in `set`, at most timeout_ns; the signal number or -1.
  int sigwait(const sigset_t& set, siginfo_t& info, std::int64_t timeout_ns) noexcept;
  int block_signals(const sigset_t& set) noexcept;  // pthread_sigmask(SIG_BLOCK)
  int fcntl(int fd, int cmd, long arg) noexcept;
  int fcntl_owner_thread(int fd, pid_t tid) noexcept;  // F_SETOWN_EX, F_OWNER_TID
  int accept(int listener, int flags) noexcept;        // accept4 without the peer address
  int connect(int fd, const sockaddr* address, socklen_t length) noexcept;
  int socket() noexcept;  // AF_INET, SOCK_STREAM
  int bind(int fd, const sockaddr_in& address) noexcept;
  int listen(int fd, int backlog) noexcept;
  int getsockname(int fd, sockaddr_in& address) noexcept;
  int setsockopt(int fd, int level, int name, const void* value, socklen_t length) noexcept;
  int shutdown_write(int fd) noexcept;
  int close(int fd) noexcept;
  // Sleeps until `deadline_ns` on CLOCK_MONOTONIC (absolute); no call when it has passed.
  void sleep_until(std::int64_t deadline_ns, std::int64_t now_ns) noexcept;

 private:
  std::array<std::uint64_t, static_cast<std::size_t>(Sys::kCount)> counts_{};
};

// CLOCK_MONOTONIC in ns (vDSO; not a syscall, not counted).
[[nodiscard]] std::int64_t now_ns() noexcept;

// An io Error for a failed call: "<what>: <strerror(errno)>" with errno as the code.
[[nodiscard]] transport::Error os_error(const std::string& what, int error_number);

}  // namespace boreal::runtime::loopstudy
