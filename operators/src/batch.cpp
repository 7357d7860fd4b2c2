#include <boreal/ops/batch.hpp>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

namespace boreal::ops {

// Values are stored with memcpy in host byte order, and batch bytes go on the wire unchanged;
// the wire is little-endian (transport's frame format), so the host must be too.
static_assert(std::endian::native == std::endian::little,
              "boreal's batch layout is the wire format and assumes a little-endian host");

namespace detail {
namespace {

Result<Field> check_type(const Schema& schema, std::size_t index, FieldType type) {
  const Field& field = schema.field(index);
  if (field.type != type) {
    const std::string wanted = type == FieldType::str ? "str" : type_name(type);
    return fail("field '" + field.name + "' is " + field.type_name() + ", not " + wanted,
                "fields[" + std::to_string(index) + "]");
  }
  return field;
}

}  // namespace

Result<Field> bind_field(const Schema& schema, std::string_view name, FieldType type) {
  std::optional<std::size_t> index = schema.index_of(name);
  if (!index) {
    return fail("no field '" + std::string(name) + "' in schema " + schema.to_string());
  }
  return check_type(schema, *index, type);
}

Result<Field> bind_field(const Schema& schema, std::size_t index, FieldType type) {
  if (index >= schema.field_count()) {
    return fail("field index " + std::to_string(index) + " is out of range; the schema has " +
                std::to_string(schema.field_count()) + " fields");
  }
  return check_type(schema, index, type);
}

}  // namespace detail

namespace {

std::string row_bytes_text(std::uint64_t tuple_bytes) {
  return std::to_string(tuple_bytes) + "-byte rows";
}

// Rows in a payload said to hold `rows` tuples: fails unless it holds exactly that many.
Result<std::size_t> counted_rows(std::size_t payload_bytes, const Schema& schema,
                                 std::uint64_t rows) {
  const std::uint64_t tuple_bytes = schema.tuple_bytes();
  // rows * tuple_bytes must not wrap: check by division first.
  if (rows > std::numeric_limits<std::uint64_t>::max() / tuple_bytes ||
      rows * tuple_bytes != payload_bytes) {
    return fail("payload of " + std::to_string(payload_bytes) + " bytes does not hold " +
                std::to_string(rows) + " " + row_bytes_text(tuple_bytes));
  }
  return static_cast<std::size_t>(rows);
}

// Rows in a payload of whole tuples: fails on a partial tuple at the end.
Result<std::size_t> whole_rows(std::size_t payload_bytes, const Schema& schema) {
  const std::size_t tuple_bytes = schema.tuple_bytes();
  if (payload_bytes % tuple_bytes != 0) {
    return fail("payload of " + std::to_string(payload_bytes) +
                " bytes is not a whole number of " + row_bytes_text(tuple_bytes) + " (" +
                std::to_string(payload_bytes % tuple_bytes) + " bytes left over)");
  }
  return payload_bytes / tuple_bytes;
}

}  // namespace

Result<BatchView> BatchView::wrap(std::span<const std::byte> payload, const Schema& schema,
                                  std::uint64_t rows) {
  Result<std::size_t> count = counted_rows(payload.size(), schema, rows);
  if (!count) return boost::outcome_v2::failure(std::move(count).error());
  return BatchView(payload.data(), schema, count.value());
}

Result<BatchView> BatchView::wrap(std::span<const std::byte> payload, const Schema& schema) {
  Result<std::size_t> count = whole_rows(payload.size(), schema);
  if (!count) return boost::outcome_v2::failure(std::move(count).error());
  return BatchView(payload.data(), schema, count.value());
}

Result<Batch> Batch::wrap(std::span<std::byte> payload, const Schema& schema,
                          std::uint64_t rows) {
  Result<std::size_t> count = counted_rows(payload.size(), schema, rows);
  if (!count) return boost::outcome_v2::failure(std::move(count).error());
  Batch batch(payload, schema);
  batch.size_ = count.value();  // == capacity_: the payload holds exactly these rows
  return batch;
}

Result<Batch> Batch::wrap(std::span<std::byte> payload, const Schema& schema) {
  Result<std::size_t> count = whole_rows(payload.size(), schema);
  if (!count) return boost::outcome_v2::failure(std::move(count).error());
  Batch batch(payload, schema);
  batch.size_ = count.value();
  return batch;
}

void Batch::overflow() const noexcept {
  std::fprintf(stderr, "boreal: Batch::append on a full batch (capacity %zu rows)\n", capacity_);
  std::abort();
}

OwnedBatch::OwnedBatch(const Schema& schema, std::size_t capacity_rows)
    : storage_(std::make_unique<std::byte[]>(capacity_rows * schema.tuple_bytes())) {
  static_cast<Batch&>(*this) =
      Batch(std::span<std::byte>(storage_.get(), capacity_rows * schema.tuple_bytes()), schema);
}

OwnedBatch::OwnedBatch(OwnedBatch&& other) noexcept
    : Batch(static_cast<const Batch&>(other)), storage_(std::move(other.storage_)) {
  static_cast<Batch&>(other) = Batch();
}

OwnedBatch& OwnedBatch::operator=(OwnedBatch&& other) noexcept {
  if (this != &other) {
    static_cast<Batch&>(*this) = static_cast<const Batch&>(other);
    storage_ = std::move(other.storage_);
    static_cast<Batch&>(other) = Batch();
  }
  return *this;
}

}  // namespace boreal::ops
