// Schema: the named, typed, fixed-width fields of a stream's tuples, and their byte layout.
//
// Layout. Fields sit back to back in declaration order, each at the next offset that is a
// multiple of its natural alignment (i32: 4; i64, f64, timestamp: 8; bool: 1; strN: 1); the
// tuple size is then rounded up to a multiple of 8, so every tuple of a batch starts 8-aligned
// when the batch buffer does. Padding bytes are zero (Batch::append zeroes the row). Values
// are stored in host byte order, which boreal requires to be little-endian (the wire's order).
//
// Types, as spelled in text:
//   i32, i64      two's-complement integers
//   f64           IEEE-754 double
//   bool          one byte, 0 or 1
//   timestamp     int64 nanoseconds since the Unix epoch, CLOCK_REALTIME (ops::Timestamp)
//   strN          N bytes, 1 <= N <= kMaxStrWidth (65496), NUL-padded (e.g. str8, str40); see
//                 FieldRef
//
// Canonical text and hash. to_string() is "name:type" per field, joined by ',' with no
// spaces: "seq:i64,ts:timestamp,pad:str40". The layout is a function of this text alone, and
// hash() is the 64-bit FNV-1a of its bytes, so the hash is stable across runs, machines,
// compilers and builds: two nodes agree on a schema iff their hashes match (used in link
// handshakes). Changing the canonical text format or the layout rules changes every hash and
// must bump the wire version.
//
// A Schema is immutable once made, cheap to share by const reference, and safe to read from
// any thread. Name look-ups (index_of) are linear and meant for plan time only; the per-tuple
// path uses FieldRef offsets (batch.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boreal/ops/error.hpp>

namespace boreal::ops {

enum class FieldType : std::uint8_t { i32, i64, f64, boolean, timestamp, str };

// Largest tuple a schema may describe: the limit of boreal's tuple size, the one constant the
// schema parser, the network file's batch_bytes checks and `--tuple-bytes` all refer to.
//
// Why 65496: a link sends tuples whole, so a frame's payload must hold at least one tuple, and
// a tuple must travel on every medium, so that a network's schemas do not depend on its media.
// fabric-rma writes a frame's length into 16 bits of the RDMA write's immediate data, so its
// frames are at most 65535 bytes, of which 32 are the header: 65503 bytes of payload
// (transport::kMaxPayloadBytesEveryMedium; tcp, fabric-msg and inproc take any 32-bit length).
// Tuples are multiples of 8 bytes, so the largest is 65496. boreal::ops does not depend on
// the transport; the runtime static_asserts the two agree (apps/src/spec/spec_values.hpp).
inline constexpr std::uint32_t kMaxTupleBytes = 65496;
// A string field may fill a whole tuple (a schema with the field alone is exactly that big).
inline constexpr std::uint32_t kMaxStrWidth = kMaxTupleBytes;
// Why kMaxTupleBytes is the limit, in every message that states it.
inline constexpr std::string_view kMaxTupleBytesWhy =
    "the largest tuple, one frame's payload on every medium";
static_assert(kMaxTupleBytes % 8 == 0, "tuples are padded to a multiple of 8 bytes");

// The C++ value of a `timestamp` field: nanoseconds since the Unix epoch on the system clock
// (CLOCK_REALTIME on Linux). Stored as a raw int64 count of nanoseconds.
using Timestamp = std::chrono::sys_time<std::chrono::nanoseconds>;

[[nodiscard]] inline Timestamp timestamp_now() noexcept {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

// "i32", "i64", "f64", "bool", "timestamp", or "str<width>" for FieldType::str.
[[nodiscard]] std::string type_name(FieldType type, std::uint32_t width = 0);

struct Field {
  std::string name;
  FieldType type = FieldType::i64;
  std::uint32_t width = 0;   // bytes the value occupies: 4, 8, 8, 1, 8, or N for strN
  std::uint32_t offset = 0;  // bytes from the start of the tuple

  [[nodiscard]] std::string type_name() const { return ops::type_name(type, width); }
  friend bool operator==(const Field&, const Field&) = default;
};

// 64-bit FNV-1a (offset basis 14695981039346656037, prime 1099511628211) over raw bytes.
[[nodiscard]] constexpr std::uint64_t fnv1a_64(std::string_view bytes) noexcept {
  std::uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

class Schema {
 public:
  // Builds a schema from (name, type name) pairs in declaration order. Field names must be
  // identifiers (ASCII letters, digits and '_', not starting with a digit) and unique; type
  // names are those listed at the top of this file. Reports the first problem, with its
  // location "fields[i]" (or "fields" for an empty list).
  static Result<Schema> make(std::vector<std::pair<std::string, std::string>> fields);

  // Parses the canonical text "name:type,name:type,..." (as printed by to_string()).
  // Spaces and tabs around names and types are allowed, so "seq: i64, pad: str8" also parses.
  static Result<Schema> parse(std::string_view text);

  [[nodiscard]] std::uint32_t tuple_bytes() const noexcept { return tuple_bytes_; }
  [[nodiscard]] std::size_t field_count() const noexcept { return fields_.size(); }
  // Precondition (asserted): index < field_count().
  [[nodiscard]] const Field& field(std::size_t index) const noexcept;
  [[nodiscard]] std::span<const Field> fields() const noexcept { return fields_; }
  // Index of the field called `name`, if any. Linear search: plan time only.
  [[nodiscard]] std::optional<std::size_t> index_of(std::string_view name) const noexcept;

  // fnv1a_64(to_string()), computed once at construction.
  [[nodiscard]] std::uint64_t hash() const noexcept { return hash_; }
  // The canonical text, e.g. "seq:i64,ts:timestamp,pad:str40".
  [[nodiscard]] const std::string& to_string() const noexcept { return canonical_; }

  // Same fields, types and order (hence same layout and hash).
  friend bool operator==(const Schema& a, const Schema& b) noexcept {
    return a.canonical_ == b.canonical_;
  }

 private:
  Schema() = default;

  std::vector<Field> fields_;
  std::string canonical_;
  std::uint64_t hash_ = 0;
  std::uint32_t tuple_bytes_ = 0;
};

}  // namespace boreal::ops
