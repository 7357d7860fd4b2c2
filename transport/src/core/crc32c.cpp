#include <boreal/transport/crc32c.hpp>

#include <array>
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
namespace {

// The crc32 instruction has a latency of 3 cycles and a throughput of one per cycle, so one
// dependent chain runs at a third of its speed. Long buffers are cut into chunks of three
// kStripe-byte stripes whose CRCs run as three independent chains, then joined:
//   crc(A‖B‖C, s) = Z(Z(crc(A, s)) ⊕ crc(B, 0)) ⊕ crc(C, 0)
// where Z appends kStripe zero bytes to a raw CRC state. Z is linear in the state, so it is
// four table lookups (one per state byte), the tables built once with the instruction itself.
constexpr std::size_t kStripe = 2048;

struct ZeroExtend {
  std::uint32_t table[4][256];

  __attribute__((target("sse4.2"))) ZeroExtend() noexcept {
    for (int k = 0; k < 4; ++k) {
      for (std::uint32_t b = 0; b < 256; ++b) {
        std::uint64_t state = static_cast<std::uint64_t>(b) << (8 * k);
        for (std::size_t i = 0; i < kStripe / 8; ++i) state = _mm_crc32_u64(state, 0);
        table[k][b] = static_cast<std::uint32_t>(state);
      }
    }
  }
  [[nodiscard]] std::uint32_t operator()(std::uint32_t state) const noexcept {
    return table[0][state & 0xFF] ^ table[1][(state >> 8) & 0xFF] ^ table[2][(state >> 16) & 0xFF] ^
           table[3][state >> 24];
  }
};

std::uint64_t load64(const std::byte* p) noexcept {
  // Unaligned 8-byte loads cost the same as aligned ones on every SSE4.2 CPU, so no
  // alignment prologue: memcpy compiles to a single mov.
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

}  // namespace

__attribute__((target("sse4.2"))) std::uint32_t crc32c_hw(std::span<const std::byte> data,
                                                          std::uint32_t crc) noexcept {
  std::uint64_t state = ~crc;
  const std::byte* p = data.data();
  std::size_t left = data.size();
  if (left >= 3 * kStripe) {
    static const ZeroExtend zeros;
    while (left >= 3 * kStripe) {
      std::uint64_t a = state, b = 0, c = 0;
      for (std::size_t i = 0; i < kStripe; i += 8) {
        a = _mm_crc32_u64(a, load64(p + i));
        b = _mm_crc32_u64(b, load64(p + kStripe + i));
        c = _mm_crc32_u64(c, load64(p + 2 * kStripe + i));
      }
      state = zeros(zeros(static_cast<std::uint32_t>(a)) ^ static_cast<std::uint32_t>(b)) ^
              static_cast<std::uint32_t>(c);
      p += 3 * kStripe;
      left -= 3 * kStripe;
    }
  }
  while (left >= 8) {
    state = _mm_crc32_u64(state, load64(p));
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

namespace {

// Polynomials over GF(2) modulo the Castagnoli polynomial, in the CRC's reflected form: bit 31
// is the coefficient of x^0, bit 0 that of x^31, and 0x82F63B78 is the polynomial less x^32.
constexpr std::uint32_t kReflectedPoly = 0x82F63B78u;
constexpr std::uint32_t kOne = 1u << 31;  // x^0

// a · b mod P: for each term x^i of a (high bits first), add b · x^i, multiplying b by x one
// step at a time (a right shift, reduced when x^31 overflows).
constexpr std::uint32_t multiply_mod(std::uint32_t a, std::uint32_t b) noexcept {
  std::uint32_t product = 0;
  for (std::uint32_t term = kOne; term != 0 && a != 0; term >>= 1) {
    if ((a & term) != 0) {
      product ^= b;
      a ^= term;
    }
    b = (b & 1u) != 0 ? (b >> 1) ^ kReflectedPoly : b >> 1;
  }
  return product;
}

// x^(2^k) mod P for k = 0..66 (8 · a 64-bit length needs 2^66): each the square of the one
// before.
constexpr std::array<std::uint32_t, 67> kPowersOfTwo = [] {
  std::array<std::uint32_t, 67> powers{};
  powers[0] = kOne >> 1;  // x^1
  for (std::size_t k = 1; k < powers.size(); ++k)
    powers[k] = multiply_mod(powers[k - 1], powers[k - 1]);
  return powers;
}();

}  // namespace

std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b,
                             std::uint64_t length_b) noexcept {
  // Appending b to a multiplies a's CRC by x^(8 · length_b) and adds b's; the pre- and
  // post-inversions of the two CRCs cancel. x^(8n) is built from the binary digits of 8n.
  // A sender's frames nearly all have one length, so each thread keeps the last x^(8n) and
  // skips the ~log2(n) multiplications when the length repeats.
  thread_local std::uint64_t last_length = 0;
  thread_local std::uint32_t last_shift = kOne;
  if (length_b != last_length) {
    std::uint32_t shift = kOne;
    std::uint64_t bits = length_b;
    for (std::size_t k = 3; bits != 0; bits >>= 1, ++k) {  // 8n = n << 3: start at x^(2^3)
      if ((bits & 1u) != 0) shift = multiply_mod(kPowersOfTwo[k], shift);
    }
    last_length = length_b;
    last_shift = shift;
  }
  return multiply_mod(last_shift, crc_a) ^ crc_b;
}

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc) noexcept {
  // The branch is on a value fixed after the first call, so it predicts perfectly.
  if (detail::crc32c_hw_available()) return detail::crc32c_hw(data, crc);
  return detail::crc32c_portable(data, crc);
}

}  // namespace boreal::transport
