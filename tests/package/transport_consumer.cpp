// Links boreal::transport from an installed package (tests/package/CMakeLists.txt): prints the
// CRC-32C of the standard check string, whose value is 0xe3069283 by the algorithm's
// definition.
#include <cstddef>
#include <cstdio>
#include <span>
#include <string_view>

#include <boreal/transport/crc32c.hpp>

int main() {
  constexpr std::string_view kCheck = "123456789";
  const auto bytes = std::as_bytes(std::span(kCheck.data(), kCheck.size()));
  const unsigned crc = boreal::transport::crc32c(bytes);
  std::printf("transport_consumer: crc32c=%08x\n", crc);
  return crc == 0xe3069283u ? 0 : 1;
}
