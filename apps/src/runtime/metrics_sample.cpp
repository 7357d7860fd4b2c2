#include "runtime/metrics_sample.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>

#include <boreal/transport/cpu_meter.hpp>

namespace boreal::runtime {
namespace {

// Resident pages now: the second field of /proc/self/statm (proc(5)). getrusage's ru_maxrss
// is the peak, which never falls, so it cannot show memory being given back. Plain read(2)
// into a stack buffer: no stream, no allocation.
std::uint64_t resident_bytes_now() noexcept {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::array<char, 128> text{};
  const ssize_t n = ::read(fd, text.data(), text.size() - 1);
  ::close(fd);
  if (n <= 0) return 0;
  const char* at = text.data();
  const char* end = text.data() + n;
  while (at < end && *at != ' ') ++at;  // skip the total size
  while (at < end && *at == ' ') ++at;
  std::uint64_t pages = 0;
  if (std::from_chars(at, end, pages).ec != std::errc()) return 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? pages * static_cast<std::uint64_t>(page) : 0;
}

}  // namespace

ProcessFigures ProcessFigures::now() noexcept {
  ProcessFigures figures;
  figures.cpu_s = std::chrono::duration<double>(transport::ProcessUsage::sample().total()).count();
  figures.resident_bytes = resident_bytes_now();
  return figures;
}

}  // namespace boreal::runtime
