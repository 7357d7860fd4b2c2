#include <boreal/ops/resample.hpp>

#include <cassert>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "numeric_read.hpp"
#include "state_io.hpp"

namespace boreal::ops {

namespace {

using Kind = ResampleBox::Kind;

Kind kind_of(FieldType type) {
  switch (type) {
    case FieldType::i32: return Kind::i32;
    case FieldType::i64:
    case FieldType::timestamp: return Kind::i64;
    case FieldType::f64: return Kind::f64;
    default: return Kind::other;
  }
}

bool is_time_type(FieldType type) {
  return type == FieldType::timestamp || type == FieldType::i64 || type == FieldType::i32;
}


using detail::read_double;
using detail::read_int;

// The first multiple of `interval` (> 0) at or after t; false if it exceeds int64.
bool grid_at_or_after(std::int64_t t, std::int64_t interval, std::int64_t& out) noexcept {
  std::int64_t g = (t / interval) * interval;  // rounds toward zero: g <= t iff t >= 0
  if (g < t) return !__builtin_add_overflow(g, interval, &out);
  out = g;
  return true;
}

constexpr std::uint32_t kResampleStateMagic = 0x52535331;  // "RSS1"

}  // namespace

std::vector<Error> ResampleParams::validate(const Schema& input) const {
  std::vector<Error> errors;
  std::set<std::string> seen;  // output names so far
  auto check = [&](const std::string& name, const std::string& where) -> const Field* {
    const auto index = input.index_of(name);
    if (!index) {
      errors.push_back(Error{"no field '" + name + "' in schema " + input.to_string(), where});
      return nullptr;
    }
    if (!seen.insert(name).second) {
      errors.push_back(Error{"field '" + name +
                                 "' appears more than once among time_field, group_by and "
                                 "value_fields",
                             where});
    }
    return &input.field(*index);
  };
  if (const Field* time = check(time_field, "params.time_field");
      time != nullptr && !is_time_type(time->type)) {
    errors.push_back(Error{"field '" + time->name + "' is " + time->type_name() +
                               "; the time field must be timestamp, i64 or i32",
                           "params.time_field"});
  }
  if (interval <= 0) {
    errors.push_back(
        Error{"interval must be > 0, got " + std::to_string(interval), "params.interval"});
  }
  for (std::size_t i = 0; i < group_by.size(); ++i) {
    check(group_by[i], "params.group_by[" + std::to_string(i) + "]");
  }
  const bool interpolate = mode == "interpolate";
  for (std::size_t i = 0; i < value_fields.size(); ++i) {
    const std::string where = "params.value_fields[" + std::to_string(i) + "]";
    const Field* value = check(value_fields[i], where);
    if (interpolate && value != nullptr && kind_of(value->type) == Kind::other) {
      errors.push_back(Error{"field '" + value->name + "' is " + value->type_name() +
                                 "; interpolate needs i32, i64 or f64",
                             where});
    }
    if (interpolate && value != nullptr && value->type == FieldType::timestamp) {
      errors.push_back(Error{"field '" + value->name +
                                 "' is timestamp; interpolate needs i32, i64 or f64",
                             where});
    }
  }
  if (mode != "hold" && !interpolate) {
    errors.push_back(
        Error{"unknown mode '" + mode + "'; expected 'hold' or 'interpolate'", "params.mode"});
  }
  return errors;
}

Result<Schema> ResampleBox::output_schema(const ResampleParams& params, const Schema& input) {
  std::vector<Error> errors = params.validate(input);
  if (!errors.empty()) return fail(describe(errors));
  std::vector<std::pair<std::string, std::string>> fields;
  auto add = [&](const std::string& name, bool as_f64) {
    const Field& f = input.field(*input.index_of(name));
    fields.emplace_back(name, as_f64 ? std::string("f64") : f.type_name());
  };
  add(params.time_field, false);
  for (const auto& name : params.group_by) add(name, false);
  for (const auto& name : params.value_fields) add(name, params.mode == "interpolate");
  Result<Schema> out = Schema::make(std::move(fields));
  if (!out) return fail(out.error().describe(), "output schema");
  return out;
}

Result<std::unique_ptr<ResampleBox>> ResampleBox::make(const ResampleParams& params,
                                                       const Schema& input) {
  Result<Schema> out = output_schema(params, input);
  if (!out) return boost::outcome_v2::failure(std::move(out).error());
  return std::unique_ptr<ResampleBox>(new ResampleBox(params, input, std::move(out).value()));
}

ResampleBox::ResampleBox(const ResampleParams& params, Schema input, Schema output)
    : input_(std::move(input)),
      interpolate_(params.mode == "interpolate"),
      interval_(params.interval) {
  const Field& time = input_.field(*input_.index_of(params.time_field));
  time_from_ = time.offset;
  time_kind_ = kind_of(time.type);
  time_to_ = output.field(0).offset;
  std::size_t out_index = 1;
  std::size_t key_bytes = 0;
  for (const auto& name : params.group_by) {
    const Field& f = input_.field(*input_.index_of(name));
    keys_.push_back({f.offset, output.field(out_index++).offset, f.width, kind_of(f.type)});
    key_bytes += f.width;
  }
  for (const auto& name : params.value_fields) {
    const Field& f = input_.field(*input_.index_of(name));
    values_.push_back({f.offset, output.field(out_index++).offset, f.width, kind_of(f.type)});
  }
  out_bytes_ = output.tuple_bytes();
  key_scratch_.assign(key_bytes, '\0');
  outputs_.emplace_back(std::move(output));
}

ResampleBox::Group& ResampleBox::group_of(const std::byte* row, std::int64_t time) {
  char* at = key_scratch_.data();
  for (const ValuePlan& key : keys_) {
    std::memcpy(at, row + key.from, key.width);
    at += key.width;
  }
  if (auto found = index_.find(key_scratch_); found != index_.end()) {
    return groups_[found->second];
  }
  index_.emplace(key_scratch_, groups_.size());
  Group& group = groups_.emplace_back();
  group.row.assign(out_bytes_, std::byte{0});
  for (const ValuePlan& key : keys_) {
    std::memcpy(group.row.data() + key.to, row + key.from, key.width);
  }
  if (!grid_at_or_after(time, interval_, group.start)) {
    group.start = std::numeric_limits<std::int64_t>::max();  // never reached
  }
  group.next = group.start;
  group.last.resize(values_.size());
  if (!interpolate_ && !hold_started_) {
    hold_started_ = true;
    hold_next_ = group.start;
    grid_exhausted_ = group.start == std::numeric_limits<std::int64_t>::max();
  }
  return group;
}

MutRow ResampleBox::emit(const Group& group, std::int64_t at) {
  MutRow row = outputs_[0].append_copy(Row(group.row.data()));
  if (time_kind_ == Kind::i32) {
    const auto v = static_cast<std::int32_t>(at);  // grid points of an i32 field fit i32
    std::memcpy(row.data() + time_to_, &v, sizeof v);
  } else {
    std::memcpy(row.data() + time_to_, &at, sizeof at);
  }
  return row;
}

// Emits every pending grid point g < bound (g <= bound if inclusive) for the started groups.
// Groups are in order of first appearance, which is also the order of their start points.
void ResampleBox::hold_emit_before(std::int64_t bound, bool inclusive) {
  if (!hold_started_) return;
  while (!grid_exhausted_ && (hold_next_ < bound || (inclusive && hold_next_ == bound))) {
    for (const Group& group : groups_) {
      if (group.start > hold_next_) break;
      emit(group, hold_next_);
    }
    if (__builtin_add_overflow(hold_next_, interval_, &hold_next_)) grid_exhausted_ = true;
  }
}

void ResampleBox::on_tuple(const std::byte* row) {
  const std::int64_t time = read_int(row, time_from_, time_kind_);
  if (any_ && time < frontier_) {
    ++late_dropped_;
    return;
  }
  any_ = true;
  frontier_ = time;
  max_tuple_time_ = time;
  if (!interpolate_) {
    hold_emit_before(time, false);
    Group& group = group_of(row, time);
    for (const ValuePlan& v : values_) {
      std::memcpy(group.row.data() + v.to, row + v.from, v.width);
    }
    return;
  }
  // Invariant: group.last_time <= group.next, so every grid point emitted here lies in
  // [last_time, time): p is the group's latest tuple, n this one. A group's first tuple has
  // next = start >= time and emits nothing.
  Group& group = group_of(row, time);
  while (group.next < time) {
    const double span = static_cast<double>(time - group.last_time);
    const double frac = static_cast<double>(group.next - group.last_time) / span;
    MutRow out = emit(group, group.next);
    for (std::size_t i = 0; i < values_.size(); ++i) {
      const double next_v = read_double(row, values_[i].from, values_[i].kind);
      const double v = group.last[i] + (next_v - group.last[i]) * frac;
      std::memcpy(out.data() + values_[i].to, &v, sizeof v);
    }
    if (__builtin_add_overflow(group.next, interval_, &group.next)) {
      group.next = std::numeric_limits<std::int64_t>::max();
    }
  }
  group.last_time = time;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    group.last[i] = read_double(row, values_[i].from, values_[i].kind);
  }
}

