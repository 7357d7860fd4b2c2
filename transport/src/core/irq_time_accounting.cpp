// Detection of CONFIG_IRQ_TIME_ACCOUNTING (declared in cpu_meter.hpp). Kept apart from the
// meters because it is the only part that touches the kernel config and dlopen.
#include <boreal/transport/cpu_meter.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "core/read_file.hpp"

namespace boreal::transport {
namespace {

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<std::string> read_plain(const std::string& path) {
  auto text = detail::read_whole_file(path.c_str());
  if (!text) return std::nullopt;
  return std::move(text).value();
}

// zlib's gz* API, looked up by name at run time. gzFile is a pointer to an opaque struct.
using GzFile = void*;
using GzOpenFn = GzFile (*)(const char*, const char*);
using GzReadFn = int (*)(GzFile, void*, unsigned);
using GzCloseFn = int (*)(GzFile);

template <class Fn>
Fn lookup(void* lib, const char* name) noexcept {
  void* symbol = ::dlsym(lib, name);
  Fn fn = nullptr;
  // POSIX guarantees a data pointer from dlsym can hold a function address; memcpy avoids
  // the object-to-function pointer cast that ISO C++ leaves conditionally supported.
  static_assert(sizeof(fn) == sizeof(symbol));
  std::memcpy(&fn, &symbol, sizeof(fn));
  return fn;
}

// The decompressed file, or nothing without libz.so.1 or on any read error.
std::optional<std::string> read_gzip(const char* path) {
  void* lib = ::dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return std::nullopt;
  const auto gz_open = lookup<GzOpenFn>(lib, "gzopen");
  const auto gz_read = lookup<GzReadFn>(lib, "gzread");
  const auto gz_close = lookup<GzCloseFn>(lib, "gzclose");
  std::optional<std::string> text;
  if (gz_open != nullptr && gz_read != nullptr && gz_close != nullptr) {
    if (GzFile file = gz_open(path, "rb"); file != nullptr) {
      text.emplace();
      std::array<char, 65536> chunk{};
      for (;;) {
        const int n = gz_read(file, chunk.data(), static_cast<unsigned>(chunk.size()));
        if (n == 0) break;
        if (n < 0) {
          text.reset();
          break;
        }
        text->append(chunk.data(), static_cast<std::size_t>(n));
      }
      gz_close(file);
    }
  }
  ::dlclose(lib);
  return text;
}

}  // namespace

std::string_view to_string(IrqTimeAccounting value) noexcept {
  switch (value) {
    case IrqTimeAccounting::on:
      return "on";
    case IrqTimeAccounting::off:
      return "off";
    case IrqTimeAccounting::unknown:
      return "unknown";
  }
  return "unknown";  // only through a cast of an out-of-range integer
}

IrqTimeAccounting parse_irq_time_accounting(std::string_view kernel_config) {
  bool looks_like_config = false;
  while (!kernel_config.empty()) {
    const auto eol = kernel_config.find('\n');
    const std::string_view line = trim(kernel_config.substr(0, eol));
    kernel_config.remove_prefix(eol == std::string_view::npos ? kernel_config.size() : eol + 1);

    // Whole-key matches only: CONFIG_HAVE_IRQ_TIME_ACCOUNTING=y (the architecture could do
    // it) sits in the same file and says nothing about whether it is enabled.
    if (line == "CONFIG_IRQ_TIME_ACCOUNTING=y") return IrqTimeAccounting::on;
    if (line == "# CONFIG_IRQ_TIME_ACCOUNTING is not set") return IrqTimeAccounting::off;
    if (line.substr(0, 7) == "CONFIG_" || line.substr(0, 9) == "# CONFIG_") {
      looks_like_config = true;
    }
  }
  // Kconfig writes no line at all for an option whose dependencies are not met.
  return looks_like_config ? IrqTimeAccounting::off : IrqTimeAccounting::unknown;
}

IrqTimeAccounting irq_time_accounting() {
  utsname name{};
  if (::uname(&name) == 0) {
    if (auto text = read_plain(std::string{"/boot/config-"} + name.release)) {
      // An empty or truncated file says nothing; /proc/config.gz may still know.
      const IrqTimeAccounting found = parse_irq_time_accounting(*text);
      if (found != IrqTimeAccounting::unknown) return found;
    }
  }
  if (auto text = read_gzip("/proc/config.gz")) return parse_irq_time_accounting(*text);
  return IrqTimeAccounting::unknown;
}

bool kernel_has_irq_time_accounting() {
  return irq_time_accounting() == IrqTimeAccounting::on;
}

}  // namespace boreal::transport
