// The two CRC-32C implementations behind crc32c(), exposed so that tests and benchmarks can
// check that they agree and compare their speed. Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace boreal::transport::detail {

// True when this CPU has the SSE4.2 crc32 instruction (evaluated once, on first call).
[[nodiscard]] bool crc32c_hw_available() noexcept;

// SSE4.2 crc32 instruction. Precondition: crc32c_hw_available(); otherwise it faults with SIGILL.
[[nodiscard]] std::uint32_t crc32c_hw(std::span<const std::byte> data, std::uint32_t crc) noexcept;

// Table-driven Boost.CRC; runs on any CPU.
[[nodiscard]] std::uint32_t crc32c_portable(std::span<const std::byte> data,
                                            std::uint32_t crc) noexcept;

}  // namespace boreal::transport::detail
