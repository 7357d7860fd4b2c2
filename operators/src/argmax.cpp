#include <boreal/ops/argmax.hpp>

#include <cassert>
#include <cmath>
#include <cstring>
#include <string>

#include "state_io.hpp"

namespace boreal::ops {

namespace {

constexpr std::uint32_t kArgMaxStateMagic = 0x414D5331;  // "AMS1"

}  // namespace

std::vector<Error> ArgMaxParams::validate(const Schema& input) const {
  std::vector<Error> errors;
  auto known = [&](const std::string& name, std::string_view where) -> const Field* {
    if (name.empty()) {
      errors.push_back({"is required", std::string(where)});
      return nullptr;
    }
    const auto index = input.index_of(name);
    if (!index) {
      errors.push_back({"no field '" + name + "' in the input (" + input.to_string() + ")",
                        std::string(where)});
      return nullptr;
    }
    return &input.field(*index);
  };
  if (const Field* f = known(by, "params.by"); f != nullptr && f->type == FieldType::f64) {
    errors.push_back({"'" + by + "' is f64; a group is a run of equal values, which doubles are "
                      "rarely meant to be (group by an integer or a string)", "params.by"});
  }
  if (const Field* f = known(field, "params.field");
      f != nullptr && f->type != FieldType::i32 && f->type != FieldType::i64 &&
      f->type != FieldType::timestamp && f->type != FieldType::f64) {
    errors.push_back({"'" + field + "' is " + f->type_name() +
                          "; the largest value needs a number (i32, i64, timestamp or f64)",
                      "params.field"});
  }
  return errors;
}

Result<std::unique_ptr<ArgMax>> ArgMax::make(const ArgMaxParams& params, const Schema& input,
                                             std::size_t batch_rows) {
  if (auto errors = params.validate(input); !errors.empty()) return fail(describe(errors));
  const Field& by = input.field(*input.index_of(params.by));
  const Field& field = input.field(*input.index_of(params.field));
  return std::unique_ptr<ArgMax>(new ArgMax(input, by, field, batch_rows));
}

ArgMax::ArgMax(const Schema& input, const Field& by, const Field& field, std::size_t batch_rows)
    : input_(input),
      by_offset_(by.offset),
      by_width_(by.width),
      field_offset_(field.offset),
      field_type_(field.type),
      tuple_bytes_(input.tuple_bytes()),
      key_(by.width) {
  outputs_.emplace_back(input, batch_rows);
}

const Schema& ArgMax::input_schema(std::size_t port) const noexcept {
  assert(port == 0);
  (void)port;
  return input_;
}

double ArgMax::value_of(const std::byte* row) const noexcept {
  double v = 0;
  std::memcpy(&v, row + field_offset_, sizeof v);
  return v;
}

void ArgMax::on_batch(std::size_t port, const BatchView& batch) {
  assert(port == 0);
  (void)port;
  const std::byte* row = batch.bytes().data();
  for (std::size_t i = 0; i < batch.size(); ++i, row += tuple_bytes_) {
    if (!open_ || std::memcmp(row + by_offset_, key_.data(), by_width_) != 0) {
      close_group();
      open_ = true;
      std::memcpy(key_.data(), row + by_offset_, by_width_);
    }
    // Compare with the group's best: larger replaces the ties, equal joins them.
    int order = 0;  // > 0: larger, 0: tie, < 0: smaller
    if (field_type_ == FieldType::f64) {
      const double v = value_of(row);
      if (std::isnan(v)) continue;
      order = tied_rows_ == 0 || v > best_real_ ? 1 : v == best_real_ ? 0 : -1;
      if (order > 0) best_real_ = v;
    } else {
      std::int64_t v = 0;
      if (field_type_ == FieldType::i32) {
        std::int32_t narrow = 0;
        std::memcpy(&narrow, row + field_offset_, sizeof narrow);
        v = narrow;
      } else {
        std::memcpy(&v, row + field_offset_, sizeof v);
      }
      order = tied_rows_ == 0 || v > best_int_ ? 1 : v == best_int_ ? 0 : -1;
      if (order > 0) best_int_ = v;
    }
    if (order < 0) continue;
    if (order > 0) tied_rows_ = 0;
    const std::size_t at = tied_rows_ * tuple_bytes_;
    if (tied_.size() < at + tuple_bytes_)
      tied_.resize(at + tuple_bytes_);  // grows to the largest tie
    std::memcpy(tied_.data() + at, row, tuple_bytes_);
    ++tied_rows_;
  }
  output(0).flush();
}

void ArgMax::close_group() {
  if (!open_) return;
  for (std::size_t i = 0; i < tied_rows_; ++i) {
    output(0).append_copy(Row(tied_.data() + i * tuple_bytes_));
  }
  ++groups_;
  tied_rows_ = 0;
  open_ = false;
}

void ArgMax::on_end() { close_group(); }

// The state: the open group's `by` bytes (if one is open), its tied rows and best value, and
// the count of closed groups.
bool ArgMax::save_state(std::vector<std::byte>& out) const {
  using detail::put;
  put(out, kArgMaxStateMagic);
  put(out, static_cast<std::uint8_t>(open_));
  detail::put_bytes(out, key_.data(), key_.size());
  detail::put_bytes(out, tied_.data(), tied_rows_ * tuple_bytes_);
  put(out, best_int_);
  put(out, best_real_);
  put(out, groups_);
  return true;
}

Result<void> ArgMax::restore_state(std::span<const std::byte> in) {
  if (open_ || groups_ != 0) return fail("restore_state on an argmax that has run");
  auto bad = [](const std::string& what) { return fail("argmax state: " + what); };
  detail::StateReader r{in};
  if (r.get<std::uint32_t>() != kArgMaxStateMagic) return bad("not an argmax's saved state");
  const bool open = r.get<std::uint8_t>() != 0;
  const auto key = r.bytes();
  const auto tied = r.bytes();
  const auto best_int = r.get<std::int64_t>();
  const auto best_real = r.get<double>();
  const auto groups = r.get<std::uint64_t>();
  if (!r.done()) return bad("truncated or followed by other bytes");
  if (key.size() != by_width_ || tied.size() % tuple_bytes_ != 0 || (!open && !tied.empty())) {
    return bad("sizes do not fit this argmax's input");
  }
  open_ = open;
  std::memcpy(key_.data(), key.data(), key.size());
  tied_.assign(tied.begin(), tied.end());
  tied_rows_ = tied.size() / tuple_bytes_;
  best_int_ = best_int;
  best_real_ = best_real;
  groups_ = groups;
  return success();
}

}  // namespace boreal::ops
