// Reading a whole (often /proc or /boot) file, for the CPU meters (cpu_meter.cpp,
// irq_time_accounting.cpp). /proc files report size 0, so it reads until end of file.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <optional>
#include <string>

namespace boreal::transport::detail {

// The whole file, or nullopt when it cannot be opened or read (a /proc/PID that exited).
inline std::optional<std::string> read_whole_file(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  std::array<char, 16384> chunk{};
  for (;;) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    text.append(chunk.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace boreal::transport::detail
