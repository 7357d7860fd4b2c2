#include <boreal/ops/map.hpp>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace boreal::ops {

struct Map::Column {
  Expr expr;
  FieldType type;           // output field type
  std::uint32_t offset;     // in the output row
  std::uint32_t width;      // strN: N
  // The chunk's values: int64 for integer and bool expressions, double for float ones.
  std::array<std::int64_t, Expr::kChunkRows> ints{};
  std::array<double, Expr::kChunkRows> floats{};
};

namespace {

std::string field_at(std::size_t i) { return "params.fields[" + std::to_string(i) + "]"; }

Error relocate(Error error, const std::string& where) {
  constexpr std::string_view kPrefix = "expression";
  if (error.where.starts_with(kPrefix)) {
    error.where = where + error.where.substr(kPrefix.size());
  } else {
    error.within(where);
  }
  return error;
}

// Whether an expression of `kind` may be stored in a field of `type`.
bool storable(ValueKind kind, FieldType type) {
  switch (kind) {
    case ValueKind::integer:
    case ValueKind::floating:
      return type == FieldType::i32 || type == FieldType::i64 || type == FieldType::f64 ||
             type == FieldType::timestamp;
    case ValueKind::boolean: return type == FieldType::boolean;
    case ValueKind::string: return type == FieldType::str;
  }
  return false;
}

std::string default_type(const Expr& expr) {
  switch (expr.kind()) {
    case ValueKind::integer: return "i64";
    case ValueKind::floating: return "f64";
    case ValueKind::boolean: return "bool";
    case ValueKind::string:
      return "str" + std::to_string(std::max<std::uint32_t>(1, expr.string_width()));
  }
  return "i64";
}

// Float to int64 without UB: truncates toward zero, saturates, NaN -> 0.
std::int64_t to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
  if (v < -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}
std::int32_t to_int32(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483648.0) return std::numeric_limits<std::int32_t>::max();
  if (v < -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(v);
}

// Compiles every field; reports all problems. On success fills `exprs` and `types`.
std::vector<Error> check(const MapParams& params, const Schema& input, std::vector<Expr>* exprs,
                         std::vector<std::pair<std::string, std::string>>* types) {
  std::vector<Error> errors;
  if (params.fields.empty())
    errors.push_back(Error{"map needs at least one field", "params.fields"});
  for (std::size_t i = 0; i < params.fields.size(); ++i) {
    const MapField& f = params.fields[i];
    const std::string at = field_at(i);
    if (auto ok = Schema::make({{f.name, "i64"}}); !ok) {
      errors.push_back(Error{f.name.empty() ? "output name is empty"
                                            : "output name '" + f.name +
                                                  "' is not an identifier (letters, digits, '_')",
                             at + ".name"});
    } else {
      for (std::size_t j = 0; j < i; ++j) {
        if (params.fields[j].name == f.name) {
          errors.push_back(Error{
              "duplicate output name '" + f.name + "' (also " + field_at(j) + ")", at + ".name"});
          break;
        }
      }
    }
    auto expr = Expr::compile(f.expression, input);
    if (!expr) {
      errors.push_back(relocate(expr.error(), at + ".expression"));
      continue;
    }
    std::string type = f.type ? *f.type : default_type(expr.value());
    if (f.type) {
      auto parsed = Schema::make({{"x", type}});
      if (!parsed) {
        errors.push_back(
            Error{"unknown type '" + type +
                      "' (types: i32, i64, f64, bool, timestamp, strN with 1 <= N <= " +
                      std::to_string(kMaxStrWidth) + ")",
                  at + ".type"});
        continue;
      }
      if (!storable(expr.value().kind(), parsed.value().field(0).type)) {
        errors.push_back(Error{"cannot store a " + std::string(kind_name(expr.value().kind())) +
                                   " expression in a " + type + " field",
                               at + ".type"});
        continue;
      }
    }
    if (exprs != nullptr) exprs->push_back(std::move(expr).value());
    if (types != nullptr) types->emplace_back(f.name, std::move(type));
  }
  return errors;
}

}  // namespace

std::vector<Error> MapParams::validate(const Schema& input) const {
  return check(*this, input, nullptr, nullptr);
}

