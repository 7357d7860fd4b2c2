#include <boreal/ops/bsort.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <string>
#include <utility>

#include "state_io.hpp"

namespace boreal::ops {

namespace {

// std::push_heap/pop_heap keep the largest on top; "larger" here means later to leave.
bool leaves_later(const auto& a, const auto& b) noexcept {
  return a.key != b.key ? a.key > b.key : a.arrival > b.arrival;
}

// Signed integers: flipping the sign bit maps their order onto unsigned order.
std::uint64_t integer_key(std::int64_t value) noexcept {
  return std::bit_cast<std::uint64_t>(value) ^ (1ull << 63);
}

// IEEE-754 total order onto unsigned order: flip all bits of negatives, the sign of others.
std::uint64_t double_key(double value) noexcept {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  return (bits >> 63) != 0 ? ~bits : bits ^ (1ull << 63);
}

constexpr std::uint32_t kBSortStateMagic = 0x42535331;  // "BSS1"

}  // namespace

std::vector<Error> BSortParams::validate(const Schema& input) const {
  std::vector<Error> errors;
  if (const auto index = input.index_of(field); !index) {
    errors.push_back({"no field '" + field + "' in schema " + input.to_string(), "params.field"});
  } else {
    const Field& f = input.field(*index);
    if (f.type == FieldType::boolean || f.type == FieldType::str) {
      errors.push_back({"field '" + field + "' has type " + f.type_name() +
                            "; bsort orders by an i32, i64, f64 or timestamp field",
                        "params.field"});
    }
  }
  if (slack > kMaxBSortSlack) {
    errors.push_back({"slack " + std::to_string(slack) + " is larger than the limit " +
                          std::to_string(kMaxBSortSlack),
                      "params.slack"});
  }
  return errors;
}

Result<std::unique_ptr<BSortBox>> BSortBox::make(const BSortParams& params,
                                                 const Schema& input) {
  if (std::vector<Error> errors = params.validate(input); !errors.empty()) {
    return fail(describe(errors));
  }
  const Field& f = input.field(*input.index_of(params.field));
  const Kind kind = f.type == FieldType::i32   ? Kind::i32
                    : f.type == FieldType::f64 ? Kind::f64
                                               : Kind::i64;  // i64 and timestamp
  return std::unique_ptr<BSortBox>(new BSortBox(input, kind, f.offset, params.slack));
}

BSortBox::BSortBox(const Schema& input, Kind kind, std::uint32_t offset, std::uint64_t slack)
    : input_(input),
      kind_(kind),
      offset_(offset),
      tuple_bytes_(input.tuple_bytes()),
      capacity_(static_cast<std::size_t>(slack) + 1),
      rows_(std::make_unique<std::byte[]>(capacity_ * tuple_bytes_)) {
  outputs_.emplace_back(input);
  heap_.reserve(capacity_);
  free_slots_.reserve(capacity_);
  // Slots handed out from 0 upwards: pop from the back.
  for (std::size_t i = capacity_; i > 0; --i) {
    free_slots_.push_back(static_cast<std::uint32_t>(i - 1));
  }
}

const Schema& BSortBox::input_schema(std::size_t port) const noexcept {
  assert(port == 0);
  (void)port;
  return input_;
}

void BSortBox::on_batch(std::size_t port, const BatchView& batch) {
  assert(port == 0);
  (void)port;
  switch (kind_) {
    case Kind::i32: process_as<Kind::i32>(batch); break;
    case Kind::i64: process_as<Kind::i64>(batch); break;
    case Kind::f64: process_as<Kind::f64>(batch); break;
  }
}

template <BSortBox::Kind K>
std::uint64_t BSortBox::key_of(const std::byte* row) const noexcept {
  if constexpr (K == Kind::i32) {
    std::int32_t value;
    std::memcpy(&value, row + offset_, sizeof value);
    return integer_key(value);
  } else if constexpr (K == Kind::i64) {
    std::int64_t value;
    std::memcpy(&value, row + offset_, sizeof value);
    return integer_key(value);
  } else {
    double value;
    std::memcpy(&value, row + offset_, sizeof value);
    return double_key(value);
  }
}

template <BSortBox::Kind K>
void BSortBox::process_as(const BatchView& batch) {
  for (Row row : batch) {
    const std::uint64_t key = key_of<K>(row.data());
    // Invariant between rows: heap_.size() <= slack, so a slot is free.
    const std::uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    std::memcpy(rows_.get() + std::size_t{slot} * tuple_bytes_, row.data(), tuple_bytes_);
    heap_.push_back({key, arrivals_++, slot});
    std::push_heap(heap_.begin(), heap_.end(), [](const Entry& a, const Entry& b) {
      return leaves_later(a, b);
    });
    if (heap_.size() == capacity_) pop_to_output();
  }
}

void BSortBox::pop_to_output() {
  std::pop_heap(heap_.begin(), heap_.end(),
                [](const Entry& a, const Entry& b) { return leaves_later(a, b); });
  const std::uint32_t slot = heap_.back().slot;
  heap_.pop_back();
  outputs_[0].append_copy(Row(rows_.get() + std::size_t{slot} * tuple_bytes_));
  free_slots_.push_back(slot);
}

void BSortBox::on_end() {
  while (!heap_.empty()) pop_to_output();
}

// The state: how many rows have arrived, then each buffered row's arrival number and bytes.
// The sort keys come from the rows again. Rows leave in (key, arrival) order, which is total,
// so the order the entries are pushed in on restore does not change what leaves when.
bool BSortBox::save_state(std::vector<std::byte>& out) const {
  using detail::put;
  put(out, kBSortStateMagic);
  put(out, arrivals_);
  put(out, static_cast<std::uint64_t>(heap_.size()));
  for (const Entry& entry : heap_) {
    put(out, entry.arrival);
    detail::put_bytes(out, rows_.get() + std::size_t{entry.slot} * tuple_bytes_, tuple_bytes_);
  }
  return true;
}

Result<void> BSortBox::restore_state(std::span<const std::byte> in) {
  if (arrivals_ != 0) return fail("restore_state on a bsort that has run");
  auto bad = [](const std::string& what) { return fail("bsort state: " + what); };
  detail::StateReader r{in};
  if (r.get<std::uint32_t>() != kBSortStateMagic) return bad("not a bsort's saved state");
  const auto arrivals = r.get<std::uint64_t>();
  const auto count = r.get<std::uint64_t>();
  if (r.bad) return bad("truncated or followed by other bytes");
  if (count >= capacity_ || count > arrivals) {
    return bad(std::to_string(count) + " rows buffered, more than this bsort's slack " +
               std::to_string(capacity_ - 1) + " holds");
  }
  std::vector<Entry> entries;
  std::vector<std::span<const std::byte>> rows;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto arrival = r.get<std::uint64_t>();
    const auto row = r.bytes();
    if (r.bad) break;
    if (row.size() != tuple_bytes_) return bad("a row of another size than this bsort's input");
    if (arrival >= arrivals) return bad("a row arrived after the last arrival");
    entries.push_back({0, arrival, 0});
    rows.push_back(row);
  }
  if (!r.done()) return bad("truncated or followed by other bytes");
  std::vector<std::uint64_t> order(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) order[i] = entries[i].arrival;
  std::sort(order.begin(), order.end());
  if (std::adjacent_find(order.begin(), order.end()) != order.end()) {
    return bad("an arrival repeats");
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    Entry& entry = entries[i];
    entry.slot = free_slots_.back();
    free_slots_.pop_back();
    std::memcpy(rows_.get() + std::size_t{entry.slot} * tuple_bytes_, rows[i].data(), tuple_bytes_);
    switch (kind_) {
      case Kind::i32: entry.key = key_of<Kind::i32>(rows[i].data()); break;
      case Kind::i64: entry.key = key_of<Kind::i64>(rows[i].data()); break;
      case Kind::f64: entry.key = key_of<Kind::f64>(rows[i].data()); break;
    }
    heap_.push_back(entry);
  }
  std::make_heap(heap_.begin(), heap_.end(),
                 [](const Entry& a, const Entry& b) { return leaves_later(a, b); });
  arrivals_ = arrivals;
  return success();
}

}  // namespace boreal::ops
