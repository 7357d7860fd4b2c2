// Generator: parameter validation, field binding, the random streams and the pacing.
#include <algorithm>
#include <bit>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include <boreal/ops/source.hpp>

namespace boreal::ops {
namespace {

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string number(double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  (void)ec;
  return std::string(buffer, end);
}

void store_i64(MutRow row, std::uint32_t offset, std::int64_t value) noexcept {
  std::memcpy(row.data() + offset, &value, sizeof value);
}

// Decimal digits of the largest key, for strN key fields.
std::uint32_t digits(std::uint64_t value) noexcept {
  std::uint32_t n = 1;
  while (value >= 10) {
    value /= 10;
    ++n;
  }
  return n;
}

// 2^63 as a double: integer ranges must stay inside [-2^63, 2^63).
constexpr double kTwo63 = 9223372036854775808.0;

// The schema the parameters name, or the parse error with where "params.schema".
Result<Schema> schema_of(const GeneratorParams& params) {
  if (const auto* schema = std::get_if<Schema>(&params.schema)) return *schema;
  auto parsed = Schema::parse(std::get<std::string>(params.schema));
  if (!parsed) {
    Error error = parsed.error();
    error.within("params.schema");
    return boost::outcome_v2::failure(std::move(error));
  }
  return parsed;
}

// The rejection-inversion helpers: log1p(x)/x and expm1(x)/x, with their Taylor series near 0
// where the quotients lose precision.
double helper1(double x) noexcept {
  return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}
double helper2(double x) noexcept {
  return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

}  // namespace

std::vector<Error> GeneratorParams::validate() const {
  std::vector<Error> errors;
  auto parsed = schema_of(*this);
  if (rate && !(std::isfinite(*rate) && *rate > 0)) {
    errors.push_back({"rate must be a positive, finite number of tuples per second, got " +
                          number(*rate),
                      "params.rate"});
  }
  if (keys.count == 0) errors.push_back({"key count must be at least 1", "params.keys.count"});
  if (keys.distribution == KeyDistribution::zipf &&
      !(std::isfinite(keys.zipf_s) && keys.zipf_s > 0)) {
    errors.push_back({"Zipf exponent must be positive and finite, got " + number(keys.zipf_s),
                      "params.keys.zipf_s"});
  }
  if (!parsed) {
    errors.push_back(parsed.error());
    return errors;  // the field checks below need the schema
  }
  const Schema& layout = parsed.value();
  const std::string in_schema = " in schema '" + layout.to_string() + "'";

  // The sequence and time fields are optional, but when present must have a type we write.
  auto check_type = [&](const std::string& name, const char* where, const char* expected,
                        auto accepts) {
    auto index = name.empty() ? std::nullopt : layout.index_of(name);
    if (!index || accepts(layout.field(*index).type)) return;
    errors.push_back({"field " + in_quotes(name) + " has type " + layout.field(*index).type_name() +
                          "; expected " + expected + " (set it to \"\" to leave the field alone)",
                      where});
  };
  check_type(seq_field, "params.seq_field", "i64",
             [](FieldType type) { return type == FieldType::i64; });
  check_type(time_field, "params.time_field", "timestamp or i64", [](FieldType type) {
    return type == FieldType::timestamp || type == FieldType::i64;
  });

  if (!keys.field.empty()) {
    auto index = layout.index_of(keys.field);
    if (!index) {
      errors.push_back({"no field " + in_quotes(keys.field) + in_schema, "params.keys.field"});
    } else {
      const Field& field = layout.field(*index);
      const std::uint64_t largest = keys.count == 0 ? 0 : keys.count - 1;
      if (field.type == FieldType::i32) {
        if (largest > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
          errors.push_back({"key count " + std::to_string(keys.count) +
                                " does not fit the i32 field " + in_quotes(keys.field),
                            "params.keys.count"});
        }
      } else if (field.type == FieldType::i64) {
        if (largest > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          errors.push_back({"key count " + std::to_string(keys.count) +
                                " does not fit the i64 field " + in_quotes(keys.field),
                            "params.keys.count"});
        }
      } else if (field.type == FieldType::str) {
        if (digits(largest) > field.width) {
          errors.push_back({"key " + std::to_string(largest) + " needs " +
                                std::to_string(digits(largest)) + " bytes; field " +
                                in_quotes(keys.field) + " is " + field.type_name(),
                            "params.keys.field"});
        }
      } else {
        errors.push_back({"key field " + in_quotes(keys.field) + " has type " + field.type_name() +
                              "; expected i32, i64 or strN",
                          "params.keys.field"});
      }
      if (keys.field == seq_field || keys.field == time_field) {
        errors.push_back({"field " + in_quotes(keys.field) + " is already the " +
                              (keys.field == seq_field ? "sequence" : "time") + " field",
                          "params.keys.field"});
      }
    }
  }

  for (std::size_t i = 0; i < values.size(); ++i) {
    const ValueRange& range = values[i];
    const std::string where = "params.values[" + std::to_string(i) + "]";
    auto index = layout.index_of(range.field);
    if (!index) {
      errors.push_back({"no field " + in_quotes(range.field) + in_schema, where + ".field"});
      continue;
    }
    const Field& field = layout.field(*index);
    if (field.type != FieldType::i32 && field.type != FieldType::i64 &&
        field.type != FieldType::f64) {
      errors.push_back({"field " + in_quotes(range.field) + " has type " + field.type_name() +
                            "; a value range needs i32, i64 or f64",
                        where + ".field"});
      continue;
    }
    if (range.field == seq_field || range.field == time_field || range.field == keys.field) {
      errors.push_back({"field " + in_quotes(range.field) + " is already written as the " +
                            (range.field == seq_field    ? "sequence number"
                             : range.field == time_field ? "scheduled time"
                                                         : "key"),
                        where + ".field"});
      continue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (values[j].field == range.field) {
        errors.push_back({"field " + in_quotes(range.field) + " already has a range (values[" +
                              std::to_string(j) + "])",
                          where + ".field"});
        break;
      }
    }
    if (!std::isfinite(range.min) || !std::isfinite(range.max) || range.min > range.max) {
      errors.push_back({"range [" + number(range.min) + ", " + number(range.max) +
                            "] is empty or not finite",
                        where});
      continue;
    }
    if (field.type == FieldType::f64) continue;
    const double low = field.type == FieldType::i32 ? -2147483648.0 : -kTwo63;
    const double high = field.type == FieldType::i32 ? 2147483647.0 : kTwo63;  // i64: exclusive
    const bool integral = std::trunc(range.min) == range.min && std::trunc(range.max) == range.max;
    const bool inside = range.min >= low &&
                        (field.type == FieldType::i32 ? range.max <= high : range.max < high);
    if (!integral || !inside) {
      errors.push_back({"range [" + number(range.min) + ", " + number(range.max) + "] of " +
                            field.type_name() + " field " + in_quotes(range.field) +
                            " needs integer bounds within the type",
                        where});
    }
  }
  return errors;
}

Result<Generator> Generator::make(const GeneratorParams& params) {
  if (auto errors = params.validate(); !errors.empty()) return fail(describe(errors));
  Generator gen(schema_of(params).value());
  const Schema& schema = gen.schema_;

  // splitmix64 expands the seed into xoshiro's state (never all zero).
  std::uint64_t x = params.seed;
  for (auto& word : gen.rng_.state) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    word = z ^ (z >> 31);
  }

