// JoinBox: a windowed join of two streams (port 0 = left, port 1 = right).
//
// A left tuple l and a right tuple r match when
//   |l.left_time - r.right_time| <= window                      (always)
//   l.a == r.b for every (a, b) in `equal`                       (zero or more conditions)
//   |l.x - r.y| <= width for band {x, y, width}                  (optional)
// and every match becomes one output row, emitted as soon as the second of the two arrives.
// window = Duration::max() (`window: unbounded` in a network file) makes it an unwindowed join:
// every pair matches whatever its times and arrival order (no tuple is late, the slack does
// not apply), and nothing is ever evicted, so each side keeps every tuple it has stored
// (filter the inputs down to what may match, as NEXMark's Q3 does).
//
//   JoinParams params{.left_time = "ts", .right_time = "ts", .window = 1ms,
//                     .equal = {{"sym", "sym"}}, .band = Band{"price", "bid", 0.5}};
//   auto join = JoinBox::make(params, quotes, trades).value();
//   join->output(0).connect(&sink);
//   join->process(0, quote_batch);   // port 0: left
//   join->process(1, trade_batch);   // port 1: right
//
// Algorithm: a symmetric hash join. Each side keeps the tuples that may still match a future
// tuple of the other side, in arrival order, hash-indexed on the bytes of its equality key. A
// new tuple first evicts the other side's tuples that are older than (its port's greatest time
// so far - slack - window), then probes the other side's index and emits one row per match,
// then is stored on its own side. With no equality condition every stored tuple is in one
// chain and a probe scans the whole window; a band alone is checked on every candidate (no
// band index).
//
// Time order and slack: out-of-order input as the aggregate takes it (window.hpp, "Slack").
// Per port, a tuple more than `slack` older than the greatest time its port has seen is late:
// it is dropped and counted (dropped_late()), neither probed nor stored. Every other tuple
// meets every partner it matches, so the SET of output rows is exactly the nested-loop join
// of the two inputs without their late tuples, whatever the interleaving of batches across
// the ports: a stored tuple is evicted only once the other port's greatest time, less the
// slack, is past the time beyond which it can match nothing. With slack 0 each port must
// arrive in non-decreasing time order, or its older tuples are dropped.
// Memory: a side's tuples are evicted only as the OTHER port's time advances, so a port that
// stays silent lets the other side's state grow; a slack keeps `slack` more of each side.
//
// Output order is deterministic for a given arrival order of tuples across the ports and does
// not depend on how either input is cut into batches: matches are emitted in the order the
// probing tuples arrive, and for one probing tuple newest stored partner first. Each
// process() call hands on (flushes) the rows it produced before returning.
//
// Output schema: every left field prefixed "l_" in left order, then every right field
// prefixed "r_" in right order, with the input types ("ts:timestamp,sym:str8" joined with
// "ts:timestamp,px:f64" gives "l_ts:timestamp,l_sym:str8,r_ts:timestamp,r_px:f64"). The
// prefixes make the names unique whatever the inputs call their fields.
//
// Field types. Time fields: timestamp, i64 or i32 (compared as int64; a timestamp can only be
// joined with a timestamp). Equality: both fields of one type (strings of any widths compare
// by value, "ab" in a str4 equals "ab" in a str16); f64 is refused, since exact equality of
// doubles is rarely what is meant — use a band of width 0. Band: numeric fields (i32, i64,
// f64, timestamp); integers compare exactly, and if either side is f64 both are compared as
// doubles.
//
// One thread at a time; no locks. Per tuple: no name look-up, no virtual call, no allocation
// except when a side's storage or index grows (amortised doubling).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>
#include <boreal/ops/window.hpp>

