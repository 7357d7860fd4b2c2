#include <boreal/ops/join.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

#include "numeric_read.hpp"
#include "state_io.hpp"

namespace boreal::ops {

namespace {

using NumKind = JoinBox::NumKind;


using detail::read_double;
using detail::read_int;

// |a - b| as an exact unsigned value (the difference of two int64 always fits in uint64).
std::uint64_t abs_diff(std::int64_t a, std::int64_t b) noexcept {
  return a >= b ? static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b)
                : static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a);
}

// a - b, clamped to int64's range.
std::int64_t saturating_sub(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) return std::numeric_limits<std::int64_t>::min();
  return out;
}

// A 64-bit mix over the key bytes, 8 at a time (the tail zero-padded). Not FNV-1a: this runs
// once per tuple and byte-at-a-time hashing would cost more than the probe.
std::uint64_t hash_key(const std::byte* key, std::size_t bytes) noexcept {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ bytes;
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t chunk;
    std::memcpy(&chunk, key + i, 8);
    h = (h ^ chunk) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  if (i < bytes) {
    std::uint64_t chunk = 0;
    std::memcpy(&chunk, key + i, bytes - i);
    h = (h ^ chunk) * 0x94D049BB133111EBull;
    h ^= h >> 29;
  }
  return h;
}

std::optional<NumKind> time_kind(FieldType type) {
  switch (type) {
    case FieldType::i32: return NumKind::i32;
    case FieldType::i64:
    case FieldType::timestamp: return NumKind::i64;
    default: return std::nullopt;
  }
}

std::optional<NumKind> band_kind(FieldType type) {
  if (type == FieldType::f64) return NumKind::f64;
  return time_kind(type);
}

std::string no_field(std::string_view name, const Schema& schema) {
  return "no field '" + std::string(name) + "' in schema " + schema.to_string();
}

// The field `name` of `schema`, or an error appended to `errors` at `where`.
const Field* find(const Schema& schema, std::string_view name, std::string where,
                  std::vector<Error>& errors) {
  if (auto index = schema.index_of(name)) return &schema.field(*index);
  errors.push_back(Error{no_field(name, schema), std::move(where)});
  return nullptr;
}

// Copy runs that move every field of `input` to its place in the output, where the output's
// fields [first, first + input.field_count()) are `input`'s fields in order. Adjacent fields
// that keep their relative position merge into one run.
std::vector<JoinBox::CopyRun> copy_runs(const Schema& input, const Schema& output,
                                        std::size_t first) {
  std::vector<JoinBox::CopyRun> runs;
  for (std::size_t i = 0; i < input.field_count(); ++i) {
    const Field& from = input.field(i);
    const Field& to = output.field(first + i);
    if (!runs.empty()) {
      JoinBox::CopyRun& last = runs.back();
      if (last.from + last.bytes == from.offset && last.to + last.bytes == to.offset) {
        last.bytes += from.width;
        continue;
      }
    }
    runs.push_back({from.offset, to.offset, from.width});
  }
  return runs;
}

}  // namespace

// One side's window: the stored tuples in arrival order in a ring (sequence numbers
// [first_, end_) are live, sequence s sits in slot s & mask_), each with its time, key bytes
// and key hash, and a chained hash index on the key: buckets_ holds, per bucket, 1 + the
// sequence of the newest tuple hashed there (0: none), and older_ links each tuple to the
// next older one of its bucket. Eviction only advances first_: a chain is cut where it
// reaches a sequence below first_, so evicted tuples never need unlinking. When the ring is
// full it doubles and the index is rebuilt oldest to newest, which keeps every chain newest
// first, so probe order never depends on when growth happened.
class JoinSide {
 public:
  JoinSide(std::uint32_t tuple_bytes, std::uint32_t key_bytes)
      : tuple_bytes_(tuple_bytes), key_bytes_(key_bytes) {
    resize(kInitialSlots);
  }

  [[nodiscard]] std::size_t size() const noexcept { return end_ - first_; }

