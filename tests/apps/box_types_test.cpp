#include "spec/box_types.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/graph.hpp>
#include <gtest/gtest.h>

#include "spec/spec_yaml.hpp"

namespace boreal::runtime {
namespace {

using Messages = std::vector<std::string>;
using std::chrono::nanoseconds;

ops::Schema schema(std::string_view text) { return ops::Schema::parse(text).value(); }

const ops::Schema kTrades = schema("sym:str8,price:f64,qty:i64,ts:timestamp");
const ops::Schema kTicks = schema("seq:i64,key:i64,v:f64");
const ops::Schema kQuotes = schema("sym:str8,bid:f64,ts:timestamp");

// One box of a network file, laid out so that every line:col below can be read off it:
//
//   boxes:                 line 1
//     - name: b            line 2 (the box's mapping starts at col 5)
//       type: <type>       line 3
//       in: <in>           line 4 (the list's '[' at col 9)
//       params:            line 5, only when `params` is not empty
//         <params[0]>      line 6, keys at col 7
//         ...
std::string box_text(const std::string& type, const std::string& in,
                     const std::vector<std::string>& params) {
  std::string text = "boxes:\n  - name: b\n    type: " + type + "\n    in: " + in + "\n";
  if (!params.empty()) {
    text += "    params:\n";
    for (const std::string& line : params) text += "      " + line + "\n";
  }
  return text;
}

// The parsed file and the box's YamlValues (they refer into `root`), as network_spec.cpp
// builds them.
struct BoxDoc {
  YAML::Node root;
  YamlValue box;
  std::optional<YamlValue> params;
};

BoxDoc load_box(const std::string& text) {
  BoxDoc doc;
  doc.root = YAML::Load(text);
  const YAML::Node boxes = doc.root["boxes"];
  const YAML::Node box = boxes[0];
  doc.box = YamlValue{box, "boxes[0]", box.Mark()};
  Problems ignored("ignored");
  if (auto mapping = read_mapping(doc.box, {}, ignored)) {
    if (const YamlValue* params = mapping->find("params")) doc.params = *params;
  }
  return doc;
}

struct Planned {
  std::optional<BoxPlan> plan;
  Messages messages;
};

Planned plan_box(const std::string& type, const std::string& in,
                 const std::vector<std::string>& params,
                 const std::vector<const ops::Schema*>& inputs) {
  const BoxType* box_type = find_box_type(type);
  EXPECT_NE(box_type, nullptr) << type;
  if (box_type == nullptr) return {};
  const BoxDoc doc = load_box(box_text(type, in, params));
  Problems problems("t.yaml");
  std::optional<BoxPlan> plan =
      box_type->plan(doc.params ? &*doc.params : nullptr, doc.box, inputs, problems);
  Planned out{std::move(plan), problems.sorted().messages};
  EXPECT_EQ(out.plan.has_value(), out.messages.empty()) << ::testing::PrintToString(out.messages);
  return out;
}

// A plan that must succeed; its output schemas as text.
std::vector<std::string> outputs_of(const Planned& planned) {
  EXPECT_TRUE(planned.plan) << ::testing::PrintToString(planned.messages);
  std::vector<std::string> out;
  if (planned.plan) {
    for (const ops::Schema& s : planned.plan->outputs) out.push_back(s.to_string());
  }
  return out;
}

std::unique_ptr<ops::Box> make_box(const Planned& planned, std::size_t batch_rows = 1024) {
  EXPECT_TRUE(planned.plan);
  if (!planned.plan) return nullptr;
  auto box = planned.plan->make(batch_rows);
  EXPECT_TRUE(box) << (box ? "" : box.error().describe());
  return box ? std::move(box).value() : nullptr;
}

// Trades rows (sym, price, ts in ns); qty is the row's index.
ops::OwnedBatch trades(const std::vector<std::tuple<std::string, double, std::int64_t>>& rows) {
  ops::OwnedBatch batch(kTrades, rows.size());
  const auto sym = ops::FieldRef<std::string_view>::bind(kTrades, "sym").value();
  const auto price = ops::FieldRef<double>::bind(kTrades, "price").value();
  const auto qty = ops::FieldRef<std::int64_t>::bind(kTrades, "qty").value();
  const auto ts = ops::FieldRef<ops::Timestamp>::bind(kTrades, "ts").value();
  std::int64_t n = 0;
  for (const auto& [s, p, t] : rows) {
    ops::MutRow row = batch.append();
    sym.set(row, s);
    price.set(row, p);
    qty.set(row, n++);
    ts.set(row, ops::Timestamp(nanoseconds(t)));
  }
  return batch;
}

// ---- the table ----

TEST(BoxTypes, TableListsTheOperatorsInOrder) {
  std::vector<std::string> names;
  for (const BoxType& type : operator_box_types()) names.emplace_back(type.name);
  EXPECT_EQ(names, (std::vector<std::string>{"filter", "map", "union", "aggregate", "join",
                                             "bsort", "resample", "split", "argmax"}));
  EXPECT_EQ(find_box_type("source"), nullptr);
  EXPECT_EQ(find_box_type("sink"), nullptr);
  EXPECT_EQ(find_box_type("nope"), nullptr);
  const BoxType* join = find_box_type("join");
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->min_inputs, 2u);
  EXPECT_EQ(join->max_inputs, 2u);
  EXPECT_EQ(find_box_type("union")->max_inputs, SIZE_MAX);
  EXPECT_EQ(find_box_type("union")->param_keys.size(), 0u);
  EXPECT_EQ(find_box_type("filter")->min_inputs, 1u);
  std::vector<std::string> keys;
  for (std::string_view key : find_box_type("split")->param_keys) keys.emplace_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"key_fields", "outputs"}));
}

