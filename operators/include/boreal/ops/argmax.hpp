// ArgMax: for each group of consecutive rows with the same `by` value, the rows whose `field`
// is the group's largest — every one of them when several tie — in arrival order.
//
//   auto top = ArgMax::make({.by = "window_end", .field = "count"}, schema).value();
//   top->output(0).connect(&sink);
//
// A group is a run: it ends when a row with another `by` value arrives (that row starts the
// next group) or when the input ends, and its winners are emitted then. So the input must hold
// each group's rows together, as a stream of windows does: an aggregate's output (emitted by
// window end) grouped by window_end, or time-ordered rows grouped by the start of the
// tumbling window they fall in (a map computing `date_time - date_time % 10000000000`). A
// group that reappears after another one is a new group.
//
// Fields. `by`: any type except f64 (compared by bytes: equal values are equal bytes).
// `field`: i32, i64, timestamp or f64 (NaN is never the largest; a group of NaNs only emits
// nothing). Output: the input's schema, rows unchanged.
//
// Memory: the current group's tied rows, in a buffer that grows to the largest tie seen and
// is then reused; nothing is allocated per row in steady state. One thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/ops/box.hpp>

namespace boreal::ops {

struct ArgMaxParams {
  std::string by;     // the group: consecutive rows with equal values
  std::string field;  // the value whose largest rows are kept

  // Every problem at once; `where` is "params.by" or "params.field".
  [[nodiscard]] std::vector<Error> validate(const Schema& input) const;
};

class ArgMax final : public Box {
 public:
  static Result<std::unique_ptr<ArgMax>> make(const ArgMaxParams& params, const Schema& input,
                                              std::size_t batch_rows = Output::kDefaultBatchRows);

  [[nodiscard]] std::string_view type() const noexcept override { return "argmax"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 1; }
  [[nodiscard]] const Schema& input_schema(std::size_t port) const noexcept override;

  // Checkpoints (box.hpp): the open group's key, tied rows and best value, and the count of
  // closed groups; a restored argmax closes the open group as this one would.
  [[nodiscard]] bool save_state(std::vector<std::byte>& out) const override;
  [[nodiscard]] Result<void> restore_state(std::span<const std::byte> in) override;

  // Groups closed so far (each emitted its winners).
  [[nodiscard]] std::uint64_t groups() const noexcept { return groups_; }

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;
  void on_end() override;

 private:
  ArgMax(const Schema& input, const Field& by, const Field& field, std::size_t batch_rows);
  void close_group();
  [[nodiscard]] double value_of(const std::byte* row) const noexcept;

  Schema input_;
  std::uint32_t by_offset_;
  std::uint32_t by_width_;
  std::uint32_t field_offset_;
  FieldType field_type_;
  std::uint32_t tuple_bytes_;
  bool open_ = false;           // a group has started
  std::vector<std::byte> key_;  // its `by` bytes
  // Its winners so far: back to back. Integers are compared exactly (as int64), floats as
  // doubles; best_ holds whichever applies.
  std::vector<std::byte> tied_;
  std::size_t tied_rows_ = 0;
  std::int64_t best_int_ = 0;
  double best_real_ = 0;
  std::uint64_t groups_ = 0;
};

}  // namespace boreal::ops
