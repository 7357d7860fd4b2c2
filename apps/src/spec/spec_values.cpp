#include "spec/spec_values.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// Alignment rules of ops/schema.hpp's layout (natural alignment; str is byte-aligned).
std::uint64_t alignment_of(ops::FieldType type) {
  switch (type) {
    case ops::FieldType::i32: return 4;
    case ops::FieldType::i64:
    case ops::FieldType::f64:
    case ops::FieldType::timestamp: return 8;
    case ops::FieldType::boolean:
    case ops::FieldType::str: return 1;
  }
  return 1;
}

std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// tuple_bytes() the schema would have with field `index` `width` bytes wide. Mirrors
// Schema::make's layout; resize_last_str() checks the result against the real schema.
std::uint64_t size_with(const ops::Schema& schema, std::size_t index, std::uint64_t width) {
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < schema.field_count(); ++i) {
    const ops::Field& field = schema.field(i);
    offset = round_up(offset, alignment_of(field.type));
    offset += i == index ? width : field.width;
  }
  return round_up(offset, 8);
}

}  // namespace

std::optional<std::string> check_range(std::int64_t value, std::int64_t min, std::int64_t max) {
  if (value < min) {
    return (min > 0 ? std::string("must be positive") : std::string("must not be negative")) +
           ", got " + std::to_string(value);
  }
  if (value > max) {
    return "must be at most " + std::to_string(max) + ", got " + std::to_string(value);
  }
  return std::nullopt;
}

std::string count_text(std::size_t n, std::string_view what) {
  return std::to_string(n) + " " + std::string(what) + (n == 1 ? "" : "s");
}

transport::Result<std::string> parse_medium(std::string_view name) {
  std::string valid;
  for (std::string_view medium : kMedia) {
    if (name == medium) return std::string(medium);
    valid.append(valid.empty() ? "" : ", ").append(medium);
  }
  return fail(ErrorCategory::config, 0,
              "unknown medium " + in_quotes(name) + " (valid: " + valid + ")");
}

transport::Result<std::string> parse_connection(std::string_view name) {
  std::string valid;
  for (std::string_view connection : kConnections) {
    if (name == connection) return std::string(connection);
    valid.append(valid.empty() ? "" : ", ").append(connection);
  }
  return fail(ErrorCategory::config, 0,
              "unknown connection " + in_quotes(name) + " (valid: " + valid + ")");
}

transport::Result<std::string> parse_provider(std::string_view name) {
  if (name.empty()) {
    return fail(ErrorCategory::config, 0,
                "empty provider (expected a libfabric provider such as tcp;ofi_rxm, sockets, shm, "
                "verbs or efa)");
  }
  for (const char c : name) {
    if (c == '/' || std::isspace(static_cast<unsigned char>(c))) {
      return fail(ErrorCategory::config, 0,
                  "provider " + in_quotes(name) +
                      " holds '/' or white space (expected a name as `fi_info -l` prints it)");
    }
  }
  return std::string(name);
}

transport::Result<std::optional<double>> parse_rate(std::string_view text) {
  if (text == "max") return std::optional<double>();
  if (text == "idle") return std::optional<double>(0.0);
  double rate = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, rate);
  // from_chars also reads "inf" and "nan"; neither is a rate.
  if (text.empty() || stop != end || ec != std::errc{} || !std::isfinite(rate) || rate <= 0) {
    return fail(ErrorCategory::config, 0,
                "expected a positive number of tuples/s, 'max' or 'idle', got " + in_quotes(text));
  }
  return std::optional<double>(rate);
}

Duration parse_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string_view unit = text.substr(digits);
  std::int64_t scale = 0;
  if (unit == "ns") scale = 1;
  if (unit == "us") scale = 1'000;
  if (unit == "ms") scale = 1'000'000;
  if (unit == "s") scale = 1'000'000'000;
  Duration out;
  if (digits == 0 || scale == 0) return out;
  out.matched = true;
  std::int64_t number = 0;
  const auto [stop, ec] = std::from_chars(text.data(), text.data() + digits, number);
  if (ec != std::errc{} || stop != text.data() + digits ||
      number > std::numeric_limits<std::int64_t>::max() / scale) {
    out.too_large = true;
  } else {
    out.ns = number * scale;
  }
  return out;
}

