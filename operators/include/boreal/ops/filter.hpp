// Filter: passes the rows of one input for which a boolean expression (expr.hpp) is true.
//
//   auto filter = Filter::make({.predicate = "price > 100 and sym == \"IBM\""}, schema).value();
//   filter->output(0).connect(&passed);
//   filter->output(1).connect(&rejected);   // only with .emit_rejected = true
//
// Output 0 carries the rows where the predicate is true, output 1 (present only when
// emit_rejected) the others; both have the input's schema and keep the input order. The
// predicate is evaluated kChunkRows rows at a time (Expr's batch evaluator), then the
// selected rows are copied; nothing is allocated per batch or per row. One thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/ops/box.hpp>
#include <boreal/ops/expr.hpp>

namespace boreal::ops {

struct FilterParams {
  std::string predicate;       // a boolean expression over the input's fields
  bool emit_rejected = false;  // add output 1 for the rows that fail the predicate

  // Every problem at once: where "params.predicate col N" for a bad expression,
  // "params.predicate" for a non-boolean one.
  [[nodiscard]] std::vector<Error> validate(const Schema& input) const;
};

class Filter final : public Box {
 public:
  static Result<std::unique_ptr<Filter>> make(const FilterParams& params, const Schema& input);

  [[nodiscard]] std::string_view type() const noexcept override { return "filter"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 1; }
  [[nodiscard]] const Schema& input_schema(std::size_t port) const noexcept override;

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;

 private:
  Filter(Expr predicate, const Schema& input, bool emit_rejected);

  Schema input_;
  Expr predicate_;
  bool emit_rejected_;
};

}  // namespace boreal::ops
