// Reading a numeric field of a row by offset, for boxes that handle i32, i64/timestamp and
// f64 fields alike (join, resample). `Kind` is the box's own enum with members i32 and f64;
// anything else is read as an 8-byte integer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace boreal::ops::detail {

template <class Kind>
[[nodiscard]] std::int64_t read_int(const std::byte* row, std::uint32_t offset,
                                    Kind kind) noexcept {
  if (kind == Kind::i32) {
    std::int32_t v;
    std::memcpy(&v, row + offset, sizeof v);
    return v;
  }
  std::int64_t v;
  std::memcpy(&v, row + offset, sizeof v);
  return v;
}

template <class Kind>
[[nodiscard]] double read_double(const std::byte* row, std::uint32_t offset, Kind kind) noexcept {
  if (kind == Kind::f64) {
    double v;
    std::memcpy(&v, row + offset, sizeof v);
    return v;
  }
  return static_cast<double>(read_int(row, offset, kind));
}

}  // namespace boreal::ops::detail