  // Appends the stored tuples' rows, oldest first (a checkpoint, docs/faults.md).
  void append_rows(std::vector<std::byte>& out) const {
    for (std::uint64_t seq = first_; seq != end_; ++seq) {
      const std::byte* row = rows_.data() + (seq & mask_) * tuple_bytes_;
      out.insert(out.end(), row, row + tuple_bytes_);
    }
  }

  // Drops stored tuples, oldest first, while their time is below `bound`.
  void evict_before(std::int64_t bound) noexcept {
    while (first_ != end_ && times_[first_ & mask_] < bound) ++first_;
  }

  void store(const std::byte* row, std::int64_t time, const std::byte* key, std::uint64_t hash) {
    if (size() == slots_) resize(slots_ * 2);
    place(end_, row, time, key, hash);
    link(end_);
    ++end_;
  }

  // Calls on_match(row, time) for each stored tuple with this exact key, newest first.
  template <class F>
  void probe(const std::byte* key, std::uint64_t hash, F&& on_match) const {
    std::uint64_t link = buckets_[hash & mask_];
    while (link != 0 && link - 1 >= first_) {
      const std::uint64_t seq = link - 1;
      const std::size_t slot = seq & mask_;
      if (hashes_[slot] == hash &&
          (key_bytes_ == 0 ||
           std::memcmp(keys_.data() + slot * key_bytes_, key, key_bytes_) == 0)) {
        on_match(rows_.data() + slot * tuple_bytes_, times_[slot]);
      }
      link = older_[slot];
    }
  }

 private:
  static constexpr std::size_t kInitialSlots = 64;

  void place(std::uint64_t seq, const std::byte* row, std::int64_t time, const std::byte* key,
             std::uint64_t hash) {
    const std::size_t slot = seq & mask_;
    std::memcpy(rows_.data() + slot * tuple_bytes_, row, tuple_bytes_);
    if (key_bytes_ != 0) std::memcpy(keys_.data() + slot * key_bytes_, key, key_bytes_);
    times_[slot] = time;
    hashes_[slot] = hash;
  }

  void link(std::uint64_t seq) noexcept {
    const std::size_t slot = seq & mask_;
    std::uint64_t& head = buckets_[hashes_[slot] & mask_];
    older_[slot] = head;
    head = seq + 1;
  }

  // Moves the live tuples into `slots` slots (a power of two) and rebuilds the index.
  void resize(std::size_t slots) {
    JoinSide bigger(tuple_bytes_, key_bytes_, slots);
    bigger.first_ = first_;
    bigger.end_ = first_;
    for (std::uint64_t seq = first_; seq != end_; ++seq) {
      const std::size_t slot = seq & mask_;
      bigger.place(seq, rows_.data() + slot * tuple_bytes_, times_[slot],
                   keys_.data() + slot * key_bytes_, hashes_[slot]);
      bigger.link(seq);
      ++bigger.end_;
    }
    *this = std::move(bigger);
  }

  JoinSide(std::uint32_t tuple_bytes, std::uint32_t key_bytes, std::size_t slots)
      : tuple_bytes_(tuple_bytes),
        key_bytes_(key_bytes),
        slots_(slots),
        mask_(slots - 1),
        rows_(slots * tuple_bytes),
        keys_(slots * key_bytes),
        times_(slots),
        hashes_(slots),
        older_(slots),
        buckets_(slots) {}

  std::uint32_t tuple_bytes_;
  std::uint32_t key_bytes_;
  std::size_t slots_ = 0;  // ring capacity and bucket count, a power of two
  std::size_t mask_ = 0;
  std::vector<std::byte> rows_;
  std::vector<std::byte> keys_;
  std::vector<std::int64_t> times_;
  std::vector<std::uint64_t> hashes_;
  std::vector<std::uint64_t> older_;    // 1 + sequence of the next older tuple in the bucket
  std::vector<std::uint64_t> buckets_;  // 1 + sequence of the bucket's newest tuple
  std::uint64_t first_ = 0;
  std::uint64_t end_ = 0;
};

