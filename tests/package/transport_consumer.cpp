// Links boreal::transport from an installed package (tests/package/CMakeLists.txt): prints the
// CRC-32C of the standard check string, whose value is 0xe3069283 by the algorithm's
// definition, and whether libfabric is in the process (it must not be: the fabric media open
// it at their first use). Given the argument `fabric`, it then opens a fabric listener
// (provider tcp;ofi_rxm on 127.0.0.1) and prints what came of it: the package test runs that
// with BOREAL_LIBFABRIC naming a file that is not there (tests/package/NoLibfabric.cmake).
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <string_view>

#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/fabric_medium.hpp>

namespace {

bool libfabric_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/libfabric.so") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr std::string_view kCheck = "123456789";
  const auto bytes = std::as_bytes(std::span(kCheck.data(), kCheck.size()));
  const unsigned crc = boreal::transport::crc32c(bytes);
  const bool mapped = libfabric_mapped();
  std::printf("transport_consumer: crc32c=%08x libfabric=%s\n", crc,
              mapped ? "loaded" : "not-loaded");
  if (crc != 0xe3069283u || mapped) return 1;
  if (argc > 1 && std::string_view(argv[1]) == "fabric") {
    boreal::transport::EventLoop loop;
    auto listener =
        boreal::transport::FabricListener::open(loop, {"tcp;ofi_rxm", "127.0.0.1", 0});
    if (listener) {
      std::printf("transport_consumer: fabric listening on port %u\n",
                  static_cast<unsigned>(listener.value()->port()));
    } else {
      std::printf("transport_consumer: fabric error: %s\n", listener.error().message.c_str());
    }
  }
  return 0;
}
