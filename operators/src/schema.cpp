#include <boreal/ops/schema.hpp>

#include <algorithm>
#include <cassert>
#include <charconv>

namespace boreal::ops {
namespace {

struct TypeSpec {
  FieldType type;
  std::uint32_t width;
};

const std::string& valid_types() {
  static const std::string text =
      "valid types: i32, i64, f64, bool, timestamp, strN with 1 <= N <= " +
      std::to_string(kMaxStrWidth);
  return text;
}

std::string at_index(std::size_t index) { return "fields[" + std::to_string(index) + "]"; }

std::string in_quotes(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.append("'").append(text).append("'");
  return out;
}

bool is_identifier(std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (name.empty() || !letter(name.front())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || digit(c); });
}

// Type name -> type and width; errors are located by the caller.
Result<TypeSpec> parse_type(std::string_view text, std::string_view field_name) {
  if (text == "i32") return TypeSpec{FieldType::i32, 4};
  if (text == "i64") return TypeSpec{FieldType::i64, 8};
  if (text == "f64") return TypeSpec{FieldType::f64, 8};
  if (text == "bool") return TypeSpec{FieldType::boolean, 1};
  if (text == "timestamp") return TypeSpec{FieldType::timestamp, 8};
  if (text.starts_with("str") && text.size() > 3) {
    std::string_view digits = text.substr(3);
    std::uint32_t width = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), width);
    if (end == digits.data() + digits.size()) {  // all digits (an overflow sets ec, not end)
      if (ec == std::errc{} && width >= 1 && width <= kMaxStrWidth) {
        return TypeSpec{FieldType::str, width};
      }
      return fail("string width of field " + in_quotes(field_name) + " is " + std::string(digits) +
                  "; strN needs 1 <= N <= " + std::to_string(kMaxStrWidth) +
                  " (" + std::string(kMaxTupleBytesWhy) + ")");
    }
  }
  return fail("unknown type " + in_quotes(text) + " for field " + in_quotes(field_name) + "; " +
              valid_types());
}

std::uint32_t alignment_of(FieldType type) {
  switch (type) {
    case FieldType::i32: return 4;
    case FieldType::i64:
    case FieldType::f64:
    case FieldType::timestamp: return 8;
    case FieldType::boolean:
    case FieldType::str: return 1;
  }
  return 1;
}

std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlank = " \t";
  std::size_t first = text.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  std::size_t last = text.find_last_not_of(kBlank);
  return text.substr(first, last - first + 1);
}

}  // namespace

std::string type_name(FieldType type, std::uint32_t width) {
  switch (type) {
    case FieldType::i32: return "i32";
    case FieldType::i64: return "i64";
    case FieldType::f64: return "f64";
    case FieldType::boolean: return "bool";
    case FieldType::timestamp: return "timestamp";
    case FieldType::str: return "str" + std::to_string(width);
  }
  return "?";
}

Result<Schema> Schema::make(std::vector<std::pair<std::string, std::string>> fields) {
  if (fields.empty()) return fail("a schema needs at least one field", "fields");

  Schema schema;
  schema.fields_.reserve(fields.size());
  std::uint64_t offset = 0;  // 64-bit so that the size check below cannot wrap
  for (std::size_t i = 0; i < fields.size(); ++i) {
    auto& [name, type_text] = fields[i];
    if (name.empty()) return fail("field name is empty", at_index(i));
    if (!is_identifier(name)) {
      return fail("field name " + in_quotes(name) +
                      " is not an identifier (letters, digits and '_', not starting with a digit)",
                  at_index(i));
    }
    if (auto previous = schema.index_of(name)) {
      return fail("duplicate field name " + in_quotes(name) + " (first declared as " +
                      at_index(*previous) + ")",
                  at_index(i));
    }
    Result<TypeSpec> spec = parse_type(type_text, name);
    if (!spec) return fail(std::move(spec.error().message), at_index(i));

    offset = round_up(offset, alignment_of(spec.value().type));
    if (offset + spec.value().width > kMaxTupleBytes) {
      return fail("with field " + in_quotes(name) + " the tuple needs " +
                      std::to_string(round_up(offset + spec.value().width, 8)) +
                      " bytes; a tuple holds at most " + std::to_string(kMaxTupleBytes) +
                      " (one frame's payload on every medium)",
                  at_index(i));
    }
    schema.fields_.push_back(Field{std::move(name), spec.value().type, spec.value().width,
                                   static_cast<std::uint32_t>(offset)});
    offset += spec.value().width;

    if (i > 0) schema.canonical_.push_back(',');
    const Field& field = schema.fields_.back();
    schema.canonical_.append(field.name).append(":").append(field.type_name());
  }
  // round_up(offset, 8) <= kMaxTupleBytes because kMaxTupleBytes is a multiple of 8.
  schema.tuple_bytes_ = static_cast<std::uint32_t>(round_up(offset, 8));
  schema.hash_ = fnv1a_64(schema.canonical_);
  return schema;
}

Result<Schema> Schema::parse(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (trim(text).empty()) return fail("a schema needs at least one field", "fields");
  std::size_t index = 0;
  while (true) {
    std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return fail("expected 'name:type', got " + in_quotes(trim(item)), at_index(index));
    }
    fields.emplace_back(trim(item.substr(0, colon)), trim(item.substr(colon + 1)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    ++index;
  }
  return make(std::move(fields));
}

const Field& Schema::field(std::size_t index) const noexcept {
  assert(index < fields_.size());
  return fields_[index];
}

std::optional<std::size_t> Schema::index_of(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return i;
  }
  return std::nullopt;
}

}  // namespace boreal::ops