void ResampleBox::on_batch(std::size_t port, const BatchView& batch) {
  assert(port == 0);
  (void)port;
  for (Row row : batch) on_tuple(row.data());
  outputs_[0].flush();
}

void ResampleBox::tick(std::int64_t now) {
  if (interpolate_) return;
  if (!any_ || now > frontier_) {
    any_ = true;
    frontier_ = now;
  }
  hold_emit_before(now, false);
  outputs_[0].flush();
}

void ResampleBox::on_end() {
  if (!interpolate_) {
    if (hold_started_) hold_emit_before(max_tuple_time_, true);
    return;
  }
  for (Group& group : groups_) {
    if (group.next != group.last_time) continue;
    MutRow out = emit(group, group.next);
    for (std::size_t i = 0; i < values_.size(); ++i) {
      std::memcpy(out.data() + values_[i].to, &group.last[i], sizeof(double));
    }
  }
}

// The state: the groups in order of first appearance, each with its output row (key and, in
// hold mode, latest values), grid points and latest values; then the frontier and grid
// progress. The key index is rebuilt from the rows' group fields.
bool ResampleBox::save_state(std::vector<std::byte>& out) const {
  using detail::put;
  put(out, kResampleStateMagic);
  put(out, static_cast<std::uint64_t>(groups_.size()));
  for (const Group& group : groups_) {
    detail::put_bytes(out, group.row.data(), group.row.size());
    put(out, group.start);
    put(out, group.next);
    put(out, group.last_time);
    detail::put_bytes(out, group.last.data(), group.last.size() * sizeof(double));
  }
  for (bool flag : {any_, hold_started_, grid_exhausted_})
    put(out, static_cast<std::uint8_t>(flag));
  for (std::int64_t v : {frontier_, max_tuple_time_, hold_next_}) put(out, v);
  put(out, late_dropped_);
  return true;
}

