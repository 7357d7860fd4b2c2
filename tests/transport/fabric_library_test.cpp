// libfabric is opened at the first use of a fabric medium, not at start, and opening it leaves
// the process's signal handlers and CPU affinity as they were (transport/src/fabric/
// fabric_library.hpp). This executable links boreal::transport alone, as an embedding program
// would, so libfabric is not in it until a fabric listener is opened.
#include <boreal/transport/fabric_medium.hpp>

#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boreal/transport/event_loop.hpp>

namespace boreal::transport {
namespace {

bool libfabric_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/libfabric.so") != std::string::npos) return true;
  }
  return false;
}

// glibc sets SA_RESTORER on every handler it installs and reads it back: a signal whose default
// action was put back through glibc differs from one never touched only by that bit.
constexpr int kRestorerFlag = 0x04000000;

struct Disposition {
  bool valid = false;
  void* handler = nullptr;
  int flags = 0;
  bool operator==(const Disposition&) const = default;
};

std::vector<Disposition> dispositions() {
  std::vector<Disposition> all(NSIG);
  for (int signal = 1; signal < NSIG; ++signal) {
    struct sigaction action {};
    if (::sigaction(signal, nullptr, &action) != 0) continue;
    all[signal] = {true,
                   (action.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(action.sa_sigaction)
                                                  : reinterpret_cast<void*>(action.sa_handler),
                   action.sa_flags & ~kRestorerFlag};
  }
  return all;
}

void on_stop(int) {}

Result<std::unique_ptr<FabricListener>> open_listener(EventLoop& loop) {
  return FabricListener::open(loop, {"tcp;ofi_rxm", "127.0.0.1", 0});
}

TEST(FabricLibrary, IsOpenedAtTheFirstFabricUseAndLeavesSignalsAndAffinityAsTheyWere) {
  ASSERT_FALSE(libfabric_mapped()) << "libfabric is in the process before any fabric use";
  EventLoop loop;

  // A file that is not there: the error names it and says how to get libfabric.
  const std::string missing = "/nonexistent-boreal-test/libfabric.so.1";
  ASSERT_EQ(::setenv("BOREAL_LIBFABRIC", missing.c_str(), 1), 0);
  auto refused = open_listener(loop);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().category, ErrorCategory::fabric);
  EXPECT_EQ(refused.error().message,
            "cannot listen on fabric://tcp;ofi_rxm/127.0.0.1:0: the fabric media need libfabric, "
            "and " + missing +
                " (BOREAL_LIBFABRIC) cannot be opened: " + missing +
                ": cannot open shared object file: No such file or directory (install "
                "libfabric, on Debian libfabric1, or set BOREAL_LIBFABRIC to the path of one)");

  // A library that is not libfabric (zlib, which every Debian system has). The name goes on
  // with the version asked for ("@FABRIC_1.3" with Debian 12's libfabric) and dlerror's words.
  ASSERT_EQ(::setenv("BOREAL_LIBFABRIC", "libz.so.1", 1), 0);
  auto wrong = open_listener(loop);
  ASSERT_FALSE(wrong);
  const std::string expected_start =
      "cannot listen on fabric://tcp;ofi_rxm/127.0.0.1:0: the fabric media need libfabric, and "
      "libz.so.1 (BOREAL_LIBFABRIC) is not a libfabric they can use: it has no fi_getinfo";
  EXPECT_EQ(wrong.error().message.substr(0, expected_start.size()), expected_start)
      << wrong.error().message;
  EXPECT_FALSE(libfabric_mapped());

  // The real one, by the soname found at configure time. Handlers of our own for SIGINT and
  // SIGTERM, SIGUSR1 ignored: libinfinipath (loaded by Debian's libfabric) would replace the
  // first two and the crash signals' handlers.
  ASSERT_EQ(::unsetenv("BOREAL_LIBFABRIC"), 0);
  struct sigaction ours {}, old_int{}, old_term{}, old_usr1{};
  ours.sa_handler = on_stop;
  sigemptyset(&ours.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &ours, &old_int), 0);
  ASSERT_EQ(::sigaction(SIGTERM, &ours, &old_term), 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGUSR1, &ignore, &old_usr1), 0);
  const auto before = dispositions();
  cpu_set_t affinity_before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof affinity_before, &affinity_before), 0);

  auto listener = open_listener(loop);
  ASSERT_TRUE(listener) << listener.error().message;
  EXPECT_NE(listener.value()->port(), 0);
  EXPECT_TRUE(libfabric_mapped());

  const auto after = dispositions();
  for (int signal = 1; signal < NSIG; ++signal) {
    const char* name = ::sigabbrev_np(signal);
    EXPECT_EQ(after[signal], before[signal])
        << "signal " << signal << " (SIG" << (name ? name : "RT") << ") changed";
  }
  cpu_set_t affinity_after;
  ASSERT_EQ(::sched_getaffinity(0, sizeof affinity_after, &affinity_after), 0);
  EXPECT_TRUE(CPU_EQUAL(&affinity_before, &affinity_after));

  // A second use finds it loaded, whatever BOREAL_LIBFABRIC says now.
  ASSERT_EQ(::setenv("BOREAL_LIBFABRIC", missing.c_str(), 1), 0);
  auto again = open_listener(loop);
  EXPECT_TRUE(again) << again.error().message;
  ASSERT_EQ(::unsetenv("BOREAL_LIBFABRIC"), 0);

  listener.value().reset();
  if (again) again.value().reset();
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
}

}  // namespace
}  // namespace boreal::transport
