// Reading a whole (often /proc or /boot) file, for the CPU meters (cpu_meter.cpp,
// irq_time_accounting.cpp). /proc files report size 0, so it reads until end of file.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "boreal/transport/error.hpp"

namespace boreal::transport::detail {

// The whole file, or an io error naming the path (a /proc/PID that exited cannot be opened).
// `enough`, when given, is asked after every read whether the text so far is all the caller
// needs, so a long file's head can be read without its tail.
inline Result<std::string> read_whole_file(const char* path,
                                           bool (*enough)(std::string_view) = nullptr) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return fail(ErrorCategory::io, err,
                std::string{"cannot open "} + path + ": " + std::strerror(err));
  }
  std::string text;
  std::array<char, 16384> chunk{};
  for (;;) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return fail(ErrorCategory::io, err,
                  std::string{"cannot read "} + path + ": " + std::strerror(err));
    }
    text.append(chunk.data(), static_cast<std::size_t>(n));
    if (enough != nullptr && enough(text)) break;
  }
  ::close(fd);
  return text;
}

}  // namespace boreal::transport::detail
