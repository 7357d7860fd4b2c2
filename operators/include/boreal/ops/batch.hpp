// Row, FieldRef, BatchView and Batch: tuples laid out back to back in one buffer, and typed
// access to their fields by byte offset.
//
// A Batch's used bytes are exactly a data frame's payload (docs/design.md "Data model"): a batch
// crosses a node boundary as a header plus these bytes, with no per-tuple serialisation.
//
//   Schema schema = Schema::parse("seq:i64,ts:timestamp,pad:str8").value();
//   auto seq = FieldRef<std::int64_t>::bind(schema, "seq").value();       // plan time
//   auto pad = FieldRef<std::string_view>::bind(schema, "pad").value();
//   OwnedBatch batch(schema, 1024);
//   while (!batch.full()) { MutRow row = batch.append(); seq.set(row, n++); pad.set(row, "x"); }
//   for (Row row : batch) total += seq.get(row);                           // per tuple
//   send(batch.bytes());                                   // the frame payload, as it is
//   BatchView in = BatchView::wrap(frame.payload, schema, frame.header.tuple_count).value();
//
// Rows, FieldRefs and Batches are plain values with no locks: one thread at a time may
// write a batch; any number may read one nobody writes.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>

#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

// A read-only view of one tuple: just its address. It does not know its schema; the
// FieldRefs that read it were bound to one at plan time.
class Row {
 public:
  explicit Row(const std::byte* data) noexcept : data_(data) {}
  [[nodiscard]] const std::byte* data() const noexcept { return data_; }

 private:
  const std::byte* data_;
};

// A writable view of one tuple. Converts to Row.
class MutRow {
 public:
  explicit MutRow(std::byte* data) noexcept : data_(data) {}
  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  operator Row() const noexcept { return Row(data_); }  // NOLINT: implicit on purpose

 private:
  std::byte* data_;
};

// Which C++ type reads and writes which field type.
template <class T>
struct FieldTraits;
template <>
struct FieldTraits<std::int32_t> {
  static constexpr FieldType type = FieldType::i32;
};
template <>
struct FieldTraits<std::int64_t> {
  static constexpr FieldType type = FieldType::i64;
};
template <>
struct FieldTraits<double> {
  static constexpr FieldType type = FieldType::f64;
};
template <>
struct FieldTraits<bool> {
  static constexpr FieldType type = FieldType::boolean;
};
template <>
struct FieldTraits<Timestamp> {
  static constexpr FieldType type = FieldType::timestamp;
};
template <>
struct FieldTraits<std::string_view> {  // any strN
  static constexpr FieldType type = FieldType::str;
};

template <class T>
concept FieldValue = requires { FieldTraits<T>::type; };

namespace detail {
// The field called `name` (or at `index`) if it has type `type`; errors name the field and
// both types. Shared by every FieldRef<T>::bind.
Result<Field> bind_field(const Schema& schema, std::string_view name, FieldType type);
Result<Field> bind_field(const Schema& schema, std::size_t index, FieldType type);
}  // namespace detail

// Typed access to one field at a fixed byte offset, resolved once at plan time. get/set are
// a memcpy of sizeof(T) bytes (one load or store once inlined; no alignment or aliasing
// assumptions). A FieldRef may be aggregate-initialised with a raw offset, unchecked; bind()
// checks the name and type against a schema.
template <FieldValue T>
struct FieldRef {
  std::uint32_t offset = 0;

  static Result<FieldRef> bind(const Schema& schema, std::string_view name) {
    return from(detail::bind_field(schema, name, FieldTraits<T>::type));
  }
  static Result<FieldRef> bind(const Schema& schema, std::size_t index) {
    return from(detail::bind_field(schema, index, FieldTraits<T>::type));
  }

  [[nodiscard]] T get(Row row) const noexcept {
    const std::byte* at = row.data() + offset;
    if constexpr (std::is_same_v<T, bool>) {
      unsigned char byte;
      std::memcpy(&byte, at, 1);
      return byte != 0;
    } else if constexpr (std::is_same_v<T, Timestamp>) {
      std::int64_t ns;
      std::memcpy(&ns, at, sizeof ns);
      return Timestamp(std::chrono::nanoseconds(ns));
    } else {
      T value;
      std::memcpy(&value, at, sizeof value);
      return value;
    }
  }

  void set(MutRow row, T value) const noexcept {
    std::byte* at = row.data() + offset;
    if constexpr (std::is_same_v<T, bool>) {
      const unsigned char byte = value ? 1 : 0;
      std::memcpy(at, &byte, 1);
    } else if constexpr (std::is_same_v<T, Timestamp>) {
      const std::int64_t ns = value.time_since_epoch().count();
      std::memcpy(at, &ns, sizeof ns);
    } else {
      std::memcpy(at, &value, sizeof value);
    }
  }