Result<void> ResampleBox::restore_state(std::span<const std::byte> in) {
  if (any_ || !groups_.empty()) return fail("restore_state on a resample that has run");
  auto bad = [](const std::string& what) { return fail("resample state: " + what); };
  detail::StateReader r{in};
  if (r.get<std::uint32_t>() != kResampleStateMagic) return bad("not a resample's saved state");
  const auto count = r.get<std::uint64_t>();
  std::vector<Group> groups;
  for (std::uint64_t i = 0; i < count && !r.bad; ++i) {
    const auto row = r.bytes();
    Group group;
    group.start = r.get<std::int64_t>();
    group.next = r.get<std::int64_t>();
    group.last_time = r.get<std::int64_t>();
    const auto last = r.bytes();
    if (r.bad) break;
    if (row.size() != out_bytes_ || last.size() != values_.size() * sizeof(double)) {
      return bad("sizes do not fit this resample's fields");
    }
    group.row.assign(row.begin(), row.end());
    group.last.resize(values_.size());
    if (!last.empty()) std::memcpy(group.last.data(), last.data(), last.size());
    groups.push_back(std::move(group));
  }
  bool flags[3] = {};
  for (bool& flag : flags) flag = r.get<std::uint8_t>() != 0;
  std::int64_t times[3] = {};
  for (std::int64_t& v : times) v = r.get<std::int64_t>();
  const auto late = r.get<std::uint64_t>();
  if (!r.done()) return bad("truncated or followed by other bytes");
  std::unordered_map<std::string, std::size_t> index;
  std::string key(key_scratch_.size(), '\0');
  for (std::size_t g = 0; g < groups.size(); ++g) {
    char* at = key.data();
    for (const ValuePlan& part : keys_) {
      std::memcpy(at, groups[g].row.data() + part.to, part.width);
      at += part.width;
    }
    if (!index.emplace(key, g).second) return bad("group keys repeat");
  }
  index_ = std::move(index);
  groups_ = std::move(groups);
  any_ = flags[0];
  hold_started_ = flags[1];
  grid_exhausted_ = flags[2];
  frontier_ = times[0];
  max_tuple_time_ = times[1];
  hold_next_ = times[2];
  late_dropped_ = late;
  return success();
}

}  // namespace boreal::ops
