#include <boreal/transport/crc32c.hpp>

#include <cstring>

#include "crc32c_impl.hpp"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include <boost/crc.hpp>

namespace boreal::transport {
namespace detail {
namespace {

// Boost.CRC's remainder is kept unreflected: checksum() == reflect(remainder) ^ final_xor.
// Resuming from a finished CRC therefore needs the reflected, un-xored value as remainder.
constexpr std::uint32_t reflect32(std::uint32_t v) noexcept {
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0F0F0F0Fu) | ((v & 0x0F0F0F0Fu) << 4);
  v = ((v >> 8) & 0x00FF00FFu) | ((v & 0x00FF00FFu) << 8);
  return (v >> 16) | (v << 16);
}

// 0x1EDC6F41 is the Castagnoli polynomial in normal form (0x82F63B78 reflected), RFC 3720 §B.4.
using BoostCrc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

}  // namespace

bool crc32c_hw_available() noexcept {
#if defined(__x86_64__)
  static const bool available = __builtin_cpu_supports("sse4.2") != 0;
  return available;
#else
  return false;
#endif
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_hw(std::span<const std::byte> data,
                                                          std::uint32_t crc) noexcept {
  std::uint64_t state = ~crc;
  const std::byte* p = data.data();
  std::size_t left = data.size();
  // Unaligned 8-byte loads cost the same as aligned ones on every SSE4.2 CPU, so no
  // alignment prologue: memcpy compiles to a single mov.
  while (left >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof word);
    state = _mm_crc32_u64(state, word);
    p += 8;
    left -= 8;
  }
  auto state32 = static_cast<std::uint32_t>(state);
  while (left > 0) {
    state32 = _mm_crc32_u8(state32, static_cast<std::uint8_t>(*p));
    ++p;
    --left;
  }
  return ~state32;
}
#else
std::uint32_t crc32c_hw(std::span<const std::byte> data, std::uint32_t crc) noexcept {
  return crc32c_portable(data, crc);
}
#endif

std::uint32_t crc32c_portable(std::span<const std::byte> data, std::uint32_t crc) noexcept {
  BoostCrc32c engine{reflect32(~crc)};
  engine.process_bytes(data.data(), data.size());
  return engine.checksum();
}

}  // namespace detail

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc) noexcept {
  // The branch is on a value fixed after the first call, so it predicts perfectly.
  if (detail::crc32c_hw_available()) return detail::crc32c_hw(data, crc);
  return detail::crc32c_portable(data, crc);
}

}  // namespace boreal::transport
