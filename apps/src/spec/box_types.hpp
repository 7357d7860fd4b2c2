// The operator box types of a query-network file: each reads a box's `params:` mapping into
// the operator library's parameter struct (boreal/ops/*.hpp), checks it against the box's
// input schemas, derives the schema of every output port, and makes boxes. Sources and sinks
// are read by network_spec.cpp instead.
//
// Keys of `params`, per box type. Anything else is an unknown key (the message lists the valid
// ones); a required key that is absent is "missing required key 'x'"; a value of the wrong kind
// is "expected ..., got ...". "Names" take one field name or a list of them (`group_by: sym` or
// `group_by: [sym, venue]`).
//
//   filter     predicate       required. A boolean expression over the input's fields
//                              (ops/expr.hpp), e.g. "price > 100 and sym == \"IBM\"".
//              emit_rejected   true or false, default false. true adds output 1: the rows
//                              the predicate rejects. Both outputs have the input's schema.
//   map        fields          required. A list of {name, expression, type}: `name` (required)
//                              is the output field, `expression` (required) computes it from
//                              the input row, `type` (optional: i32, i64, f64, bool,
//                              timestamp, strN) converts it; by default the expression's type
//                              decides (integer -> i64, float -> f64, string -> strN).
//                              Output: those fields, in that order.
//   union      (none)          `params` absent or empty. Two or more inputs, all of one schema,
//                              which the output has.
//   aggregate  group_by        names, optional (default: one group).
//              window          required. A mapping:
//                                kind    required: count or time
//                                field   the time field (time windows only; timestamp, i64 or
//                                        i32)
//                                size    required: tuples (count) or a span (time), >= 1
//                                slide   same unit, 1 <= slide <= size; default size (tumbling)
//              aggregates      required. A list of {function, field, as}: function (required)
//                              is count, sum, min, max, avg, first or last; field (the input
//                              field; omit it for count); as (required) names the output column.
//              timeout         a span (time windows only): emit every open window when no
//                              tuple came for this long (tick()). Default: none.
//              slack           a span (time windows only): accept tuples this far behind the
//                              newest; default 0.
//              Output: the group_by fields, window_start, window_end, then one column per
//              aggregate (ops/aggregate.hpp).
//   join       left_time       required. The time field of input 0 (timestamp, i64 or i32).
//              right_time      required. The time field of input 1 (same kind).
//              window          required. A span: l and r match when |l.left_time -
//                              r.right_time| <= window (0 = equal times).
//              equal           optional list of {left, right} (both required): l.left ==
//                              r.right, fields of one type (not f64).
//              band            optional mapping {left, right, width} (all required):
//                              |l.left - r.right| <= width, numeric fields, width a number >= 0.
//              Output: every left field prefixed l_, then every right field prefixed r_.
//   bsort      field           required. The i32, i64, f64 or timestamp field to sort on.
//              slack           rows a late row may be behind, 0 .. 1048576; default 0.
//   resample   time_field      required. timestamp, i64 or i32.
//              interval        required. A span > 0: one row per group every interval.
//              group_by        names, optional.
//              value_fields    names, optional (any types for hold; i32, i64 or f64 for
//                              interpolate, which outputs f64).
//              mode            hold or interpolate; default hold.
//              Output: time_field, the group_by fields, the value fields.
//   split      key_fields      required. Names: the fields whose hash routes a row.
//              outputs         how many outputs, 1 .. 1024; default 2. Each has the input's
//                              schema.
//
// Spans (aggregate's time-window size, slide, timeout and slack; join's window; resample's
// interval) are an integer in the time field's unit, or — when the time field is a
// `timestamp` — a string with a unit suffix ns, us, ms or s ("10s", "500ms"), converted to
// nanoseconds. A suffix on an i64 or i32 time field is reported ("a duration like '10s' needs
// a timestamp field; 'seq' is i64: give a number in its unit"). Count windows take plain
// integers.
//
// Locations. Every problem is "file:line:col: path: what" (spec_yaml.hpp). A problem the
// operator library finds (its Error's `where`, "params.fields[2].expression col 3") is
// reported at the YAML value it came from; one inside an expression names the column within
// the expression ("boxes[1].params.predicate: col 7: unknown field 'prise' (fields: ...)")
// and points the file column at that character (exact for a one-line plain or quoted scalar
// without escapes; approximate inside a block scalar, | or >).
// A `where` naming a value that is not written (a defaulted key) is reported at the closest
// written mapping, with the full path.
//
// Private to boreal::runtime. The table is constant; plan() is pure (reports go to the given
// Problems) and may be called from any thread; a BoxPlan's make() may be called from any
// thread and any number of times, each call giving a new box.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

#include "spec/spec_yaml.hpp"

namespace boreal::runtime {

// A box type's plan for one box of a file: the schema of each output port and a maker.
struct BoxPlan {
  std::vector<ops::Schema> outputs;  // one per output port, in port order
  // Makes a fresh, unconnected box (each call a new one). batch_rows: rows per output batch
  // where the box supports choosing it (aggregate; 0 = ops::Output::kDefaultBatchRows), else
  // ignored. Params were validated, so a failure here is unexpected but still returned.
  std::function<ops::Result<std::unique_ptr<ops::Box>>(std::size_t batch_rows)> make;
};

struct BoxType {
  std::string_view name;                          // "filter", "map", ...
  std::span<const std::string_view> param_keys;   // every key `params` may hold
  std::size_t min_inputs;                         // union: 2; join: 2; others 1
  std::size_t max_inputs;                         // union: SIZE_MAX; join: 2; others 1
  // Reads `params` (nullptr when the box has no `params:` key) and, when every input schema is
  // known, validates against them and plans the box. `inputs[i]` is nullptr when input i's
  // schema is unknown (an upstream problem already reported): then only the params' own
  // shape is checked and nullopt is returned. Every problem goes to `problems`, located.
  // `box_at` is the box's mapping, with the box's YAML path ("boxes[2]"): "missing required
  // key" problems are reported there when params is absent, and union's schema mismatches at
  // its `in` list.
  //
  // The input count is the caller's to check, where the box's `in` is written: when
  // inputs.size() is outside [min_inputs, max_inputs], plan() checks only the params' shape,
  // reports nothing about the count and returns nullopt. nullopt also whenever a problem was
  // reported.
  std::optional<BoxPlan> (*plan)(const YamlValue* params, const YamlValue& box_at,
                                 std::span<const ops::Schema* const> inputs, Problems& problems);
};

// The operator box types, in this order: filter, map, union, aggregate, join, bsort, resample,
// split. (source and sink are handled by network_spec.cpp, not here.)
[[nodiscard]] std::span<const BoxType> operator_box_types() noexcept;
// nullptr for a name that is not an operator box type (including "source" and "sink").
[[nodiscard]] const BoxType* find_box_type(std::string_view name) noexcept;

}  // namespace boreal::runtime