namespace boreal::ops {

// |left.<left> - right.<right>| <= width, on numeric fields.
struct Band {
  std::string left{};
  std::string right{};
  double width = 0;  // in the fields' unit; finite, >= 0
};

struct JoinParams {
  std::string left_time{};   // timestamp, i64 or i32 field of the left input
  std::string right_time{};  // same, of the right input
  Duration window{0};  // >= 0; the time fields hold nanoseconds (window.hpp)
  Duration slack{0};   // >= 0: how far a port's tuple may be older than its port's newest
  std::vector<std::pair<std::string, std::string>> equal{};  // (left field, right field)
  std::optional<Band> band{};

  // Every problem at once; empty when the parameters fit the two input schemas. `where` is
  // "params.left_time", "params.window", "params.equal[1].right", "params.band.width", ...
  [[nodiscard]] std::vector<Error> validate(const Schema& left, const Schema& right) const;
};

class JoinSide;  // one side's window state (join.cpp)

class JoinBox final : public Box {
 public:
  // Validates (the error joins every problem, one per line) and binds every field once.
  static Result<std::unique_ptr<JoinBox>> make(const JoinParams& params, const Schema& left,
                                               const Schema& right);
  // The output schema make() would give, or the validation errors.
  static Result<Schema> output_schema(const JoinParams& params, const Schema& left,
                                      const Schema& right);

  ~JoinBox() override;

  [[nodiscard]] std::string_view type() const noexcept override { return "join"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 2; }
  [[nodiscard]] const Schema& input_schema(std::size_t port) const noexcept override {
    return port == 0 ? left_schema_ : right_schema_;
  }

  // Checkpoints (box.hpp): the tuples each side holds, oldest first, and each port's
  // greatest time and late count; a restored join probes, evicts and drops as this one would.
  [[nodiscard]] bool save_state(std::vector<std::byte>& out) const override;
  [[nodiscard]] Result<void> restore_state(std::span<const std::byte> in) override;

  // Tuples currently held for future matches, per port (0 = left, 1 = right).
  [[nodiscard]] std::size_t stored(std::size_t port) const noexcept;
  // Tuples dropped as later than the slack allows, per port.
  [[nodiscard]] std::uint64_t dropped_late(std::size_t port) const noexcept {
    return dropped_late_[port];
  }

  // The plan, bound at make() time; public so join.cpp's helpers can share it.
  enum class NumKind : std::uint8_t { i32, i64, f64 };
  struct KeyPart {
    std::uint32_t offset;  // in this side's tuple
    std::uint32_t width;   // bytes of this side's field
    std::uint32_t key_width;  // bytes in the key (max of the two sides' widths)
  };
  struct CopyRun {
    std::uint32_t from;
    std::uint32_t to;
    std::uint32_t bytes;
  };
  struct SidePlan {
    std::uint32_t time_offset = 0;
    NumKind time_kind = NumKind::i64;
    std::vector<KeyPart> key;
    std::uint32_t key_bytes = 0;
    std::uint32_t band_offset = 0;
    NumKind band_kind = NumKind::i64;
    std::vector<CopyRun> copy;  // this side's fields into the output row
  };

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;

 private:
  JoinBox(const JoinParams& params, Schema left, Schema right, Schema output);

  // A tuple of `port`'s input arrives: evict, probe, emit, store.
  void on_tuple(std::size_t port, const std::byte* row);
  // `row`'s equality key for `port` in key_scratch_, which it returns.
  const std::byte* key_of(std::size_t port, const std::byte* row) noexcept;
  [[nodiscard]] bool band_ok(const std::byte* left_row, const std::byte* right_row) const;

  Schema left_schema_;
  Schema right_schema_;
  std::int64_t window_;  // ns
  std::int64_t slack_;   // ns
  bool has_band_;
  bool band_as_double_ = false;
  double band_width_ = 0;
  std::uint64_t band_width_int_ = 0;  // floor(width), saturated
  SidePlan plan_[2];
  std::unique_ptr<JoinSide> side_[2];
  std::int64_t max_time_[2];
  std::uint64_t dropped_late_[2] = {0, 0};
  std::vector<std::byte> key_scratch_;
};

}  // namespace boreal::ops
