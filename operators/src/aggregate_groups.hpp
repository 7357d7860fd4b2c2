// Private to the aggregate box: the group table. Maps the group-by fields' bytes of a row to a
// dense group id, ids given in first-seen order (0, 1, 2, ...).
//
// Open addressing with linear probing over a power-of-two slot array kept at most half full;
// a slot holds id + 1 (0 = empty) and the keys live back to back in one array, key_bytes each,
// so a hit costs a hash, one slot load and one key compare, and nothing is allocated except
// when a new group arrives (keys append, the slot array doubles). The slot index is the top
// bits of hash * 2^64/phi (Fibonacci hashing), so a plain integer key needs no further mixing.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <boreal/ops/schema.hpp>

namespace boreal::ops::aggregate_detail {

// How a key is read: no group-by (one group), one 8-byte field (compared as a word), or any
// other set of fields (gathered into a scratch key, compared with memcmp).
enum class KeyMode { none, word, bytes };

class GroupTable {
 public:
  // `fields`: the group-by fields of the input, in group_by order.
  explicit GroupTable(std::vector<Field> fields) : fields_(std::move(fields)) {
    for (const Field& f : fields_) key_bytes_ += f.width;
    scratch_.resize(key_bytes_);
    mode_ = fields_.empty()                                 ? KeyMode::none
            : (fields_.size() == 1 && key_bytes_ == 8)      ? KeyMode::word
                                                            : KeyMode::bytes;
    if (mode_ != KeyMode::none) grow();
  }

  [[nodiscard]] KeyMode mode() const noexcept { return mode_; }
  [[nodiscard]] std::uint32_t size() const noexcept { return count_; }
  [[nodiscard]] const std::vector<Field>& fields() const noexcept { return fields_; }
  // Group g's key: the group-by fields' bytes back to back.
  [[nodiscard]] const std::byte* key(std::uint32_t g) const noexcept {
    return keys_.data() + std::size_t{g} * key_bytes_;
  }

  // The id of the row's group; `added` says it is new (id == size() - 1).
  template <KeyMode M>
  std::uint32_t find(const std::byte* row, bool& added) {
    added = false;
    if constexpr (M == KeyMode::none) {
      if (count_ == 0) {
        added = true;
        count_ = 1;
      }
      return 0;
    } else {
      const std::byte* k;
      if constexpr (M == KeyMode::word) {
        k = row + fields_[0].offset;
      } else {
        std::byte* at = scratch_.data();
        for (const Field& f : fields_) {
          std::memcpy(at, row + f.offset, f.width);
          at += f.width;
        }
        k = scratch_.data();
      }
      std::size_t i = slot_of(hash(k));
      for (;;) {
        const std::uint32_t s = slots_[i];
        if (s == 0) {
          added = true;
          return add(k, i);
        }
        if (equal<M>(key(s - 1), k)) return s - 1;
        i = (i + 1) & mask_;
      }
    }
  }

 private:
  template <KeyMode M>
  bool equal(const std::byte* a, const std::byte* b) const noexcept {
    if constexpr (M == KeyMode::word) {
      std::uint64_t x, y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      return x == y;
    } else {
      return std::memcmp(a, b, key_bytes_) == 0;
    }
  }

  static std::uint64_t mix(std::uint64_t x) noexcept {  // MurmurHash3's 64-bit finaliser half
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }

  std::uint64_t hash(const std::byte* k) const noexcept {
    std::uint64_t word;
    if (mode_ == KeyMode::word) {
      std::memcpy(&word, k, 8);
      return word;
    }
    std::uint64_t h = 0x243F6A8885A308D3ull;
    std::uint32_t i = 0;
    for (; i + 8 <= key_bytes_; i += 8) {
      std::memcpy(&word, k + i, 8);
      h = mix(h ^ word);
    }
    std::uint64_t tail = 0;
    if (i < key_bytes_) std::memcpy(&tail, k + i, key_bytes_ - i);
    return mix(h ^ tail ^ key_bytes_);
  }

  std::size_t slot_of(std::uint64_t h) const noexcept {
    return static_cast<std::size_t>((h * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  std::uint32_t add(const std::byte* k, std::size_t slot) {
    const std::uint32_t g = count_++;
    keys_.insert(keys_.end(), k, k + key_bytes_);
    slots_[slot] = g + 1;
    if (std::size_t{count_} * 2 > slots_.size()) grow();
    return g;
  }

  void grow() {
    const std::size_t n = slots_.empty() ? 64 : slots_.size() * 2;
    slots_.assign(n, 0);
    mask_ = n - 1;
    shift_ = 64 - std::countr_zero(n);
    for (std::uint32_t g = 0; g < count_; ++g) {
      std::size_t i = slot_of(hash(key(g)));
      while (slots_[i] != 0) i = (i + 1) & mask_;
      slots_[i] = g + 1;
    }
  }

  std::vector<Field> fields_;
  std::uint32_t key_bytes_ = 0;
  KeyMode mode_ = KeyMode::none;
  std::vector<std::byte> keys_;
  std::vector<std::uint32_t> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::vector<std::byte> scratch_;
  std::uint32_t count_ = 0;
};

}  // namespace boreal::ops::aggregate_detail
