#include <boreal/ops/filter.hpp>

#include <array>
#include <cassert>
#include <cstdint>
#include <utility>

namespace boreal::ops {

namespace {

// The predicate's errors, relocated under `where` ("expression col 7" -> "params.predicate
// col 7").
Error relocate(Error error, std::string_view where) {
  constexpr std::string_view kPrefix = "expression";
  if (error.where.starts_with(kPrefix)) {
    error.where = std::string(where) + error.where.substr(kPrefix.size());
  } else {
    error.within(where);
  }
  return error;
}

}  // namespace

std::vector<Error> FilterParams::validate(const Schema& input) const {
  std::vector<Error> errors;
  auto expr = Expr::compile(predicate, input);
  if (!expr) {
    errors.push_back(relocate(expr.error(), "params.predicate"));
  } else if (expr.value().kind() != ValueKind::boolean) {
    errors.push_back(Error{"predicate must be a boolean expression, got " +
                               std::string(kind_name(expr.value().kind())),
                           "params.predicate"});
  }
  return errors;
}

Result<std::unique_ptr<Filter>> Filter::make(const FilterParams& params, const Schema& input) {
  if (auto errors = params.validate(input); !errors.empty()) return fail(describe(errors));
  auto expr = Expr::compile(params.predicate, input);
  return std::unique_ptr<Filter>(new Filter(std::move(expr).value(), input, params.emit_rejected));
}

Filter::Filter(Expr predicate, const Schema& input, bool emit_rejected)
    : input_(input), predicate_(std::move(predicate)), emit_rejected_(emit_rejected) {
  outputs_.emplace_back(input);
  if (emit_rejected) outputs_.emplace_back(input);
}

const Schema& Filter::input_schema(std::size_t port) const noexcept {
  assert(port == 0);
  (void)port;
  return input_;
}

void Filter::on_batch(std::size_t port, const BatchView& batch) {
  assert(port == 0);
  (void)port;
  std::array<bool, Expr::kChunkRows> pass;
  // Indices of passing rows first, failing rows from the back: built without branches, so a
  // predicate near 50% selectivity costs no mispredictions.
  std::array<std::uint16_t, Expr::kChunkRows> index;
  for (std::size_t first = 0; first < batch.size(); first += Expr::kChunkRows) {
    const std::size_t count = std::min(Expr::kChunkRows, batch.size() - first);
    predicate_.eval_bool_batch(batch, first, count, pass.data());
    std::size_t kept = 0;
    std::size_t dropped = count;
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t slot = pass[i] ? kept : dropped - 1;
      index[slot] = static_cast<std::uint16_t>(i);
      kept += pass[i];
      dropped -= !pass[i];
    }
    Output& out = outputs_[0];
    for (std::size_t k = 0; k < kept; ++k) out.append_copy(batch.row(first + index[k]));
    if (emit_rejected_) {
      Output& rest = outputs_[1];
      for (std::size_t k = count; k-- > kept;) rest.append_copy(batch.row(first + index[k]));
    }
  }
}

}  // namespace boreal::ops
