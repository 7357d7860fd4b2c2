// union: merges N inputs of one schema into one output, rows in arrival order.
//
// Each batch's rows are copied to output 0 in the order process() sees them, so the merge
// order is the order in which the caller (the graph, a node's scheduler) delivers batches;
// rows of one input keep their relative order. The output ends when every input has ended.
//
//   auto merged = UnionBox::make({}, std::vector<Schema>{trades, trades}).value();
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

struct UnionParams {
  // Every problem: fewer than 2 inputs (where "inputs"), and each input whose schema differs
  // from input 0's (where "inputs[i]"), first differing input first.
  [[nodiscard]] std::vector<Error> validate(std::span<const Schema> inputs) const;
};

class UnionBox final : public Box {
 public:
  static Result<std::unique_ptr<UnionBox>> make(const UnionParams& params,
                                                std::span<const Schema> inputs);

  [[nodiscard]] std::string_view type() const noexcept override { return "union"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return inputs_; }
  [[nodiscard]] const Schema& input_schema(std::size_t port) const noexcept override;

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;

 private:
  UnionBox(const Schema& schema, std::size_t inputs);

  std::size_t inputs_;
};

}  // namespace boreal::ops
