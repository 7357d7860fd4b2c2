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

}  // namespace boreal::transport