 private:
  static Result<FieldRef> from(Result<Field> field) {
    if (!field) return boost::outcome_v2::failure(std::move(field).error());
    return FieldRef{field.value().offset};
  }
};

// A strN field: N bytes, NUL-padded. get() returns the bytes up to the last non-NUL byte (so
// trailing NULs of a stored value are not preserved; NULs inside it are). set() copies at most
// N bytes — truncating longer values, byte-wise, which may split a UTF-8 sequence — and fills
// the rest with NUL. The view get() returns points into the row.
template <>
struct FieldRef<std::string_view> {
  std::uint32_t offset = 0;
  std::uint32_t width = 0;

  static Result<FieldRef> bind(const Schema& schema, std::string_view name) {
    return from(detail::bind_field(schema, name, FieldType::str));
  }
  static Result<FieldRef> bind(const Schema& schema, std::size_t index) {
    return from(detail::bind_field(schema, index, FieldType::str));
  }

  [[nodiscard]] std::string_view get(Row row) const noexcept {
    const char* at = reinterpret_cast<const char*>(row.data() + offset);
    std::size_t size = width;
    while (size > 0 && at[size - 1] == '\0') --size;
    return {at, size};
  }

  void set(MutRow row, std::string_view value) const noexcept {
    std::byte* at = row.data() + offset;
    const std::size_t size = std::min<std::size_t>(value.size(), width);
    // memmove: the value may be (part of) this very field, e.g. get(row).substr(1).
    if (size > 0) std::memmove(at, value.data(), size);
    std::memset(at + size, 0, width - size);
  }

 private:
  static Result<FieldRef> from(Result<Field> field) {
    if (!field) return boost::outcome_v2::failure(std::move(field).error());
    return FieldRef{field.value().offset, field.value().width};
  }
};

// Rows of one schema back to back in memory the view does not own and never writes: a
// received frame's payload (transport's FrameView::payload is a span of const bytes), or any
// Batch (a Batch is a BatchView). bytes() is exactly the data frame payload that carries these
// rows. Copying a view copies the pointer, not the rows; a view of a Batch does not see rows
// appended to it later. The memory needs no particular alignment: fields are read with memcpy.
class BatchView {
 public:
  class Iterator;

  BatchView() = default;  // no rows

  // A view of the `rows` tuples in `payload`, e.g. a frame payload with the header's tuple
  // count. Fails unless payload.size() is exactly rows * schema.tuple_bytes(). No copy.
  static Result<BatchView> wrap(std::span<const std::byte> payload, const Schema& schema,
                                std::uint64_t rows);
  // The same, with rows = payload.size() / schema.tuple_bytes(); fails unless the payload is
  // a whole number of tuples (zero tuples is fine).
  static Result<BatchView> wrap(std::span<const std::byte> payload, const Schema& schema);

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  // Bytes per row: the schema's tuple_bytes(), or 0 for a default-constructed view.
  [[nodiscard]] std::uint32_t tuple_bytes() const noexcept { return tuple_bytes_; }
  // Schema::hash() of the schema the view was made with (0 for a default-constructed view):
  // a box checks it against its input port's schema once per batch (Box::process()).
  [[nodiscard]] std::uint64_t schema_hash() const noexcept { return schema_hash_; }

  // Precondition (asserted in debug builds): index < size().
  [[nodiscard]] Row row(std::size_t index) const noexcept {
    assert(index < size_);
    return Row(data_ + index * tuple_bytes_);
  }

  // The used part: size() * tuple_bytes() bytes, i.e. the frame payload.
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
    return {data_, size_ * tuple_bytes_};
  }

  // Rows in order, first to last: `for (Row row : batch)`.
  [[nodiscard]] Iterator begin() const noexcept;
  [[nodiscard]] Iterator end() const noexcept;

 protected:
  BatchView(const std::byte* data, const Schema& schema, std::size_t size) noexcept
      : data_(data), tuple_bytes_(schema.tuple_bytes()), size_(size), schema_hash_(schema.hash()) {}

  const std::byte* data_ = nullptr;
  std::uint32_t tuple_bytes_ = 0;
  std::size_t size_ = 0;
  std::uint64_t schema_hash_ = 0;
};

class BatchView::Iterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Row;
  using difference_type = std::ptrdiff_t;

  Iterator() = default;
  Iterator(const std::byte* at, std::uint32_t stride) noexcept : at_(at), stride_(stride) {}

  Row operator*() const noexcept { return Row(at_); }
  Iterator& operator++() noexcept {
    at_ += stride_;
    return *this;
  }
  Iterator operator++(int) noexcept {
    Iterator before = *this;
    at_ += stride_;
    return before;
  }
  friend bool operator==(Iterator a, Iterator b) noexcept { return a.at_ == b.at_; }

 private:
  const std::byte* at_ = nullptr;
  std::uint32_t stride_ = 0;
};