std::vector<Error> JoinParams::validate(const Schema& left, const Schema& right) const {
  std::vector<Error> errors;
  const Field* times[2] = {find(left, left_time, "params.left_time", errors),
                           find(right, right_time, "params.right_time", errors)};
  const char* time_where[2] = {"params.left_time", "params.right_time"};
  for (int side = 0; side < 2; ++side) {
    if (times[side] != nullptr && !time_kind(times[side]->type)) {
      errors.push_back(Error{"field '" + times[side]->name + "' is " + times[side]->type_name() +
                                 "; a join time field must be timestamp, i64 or i32",
                             time_where[side]});
    }
  }
  if (times[0] != nullptr && times[1] != nullptr && time_kind(times[0]->type) &&
      time_kind(times[1]->type) &&
      (times[0]->type == FieldType::timestamp) != (times[1]->type == FieldType::timestamp)) {
    errors.push_back(Error{"left time field '" + times[0]->name + "' is " +
                               times[0]->type_name() + " but right time field '" +
                               times[1]->name + "' is " + times[1]->type_name() +
                               "; a timestamp joins only with a timestamp",
                           "params.right_time"});
  }
  if (window < Duration::zero()) {
    errors.push_back(
        Error{"window must not be negative; got " + to_string(window), "params.window"});
  }
  if (slack < Duration::zero()) {
    errors.push_back(Error{"slack must not be negative; got " + to_string(slack), "params.slack"});
  }
  for (std::size_t i = 0; i < equal.size(); ++i) {
    const std::string at = "params.equal[" + std::to_string(i) + "]";
    const Field* l = find(left, equal[i].first, at + ".left", errors);
    const Field* r = find(right, equal[i].second, at + ".right", errors);
    if (l == nullptr || r == nullptr) continue;
    if (l->type != r->type) {
      errors.push_back(Error{"left field '" + l->name + "' is " + l->type_name() +
                                 " but right field '" + r->name + "' is " + r->type_name() +
                                 "; equality needs one type",
                             at});
    } else if (l->type == FieldType::f64) {
      errors.push_back(Error{"equality on f64 fields ('" + l->name + "', '" + r->name +
                                 "') is not supported; use a band of width 0",
                             at});
    }
  }
  if (band) {
    const Field* fields[2] = {find(left, band->left, "params.band.left", errors),
                              find(right, band->right, "params.band.right", errors)};
    const char* where[2] = {"params.band.left", "params.band.right"};
    for (int side = 0; side < 2; ++side) {
      if (fields[side] != nullptr && !band_kind(fields[side]->type)) {
        errors.push_back(Error{"field '" + fields[side]->name + "' is " +
                                   fields[side]->type_name() +
                                   "; a band needs a numeric field (i32, i64, f64, timestamp)",
                               where[side]});
      }
    }
    if (!std::isfinite(band->width) || band->width < 0) {
      errors.push_back(Error{"width must be a finite number >= 0, got " +
                                 std::to_string(band->width),
                             "params.band.width"});
    }
  }
  return errors;
}

Result<Schema> JoinBox::output_schema(const JoinParams& params, const Schema& left,
                                      const Schema& right) {
  std::vector<Error> errors = params.validate(left, right);
  if (!errors.empty()) return fail(describe(errors));
  std::vector<std::pair<std::string, std::string>> fields;
  for (const Field& f : left.fields()) fields.emplace_back("l_" + f.name, f.type_name());
  for (const Field& f : right.fields()) fields.emplace_back("r_" + f.name, f.type_name());
  Result<Schema> out = Schema::make(std::move(fields));
  if (!out) return fail(out.error().describe(), "output schema");
  return out;
}

Result<std::unique_ptr<JoinBox>> JoinBox::make(const JoinParams& params, const Schema& left,
                                               const Schema& right) {
  Result<Schema> out = output_schema(params, left, right);
  if (!out) return boost::outcome_v2::failure(std::move(out).error());
  return std::unique_ptr<JoinBox>(new JoinBox(params, left, right, std::move(out).value()));
}