Result<Schema> MapParams::output_schema(const Schema& input) const {
  std::vector<std::pair<std::string, std::string>> types;
  if (auto errors = check(*this, input, nullptr, &types); !errors.empty()) {
    return fail(describe(errors));
  }
  return Schema::make(std::move(types));
}

Result<std::unique_ptr<Map>> Map::make(const MapParams& params, const Schema& input) {
  std::vector<Expr> exprs;
  std::vector<std::pair<std::string, std::string>> types;
  if (auto errors = check(params, input, &exprs, &types); !errors.empty()) {
    return fail(describe(errors));
  }
  auto output = Schema::make(std::move(types));
  if (!output) return boost::outcome_v2::failure(std::move(output).error());
  std::vector<Column> columns;
  columns.reserve(exprs.size());
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    const Field& f = output.value().field(i);
    columns.push_back(Column{std::move(exprs[i]), f.type, f.offset, f.width});
  }
  return std::unique_ptr<Map>(new Map(input, std::move(output).value(), std::move(columns)));
}

Map::Map(const Schema& input, Schema output, std::vector<Column> columns)
    : input_(input), columns_(std::move(columns)) {
  outputs_.emplace_back(std::move(output));
}

Map::~Map() = default;

const Schema& Map::input_schema(std::size_t port) const noexcept {
  assert(port == 0);
  (void)port;
  return input_;
}

void Map::on_batch(std::size_t port, const BatchView& batch) {
  assert(port == 0);
  (void)port;
  Output& out = outputs_[0];
  for (std::size_t first = 0; first < batch.size(); first += Expr::kChunkRows) {
    const std::size_t count = std::min(Expr::kChunkRows, batch.size() - first);
    for (Column& c : columns_) {
      switch (c.expr.kind()) {
        case ValueKind::integer:
          if (c.type == FieldType::f64) {
            c.expr.eval_float_batch(batch, first, count, c.floats.data());
          } else {
            c.expr.eval_int_batch(batch, first, count, c.ints.data());
          }
          break;
        case ValueKind::floating:
          c.expr.eval_float_batch(batch, first, count, c.floats.data());
          break;
        case ValueKind::boolean: {
          std::array<bool, Expr::kChunkRows> flags;
          c.expr.eval_bool_batch(batch, first, count, flags.data());
          for (std::size_t i = 0; i < count; ++i) c.ints[i] = flags[i];
          break;
        }
        case ValueKind::string: break;  // copied row by row below
      }
    }
    // Fill a block of output rows a column at a time: one type dispatch per column and
    // block, then a tight loop over the rows.
    const std::uint32_t stride = out.schema().tuple_bytes();
    for (std::size_t done = 0; done < count;) {
      const Output::RowBlock block = out.append_block(count - done);
      for (const Column& c : columns_) {
        std::byte* at = block.data + c.offset;
        const bool from_float = c.expr.kind() == ValueKind::floating;
        switch (c.type) {
          case FieldType::i64:
          case FieldType::timestamp:
            for (std::size_t r = 0; r < block.rows; ++r, at += stride) {
              const std::int64_t v = from_float ? to_int64(c.floats[done + r]) : c.ints[done + r];
              std::memcpy(at, &v, 8);
            }
            break;
          case FieldType::i32:
            for (std::size_t r = 0; r < block.rows; ++r, at += stride) {
              const std::int32_t v = from_float ? to_int32(c.floats[done + r])
                                                : static_cast<std::int32_t>(c.ints[done + r]);
              std::memcpy(at, &v, 4);
            }
            break;
          case FieldType::f64:
            for (std::size_t r = 0; r < block.rows; ++r, at += stride) {
              std::memcpy(at, &c.floats[done + r], 8);
            }
            break;
          case FieldType::boolean:
            for (std::size_t r = 0; r < block.rows; ++r, at += stride) {
              *at = std::byte(c.ints[done + r] != 0 ? 1 : 0);
            }
            break;
          case FieldType::str:
            for (std::size_t r = 0; r < block.rows; ++r, at += stride) {
              const std::string_view s = c.expr.eval_str(batch.row(first + done + r));
              const std::size_t n = std::min<std::size_t>(s.size(), c.width);
              if (n > 0) std::memcpy(at, s.data(), n);  // the rest is already zero
            }
            break;
        }
      }
      done += block.rows;
    }
  }
}

}  // namespace boreal::ops
