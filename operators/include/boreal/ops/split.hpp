// split: routes each row to one of N outputs by a hash of its key fields.
//
// The hash is the 64-bit FNV-1a (schema.hpp's fnv1a_64: offset basis 14695981039346656037,
// prime 1099511628211) of the key fields' stored bytes, concatenated in key_fields order:
// 4 or 8 little-endian bytes for numbers and timestamps, 1 for a bool, all N bytes of a strN
// (NUL padding included). A row goes to output hash % outputs. So the same key always goes
// to the same output, on every run, machine and build — the unit of parallelism. Note the
// hash sees bytes, not values: an f64 key of -0.0 and one of +0.0 may route differently.
// Rows keep their relative order within each output. Every output has the input's schema.
//
//   auto by_sym = SplitBox::make({.key_fields = {"sym"}, .outputs = 4}, schema).value();
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

// Each output owns one batch of Output::kDefaultBatchRows rows; this bounds that memory.
inline constexpr std::uint32_t kMaxSplitOutputs = 1024;

struct SplitParams {
  std::vector<std::string> key_fields = {};  // at least one; each a field of the input, once
  std::uint32_t outputs = 2;            // 1 .. kMaxSplitOutputs

  // Every problem, with where "params.key_fields", "params.key_fields[i]" or
  // "params.outputs".
  [[nodiscard]] std::vector<Error> validate(const Schema& input) const;
};

class SplitBox final : public Box {
 public:
  static Result<std::unique_ptr<SplitBox>> make(const SplitParams& params, const Schema& input);

  [[nodiscard]] std::string_view type() const noexcept override { return "split"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 1; }
  [[nodiscard]] const Schema& input_schema(std::size_t port) const noexcept override;

  // The output a row goes to (what process() uses), for tests and for routing elsewhere.
  [[nodiscard]] std::size_t route(Row row) const noexcept;

 protected:
  void on_batch(std::size_t port, const BatchView& batch) override;

 private:
  struct KeySpan {
    std::uint32_t offset;
    std::uint32_t width;
  };

  SplitBox(const Schema& input, std::vector<KeySpan> keys, std::uint32_t outputs);

  Schema input_;
  std::vector<KeySpan> keys_;
  std::uint32_t outputs_count_;
};

}  // namespace boreal::ops