transport::Result<SinkKind> parse_sink_kind(std::string_view name) {
  for (SinkKind kind :
       {SinkKind::check, SinkKind::count, SinkKind::discard, SinkKind::latency, SinkKind::csv}) {
    if (name == to_string(kind)) return kind;
  }
  return fail(ErrorCategory::config, 0,
              "unknown sink kind " + in_quotes(name) +
                  " (valid: check, count, discard, latency, csv)");
}

void TransportPatch::apply_to(TransportSpec& spec) const {
  if (medium) spec.medium = *medium;
  if (provider) spec.provider = *provider;
  if (wait) spec.wait.mode = *wait;
  if (latency_budget) spec.wait.latency_budget = *latency_budget;
  if (spin) spec.wait.spin = *spin;
  if (flush) {
    spec.flush = *flush;
    spec.flush_given = true;
  }
  // Unless set, a partly filled frame waits half the budget; the receiver's waits get the rest.
  if (!spec.flush_given) spec.flush = spec.wait.latency_budget / 2;
  if (batch_bytes) spec.batch_bytes = *batch_bytes;
  if (connection) spec.connection = *connection;
  if (window) spec.window = *window;
}

transport::Result<ops::Schema> resize_last_str(const ops::Schema& schema,
                                               std::int64_t tuple_bytes) {
  std::optional<std::size_t> last_str;
  for (std::size_t i = 0; i < schema.field_count(); ++i) {
    if (schema.field(i).type == ops::FieldType::str) last_str = i;
  }
  if (!last_str) return fail(ErrorCategory::config, 0, "has no str field to resize");
  const std::string got = ", got " + std::to_string(tuple_bytes);
  const std::string& name = schema.field(*last_str).name;

  const std::uint64_t smallest = size_with(schema, *last_str, 1);
  if (tuple_bytes < 0 || static_cast<std::uint64_t>(tuple_bytes) < smallest) {
    return fail(ErrorCategory::config, 0,
                "needs at least " + std::to_string(smallest) + " bytes (with str1 for " +
                    in_quotes(name) + ")" + got);
  }
  // The string alone may fill the largest tuple (kMaxStrWidth == kMaxTupleBytes), so the tuple
  // limit is the only upper bound.
  static_assert(ops::kMaxStrWidth >= ops::kMaxTupleBytes);
  if (static_cast<std::uint64_t>(tuple_bytes) > ops::kMaxTupleBytes) {
    return fail(ErrorCategory::config, 0,
                "holds at most " + std::to_string(ops::kMaxTupleBytes) +
                    " bytes (" + std::string(ops::kMaxTupleBytesWhy) + ")" + got);
  }
  if (tuple_bytes % 8 != 0) {
    return fail(ErrorCategory::config, 0,
                "must be a multiple of 8 (tuples are 8-byte aligned)" + got);
  }
  // The size grows with the width in steps of 8 (the final round-up), so between the two
  // limits every multiple of 8 is reached; take the widest width that reaches it: the largest
  // width whose size is at most `wanted` (binary search, the size being monotone in the width).
  const auto wanted = static_cast<std::uint64_t>(tuple_bytes);
  std::uint64_t width = 1;  // size_with(width) <= wanted holds
  std::uint64_t above = std::uint64_t{ops::kMaxStrWidth} + 1;  // size_with(above) > wanted
  while (above - width > 1) {
    const std::uint64_t middle = width + (above - width) / 2;
    if (size_with(schema, *last_str, middle) <= wanted) {
      width = middle;
    } else {
      above = middle;
    }
  }
  std::vector<std::pair<std::string, std::string>> fields;
  for (std::size_t i = 0; i < schema.field_count(); ++i) {
    const ops::Field& field = schema.field(i);
    fields.emplace_back(field.name,
                        i == *last_str ? "str" + std::to_string(width) : field.type_name());
  }
  ops::Result<ops::Schema> resized = ops::Schema::make(std::move(fields));
  if (!resized || resized.value().tuple_bytes() != wanted) {
    // Unreachable while size_with() mirrors the layout rules of ops/schema.hpp.
    return fail(ErrorCategory::config, 0,
                "cannot be reached by resizing " + in_quotes(name) + " (layout rules disagree)" +
                    got);
  }
  return std::move(resized).value();
}

}  // namespace boreal::runtime