// ---- valid plans, one per box type ----

TEST(BoxTypes, FilterPassesItsInputSchema) {
  const Planned one = plan_box("filter", "a", {"predicate: price > 100"}, {&kTrades});
  EXPECT_EQ(outputs_of(one), (std::vector<std::string>{kTrades.to_string()}));
  const Planned two = plan_box(
      "filter", "a", {"predicate: \"sym == \\\"IBM\\\"\"", "emit_rejected: true"}, {&kTrades});
  EXPECT_EQ(outputs_of(two), (std::vector<std::string>{kTrades.to_string(), kTrades.to_string()}));
}

TEST(BoxTypes, FilterBoxKeepsTheRightRows) {
  const Planned planned =
      plan_box("filter", "a", {"predicate: price > 100", "emit_rejected: true"}, {&kTrades});
  const std::unique_ptr<ops::Box> box = make_box(planned);
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->type(), "filter");
  ASSERT_EQ(box->output_count(), 2u);
  ops::CollectingConsumer passed;
  ops::CollectingConsumer rejected;
  box->output(0).connect(&passed);
  box->output(1).connect(&rejected);
  const ops::OwnedBatch batch =
      trades({{"A", 50, 1}, {"B", 150, 2}, {"C", 99.5, 3}, {"D", 200, 4}});
  box->process(0, batch);
  box->finish(0);
  const auto qty = ops::FieldRef<std::int64_t>::bind(kTrades, "qty").value();
  std::vector<std::int64_t> kept;
  for (ops::Row row : passed.view(kTrades)) kept.push_back(qty.get(row));
  std::vector<std::int64_t> dropped;
  for (ops::Row row : rejected.view(kTrades)) dropped.push_back(qty.get(row));
  EXPECT_EQ(kept, (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(dropped, (std::vector<std::int64_t>{0, 2}));
  EXPECT_TRUE(passed.ended());
  // Each make() is a new box.
  EXPECT_NE(make_box(planned).get(), box.get());
}

TEST(BoxTypes, MapDerivesItsSchema) {
  const Planned planned = plan_box("map", "a",
                                   {"fields:",
                                    "  - {name: cost, expression: price * qty}",
                                    "  - {name: sym, expression: sym}",
                                    "  - {name: n, expression: qty + 1, type: i32}",
                                    "  - name: big",
                                    "    expression: \"price > 100\""},
                                   {&kTrades});
  EXPECT_EQ(outputs_of(planned),
            (std::vector<std::string>{"cost:f64,sym:str8,n:i32,big:bool"}));
  const std::unique_ptr<ops::Box> box = make_box(planned);
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->type(), "map");
  EXPECT_EQ(box->output(0).schema().to_string(), "cost:f64,sym:str8,n:i32,big:bool");
}

