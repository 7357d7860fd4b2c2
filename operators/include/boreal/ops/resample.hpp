// ResampleBox: one row per group at every multiple of `interval` of a time field.
//
//   ResampleParams params{.time_field = "ts", .interval = 1'000'000'000, .group_by = {"sym"},
//                         .value_fields = {"price"}, .mode = "interpolate"};
//   auto box = ResampleBox::make(params, schema).value();
//
// Grid. The grid points are the multiples of `interval` (in the time field's unit, ns for a
// timestamp): ..., -interval, 0, interval, .... A group's first grid point is the first one at
// or after its first tuple's time; from there the group gets a row at every grid point. The
// output row is (time_field = the grid point, group_by fields, value fields), in that order
// and with those names.
//
// Modes.
//   "hold"         the values of the group's latest tuple at or before the grid point (of
//                  several tuples with that time, the last to arrive). Value fields keep
//                  their types (any type). A grid point g is emitted, for every group
//                  started at or before g, once the box knows no tuple with time <= g can
//                  still come: a tuple with time > g arrived (of any group), or tick(now) with
//                  now > g; at the end of the input, every grid point up to the greatest
//                  tuple time. At one grid point the groups come in order of first appearance.
//   "interpolate"  v(g) = p.v + (n.v - p.v) * (g - p.t) / (n.t - p.t), with p the group's
//                  latest tuple at or before g and n its first tuple after g; value fields
//                  must be i32, i64 or f64 and are emitted as f64. A grid point of a group is
//                  emitted when the group's first tuple after it arrives (so output lags one
//                  tuple of the group); at the end of the input, a grid point equal to the
//                  group's last tuple time is emitted with that tuple's values. tick() has no
//                  effect in this mode.
//
// Time order. Input is assumed in non-decreasing order of the time field. A tuple older than
// the box's time frontier (the greatest tuple time so far and, in hold mode, the greatest
// tick) would change rows already emitted: it is dropped and counted in late_dropped().
// Output depends only on the sequence of tuples (and ticks), never on how it is cut into
// batches; each process() call hands on (flushes) the rows it produced.
//
// One thread at a time. Per tuple: no name look-up and no virtual call; a new group
// allocates its state once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

struct ResampleParams {
  std::string time_field{};               // timestamp, i64 or i32
  std::int64_t interval = 0;              // in the time field's unit; > 0
  std::vector<std::string> group_by{};    // optional; any types
  std::vector<std::string> value_fields{};  // any types for hold; i32, i64, f64 to interpolate
  std::string mode = "hold";              // "hold" | "interpolate"

  // Every problem at once; `where` is "params.time_field", "params.interval",
  // "params.group_by[0]", "params.value_fields[1]", "params.mode".
  [[nodiscard]] std::vector<Error> validate(const Schema& input) const;
};

class ResampleBox final : public Box {
 public:
  static Result<std::unique_ptr<ResampleBox>> make(const ResampleParams& params,
                                                   const Schema& input);
  // The output schema make() would give, or the validation errors.
  static Result<Schema> output_schema(const ResampleParams& params, const Schema& input);

  [[nodiscard]] std::string_view type() const noexcept override { return "resample"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 1; }
  [[nodiscard]] const Schema& input_schema(std::size_t) const noexcept override {
    return input_;
  }

  // Hold mode: emits every grid point g < now (the promise that no tuple older than `now`
  // comes). Interpolate mode: nothing.
  void tick(std::int64_t now) override;

  // Checkpoints (box.hpp): the groups (their rows, grid points and latest values) and the
  // time frontier; a restored resample emits what this one would for the same tuples. In
  // hold mode the ticks count too: a network node ticks a resample on a timestamp field with
  // the wall clock, which a replay does not repeat, so a checkpointing node refuses one.
  [[nodiscard]] bool save_state(std::vector<std::byte>& out) const override;
  [[nodiscard]] Result<void> restore_state(std::span<const std::byte> in) override;

  [[nodiscard]] std::uint64_t late_dropped() const noexcept { return late_dropped_; }
  [[nodiscard]] std::size_t group_count() const noexcept { return groups_.size(); }

  enum class Kind : std::uint8_t { i32, i64, f64, other };
  struct ValuePlan {
    std::uint32_t from;   // offset in the input tuple
    std::uint32_t to;     // offset in the output row
    std::uint32_t width;  // bytes (hold)
    Kind kind;            // how to read it as a number (interpolate)
  };

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;
  void on_end() override;

 private:
  ResampleBox(const ResampleParams& params, Schema input, Schema output);

  struct Group {
    std::vector<std::byte> row;  // output row: group fields and (hold) the latest values
    std::int64_t start = 0;      // first grid point
    std::int64_t next = 0;       // interpolate: next grid point to emit
    std::int64_t last_time = 0;  // interpolate: time of the latest tuple
    std::vector<double> last;    // interpolate: its values
  };

  void on_tuple(const std::byte* row);
  void hold_emit_before(std::int64_t bound, bool inclusive);
  // Appends the group's row stamped with grid point `at`; returns it for the values.
  MutRow emit(const Group& group, std::int64_t at);
  Group& group_of(const std::byte* row, std::int64_t time);

  Schema input_;
  bool interpolate_;
  std::int64_t interval_;
  std::uint32_t time_from_ = 0;
  Kind time_kind_ = Kind::i64;
  std::uint32_t time_to_ = 0;
  std::vector<ValuePlan> keys_;    // group_by fields: from, to, width
  std::vector<ValuePlan> values_;
  std::uint32_t out_bytes_ = 0;
  std::string key_scratch_;  // fixed size: filled in place, so a look-up never allocates
  std::unordered_map<std::string, std::size_t> index_;  // key bytes -> groups_ index
  std::vector<Group> groups_;  // in order of first appearance
  bool any_ = false;           // a tuple (or, in hold mode, a tick) was seen
  std::int64_t frontier_ = 0;  // greatest tuple time or tick so far
  std::int64_t max_tuple_time_ = 0;
  std::int64_t hold_next_ = 0;  // hold: next grid point to emit for started groups
  bool hold_started_ = false;   // hold: a group exists, hold_next_ is set
  bool grid_exhausted_ = false;  // hold: the next grid point would overflow int64
  std::uint64_t late_dropped_ = 0;
};

}  // namespace boreal::ops
