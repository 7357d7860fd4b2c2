#include "fabric/fabric_library.hpp"

#include <dlfcn.h>
#include <signal.h>

#include <array>
#include <atomic>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#ifndef BOREAL_LIBFABRIC_SONAME
#error "BOREAL_LIBFABRIC_SONAME (libfabric's soname, set by transport/CMakeLists.txt) is not defined"
#endif
// The symbol version of each function that a link against the configured libfabric would
// bind ("" where it could not be read: then the opened library's default).
#ifndef BOREAL_FI_GETINFO_VERSION
#error "BOREAL_FI_*_VERSION (set by transport/CMakeLists.txt) are not defined"
#endif

namespace boreal::transport::fabric_medium {
namespace {

std::mutex g_load_mutex;
LibFabric g_library{};                          // written once, under g_load_mutex
std::atomic<const LibFabric*> g_loaded{nullptr};  // &g_library once it is complete

// Every signal's disposition when made, put back by restore(): libinfinipath's constructor
// (run by dlopen) and libfabric's provider initialisation install handlers of their own.
class SignalDispositions {
 public:
  SignalDispositions() {
    for (int signal = 1; signal < NSIG; ++signal) {
      saved_[signal].valid = signal != SIGKILL && signal != SIGSTOP &&
                             ::sigaction(signal, nullptr, &saved_[signal].action) == 0;
    }
  }
  void restore() const {
    for (int signal = 1; signal < NSIG; ++signal) {
      if (saved_[signal].valid) ::sigaction(signal, &saved_[signal].action, nullptr);
    }
  }

 private:
  struct Saved {
    struct sigaction action {};
    bool valid = false;
  };
  std::array<Saved, NSIG> saved_{};
};

template <typename Function>
bool find(void* handle, const char* name, const char* version, Function& function,
          std::string& why) {
  ::dlerror();
  void* symbol = *version != '\0' ? ::dlvsym(handle, name, version) : ::dlsym(handle, name);
  if (symbol == nullptr) {
    const char* reason = ::dlerror();
    why = std::string("it has no ") + name + (*version != '\0' ? "@" : "") + version +
          (reason ? std::string(" (") + reason + ")" : "");
    return false;
  }
  function = reinterpret_cast<Function>(symbol);
  return true;
}

}  // namespace

Result<const LibFabric*> load_libfabric() {
  if (const auto* loaded = g_loaded.load(std::memory_order_acquire)) return loaded;
  std::lock_guard lock(g_load_mutex);
  if (const auto* loaded = g_loaded.load(std::memory_order_acquire)) return loaded;

  const char* from_environment = std::getenv("BOREAL_LIBFABRIC");
  const bool chosen = from_environment != nullptr && *from_environment != '\0';
  const std::string path = chosen ? from_environment : BOREAL_LIBFABRIC_SONAME;
  const std::string named = chosen ? path + " (BOREAL_LIBFABRIC)" : path;

  const SignalDispositions dispositions;
  // RTLD_GLOBAL: a libfabric built with its providers as separate modules opens them itself,
  // and they find libfabric's symbols in the global scope.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    dispositions.restore();
    return fail(ErrorCategory::fabric, 0,
                "the fabric media need libfabric, and " + named + " cannot be opened: " +
                    (reason ? reason : "no reason given") +
                    " (install libfabric, on Debian libfabric1, or set BOREAL_LIBFABRIC to "
                    "the path of one)");
  }
  LibFabric library{};
  std::string why;
  const bool complete =
      find(handle, "fi_getinfo", BOREAL_FI_GETINFO_VERSION, library.getinfo, why) &&
      find(handle, "fi_freeinfo", BOREAL_FI_FREEINFO_VERSION, library.freeinfo, why) &&
      find(handle, "fi_dupinfo", BOREAL_FI_DUPINFO_VERSION, library.dupinfo, why) &&
      find(handle, "fi_fabric", BOREAL_FI_FABRIC_VERSION, library.fabric, why) &&
      find(handle, "fi_strerror", BOREAL_FI_STRERROR_VERSION, library.strerror, why);
  if (!complete) {
    ::dlclose(handle);
    dispositions.restore();
    return fail(ErrorCategory::fabric, 0,
                "the fabric media need libfabric, and " + named +
                    " is not a libfabric they can use: " + why);
  }
  // Providers initialise at the first fi_getinfo (psm's may install handlers too): let that
  // happen here, with a provider name that matches nothing.
  if (fi_info* hints = library.dupinfo(nullptr)) {
    hints->fabric_attr->prov_name = ::strdup("boreal-initialises-the-providers");
    fi_info* found = nullptr;
    (void)library.getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &found);
    if (found != nullptr) library.freeinfo(found);
    library.freeinfo(hints);
  }
  dispositions.restore();
  g_library = library;
  g_loaded.store(&g_library, std::memory_order_release);
  return &g_library;
}

const LibFabric& loaded_libfabric() noexcept {
  const auto* loaded = g_loaded.load(std::memory_order_acquire);
  assert(loaded != nullptr && "load_libfabric() must succeed before libfabric is used");
  return *loaded;
}

}  // namespace boreal::transport::fabric_medium
