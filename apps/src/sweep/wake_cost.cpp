#include "sweep/wake_cost.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include <boreal/transport/cpu_meter.hpp>

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

// One side of the exchange: an eventfd it is woken through, watched by its own epoll.
class Turn {
 public:
  Turn() : event_(::eventfd(0, EFD_CLOEXEC)), epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (ok()) {
      epoll_event interest{};
      interest.events = EPOLLIN;
      if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, event_, &interest) != 0) error_ = errno;
    } else {
      error_ = errno;
    }
  }
  Turn(const Turn&) = delete;
  Turn& operator=(const Turn&) = delete;
  ~Turn() {
    if (event_ >= 0) ::close(event_);
    if (epoll_ >= 0) ::close(epoll_);
  }
  [[nodiscard]] bool ok() const noexcept { return event_ >= 0 && epoll_ >= 0 && error_ == 0; }
  [[nodiscard]] int error() const noexcept { return error_; }

  void wake() const noexcept {
    const std::uint64_t one = 1;
    while (::write(event_, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }
  // Blocks until woken, then takes the token.
  void await() const noexcept {
    epoll_event ready{};
    while (::epoll_wait(epoll_, &ready, 1, -1) < 1) {
    }
    std::uint64_t count = 0;
    while (::read(event_, &count, sizeof count) < 0 && errno == EINTR) {
    }
  }

 private:
  int event_;
  int epoll_;
  int error_ = 0;
};

}  // namespace

transport::Result<WakeCost> measure_wake_cost(std::chrono::duration<double> length) {
  Turn mine;
  Turn theirs;
  if (!mine.ok() || !theirs.ok()) {
    const int err = !mine.ok() ? mine.error() : theirs.error();
    return fail(ErrorCategory::io, err,
                std::string("wake-up calibration: cannot make an eventfd and epoll pair: ") +
                    std::strerror(err));
  }
  std::atomic<bool> stop{false};
  std::thread partner([&] {
    for (;;) {
      theirs.await();
      if (stop.load(std::memory_order_acquire)) return;
      mine.wake();
    }
  });
  // Only /proc/stat around the exchange: MachineWindow's census of every process would put
  // its own CPU inside the window.
  const int cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  const auto before = transport::MachineCpu::sample();
  const auto start = std::chrono::steady_clock::now();
  const auto until =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(length);
  std::uint64_t round_trips = 0;
  while (before && std::chrono::steady_clock::now() < until) {
    theirs.wake();
    mine.await();
    ++round_trips;
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  const auto after = transport::MachineCpu::sample();
  stop.store(true, std::memory_order_release);
  theirs.wake();
  partner.join();
  if (!before) return before.error();
  if (!after) return after.error();
  const auto report = transport::make_machine_report(before.value(), after.value(), wall, cpus);
  WakeCost cost;
  cost.wakeups = 2 * round_trips;
  cost.seconds = wall.count();
  if (cost.wakeups > 0) {
    cost.cpu_us_per_wakeup = report.busy_cpu_s * 1e6 / static_cast<double>(cost.wakeups);
  }
  return cost;
}

}  // namespace boreal::runtime