JoinBox::JoinBox(const JoinParams& params, Schema left, Schema right, Schema output)
    : left_schema_(std::move(left)),
      right_schema_(std::move(right)),
      window_(params.window.count()),
      slack_(params.slack.count()),
      has_band_(params.band.has_value()),
      max_time_{std::numeric_limits<std::int64_t>::min(),
                std::numeric_limits<std::int64_t>::min()} {
  const Schema* inputs[2] = {&left_schema_, &right_schema_};
  const std::string* time_names[2] = {&params.left_time, &params.right_time};
  for (int side = 0; side < 2; ++side) {
    const Schema& in = *inputs[side];
    SidePlan& plan = plan_[side];
    const Field& time = in.field(*in.index_of(*time_names[side]));
    plan.time_offset = time.offset;
    plan.time_kind = *time_kind(time.type);
    for (const auto& [l, r] : params.equal) {
      const Field& mine = in.field(*in.index_of(side == 0 ? l : r));
      const Field& other =
          inputs[1 - side]->field(*inputs[1 - side]->index_of(side == 0 ? r : l));
      const std::uint32_t key_width = std::max(mine.width, other.width);
      plan.key.push_back({mine.offset, mine.width, key_width});
      plan.key_bytes += key_width;
    }
    if (has_band_) {
      const Field& f = in.field(*in.index_of(side == 0 ? params.band->left : params.band->right));
      plan.band_offset = f.offset;
      plan.band_kind = *band_kind(f.type);
      if (plan.band_kind == NumKind::f64) band_as_double_ = true;
    }
    plan.copy = copy_runs(in, output, side == 0 ? 0 : left_schema_.field_count());
    side_[side] = std::make_unique<JoinSide>(in.tuple_bytes(), plan.key_bytes);
  }
  if (has_band_) {
    band_width_ = params.band->width;
    // 2^64 as a double; any width at or above it admits every pair of integers.
    band_width_int_ = band_width_ >= 18446744073709551616.0
                          ? std::numeric_limits<std::uint64_t>::max()
                          : static_cast<std::uint64_t>(band_width_);
  }
  key_scratch_.resize(std::max<std::size_t>(plan_[0].key_bytes, 1));
  outputs_.emplace_back(std::move(output));
}

JoinBox::~JoinBox() = default;

std::size_t JoinBox::stored(std::size_t port) const noexcept { return side_[port]->size(); }

bool JoinBox::band_ok(const std::byte* left_row, const std::byte* right_row) const {
  const SidePlan& l = plan_[0];
  const SidePlan& r = plan_[1];
  if (band_as_double_) {
    const double diff = read_double(left_row, l.band_offset, l.band_kind) -
                        read_double(right_row, r.band_offset, r.band_kind);
    return std::fabs(diff) <= band_width_;  // false for NaN
  }
  return abs_diff(read_int(left_row, l.band_offset, l.band_kind),
                  read_int(right_row, r.band_offset, r.band_kind)) <= band_width_int_;
}

// The key: each condition's bytes, strings NUL-padded to the wider side's width, so equal
// values have equal bytes whatever the two fields' widths. Written to key_scratch_.
const std::byte* JoinBox::key_of(std::size_t port, const std::byte* row) noexcept {
  std::byte* at = key_scratch_.data();
  for (const KeyPart& part : plan_[port].key) {
    std::memcpy(at, row + part.offset, part.width);
    if (part.key_width > part.width) std::memset(at + part.width, 0, part.key_width - part.width);
    at += part.key_width;
  }
  return key_scratch_.data();
}