  gen.rate_ = params.rate;
  if (params.start_ns) {
    gen.start_ns_ = *params.start_ns;
    gen.started_ = true;
  }
  gen.limit_ = params.limit.value_or(kEndless);
  if (auto i = schema.index_of(params.seq_field); i && !params.seq_field.empty()) {
    gen.seq_offset_ = schema.field(*i).offset;
  }
  if (auto i = schema.index_of(params.time_field); i && !params.time_field.empty()) {
    gen.time_offset_ = schema.field(*i).offset;
  }
  if (!params.keys.field.empty()) {
    const Field& field = schema.field(*schema.index_of(params.keys.field));
    gen.key_kind_ = field.type == FieldType::i32 ? 1 : field.type == FieldType::i64 ? 2 : 3;
    gen.key_offset_ = field.offset;
    gen.key_width_ = field.width;
    gen.key_count_ = params.keys.count;
    if (gen.key_count_ > 1) gen.key_bound_ = Rng::Bound::of(gen.key_count_);
    gen.key_zipf_ = params.keys.distribution == KeyDistribution::zipf;
    if (gen.key_zipf_) {
      Zipf& z = gen.zipf_;
      z.s = params.keys.zipf_s;
      z.n = static_cast<double>(params.keys.count);
      auto h_integral = [&](double v) { return helper2((1 - z.s) * std::log(v)) * std::log(v); };
      auto h_integral_inverse = [&](double y) {
        return std::exp(helper1(std::max(-1.0, y * (1 - z.s))) * y);
      };
      z.h_integral_x1 = h_integral(1.5) - 1;
      z.h_integral_n = h_integral(z.n + 0.5);
      z.s_const = 2 - h_integral_inverse(h_integral(2.5) - std::exp(-z.s * std::log(2.0)));
    }
  }
  for (const ValueRange& range : params.values) {
    const Field& field = schema.field(*schema.index_of(range.field));
    Column column{};
    column.offset = field.offset;
    if (field.type == FieldType::f64) {
      column.kind = ColumnKind::real;
      column.base = range.min;
      column.width = range.max - range.min;
    } else {
      column.kind = field.type == FieldType::i32 ? ColumnKind::int32 : ColumnKind::int64;
      const auto low = static_cast<std::int64_t>(range.min);
      const auto high = static_cast<std::int64_t>(range.max);
      column.low = low;
      column.span = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low) + 1;
      if (column.span > 1) column.bound = Rng::Bound::of(column.span);
    }
    gen.columns_.push_back(column);
  }
  return gen;
}

