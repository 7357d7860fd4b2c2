// bsort: Borealis's bounded-slack sort on one field.
//
// The box holds up to slack + 1 rows. Each arriving row joins the buffer; when the buffer
// then holds slack + 1 rows, the smallest (by `field`) leaves to the output. On end, the
// rest leave smallest first. Rows with equal values leave in arrival order. So an input in
// which every row is preceded by at most `slack` larger rows comes out fully sorted; rows
// later than that come out where the buffer lets them (never dropped). slack = 0 passes rows
// through unchanged.
//
// Order: i32, i64 and timestamp fields by integer value; f64 by the IEEE-754 total order
// (-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN). The buffer (rows and a binary heap
// of (value, arrival) keys) is allocated once in make(); per row there is one copy in and one
// copy out, and O(log slack) comparisons.
//
//   auto sorted = BSortBox::make({.field = "ts", .slack = 64}, schema).value();
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

// The buffer holds slack + 1 rows, allocated up front; this bounds it.
inline constexpr std::uint64_t kMaxBSortSlack = 1u << 20;

struct BSortParams {
  std::string field = {};  // an i32, i64, f64 or timestamp field of the input
  std::uint64_t slack = 0;   // rows: 0 .. kMaxBSortSlack

  // Every problem, with where "params.field" or "params.slack".
  [[nodiscard]] std::vector<Error> validate(const Schema& input) const;
};

class BSortBox final : public Box {
 public:
  static Result<std::unique_ptr<BSortBox>> make(const BSortParams& params, const Schema& input);

  [[nodiscard]] std::string_view type() const noexcept override { return "bsort"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 1; }
  [[nodiscard]] const Schema& input_schema(std::size_t port) const noexcept override;

  // Checkpoints (box.hpp): the buffered rows with their arrival numbers, and the count of
  // arrivals; a restored bsort lets rows leave in the order this one would.
  [[nodiscard]] bool save_state(std::vector<std::byte>& out) const override;
  [[nodiscard]] Result<void> restore_state(std::span<const std::byte> in) override;

  // Rows held now: at most slack between calls (a row leaves as the (slack+1)-th enters).
  [[nodiscard]] std::size_t buffered() const noexcept { return heap_.size(); }

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;

 private:
  enum class Kind : std::uint8_t { i32, i64, f64 };
  struct Entry {
    std::uint64_t key;      // the field's value mapped to an order-preserving unsigned
    std::uint64_t arrival;  // ties: earlier first
    std::uint32_t slot;     // where the row sits in rows_
  };

  BSortBox(const Schema& input, Kind kind, std::uint32_t offset, std::uint64_t slack);

  template <Kind K>
  [[nodiscard]] std::uint64_t key_of(const std::byte* row) const noexcept;
  template <Kind K>
  void process_as(const BatchView& batch);
  void pop_to_output();
  void on_end() override;

  Schema input_;
  Kind kind_;
  std::uint32_t offset_;
  std::uint32_t tuple_bytes_;
  std::size_t capacity_;  // slack + 1
  std::unique_ptr<std::byte[]> rows_;
  std::vector<Entry> heap_;              // reserved to capacity_, never grows past it
  std::vector<std::uint32_t> free_slots_;  // likewise
  std::uint64_t arrivals_ = 0;
};

}  // namespace boreal::ops
