// CRC-32C (Castagnoli), the checksum of frames and of demo stream contents.
//
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at start-up) and a
// table-driven Boost.CRC fallback otherwise; both give the same value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace boreal::transport {

// Continues a CRC-32C: crc32c(b, crc32c(a)) == crc32c(a ++ b). Start from 0.
[[nodiscard]] std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc = 0) noexcept;

// The CRC-32C of a ++ b from crc32c(a), crc32c(b) and b's length, without reading either:
// crc32c_combine(crc32c(a), crc32c(b), b.size()) == crc32c(a ++ b). What lets one pass over
// a frame's payload serve both the frame's checksum and a stream's content checksum. Costs
// O(log length) carry-less multiplications in GF(2), a fraction of a microsecond.
[[nodiscard]] std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b,
                                           std::uint64_t length_b) noexcept;

}  // namespace boreal::transport