void JoinBox::on_tuple(std::size_t port, const std::byte* row) {
  const SidePlan& plan = plan_[port];
  const std::size_t other = 1 - port;
  const std::int64_t time = read_int(row, plan.time_offset, plan.time_kind);
  // Unbounded: nothing is evicted, so no tuple is late.
  if (window_ != std::numeric_limits<std::int64_t>::max() &&
      time < saturating_sub(max_time_[port], slack_)) {
    ++dropped_late_[port];  // late: its partners may be evicted already (join.hpp)
    return;
  }
  max_time_[port] = std::max(max_time_[port], time);
  // No future tuple of this port that is not late is older than max_time_ - slack, so the
  // other side's tuples older than max_time_ - slack - window can match nothing more.
  side_[other]->evict_before(saturating_sub(saturating_sub(max_time_[port], slack_), window_));

  const std::byte* key = key_of(port, row);
  const std::uint64_t hash = hash_key(key, plan.key_bytes);

  Output& out = outputs_[0];
  side_[other]->probe(key, hash, [&](const std::byte* stored, std::int64_t stored_time) {
    if (abs_diff(time, stored_time) > static_cast<std::uint64_t>(window_)) return;
    const std::byte* left_row = port == 0 ? row : stored;
    const std::byte* right_row = port == 0 ? stored : row;
    if (has_band_ && !band_ok(left_row, right_row)) return;
    MutRow dest = out.append();
    for (const CopyRun& run : plan_[0].copy) {
      std::memcpy(dest.data() + run.to, left_row + run.from, run.bytes);
    }
    for (const CopyRun& run : plan_[1].copy) {
      std::memcpy(dest.data() + run.to, right_row + run.from, run.bytes);
    }
  });
  side_[port]->store(row, time, key, hash);
}

void JoinBox::on_batch(std::size_t port, const BatchView& batch) {
  assert(port < 2);
  for (Row row : batch) on_tuple(port, row.data());
  outputs_[0].flush();
}

namespace {

constexpr std::uint32_t kJoinStateMagic = 0x4A4E5331;  // "JNS1"

}  // namespace

// The state: per side, the stored tuples' rows in arrival order; then each port's greatest
// time and late count. Keys, hashes and times are derived from the rows again on restore,
// and storing the rows oldest first rebuilds each side as it was: a probe visits one key's
// tuples newest first and eviction walks from the oldest, whatever the ring's size.
bool JoinBox::save_state(std::vector<std::byte>& out) const {
  using detail::put;
  put(out, kJoinStateMagic);
  std::vector<std::byte> rows;
  for (const auto& side : side_) {
    rows.clear();
    side->append_rows(rows);
    detail::put_bytes(out, rows.data(), rows.size());
  }
  put(out, max_time_[0]);
  put(out, max_time_[1]);
  put(out, dropped_late_[0]);
  put(out, dropped_late_[1]);
  return true;
}

Result<void> JoinBox::restore_state(std::span<const std::byte> in) {
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();
  if (max_time_[0] != kNever || max_time_[1] != kNever || stored(0) != 0 || stored(1) != 0) {
    return fail("restore_state on a join that has run");
  }
  auto bad = [](const std::string& what) { return fail("join state: " + what); };
  detail::StateReader r{in};
  if (r.get<std::uint32_t>() != kJoinStateMagic) return bad("not a join's saved state");
  const std::span<const std::byte> rows[2] = {r.bytes(), r.bytes()};
  const std::int64_t max_time[2] = {r.get<std::int64_t>(), r.get<std::int64_t>()};
  const std::uint64_t dropped[2] = {r.get<std::uint64_t>(), r.get<std::uint64_t>()};
  if (!r.done()) return bad("truncated or followed by other bytes");
  for (std::size_t side = 0; side < 2; ++side) {
    const std::uint32_t tuple_bytes = input_schema(side).tuple_bytes();
    if (rows[side].size() % tuple_bytes != 0) return bad("sizes do not fit this join's inputs");
    for (std::size_t at = 0; at < rows[side].size(); at += tuple_bytes) {
      const SidePlan& plan = plan_[side];
      if (read_int(rows[side].data() + at, plan.time_offset, plan.time_kind) > max_time[side]) {
        return bad("a stored tuple is newer than its port's greatest time");
      }
    }
  }
  for (std::size_t side = 0; side < 2; ++side) {
    const std::uint32_t tuple_bytes = input_schema(side).tuple_bytes();
    const SidePlan& plan = plan_[side];
    for (std::size_t at = 0; at < rows[side].size(); at += tuple_bytes) {
      const std::byte* row = rows[side].data() + at;
      const std::byte* key = key_of(side, row);
      side_[side]->store(row, read_int(row, plan.time_offset, plan.time_kind), key,
                         hash_key(key, plan.key_bytes));
    }
    max_time_[side] = max_time[side];
    dropped_late_[side] = dropped[side];
  }
  return success();
}

}  // namespace boreal::ops
