// libFuzzer target: the expression parser and evaluator. Any text must compile or be refused
// with a located error; whatever compiles must evaluate on any row without trapping (division
// by zero, INT64_MIN / -1 and NaNs are defined: ops/expr.hpp).
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/expr.hpp>

namespace ops = boreal::ops;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ops::Schema schema =
      ops::Schema::parse("a:i64,b:i32,x:f64,ok:bool,ts:timestamp,sym:str8").value();
  // The expression, then (after a NUL byte, if any) up to 48 bytes of a row's values.
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  const std::size_t text_bytes = nul == nullptr ? size : static_cast<std::size_t>(nul - data);
  const std::string text(reinterpret_cast<const char*>(data), text_bytes);
  const std::uint8_t* values = nul == nullptr ? data + size : nul + 1;
  const std::size_t row_bytes =
      std::min<std::size_t>(static_cast<std::size_t>(data + size - values), schema.tuple_bytes());
  auto expr = ops::Expr::compile(text, schema);
  if (!expr) {
    if (expr.error().message.empty()) __builtin_trap();  // an error says what is wrong
    return 0;
  }
  ops::OwnedBatch batch(schema, 2);
  ops::MutRow row = batch.append();  // the input's values; then a row of zeros
  // Any bytes, as a peer's frame may carry them: a bool field's byte need not be 0 or 1
  // (expressions and FieldRef read it as byte != 0).
  if (row_bytes > 0) std::memcpy(row.data(), values, row_bytes);
  batch.append();
  for (ops::Row r : batch) {
    switch (expr.value().kind()) {
      case ops::ValueKind::integer: (void)expr.value().eval_int(r); break;
      case ops::ValueKind::floating: (void)expr.value().eval_float(r); break;
      case ops::ValueKind::boolean: (void)expr.value().eval_bool(r); break;
      case ops::ValueKind::string: break;  // a string is only compared, never evaluated alone
    }
  }
  return 0;
}
