// Aggregate: group-by, windows on a tuple count or a time field, count/sum/min/max/avg/
// first/last, a timeout, and out-of-order input within a slack.
//
//   using namespace std::chrono_literals;
//   auto agg = AggregateBox::make({.group_by = {"sym"},
//                                  .window = {.field = "ts", .size = 10s, .slide = 5s},
//                                  .aggregates = {{"count", "", "n"}, {"avg", "price", "avg"}}},
//                                 schema).value();
//
// Windows.
//   count: per group. Each group's tuples are numbered 0, 1, 2, ... in arrival order; window
//          k of a group holds its tuples [k*slide, k*slide + size). It is emitted the moment
//          its last tuple arrives, so count windows come out in input order. At the end of
//          the input every window still open that holds a tuple is emitted (partial), group
//          by group in first-seen order, each group's windows by start.
//          window_start / window_end = index of the window's first / last tuple (inclusive)
//          within its group; for a partial window, the last tuple it actually holds.
//   time:  on a timestamp, i64 or i32 field holding nanoseconds (window.hpp). Window k
//          is [k*slide, k*slide + size), aligned to multiples of slide from 0 (negative
//          times too). A window is emitted when the watermark (highest time seen - slack)
//          reaches its end; windows holding no tuple are never emitted. Emission order: by
//          window end, then by group in first-seen order (the order in which the box first
//          saw each group since it was made). At the end of the input every window holding a
//          tuple is emitted, in the same order.
//          window_start = k*slide, window_end = k*slide + size (exclusive).
//   slide == size is tumbling, slide < size sliding.
//
// Out of order (time windows only): slack, as window.hpp defines it for the aggregate and the
// join. Here the watermark is the highest time seen - slack: a tuple at or after it is placed
// in its windows, windows close only when the watermark passes their end, and an older tuple
// is dropped and counted (dropped_late()). With distinct times, any input order within the
// slack gives the same output as the sorted input (f64 sums and averages up to rounding:
// floating-point addition follows arrival order).
//
// Timeout (time windows only): tick(now), `now` in nanoseconds like the time field. When
// now - highest time seen >= timeout, every window holding a tuple is emitted (as at the end
// of input) and the watermark moves to the end of the last of them: later tuples falling into
// a closed window are late (dropped and counted).
//
// Functions, and the output column each gives:
//   count       number of tuples                           i64   (field must be empty)
//   sum         i32/i64 field → i64 (wraps on overflow), f64 → f64
//   avg         i32/i64/f64 field → f64 (integers summed exactly as i64, then divided)
//   min, max    any field type; str compares bytes (NUL-padded) → the field's type
//   first, last value of the tuple with the lowest / highest time (count windows: index);
//               ties go to the earliest / latest arrival  → the field's type
//
// Output schema: the group-by fields (same names and types, in group_by order), then
// window_start and window_end (timestamp for a timestamp time field, i64 otherwise), then one
// column per aggregate named `as`, in order, then (if `partial_field` is set) a bool column
// that tells windows flushed early from closed ones. output_schema() computes it.
//
// Implementation. Groups are found by an open-addressing hash table keyed by the group-by
// fields' bytes (one memcpy per field into a scratch key, a hash, linear probing); each group
// is a dense id in first-seen order. Windows are built from panes of gcd(size, slide)
// tuples or time units: each group keeps a ring of pane partial aggregates, a window is the
// merge of its size/gcd panes when it closes. Tumbling windows are one pane. The ring holds
// size/gcd + slack/gcd + 2 panes rounded up to a power of two (slack 0 for count windows);
// validate() limits that count to kMaxPanes. After a group exists, a tuple allocates nothing.
//
// Threads: one thread at a time (like every Box). Nothing blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <variant>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>
#include <boreal/ops/window.hpp>

namespace boreal::ops {

enum class WindowKind : std::uint8_t { count, time };

struct WindowSpec {
  std::string field{};  // the time field (time windows only; empty for count windows)
  WindowLength size{};  // a Duration (a time window) or a Count (a count window); > 0
  WindowLength slide{};  // the same kind as size; 0 < slide <= size (== size: tumbling)

  // time when size is a Duration, count when it is a Count.
  [[nodiscard]] WindowKind kind() const noexcept {
    return std::holds_alternative<Count>(size) ? WindowKind::count : WindowKind::time;
  }
};

struct AggregateField {
  std::string function;  // count sum min max avg first last
  // The argument: an input field's name (read in place per tuple), or an expression over the
  // input row (ops/expr.hpp), e.g. "price * 0.9", evaluated Expr::kChunkRows rows at a time.
  // An expression's values are typed like a field: integer i64, float f64, bool bool (so
  // sum(integer) is i64, sum(float) f64, max(bool) bool); strings are refused. A bare name
  // that is no field is an unknown field. Empty for count.
  std::string field;
  std::string as;        // the output column's name
};

struct AggregateParams {
  // Largest pane ring a group may need: (size + slack) / gcd(size, slide) + 2.
  static constexpr std::uint64_t kMaxPanes = 4096;
  // Largest size, slide, slack or timeout, in tuples or nanoseconds (keeps every time
  // computation inside int64): 2^61 ns is about 73 years.
  static constexpr std::uint64_t kMaxSpan = std::uint64_t{1} << 61;

  std::vector<std::string> group_by{};
  WindowSpec window{};
  std::vector<AggregateField> aggregates{};
  std::optional<Duration> timeout{};  // time windows only, > 0
  Duration slack{0};                  // time windows only, >= 0
  // Empty, or the name of a last output column, bool: true for a window emitted before its
  // end was reached (by finish() at the end of the input, or by the timeout), which may lack
  // tuples that never came; false for a window that time (or its last tuple) closed.
  std::string partial_field{};

  // Every problem, each with its `where` ("params.window.size", "params.aggregates[1].field").
  [[nodiscard]] std::vector<Error> validate(const Schema& input) const;
  // The output schema (see the top of this file). Fails like make() on invalid params.
  [[nodiscard]] Result<Schema> output_schema(const Schema& input) const;
};

class AggregateBox final : public Box {
 public:
  // Validates (every problem, one per line) and binds every field to its offset.
  static Result<std::unique_ptr<AggregateBox>> make(
      const AggregateParams& params, const Schema& input,
      std::size_t batch_rows = Output::kDefaultBatchRows);
  ~AggregateBox() override;

  [[nodiscard]] std::string_view type() const noexcept override { return "aggregate"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 1; }
  [[nodiscard]] const Schema& input_schema(std::size_t port) const noexcept override;

  void tick(std::int64_t now) override;
  // Groups, their panes or counts, and the time windows' progress (watermark, next window).
  [[nodiscard]] bool save_state(std::vector<std::byte>& out) const override;
  [[nodiscard]] Result<void> restore_state(std::span<const std::byte> in) override;

  // Tuples dropped because they were older than the watermark.
  [[nodiscard]] std::uint64_t dropped_late() const noexcept;
  // Groups seen so far.
  [[nodiscard]] std::size_t group_count() const noexcept;

  struct State;  // private to aggregate.cpp

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;
  void on_end() override;

 private:
  AggregateBox(std::unique_ptr<State> state, Schema output, std::size_t batch_rows);
  std::unique_ptr<State> state_;
};

}  // namespace boreal::ops
