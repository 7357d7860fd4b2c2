// Helpers shared by the operator tests: schemas from text, unwrapping a box factory's result,
// and rows printed as text for comparisons.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops::test_support {

// The schema for `text` ("seq:i64,sym:str8"); a parse error fails the test.
inline Schema schema_of(std::string_view text) {
  Result<Schema> schema = Schema::parse(text);
  EXPECT_TRUE(schema) << schema.error().describe();
  return std::move(schema).value();
}

// The box a make() returned; an error fails the test (and the null pointer then crashes it).
template <class T>
std::unique_ptr<T> ok(Result<std::unique_ptr<T>> made) {
  EXPECT_TRUE(made) << made.error().describe();
  return std::move(made).value();
}

// One row as text, field by field, comma-separated: "1700000000,IBM,3,101.500000".
inline std::string format_row(const Schema& schema, Row row) {
  std::string out;
  for (const Field& f : schema.fields()) {
    if (!out.empty()) out += ',';
    switch (f.type) {
      case FieldType::i32: out += std::to_string(FieldRef<std::int32_t>{f.offset}.get(row)); break;
      case FieldType::i64: out += std::to_string(FieldRef<std::int64_t>{f.offset}.get(row)); break;
      case FieldType::f64: out += std::to_string(FieldRef<double>{f.offset}.get(row)); break;
      case FieldType::boolean: out += FieldRef<bool>{f.offset}.get(row) ? "true" : "false"; break;
      case FieldType::timestamp:
        out += std::to_string(FieldRef<Timestamp>{f.offset}.get(row).time_since_epoch().count());
        break;
      case FieldType::str: out += FieldRef<std::string_view>{f.offset, f.width}.get(row); break;
    }
  }
  return out;
}

}  // namespace boreal::ops::test_support