inline BatchView::Iterator BatchView::begin() const noexcept {
  return Iterator(data_, tuple_bytes_);
}
inline BatchView::Iterator BatchView::end() const noexcept {
  return Iterator(data_ + size_ * tuple_bytes_, tuple_bytes_);
}

// A BatchView that can also write: rows of one schema back to back in a writable buffer the
// Batch does not own — a pooled frame buffer, an OwnedBatch's allocation — filled by append()
// without allocating. capacity_rows() = buffer size / tuple_bytes (leftover bytes are unused).
// Copying a Batch copies the view, not the rows: two copies that both append would overwrite
// each other's rows, so let one copy write.
class Batch : public BatchView {
 public:
  Batch() = default;  // no buffer: capacity 0
  // An empty batch for writing into `buffer`, e.g. a buffer from transport's BufferPool.
  Batch(std::span<std::byte> buffer, const Schema& schema) noexcept
      : BatchView(buffer.data(), schema, 0),
        buffer_(buffer),
        capacity_(buffer.size() / schema.tuple_bytes()) {}  // a Schema's tuple_bytes() >= 8

  // A full batch holding the `rows` tuples already in `payload`, to modify in place. Fails
  // unless payload.size() is exactly rows * schema.tuple_bytes(). No copy.
  static Result<Batch> wrap(std::span<std::byte> payload, const Schema& schema,
                            std::uint64_t rows);
  // The same, with rows = payload.size() / schema.tuple_bytes(); fails unless the payload is
  // a whole number of tuples.
  static Result<Batch> wrap(std::span<std::byte> payload, const Schema& schema);

  [[nodiscard]] std::size_t capacity_rows() const noexcept { return capacity_; }
  [[nodiscard]] bool full() const noexcept { return size_ == capacity_; }

  // Precondition (asserted in debug builds): index < size().
  [[nodiscard]] MutRow mut_row(std::size_t index) noexcept {
    assert(index < size_);
    return MutRow(buffer_.data() + index * tuple_bytes_);
  }

  // Adds one row, zeroed (so padding and unset fields are deterministic bytes on the wire),
  // and returns it for the caller to fill. Never allocates. Precondition: !full() — checked
  // in every build type, since a violation would write past the buffer; it aborts.
  MutRow append() noexcept {
    if (full()) [[unlikely]]
      overflow();
    std::byte* at = buffer_.data() + size_++ * tuple_bytes_;
    std::memset(at, 0, tuple_bytes_);
    return MutRow(at);
  }
  // Adds `n` zeroed rows at once and returns the first; the others follow it back to back.
  // Precondition: size() + n <= capacity_rows(), checked in every build type (aborts).
  MutRow append_n(std::size_t n) noexcept {
    if (n > capacity_ - size_) [[unlikely]]
      overflow();
    std::byte* at = buffer_.data() + size_ * tuple_bytes_;
    std::memset(at, 0, n * tuple_bytes_);
    size_ += n;
    return MutRow(at);
  }
  // Adds a copy of `source`, a row of the same schema. Same precondition as append().
  MutRow append_copy(Row source) noexcept {
    if (full()) [[unlikely]]
      overflow();
    std::byte* at = buffer_.data() + size_++ * tuple_bytes_;
    std::memcpy(at, source.data(), tuple_bytes_);
    return MutRow(at);
  }

  // Forgets the rows; the buffer and capacity stay.
  void clear() noexcept { size_ = 0; }

  // The whole buffer the batch writes into (bytes() is its used front).
  [[nodiscard]] std::span<std::byte> buffer() const noexcept { return buffer_; }

 private:
  [[noreturn]] void overflow() const noexcept;

  std::span<std::byte> buffer_;  // same start as BatchView::data_, but writable
  std::size_t capacity_ = 0;
};

// A Batch that owns its buffer: allocated (zeroed) once in the constructor, never again.
// Move-only; moving keeps the rows where they are, and a moved-from OwnedBatch is empty with
// capacity 0. For tests and embedders; the runtime writes into pooled buffers instead.
class OwnedBatch : public Batch {
 public:
  OwnedBatch(const Schema& schema, std::size_t capacity_rows);

  OwnedBatch(OwnedBatch&& other) noexcept;
  OwnedBatch& operator=(OwnedBatch&& other) noexcept;
  OwnedBatch(const OwnedBatch&) = delete;
  OwnedBatch& operator=(const OwnedBatch&) = delete;
  ~OwnedBatch() = default;

 private:
  std::unique_ptr<std::byte[]> storage_;
};

}  // namespace boreal::ops
