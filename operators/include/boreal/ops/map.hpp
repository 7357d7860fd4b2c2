// Map: one output row per input row, each output field computed by an expression (expr.hpp)
// over the input row.
//
//   auto map = Map::make({.fields = {{.name = "seq", .expression = "seq"},
//                                    {.name = "cost", .expression = "price * qty"},
//                                    {.name = "small", .expression = "qty", .type = "i32"}}},
//                        schema).value();
//
// Output schema: the fields in the order given, each typed by its expression — integer -> i64,
// float -> f64, bool -> bool, string -> strN of the source's width (a field's N, a literal's
// length, at least 1) — unless `type` names one. Conversions a `type` may ask for:
//   a number to i32, i64, timestamp or f64: integers wrap to i32 (two's complement); floats
//     to an integer type truncate toward zero and saturate at the type's limits, NaN -> 0;
//   a bool to bool; a string to any strN (longer values are cut to N bytes).
// Expressions are evaluated Expr::kChunkRows rows at a time into columns, then the rows are
// written; nothing is allocated per batch or row. One thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/ops/box.hpp>
#include <boreal/ops/expr.hpp>

namespace boreal::ops {

struct MapField {
  std::string name;                 // output field name (an identifier, unique)
  std::string expression;           // over the input's fields
  std::optional<std::string> type{};  // output type ("f64", "i32", "str16", ...); default: see top
};

struct MapParams {
  std::vector<MapField> fields;

  // Every problem at once, e.g. where "params.fields[2].expression col 5",
  // "params.fields[1].name" (duplicate or not an identifier), "params.fields[0].type".
  [[nodiscard]] std::vector<Error> validate(const Schema& input) const;
  // The schema of the output (what validate() accepts; fails like make() otherwise).
  [[nodiscard]] Result<Schema> output_schema(const Schema& input) const;
};

class Map final : public Box {
 public:
  static Result<std::unique_ptr<Map>> make(const MapParams& params, const Schema& input);

  [[nodiscard]] std::string_view type() const noexcept override { return "map"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 1; }
  [[nodiscard]] const Schema& input_schema(std::size_t port) const noexcept override;

  // One output field's evaluator and writer (public only so map.cpp's helpers can name it).
  struct Column;

  ~Map() override;

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;

 private:
  Map(const Schema& input, Schema output, std::vector<Column> columns);

  Schema input_;
  std::vector<Column> columns_;
};

}  // namespace boreal::ops