TEST(BoxTypes, UnionOfEqualSchemas) {
  const Planned planned = plan_box("union", "[a, b, c]", {}, {&kTrades, &kTrades, &kTrades});
  EXPECT_EQ(outputs_of(planned), (std::vector<std::string>{kTrades.to_string()}));
  const std::unique_ptr<ops::Box> box = make_box(planned);
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->type(), "union");
  EXPECT_EQ(box->input_count(), 3u);
  // An empty `params:` is fine too.
  const BoxDoc doc = load_box(box_text("union", "[a, b]", {}) + "    params:\n");
  ASSERT_TRUE(doc.params);
  Problems problems("t.yaml");
  const std::vector<const ops::Schema*> inputs = {&kTrades, &kTrades};
  EXPECT_TRUE(find_box_type("union")->plan(&*doc.params, doc.box, inputs, problems));
  EXPECT_TRUE(problems.empty());
}

TEST(BoxTypes, AggregateDerivesItsSchemaAndConvertsDurations) {
  const Planned planned = plan_box("aggregate", "a",
                                   {"group_by: sym",
                                    "window: {kind: time, field: ts, size: 10s, slide: \"10s\"}",
                                    "aggregates:",
                                    "  - {function: count, as: n}",
                                    "  - {function: avg, field: price, as: avg_price}",
                                    "timeout: 500ms",
                                    "slack: 1000"},
                                   {&kTrades});
  EXPECT_EQ(outputs_of(planned),
            (std::vector<std::string>{
                "sym:str8,window_start:timestamp,window_end:timestamp,n:i64,avg_price:f64"}));
  const std::unique_ptr<ops::Box> box = make_box(planned, 4);
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->type(), "aggregate");
  EXPECT_EQ(box->output(0).batch_rows(), 4u);
  ops::CollectingConsumer out;
  box->output(0).connect(&out);
  // 10s windows: 1 s and 9 s fall in [0, 10 s), 12 s in [10 s, 20 s).
  box->process(0, trades({{"A", 1, 1'000'000'000}, {"A", 3, 9'000'000'000},
                          {"A", 5, 12'000'000'000}}));
  box->finish(0);
  const ops::Schema& s = box->output(0).schema();
  const auto end = ops::FieldRef<ops::Timestamp>::bind(s, "window_end").value();
  const auto n = ops::FieldRef<std::int64_t>::bind(s, "n").value();
  const auto avg = ops::FieldRef<double>::bind(s, "avg_price").value();
  std::vector<std::int64_t> ends, counts;
  std::vector<double> avgs;
  for (ops::Row row : out.view(s)) {
    ends.push_back(end.get(row).time_since_epoch().count());
    counts.push_back(n.get(row));
    avgs.push_back(avg.get(row));
  }
  EXPECT_EQ(ends, (std::vector<std::int64_t>{10'000'000'000, 20'000'000'000}));
  EXPECT_EQ(counts, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(avgs, (std::vector<double>{2, 5}));
}

TEST(BoxTypes, AWholeWindowHoldsTheWholeInputInAnyOrder) {
  const Planned planned = plan_box("aggregate", "a",
                                   {"group_by: sym", "window: {kind: whole, field: ts}",
                                    "aggregates: [{function: count, as: n}]"},
                                   {&kTrades});
  ASSERT_EQ(planned.messages, Messages{});
  const std::unique_ptr<ops::Box> box = make_box(planned, 4);
  ops::CollectingConsumer out;
  box->output(0).connect(&out);
  // Far apart (2033, then 1970) and out of order: nothing is late, one row per group at the
  // end. The window spans times 0 to 2^61 ns (2043).
  box->process(0, trades({{"A", 1, 2'000'000'000'000'000'000}, {"B", 3, 5},
                          {"A", 5, 1'000'000'000}, {"A", 7, 0}}));
  EXPECT_EQ(out.rows(), 0u);
  box->finish(0);
  const ops::Schema& s = box->output(0).schema();
  const auto n = ops::FieldRef<std::int64_t>::bind(s, "n").value();
  const auto start = ops::FieldRef<ops::Timestamp>::bind(s, "window_start").value();
  std::vector<std::int64_t> counts;
  for (ops::Row row : out.view(s)) {
    counts.push_back(n.get(row));
    EXPECT_EQ(start.get(row).time_since_epoch().count(), 0);
  }
  EXPECT_EQ(counts, (std::vector<std::int64_t>{3, 1}));
  const Planned bad = plan_box("aggregate", "a",
                               {"window: {kind: whole, field: ts, size: 10s}",
                                "aggregates: [{function: count, as: n}]", "slack: 1s"},
                               {&kTrades});
  EXPECT_EQ(bad.messages,
            (Messages{"t.yaml:6:46: boxes[0].params.window.size: a whole window has no size (it "
                      "spans the input)",
                      "t.yaml:8:14: boxes[0].params.slack: a whole window takes no slack (no "
                      "tuple is late in it)"}));
}

TEST(BoxTypes, AggregateCountWindowOnAnI64Schema) {
  const Planned planned = plan_box("aggregate", "a",
                                   {"group_by: [key]", "window: {kind: count, size: 3}",
                                    "aggregates: [{function: sum, field: v, as: total}]"},
                                   {&kTicks});
  EXPECT_EQ(outputs_of(planned),
            (std::vector<std::string>{"key:i64,window_start:i64,window_end:i64,total:f64"}));
}

TEST(BoxTypes, JoinDerivesItsSchema) {
  const Planned planned = plan_box("join", "[t, q]",
                                   {"left_time: ts", "right_time: ts", "window: 1ms",
                                    "equal: [{left: sym, right: sym}]",
                                    "band: {left: price, right: bid, width: 0.5}"},
                                   {&kTrades, &kQuotes});
  EXPECT_EQ(outputs_of(planned),
            (std::vector<std::string>{"l_sym:str8,l_price:f64,l_qty:i64,l_ts:timestamp,"
                                      "r_sym:str8,r_bid:f64,r_ts:timestamp"}));
  const std::unique_ptr<ops::Box> box = make_box(planned);
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->type(), "join");
  EXPECT_EQ(box->input_count(), 2u);
}

TEST(BoxTypes, BSortPassesItsInputSchema) {
  const Planned planned = plan_box("bsort", "a", {"field: ts", "slack: 4"}, {&kTrades});
  EXPECT_EQ(outputs_of(planned), (std::vector<std::string>{kTrades.to_string()}));
  const std::unique_ptr<ops::Box> box = make_box(planned);
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->type(), "bsort");
}

TEST(BoxTypes, ResampleDerivesItsSchema) {
  const Planned planned = plan_box("resample", "a",
                                   {"time_field: ts", "interval: 1s", "group_by: sym",
                                    "value_fields: [price, qty]", "mode: interpolate"},
                                   {&kTrades});
  EXPECT_EQ(outputs_of(planned),
            (std::vector<std::string>{"ts:timestamp,sym:str8,price:f64,qty:f64"}));
  const std::unique_ptr<ops::Box> box = make_box(planned);
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->type(), "resample");
}

TEST(BoxTypes, SplitHasOneOutputPerPart) {
  const Planned three =
      plan_box("split", "a", {"key_fields: [sym, qty]", "outputs: 3"}, {&kTrades});
  EXPECT_EQ(outputs_of(three), std::vector<std::string>(3, kTrades.to_string()));
  const Planned two = plan_box("split", "a", {"key_fields: sym"}, {&kTrades});
  EXPECT_EQ(outputs_of(two), std::vector<std::string>(2, kTrades.to_string()));
  const std::unique_ptr<ops::Box> box = make_box(three);
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->type(), "split");
  EXPECT_EQ(box->output_count(), 3u);
}

// ---- problems ----

TEST(BoxTypes, UnknownKeyListsTheValidOnes) {
  const Planned planned =
      plan_box("filter", "a", {"predicate: price > 1", "emit_rejects: true"}, {&kTrades});
  EXPECT_EQ(planned.messages,
            (Messages{"t.yaml:7:7: boxes[0].params.emit_rejects: unknown key (valid: predicate, "
                      "emit_rejected)"}));
  const Planned join = plan_box("join", "[a, b]",
                                {"left_time: ts", "right_time: ts", "window: 0", "within: 3"},
                                {&kTrades, &kQuotes});
  EXPECT_EQ(join.messages,
            (Messages{"t.yaml:9:7: boxes[0].params.within: unknown key (valid: left_time, "
                      "right_time, window, slack, equal, band)"}));
  const Planned inner = plan_box("aggregate", "a",
                                 {"window: {kind: count, size: 2, step: 1}",
                                  "aggregates: [{function: count, as: n}]"},
                                 {&kTrades});
  EXPECT_EQ(inner.messages, (Messages{"t.yaml:6:38: boxes[0].params.window.step: unknown key "
                                      "(valid: kind, field, size, slide)"}));
  const Planned onion = plan_box("union", "[a, b]", {"mode: fair"}, {&kTrades, &kTrades});
  EXPECT_EQ(onion.messages,
            (Messages{"t.yaml:6:7: boxes[0].params.mode: unknown key (a union takes no params)"}));
}

TEST(BoxTypes, MissingRequiredKey) {
  // No params at all: reported at the box.
  const Planned none = plan_box("filter", "a", {}, {&kTrades});
  EXPECT_EQ(none.messages,
            (Messages{"t.yaml:2:5: boxes[0].params: missing required key 'predicate'"}));
  const Planned some = plan_box("filter", "a", {"emit_rejected: false"}, {&kTrades});
  EXPECT_EQ(some.messages,
            (Messages{"t.yaml:6:7: boxes[0].params: missing required key 'predicate'"}));
  const Planned nested = plan_box("map", "a", {"fields: [{name: x}]"}, {&kTrades});
  EXPECT_EQ(nested.messages, (Messages{"t.yaml:6:16: boxes[0].params.fields[0]: missing "
                                       "required key 'expression'"}));
  const Planned join = plan_box("join", "[a, b]", {"left_time: ts"}, {&kTrades, &kQuotes});
  EXPECT_EQ(join.messages,
            (Messages{"t.yaml:6:7: boxes[0].params: missing required key 'right_time'",
                      "t.yaml:6:7: boxes[0].params: missing required key 'window'"}));
}

TEST(BoxTypes, WrongTypes) {
  const Planned filter =
      plan_box("filter", "a", {"predicate: price > 1", "emit_rejected: maybe"}, {&kTrades});
  EXPECT_EQ(filter.messages,
            (Messages{"t.yaml:7:22: boxes[0].params.emit_rejected: expected true or false, got "
                      "'maybe'"}));
  const Planned map = plan_box("map", "a", {"fields: 5"}, {&kTrades});
  EXPECT_EQ(map.messages,
            (Messages{"t.yaml:6:15: boxes[0].params.fields: expected a list, got '5'"}));
  const Planned bsort = plan_box("bsort", "a", {"field: ts", "slack: \"4\""}, {&kTrades});
  EXPECT_EQ(bsort.messages, (Messages{"t.yaml:7:14: boxes[0].params.slack: expected an integer, "
                                      "got the string \"4\""}));
  const Planned split = plan_box("split", "a", {"key_fields: {sym: 1}", "outputs: 0"}, {&kTrades});
  EXPECT_EQ(split.messages,
            (Messages{"t.yaml:6:19: boxes[0].params.key_fields: expected a field name or a list "
                      "of them, got a mapping",
                      "t.yaml:7:16: boxes[0].params.outputs: must be positive, got 0"}));
  const Planned count = plan_box("aggregate", "a",
                                 {"window: {kind: count, size: 10s}",
                                  "aggregates: [{function: count, as: n}]"},
                                 {&kTrades});
  EXPECT_EQ(count.messages,
            (Messages{"t.yaml:6:35: boxes[0].params.window.size: expected an integer, got '10s'"}));
  const Planned span = plan_box("resample", "a", {"time_field: ts", "interval: soon"}, {&kTrades});
  EXPECT_EQ(span.messages,
            (Messages{"t.yaml:7:17: boxes[0].params.interval: expected an integer or a duration "
                      "like '10s' (units ns, us, ms, s), got 'soon'"}));
  const Planned params = plan_box("bsort", "a", {"- field"}, {&kTrades});
  EXPECT_EQ(params.messages,
            (Messages{"t.yaml:6:7: boxes[0].params: expected a mapping, got a list"}));
}

TEST(BoxTypes, BadExpressionPointsInsideIt) {
  // Unquoted: the scalar starts at col 18, so col 9 of the expression is file col 26.
  const Planned plain = plan_box("filter", "a", {"predicate: price > > 3"}, {&kTrades});
  EXPECT_EQ(plain.messages, (Messages{"t.yaml:6:26: boxes[0].params.predicate: col 9: expected "
                                      "a value after '>', got '>'"}));
  // Quoted: one more for the quote.
  const Planned quoted = plan_box("filter", "a", {"predicate: \"price > > 3\""}, {&kTrades});
  EXPECT_EQ(quoted.messages, (Messages{"t.yaml:6:27: boxes[0].params.predicate: col 9: expected "
                                       "a value after '>', got '>'"}));
  const Planned single = plan_box("filter", "a", {"predicate: 'price > > 3'"}, {&kTrades});
  EXPECT_EQ(single.messages, quoted.messages);
  // Inside a map field of a flow mapping.
  const Planned map = plan_box(
      "map", "a", {"fields:", "  - {name: x, expression: \"price + sym\"}"}, {&kTrades});
  EXPECT_EQ(map.messages, (Messages{"t.yaml:7:40: boxes[0].params.fields[0].expression: col 7: "
                                    "'+' needs numbers, got str8"}));
  // Not boolean: the whole predicate.
  const Planned kind = plan_box("filter", "a", {"predicate: price + 1"}, {&kTrades});
  EXPECT_EQ(kind.messages, (Messages{"t.yaml:6:18: boxes[0].params.predicate: predicate must be "
                                     "a boolean expression, got float"}));
}

TEST(BoxTypes, UnknownField) {
  const Planned filter =
      plan_box("filter", "a", {"predicate: price > 100 and prise < 3"}, {&kTrades});
  EXPECT_EQ(filter.messages,
            (Messages{"t.yaml:6:34: boxes[0].params.predicate: col 17: unknown field 'prise' "
                      "(fields: sym, price, qty, ts)"}));
  const Planned join = plan_box("join", "[a, b]",
                                {"left_time: ts", "right_time: ts", "window: 0",
                                 "equal: [{left: sym, right: symbol}]"},
                                {&kTrades, &kQuotes});
  EXPECT_EQ(join.messages, (Messages{"t.yaml:9:34: boxes[0].params.equal[0].right: no field "
                                     "'symbol' in schema sym:str8,bid:f64,ts:timestamp"}));
  // A single name stands for element [0] of the list.
  const Planned split = plan_box("split", "a", {"key_fields: symbol"}, {&kTrades});
  EXPECT_EQ(split.messages,
            (Messages{"t.yaml:6:19: boxes[0].params.key_fields: no field 'symbol' in schema "
                      "sym:str8,price:f64,qty:i64,ts:timestamp"}));
  const Planned resample = plan_box(
      "resample", "a", {"time_field: ts", "interval: 5", "value_fields: [price, cost]"},
      {&kTrades});
  EXPECT_EQ(resample.messages,
            (Messages{"t.yaml:8:29: boxes[0].params.value_fields[1]: no field 'cost' in schema "
                      "sym:str8,price:f64,qty:i64,ts:timestamp"}));
}

TEST(BoxTypes, DurationSuffixNeedsATimestampField) {
  const Planned aggregate = plan_box("aggregate", "a",
                                     {"window: {kind: time, field: seq, size: 10s}",
                                      "aggregates: [{function: count, as: n}]"},
                                     {&kTicks});
  EXPECT_EQ(aggregate.messages,
            (Messages{"t.yaml:6:46: boxes[0].params.window.size: a duration like '10s' needs a "
                      "timestamp field; 'seq' is i64: give a number in its unit"}));
  const ops::Schema left = schema("t:i64,k:i64");
  const Planned join = plan_box("join", "[a, b]",
                                {"left_time: t", "right_time: t", "window: 500ms"}, {&left, &left});
  EXPECT_EQ(join.messages, (Messages{"t.yaml:8:15: boxes[0].params.window: a duration like "
                                     "'500ms' needs a timestamp field; 't' is i64: give a number "
                                     "in its unit"}));
  // A plain number is in the field's unit.
  EXPECT_TRUE(plan_box("join", "[a, b]", {"left_time: t", "right_time: t", "window: 500"},
                       {&left, &left})
                  .plan);
}

TEST(BoxTypes, UnionOfDifferentSchemas) {
  const Planned planned = plan_box("union", "[a, b, c]", {}, {&kTrades, &kTicks, &kTrades});
  EXPECT_EQ(planned.messages,
            (Messages{"t.yaml:4:13: boxes[0].in[1]: schema seq:i64,key:i64,v:f64 differs from "
                      "input 0's sym:str8,price:f64,qty:i64,ts:timestamp"}));
}

TEST(BoxTypes, EveryProblemOfOneBoxIsReported) {
  const Planned planned = plan_box("aggregate", "a",
                                   {"group_by: [sym, venue]",
                                    "window: {kind: hourly, size: 10s}",
                                    "aggregates:",
                                    "  - {function: median, field: price, as: m}",
                                    "  - {function: sum, field: sym, as: m}",
                                    "slack: -1"},
                                   {&kTrades});
  EXPECT_EQ(planned.messages,
            (Messages{"t.yaml:6:23: boxes[0].params.group_by[1]: unknown field 'venue'",
                      "t.yaml:7:22: boxes[0].params.window.kind: unknown window kind 'hourly'; "
                      "expected count, time or whole",
                      "t.yaml:9:22: boxes[0].params.aggregates[0].function: unknown function "
                      "'median'; expected count, sum, min, max, avg, first or last",
                      "t.yaml:10:34: boxes[0].params.aggregates[1].field: sum needs an i32, i64 "
                      "or f64 field; 'sym' is str8",
                      "t.yaml:10:43: boxes[0].params.aggregates[1].as: duplicate output name 'm'",
                      "t.yaml:11:14: boxes[0].params.slack: must not be negative, got -1"}));
}

TEST(BoxTypes, ADefaultedValueIsReportedAtItsMapping) {
  // A time window names no field: window.field is not written, so the window mapping is the
  // place, with the full path.
  const Planned planned = plan_box(
      "aggregate", "a",
      {"window: {kind: time, size: 10}", "aggregates: [{function: count, as: n}]"}, {&kTrades});
  EXPECT_EQ(planned.messages, (Messages{"t.yaml:6:15: boxes[0].params.window.field: a time "
                                        "window needs a time field"}));
}

TEST(BoxTypes, UnknownInputsCheckOnlyTheShape) {
  // Input 0's schema is unknown: the unknown field goes unreported, the wrong type does not.
  const BoxDoc doc =
      load_box(box_text("filter", "a", {"predicate: prise > 1", "emit_rejected: 3"}));
  Problems problems("t.yaml");
  const std::vector<const ops::Schema*> inputs = {nullptr};
  EXPECT_FALSE(find_box_type("filter")->plan(&*doc.params, doc.box, inputs, problems));
  EXPECT_EQ(problems.sorted().messages,
            (Messages{"t.yaml:7:22: boxes[0].params.emit_rejected: expected true or false, got "
                      "'3'"}));
  // A suffix is accepted when the time field's type is unknown; nothing to report.
  const BoxDoc ok = load_box(box_text("resample", "a", {"time_field: ts", "interval: 1s"}));
  Problems none("t.yaml");
  EXPECT_FALSE(find_box_type("resample")->plan(&*ok.params, ok.box, inputs, none));
  EXPECT_TRUE(none.empty());
  // A wrong input count: shape only, and the count is check_input_count()'s to report.
  Problems count("t.yaml");
  const std::vector<const ops::Schema*> two = {&kTrades, &kTrades};
  EXPECT_FALSE(find_box_type("resample")->plan(&*ok.params, ok.box, two, count));
  EXPECT_TRUE(count.empty());
}

TEST(BoxTypes, AggregateOfAnExpression) {
  // `field` takes an expression; one with a comma is quoted inside a flow mapping.
  const Planned planned = plan_box("aggregate", "a",
                                   {"window: {kind: count, size: 3}",
                                    "aggregates:",
                                    "  - {function: sum, field: price * 0.5, as: discounted}",
                                    "  - {function: max, field: \"max(price, 100)\", as: m}",
                                    "  - function: sum",
                                    "    field: int(price BETWEEN 100 AND 200)",
                                    "    as: mid"},
                                   {&kTrades});
  EXPECT_EQ(planned.messages, Messages{});
  EXPECT_EQ(
      outputs_of(planned),
      (std::vector<std::string>{"window_start:i64,window_end:i64,discounted:f64,m:f64,mid:i64"}));
  const std::unique_ptr<ops::Box> box = make_box(planned);
  ASSERT_NE(box, nullptr);
  ops::CollectingConsumer out;
  box->output(0).connect(&out);
  box->process(0, trades({{"A", 50, 1}, {"B", 150, 2}, {"C", 99.5, 3}}));
  box->finish(0);
  const ops::Schema& s = box->output(0).schema();
  const auto discounted = ops::FieldRef<double>::bind(s, "discounted").value();
  const auto m = ops::FieldRef<double>::bind(s, "m").value();
  const auto mid = ops::FieldRef<std::int64_t>::bind(s, "mid").value();
  std::vector<std::tuple<double, double, std::int64_t>> rows;
  for (ops::Row row : out.view(s)) rows.emplace_back(discounted.get(row), m.get(row), mid.get(row));
  EXPECT_EQ(rows, (std::vector<std::tuple<double, double, std::int64_t>>{{149.75, 150, 1}}));
}

TEST(BoxTypes, AggregateExpressionProblemsAreReportedOnTheirCharacter) {
  const Planned planned = plan_box("aggregate", "a",
                                   {"window: {kind: count, size: 3}",
                                    "aggregates:",
                                    "  - {function: sum, field: price mod 2, as: a}",
                                    "  - {function: avg, field: \"qty > 1\", as: b}",
                                    "  - {function: min, field: prise * 2, as: c}"},
                                   {&kTrades});
  EXPECT_EQ(planned.messages,
            (Messages{"t.yaml:8:40: boxes[0].params.aggregates[0].field: col 7: expected an "
                      "operator after 'price', got 'mod' (the remainder is '%')",
                      "t.yaml:9:34: boxes[0].params.aggregates[1].field: avg needs a number; "
                      "expression 'qty > 1' is bool",
                      "t.yaml:10:34: boxes[0].params.aggregates[2].field: col 1: unknown field "
                      "'prise' (fields: sym, price, qty, ts)"}));
}

}  // namespace
}  // namespace boreal::runtime

namespace boreal::runtime {
namespace {

TEST(BoxTypes, JoinSlackAndAggregatePartialFieldFromYaml) {
  const Planned join = plan_box("join", "[t, q]",
                                {"left_time: ts", "right_time: ts", "window: 1ms", "slack: 2s",
                                 "equal: [{left: sym, right: sym}]"},
                                {&kTrades, &kQuotes});
  EXPECT_EQ(join.messages, Messages{});
  const Planned bad = plan_box("join", "[t, q]",
                               {"left_time: ts", "right_time: ts", "window: 1ms", "slack: soon"},
                               {&kTrades, &kQuotes});
  EXPECT_EQ(bad.messages,
            (Messages{"t.yaml:9:14: boxes[0].params.slack: expected an integer or a duration like "
                      "'10s' (units ns, us, ms, s), got 'soon'"}));
  const Planned agg = plan_box("aggregate", "a",
                               {"window: {kind: count, size: 2}",
                                "aggregates: [{function: count, as: n}]", "partial_field: early"},
                               {&kTrades});
  EXPECT_EQ(agg.messages, Messages{});
  EXPECT_EQ(outputs_of(agg),
            (std::vector<std::string>{"window_start:i64,window_end:i64,n:i64,early:bool"}));
}

}  // namespace
}  // namespace boreal::runtime
