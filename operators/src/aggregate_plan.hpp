// Private to the aggregate box: the parsed function names, how an argument is read, and the
// pane-ring arithmetic that validate() and the box share.
#pragma once

#include <cstdint>
#include <numeric>
#include <optional>
#include <string_view>

#include <boreal/ops/expr.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

enum class AggFunction : std::uint8_t { count, sum, min, max, avg, first, last };

std::optional<AggFunction> parse_agg_function(std::string_view name);

// An aggregate's argument (AggregateField::field) is an expression when it is not an input
// field's name and not a bare name either (a bare name that is no field is an unknown field,
// as it always was). A field is read in place per tuple, as before expressions existed; an
// expression is evaluated Expr::kChunkRows rows at a time into a value column.
inline bool is_expression_argument(std::string_view field, const Schema& input) {
  if (field.empty() || input.index_of(field)) return false;
  const auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!alpha(field.front())) return true;
  for (const char c : field) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return true;
  }
  return false;
}

// The type an expression argument's values have, as if they were a field's: integer -> i64,
// float -> f64, bool -> bool (string expressions are refused by validate()).
inline FieldType expression_field_type(ValueKind kind) {
  switch (kind) {
    case ValueKind::floating: return FieldType::f64;
    case ValueKind::boolean: return FieldType::boolean;
    default: return FieldType::i64;
  }
}

// Panes a group's ring must hold: the live span is at most size + slack time units (or size
// tuples), i.e. (size + slack) / pane panes, plus one pane at each end that is partly covered.
// Preconditions: 1 <= slide <= size <= 2^61, slack <= 2^61.
inline std::uint64_t pane_ring_need(std::uint64_t size, std::uint64_t slide, std::uint64_t slack) {
  const std::uint64_t pane = std::gcd(size, slide);
  return size / pane + slack / pane + 2;
}

}  // namespace boreal::ops
