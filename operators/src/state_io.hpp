// Private to the operator boxes: writing and reading the bytes of ops::Box::save_state and
// restore_state (box.hpp). Native layout, no versioning: the bytes are for this build on this
// machine (docs/faults.md). Each box starts its state with a magic number of its own, so a
// state handed to the wrong box is refused before anything else is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace boreal::ops::detail {

// Appends `value`'s bytes.
template <class T>
void put(std::vector<std::byte>& out, const T& value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof value);
}

// Appends n, then n bytes from `data` (nullptr when n is 0).
inline void put_bytes(std::vector<std::byte>& out, const void* data, std::size_t n) {
  put(out, static_cast<std::uint64_t>(n));
  const auto* p = static_cast<const std::byte*>(data);
  if (n != 0) out.insert(out.end(), p, p + n);
}

// Reads back what put() and put_bytes() wrote, in the same order. A read past the end sets
// `bad` and yields zeros (or no bytes), so a reader checks `bad` once after a group of reads.
struct StateReader {
  std::span<const std::byte> in;
  bool bad = false;

  template <class T>
  T get() {
    T value{};
    if (in.size() < sizeof value) {
      bad = true;
      return value;
    }
    std::memcpy(&value, in.data(), sizeof value);
    in = in.subspan(sizeof value);
    return value;
  }

  std::span<const std::byte> bytes() {
    const auto n = get<std::uint64_t>();
    if (bad || n > in.size()) {
      bad = true;
      return {};
    }
    auto out = in.first(n);
    in = in.subspan(n);
    return out;
  }

  // Everything was read, and nothing more is there.
  [[nodiscard]] bool done() const noexcept { return !bad && in.empty(); }
};

}  // namespace boreal::ops::detail