// The per-row path (next, below, draw_key, write_row) is inlined into fill() and fill_due():
// called per row, its register saves and restores cost about as much as the row itself
// (perf annotate on a max-rate source).
[[gnu::always_inline]] inline std::uint64_t Generator::Rng::next() noexcept {
  const std::uint64_t result = std::rotl(state[1] * 5, 7) * 9;
  const std::uint64_t t = state[1] << 17;
  state[2] ^= state[0];
  state[3] ^= state[1];
  state[1] ^= state[2];
  state[0] ^= state[3];
  state[2] ^= t;
  state[3] = std::rotl(state[3], 45);
  return result;
}

double Generator::Rng::unit() noexcept {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::uint64_t Generator::Rng::below(std::uint64_t bound) noexcept {
  // Reject the lowest (2^64 mod bound) values so that every residue is equally likely.
  const std::uint64_t threshold = (0 - bound) % bound;
  while (true) {
    const std::uint64_t r = next();
    if (r >= threshold) return r % bound;
  }
}

Generator::Rng::Bound Generator::Rng::Bound::of(std::uint64_t bound) noexcept {
  Bound b;
  b.value = bound;
  b.threshold = (0 - bound) % bound;
  b.inverse = bound > 1 ? ~static_cast<U128>(0) / bound + 1 : 0;
  return b;
}

[[gnu::always_inline]] inline std::uint64_t Generator::Rng::below(const Bound& bound) noexcept {
  // below(bound.value) without its two divisions: the remainder r mod d is the high 64 bits
  // of (frac * d), frac = (inverse * r) mod 2^128 the fractional part of r / d in 128-bit
  // fixed point (D. Lemire, O. Kaser, N. Kurz, "Faster remainder by direct computation",
  // Software: Practice and Experience 49(6), 2019: exact for every 64-bit r when the inverse
  // has 128 bits).
  using u128 = U128;
  if (bound.value <= 1) {
    (void)next();  // below(1) draws once too: the stream must not change
    return 0;
  }
  while (true) {
    const std::uint64_t r = next();
    if (r < bound.threshold) continue;
    const u128 frac = bound.inverse * r;
    const u128 low = static_cast<u128>(static_cast<std::uint64_t>(frac)) * bound.value;
    const u128 high = static_cast<u128>(static_cast<std::uint64_t>(frac >> 64)) * bound.value;
    return static_cast<std::uint64_t>((high + (low >> 64)) >> 64);
  }
}

std::uint64_t Generator::draw_zipf() noexcept {
  const Zipf& z = zipf_;
  auto h = [&](double v) { return std::exp(-z.s * std::log(v)); };
  auto h_integral = [&](double v) { return helper2((1 - z.s) * std::log(v)) * std::log(v); };
  while (true) {
    const double u = z.h_integral_n + rng_.unit() * (z.h_integral_x1 - z.h_integral_n);
    const double t = std::max(-1.0, u * (1 - z.s));
    const double x = std::exp(helper1(t) * u);
    double k = std::floor(x + 0.5);
    k = std::clamp(k, 1.0, z.n);
    if (k - x <= z.s_const || u >= h_integral(k + 0.5) - h(k)) {
      return static_cast<std::uint64_t>(k) - 1;  // rank 1 is key 0
    }
  }
}

[[gnu::always_inline]] inline std::uint64_t Generator::draw_key() noexcept {
  if (key_count_ == 1) return 0;
  return key_zipf_ ? draw_zipf() : rng_.below(key_bound_);
}

[[gnu::always_inline]] inline void Generator::write_row(MutRow row, std::int64_t time_ns) noexcept {
  if (seq_offset_ >= 0) {
    store_i64(row, static_cast<std::uint32_t>(seq_offset_), static_cast<std::int64_t>(next_));
  }
  if (time_offset_ >= 0) store_i64(row, static_cast<std::uint32_t>(time_offset_), time_ns);
  if (key_kind_ != 0) {
    const std::uint64_t key = draw_key();
    std::byte* at = row.data() + key_offset_;
    if (key_kind_ == 1) {
      const auto v = static_cast<std::int32_t>(key);
      std::memcpy(at, &v, sizeof v);
    } else if (key_kind_ == 2) {
      const auto v = static_cast<std::int64_t>(key);
      std::memcpy(at, &v, sizeof v);
    } else {
      // validate() checked that the digits fit; the row is zeroed, so the rest stays NUL.
      char text[24];
      auto [end, ec] = std::to_chars(text, text + sizeof text, key);
      (void)ec;
      std::memcpy(at, text, static_cast<std::size_t>(end - text));
    }
  }
  for (const Column& column : columns_) {
    std::byte* at = row.data() + column.offset;
    switch (column.kind) {
      case ColumnKind::int32:
      case ColumnKind::int64: {
        const std::uint64_t draw = column.span == 0 ? rng_.next() : rng_.below(column.bound);
        const auto v = static_cast<std::int64_t>(static_cast<std::uint64_t>(column.low) + draw);
        if (column.kind == ColumnKind::int32) {
          const auto v32 = static_cast<std::int32_t>(v);
          std::memcpy(at, &v32, sizeof v32);
        } else {
          std::memcpy(at, &v, sizeof v);
        }
        break;
      }
      case ColumnKind::real: {
        const double v = column.base + rng_.unit() * column.width;
        std::memcpy(at, &v, sizeof v);
        break;
      }
    }
  }
  ++next_;
}

std::int64_t Generator::scheduled_ns(std::uint64_t index) const noexcept {
  if (!rate_) return start_ns_;
  // long double keeps i * 1e9 exact up to 2^64 and the floor right for whole quotients.
  const long double offset = std::floor(static_cast<long double>(index) * 1e9L / *rate_);
  return start_ns_ + static_cast<std::int64_t>(offset);
}

std::size_t Generator::fill(Batch& out, std::size_t max_rows) {
  assert(out.tuple_bytes() == schema_.tuple_bytes());
  started_ = true;  // start_ns_ stays 0 unless params.start_ns set it
  const std::size_t rows = std::min<std::uint64_t>(
      {max_rows, out.capacity_rows() - out.size(), limit_ - next_});
  // One memset for the block, not one library call per row.
  std::byte* at = rows == 0 ? nullptr : out.append_n(rows).data();
  for (std::size_t i = 0; i < rows; ++i, at += schema_.tuple_bytes()) {
    write_row(MutRow(at), scheduled_ns(next_));
  }
  return rows;
}

std::size_t Generator::fill_due(Batch& out, std::int64_t now_ns) {
  assert(out.tuple_bytes() == schema_.tuple_bytes());
  if (!started_) {
    start_ns_ = now_ns;
    started_ = true;
  }
  std::uint64_t due = limit_;
  if (rate_) {
    if (now_ns < start_ns_) return 0;
    // Tuples 0 .. due-1 are due: the estimate from the rate, corrected against scheduled_ns()
    // so that both agree exactly.
    const long double elapsed = static_cast<long double>(now_ns - start_ns_);
    due = static_cast<std::uint64_t>(std::floor(elapsed * *rate_ / 1e9L)) + 1;
    while (scheduled_ns(due) <= now_ns) ++due;
    while (due > 0 && scheduled_ns(due - 1) > now_ns) --due;
  }
  due = std::min(due, limit_);
  if (due <= next_) return 0;
  const std::size_t rows =
      std::min<std::uint64_t>(due - next_, out.capacity_rows() - out.size());
  std::byte* at = rows == 0 ? nullptr : out.append_n(rows).data();
  const std::uint32_t tuple_bytes = schema_.tuple_bytes();
  if (rate_) {
    for (std::size_t i = 0; i < rows; ++i, at += tuple_bytes)
      write_row(MutRow(at), scheduled_ns(next_));
  } else {
    for (std::size_t i = 0; i < rows; ++i, at += tuple_bytes) write_row(MutRow(at), now_ns);
  }
  return rows;
}

}  // namespace boreal::ops
