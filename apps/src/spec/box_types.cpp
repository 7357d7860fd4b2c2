// The operator box types (box_types.hpp). Each plan function reads `params` with a
// ParamReader, which remembers where every value was written (member path -> YamlValue) and
// which members failed to read, fills the operator's parameter struct, and, when the input
// schemas are known, runs the struct's validate() and reports each Error at the value its
// `where` names. An Error about a member that already failed to read (a missing key, a wrong
// type) is not reported again: its default value would only restate the first problem.
#include "spec/box_types.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <map>
#include <string>
#include <utility>

#include <boreal/ops/aggregate.hpp>
#include <boreal/ops/bsort.hpp>
#include <boreal/ops/filter.hpp>
#include <boreal/ops/join.hpp>
#include <boreal/ops/argmax.hpp>
#include <boreal/ops/map.hpp>
#include <boreal/ops/resample.hpp>
#include <boreal/ops/split.hpp>
#include <boreal/ops/union.hpp>

#include "spec/spec_values.hpp"

namespace boreal::runtime {
namespace {

using Keys = std::span<const std::string_view>;
using Inputs = std::span<const ops::Schema* const>;
using Names = std::vector<std::string>;

constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

constexpr std::array<std::string_view, 2> kFilterKeys = {"predicate", "emit_rejected"};
constexpr std::array<std::string_view, 1> kMapKeys = {"fields"};
constexpr std::array<std::string_view, 3> kMapFieldKeys = {"name", "expression", "type"};
constexpr std::array<std::string_view, 6> kAggregateKeys = {"group_by", "window", "aggregates",
                                                            "timeout", "slack", "partial_field"};
constexpr std::array<std::string_view, 4> kWindowKeys = {"kind", "field", "size", "slide"};
constexpr std::array<std::string_view, 3> kAggregateFieldKeys = {"function", "field", "as"};
constexpr std::array<std::string_view, 6> kJoinKeys = {"left_time", "right_time", "window",
                                                       "slack", "equal", "band"};
constexpr std::array<std::string_view, 2> kEqualKeys = {"left", "right"};
constexpr std::array<std::string_view, 3> kBandKeys = {"left", "right", "width"};
constexpr std::array<std::string_view, 2> kBSortKeys = {"field", "slack"};
constexpr std::array<std::string_view, 5> kResampleKeys = {"time_field", "interval", "group_by",
                                                           "value_fields", "mode"};
constexpr std::array<std::string_view, 2> kSplitKeys = {"key_fields", "outputs"};
constexpr std::array<std::string_view, 2> kArgMaxKeys = {"by", "field"};

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// yaml-cpp tags a quoted scalar "!" and a plain one "?".
bool is_quoted(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "!"; }

// What a reader got, for its message: a quoted scalar is called a string.
std::string got(const YAML::Node& node) {
  if (is_quoted(node)) return "the string \"" + node.Scalar() + "\"";
  return describe_node(node);
}

// How many problems `problems` holds (it keeps no count of its own).
std::size_t count(const Problems& problems) { return problems.sorted().messages.size(); }

// The box's `in` value (the key's place when it is empty), if the box has one.
std::optional<YamlValue> in_value(const YamlValue& box_at) {
  if (!box_at.node.IsMap()) return std::nullopt;
  for (auto it = box_at.node.begin(); it != box_at.node.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    if (!key.IsScalar() || key.Scalar() != "in") continue;
    YamlValue in{value, box_at.key_path("in"), value.Mark()};
    if (value.IsNull() || in.mark.line < 0) in.mark = key.Mark();
    return in;
  }
  return std::nullopt;
}

// A time field as far as it is known: its name, and its type when the input schema is known
// and has it.
struct TimeField {
  std::string name;
  std::optional<ops::FieldType> type;
  std::string type_name;
};

TimeField time_field(const ops::Schema* schema, const std::string& name) {
  TimeField time{name, std::nullopt, {}};
  if (schema == nullptr) return time;
  if (const auto index = schema->index_of(name)) {
    time.type = schema->field(*index).type;
    time.type_name = schema->field(*index).type_name();
  }
  return time;
}

// Whether every input schema is known and there are [min, max] of them.
bool known(Inputs inputs, std::size_t min, std::size_t max) {
  return inputs.size() >= min && inputs.size() <= max &&
         std::all_of(inputs.begin(), inputs.end(),
                     [](const ops::Schema* s) { return s != nullptr; });
}

template <class BoxT>
ops::Result<std::unique_ptr<ops::Box>> as_box(ops::Result<std::unique_ptr<BoxT>> made) {
  if (!made) return boost::outcome_v2::failure(std::move(made).error());
  return std::unique_ptr<ops::Box>(std::move(made).value());
}

// Reads one box's params, remembering where each value is written.
class ParamReader {
 public:
  // `keys` are the keys `params` may hold.
  ParamReader(const YamlValue* params, const YamlValue& box_at, Problems& problems, Keys keys)
      : problems_(problems),
        start_(count(problems)),
        anchor_(params != nullptr
                    ? *params
                    : YamlValue{box_at.node, box_at.key_path("params"), box_at.mark}) {
    if (params == nullptr || params->node.IsNull()) return;
    mapping_ = read_mapping(*params, keys, problems);
    if (!mapping_) fail("");  // not a mapping: nothing below it is read
  }

  // No problem was reported since this reader was made.
  [[nodiscard]] bool ok() const { return count(problems_) == start_; }

  // A top-level key of params, or nullptr.
  [[nodiscard]] const YamlValue* find(std::string_view key) const {
    return mapping_ ? mapping_->find(key) : nullptr;
  }
  // A top-level key, or "missing required key 'key'" (at the box when params is absent).
  const YamlValue* require(std::string_view key) {
    if (failed_all()) return nullptr;
    if (mapping_) {
      const YamlValue* value = mapping_->require(key, problems_);
      if (value == nullptr) fail(std::string(key));
      return value;
    }
    problems_.add(anchor_, "missing required key " + in_quotes(key));
    fail(std::string(key));
    return nullptr;
  }
  // A key of a nested mapping, or "missing required key 'key'" at that mapping.
  const YamlValue* require(const YamlMapping& mapping, std::string_view key) {
    const YamlValue* value = mapping.require(key, problems_);
    if (value == nullptr) fail(child(member_of(mapping.whole().path), key));
    return value;
  }

  std::optional<YamlMapping> mapping(const YamlValue& value, Keys keys) {
    place(value);
    auto read = read_mapping(value, keys, problems_);
    if (!read) fail(value);
    return read;
  }
  std::optional<std::vector<YamlValue>> list(const YamlValue& value) {
    place(value);
    auto read = read_list(value, problems_);
    if (!read) fail(value);
    return read;
  }
  std::optional<std::string> string(const YamlValue& value) {
    place(value);
    auto read = read_string(value, problems_);
    if (!read) fail(value);
    return read;
  }
  std::optional<std::int64_t> integer(const YamlValue& value, std::int64_t min, std::int64_t max) {
    place(value);
    auto read = read_int(value, min, max, problems_);
    if (!read) fail(value);
    return read;
  }
  std::optional<double> non_negative(const YamlValue& value) {
    place(value);
    auto read = read_non_negative(value, problems_);
    if (!read) fail(value);
    return read;
  }
  std::optional<bool> boolean(const YamlValue& value) {
    place(value);
    if (auto b = parse_bool(value.node)) return b;
    problem(value, "expected true or false, got " + got(value.node));
    return std::nullopt;
  }
  // One field name or a list of them. A single name is also placed as element [0], which is
  // what the operators' `where` calls it.
  std::optional<std::vector<std::string>> names(const YamlValue& value) {
    place(value);
    if (value.node.IsScalar()) {
      auto name = string(value);
      if (!name) return std::nullopt;
      place(member_of(value.path) + "[0]", value);
      return std::vector<std::string>{*name};
    }
    if (!value.node.IsSequence() && !value.node.IsNull()) {
      problem(value, "expected a field name or a list of them, got " + describe_node(value.node));
      return std::nullopt;
    }
    auto items = list(value);
    if (!items) return std::nullopt;
    std::vector<std::string> names;
    for (const YamlValue& item : *items) names.push_back(string(item).value_or(""));
    return names;
  }
  // A span: an integer in the time field's unit, or (timestamp fields) "10s", "500ms", ...
  std::optional<std::int64_t> span(const YamlValue& value, const TimeField& time,
                                   std::int64_t min) {
    place(value);
    const YAML::Node& node = value.node;
    if (node.IsScalar() && !is_quoted(node)) {
      const std::string& text = node.Scalar();
      std::int64_t number = 0;
      const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
      if (!text.empty() && ec == std::errc{} && stop == text.data() + text.size()) {
        if (auto bad = check_range(number, min, kMaxInt)) {
          problem(value, *bad);
          return std::nullopt;
        }
        return number;
      }
    }
    const Duration duration = node.IsScalar() ? parse_duration(node.Scalar()) : Duration{};
    std::optional<std::string> bad;
    if (!duration.matched) {
      bad = "expected an integer or a duration like '10s' (units ns, us, ms, s), got " + got(node);
    } else if (time.type && *time.type != ops::FieldType::timestamp) {
      bad = "a duration like " + in_quotes(node.Scalar()) + " needs a timestamp field; " +
            in_quotes(time.name) + " is " + time.type_name + ": give a number in its unit";
    } else if (duration.too_large) {
      bad = "duration " + in_quotes(node.Scalar()) + " is too large (at most " +
            std::to_string(kMaxInt) + " ns)";
    } else {
      bad = check_range(duration.ns, min, kMaxInt);
    }
    if (bad) {
      problem(value, *bad);
      return std::nullopt;
    }
    return duration.ns;
  }

  // A problem of `value` found here; it counts as a failed read.
  void problem(const YamlValue& value, std::string_view what) {
    problems_.add(value, what);
    fail(value);
  }
  // The member (path below params: "window.size") did not read; errors about it are dropped.
  void fail(std::string member) { failed_.push_back(std::move(member)); }
  void fail(const YamlValue& value) { fail(member_of(value.path)); }

  // Reports the operator's validation errors that are not about a member that failed to read.
  void check(const std::vector<ops::Error>& errors) {
    for (const ops::Error& error : errors) report(error);
  }

  // Reports one operator Error at the value its `where` names (see box_types.hpp).
  void report(const ops::Error& error) {
    std::string where = error.where;
    std::string message = error.message;
    std::optional<std::size_t> column;
    if (const std::size_t at = where.rfind(" col "); at != std::string::npos) {
      std::size_t n = 0;
      const std::string digits = where.substr(at + 5);
      const auto [stop, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (ec == std::errc{} && stop == digits.data() + digits.size() && n >= 1) {
        column = n;
        where.resize(at);
        message = "col " + digits + ": " + message;
      }
    }
    std::string member;
    if (where == "params") {
      member.clear();
    } else if (where.starts_with("params.")) {
      member = where.substr(7);
    } else {
      problems_.add(anchor_, where.empty() ? message : where + ": " + message);
      return;
    }
    if (suppressed(member)) return;
    if (const auto it = places_.find(member); it != places_.end()) {
      const YamlValue& at = it->second;
      YAML::Mark mark = at.mark;
      if (column && at.node.IsScalar() && at.node.Scalar().find('\n') == std::string::npos) {
        mark.column += static_cast<int>(*column - 1) + (is_quoted(at.node) ? 1 : 0);
      }
      problems_.add(mark, at.path, message);
      return;
    }
    // Not written (a default): at the closest written mapping above it, with the full path.
    const std::string path = member.empty() ? anchor_.path : anchor_.key_path(member);
    std::string above = member;
    while (!above.empty()) {
      const std::size_t cut = above.find_last_of(".[");
      above.resize(cut == std::string::npos ? 0 : cut);
      if (const auto it = places_.find(above); it != places_.end()) {
        problems_.add(it->second.mark, path, message);
        return;
      }
    }
    problems_.add(anchor_.mark, path, message);
  }

  // An output schema the operator would not give although validate() passed.
  void report_plan_failure(const ops::Error& error) {
    problems_.add(anchor_, error.describe());
  }

 private:
  static std::string child(const std::string& member, std::string_view key) {
    return member.empty() ? std::string(key) : member + "." + std::string(key);
  }
  [[nodiscard]] std::string member_of(const std::string& path) const {
    if (path == anchor_.path) return {};
    if (path.starts_with(anchor_.path) && path.size() > anchor_.path.size() &&
        path[anchor_.path.size()] == '.') {
      return path.substr(anchor_.path.size() + 1);
    }
    return path;
  }
  void place(const YamlValue& value) { place(member_of(value.path), value); }
  void place(const std::string& member, const YamlValue& value) {
    places_.insert_or_assign(member, value);
  }
  [[nodiscard]] bool failed_all() const {
    return std::find(failed_.begin(), failed_.end(), std::string()) != failed_.end();
  }
  [[nodiscard]] bool suppressed(const std::string& member) const {
    return std::any_of(failed_.begin(), failed_.end(), [&](const std::string& f) {
      if (f.empty() || member == f) return true;
      return member.size() > f.size() && member.starts_with(f) &&
             (member[f.size()] == '.' || member[f.size()] == '[');
    });
  }

  Problems& problems_;
  std::size_t start_;
  YamlValue anchor_;  // params, or the box (with params' path) when params is absent
  std::optional<YamlMapping> mapping_;
  std::map<std::string, YamlValue, std::less<>> places_;  // member path -> where written
  std::vector<std::string> failed_;                        // member paths that did not read
};

std::optional<BoxPlan> plan_filter(const YamlValue* params, const YamlValue& box_at, Inputs inputs,
                                   Problems& problems) {
  ParamReader r(params, box_at, problems, Keys(kFilterKeys));
  ops::FilterParams p;
  if (const YamlValue* v = r.require("predicate")) p.predicate = r.string(*v).value_or("");
  if (const YamlValue* v = r.find("emit_rejected")) p.emit_rejected = r.boolean(*v).value_or(false);
  if (!known(inputs, 1, 1)) return std::nullopt;
  const ops::Schema& input = *inputs[0];
  r.check(p.validate(input));
  if (!r.ok()) return std::nullopt;
  BoxPlan plan;
  plan.outputs.assign(p.emit_rejected ? 2 : 1, input);
  plan.make = [p, input](std::size_t) { return as_box(ops::Filter::make(p, input)); };
  return plan;
}

std::optional<BoxPlan> plan_map(const YamlValue* params, const YamlValue& box_at, Inputs inputs,
                                Problems& problems) {
  ParamReader r(params, box_at, problems, Keys(kMapKeys));
  ops::MapParams p;
  if (const YamlValue* v = r.require("fields")) {
    if (auto items = r.list(*v)) {
      for (const YamlValue& item : *items) {
        ops::MapField field;
        if (auto m = r.mapping(item, Keys(kMapFieldKeys))) {
          if (const YamlValue* n = r.require(*m, "name")) field.name = r.string(*n).value_or("");
          if (const YamlValue* e = r.require(*m, "expression")) {
            field.expression = r.string(*e).value_or("");
          }
          if (const YamlValue* t = m->find("type")) field.type = r.string(*t);
        }
        p.fields.push_back(std::move(field));
      }
    }
  }
  if (!known(inputs, 1, 1)) return std::nullopt;
  const ops::Schema& input = *inputs[0];
  r.check(p.validate(input));
  if (!r.ok()) return std::nullopt;
  auto output = p.output_schema(input);
  if (!output) {
    r.report_plan_failure(output.error());
    return std::nullopt;
  }
  BoxPlan plan;
  plan.outputs.push_back(std::move(output).value());
  plan.make = [p, input](std::size_t) { return as_box(ops::Map::make(p, input)); };
  return plan;
}

std::optional<BoxPlan> plan_union(const YamlValue* params, const YamlValue& box_at, Inputs inputs,
                                  Problems& problems) {
  const std::size_t start = count(problems);
  if (params != nullptr && !params->node.IsNull()) {
    if (!params->node.IsMap()) {
      problems.add(*params, "expected nothing (a union takes no params), got " +
                                describe_node(params->node));
    } else {
      for (auto it = params->node.begin(); it != params->node.end(); ++it) {
        const YAML::Node key = it->first;
        problems.add(key.Mark(), key.IsScalar() ? params->key_path(key.Scalar()) : params->path,
                     "unknown key (a union takes no params)");
      }
    }
  }
  if (!known(inputs, 2, std::numeric_limits<std::size_t>::max())) return std::nullopt;
  std::vector<ops::Schema> schemas;
  for (const ops::Schema* input : inputs) schemas.push_back(*input);
  const std::optional<YamlValue> in = in_value(box_at);
  for (const ops::Error& error : ops::UnionParams{}.validate(schemas)) {
    YamlValue at = in.value_or(box_at);
    if (in && error.where.starts_with("inputs[")) {
      const std::size_t index = std::stoul(error.where.substr(7));
      if (in->node.IsSequence() && index < in->node.size()) {
        const YAML::Node item = in->node[index];
        at = YamlValue{item, in->index_path(index), item.Mark().line < 0 ? in->mark : item.Mark()};
      }
    }
    problems.add(at, error.message);
  }
  if (count(problems) != start) return std::nullopt;
  BoxPlan plan;
  plan.outputs.push_back(schemas.front());
  plan.make = [schemas](std::size_t) { return as_box(ops::UnionBox::make({}, schemas)); };
  return plan;
}

std::optional<BoxPlan> plan_aggregate(const YamlValue* params, const YamlValue& box_at,
                                      Inputs inputs, Problems& problems) {
  ParamReader r(params, box_at, problems, Keys(kAggregateKeys));
  const bool inputs_known = known(inputs, 1, 1);
  const ops::Schema* input = inputs_known ? inputs[0] : nullptr;
  ops::AggregateParams p;
  if (const YamlValue* v = r.find("group_by")) p.group_by = r.names(*v).value_or(Names{});
  std::optional<ops::WindowKind> kind;  // as written; nullopt when absent or bad
  TimeField time;
  bool whole = false;  // kind: whole, one time window holding the whole input
  if (const YamlValue* v = r.require("window")) {
    if (auto m = r.mapping(*v, Keys(kWindowKeys))) {
      if (const YamlValue* k = r.require(*m, "kind")) {
        if (auto text = r.string(*k)) {
          if (*text == "count") {
            kind = ops::WindowKind::count;
          } else if (*text == "time" || *text == "whole") {
            kind = ops::WindowKind::time;
            whole = *text == "whole";
          } else {
            r.problem(*k, "unknown window kind " + in_quotes(*text) +
                              "; expected count, time or whole");
          }
        }
      }
      const YamlValue* field = m->find("field");
      if (field != nullptr) p.window.field = r.string(*field).value_or("");
      // A bad kind: guess from the field, so validate() does not add a consequence.
      const ops::WindowKind effective =
          kind.value_or(field != nullptr ? ops::WindowKind::time : ops::WindowKind::count);
      // Lengths are tuples (a Count) or nanoseconds (a Duration), as the kind says.
      const auto length = [effective](std::int64_t n) -> ops::WindowLength {
        if (effective == ops::WindowKind::count) return ops::Count{static_cast<std::uint64_t>(n)};
        return ops::Duration(n);
      };
      p.window.size = length(0);
      p.window.slide = length(0);
      time = time_field(input, p.window.field);
      const auto read_size = [&](const YamlValue& value) -> std::optional<std::int64_t> {
        return kind == ops::WindowKind::count ? r.integer(value, 1, kMaxInt)
                                              : r.span(value, time, 1);
      };
      bool size_read = false;
      if (whole) {
        // The whole input: one tumbling window of kMaxSpan ns from the epoch (to 2043) with
        // as much slack, so no tuple is late and the window is emitted when the input ends.
        for (const char* key : {"size", "slide"}) {
          if (const YamlValue* s = m->find(key)) {
            r.problem(*s, std::string("a whole window has no ") + key + " (it spans the input)");
          }
        }
        p.window.size = p.window.slide = ops::Duration(ops::AggregateParams::kMaxSpan);
        p.slack = ops::Duration(ops::AggregateParams::kMaxSpan);
      } else {
        if (const YamlValue* s = r.require(*m, "size")) {
          if (auto n = read_size(*s)) {
            p.window.size = length(*n);
            size_read = true;
          }
        }
        if (const YamlValue* s = m->find("slide")) {
          if (auto n = read_size(*s)) p.window.slide = length(*n);
        } else {
          p.window.slide = p.window.size;
          if (!size_read) r.fail("window.slide");
        }
      }
    }
  }
  if (const YamlValue* v = r.require("aggregates")) {
    if (auto items = r.list(*v)) {
      for (const YamlValue& item : *items) {
        ops::AggregateField a;
        if (auto m = r.mapping(item, Keys(kAggregateFieldKeys))) {
          if (const YamlValue* f = r.require(*m, "function")) {
            a.function = r.string(*f).value_or("");
          }
          if (const YamlValue* f = m->find("field")) a.field = r.string(*f).value_or("");
          if (const YamlValue* f = r.require(*m, "as")) a.as = r.string(*f).value_or("");
        }
        p.aggregates.push_back(std::move(a));
      }
    }
  }
  if (const YamlValue* v = r.find("timeout")) {
    const auto n = kind == ops::WindowKind::count ? r.integer(*v, 1, kMaxInt) : r.span(*v, time, 1);
    if (n) p.timeout = ops::Duration(*n);
  }
  if (const YamlValue* v = r.find("slack")) {
    if (whole) {
      r.problem(*v, "a whole window takes no slack (no tuple is late in it)");
    } else {
      const auto n =
          kind == ops::WindowKind::count ? r.integer(*v, 0, kMaxInt) : r.span(*v, time, 0);
      p.slack = ops::Duration(n.value_or(0));
    }
  }
  if (const YamlValue* v = r.find("partial_field")) p.partial_field = r.string(*v).value_or("");
  if (!inputs_known) return std::nullopt;
  r.check(p.validate(*input));
  if (!r.ok()) return std::nullopt;
  auto output = p.output_schema(*input);
  if (!output) {
    r.report_plan_failure(output.error());
    return std::nullopt;
  }
  BoxPlan plan;
  plan.outputs.push_back(std::move(output).value());
  plan.make = [p, schema = *input](std::size_t batch_rows) {
    return as_box(ops::AggregateBox::make(
        p, schema, batch_rows == 0 ? ops::Output::kDefaultBatchRows : batch_rows));
  };
  return plan;
}

std::optional<BoxPlan> plan_join(const YamlValue* params, const YamlValue& box_at, Inputs inputs,
                                 Problems& problems) {
  ParamReader r(params, box_at, problems, Keys(kJoinKeys));
  const bool inputs_known = known(inputs, 2, 2);
  ops::JoinParams p;
  if (const YamlValue* v = r.require("left_time")) p.left_time = r.string(*v).value_or("");
  if (const YamlValue* v = r.require("right_time")) p.right_time = r.string(*v).value_or("");
  const TimeField time = time_field(inputs_known ? inputs[0] : nullptr, p.left_time);
  if (const YamlValue* v = r.require("window")) {
    // "unbounded": every pair matches whatever its times (ops/join.hpp).
    const bool unbounded = v->node.IsScalar() && v->node.Scalar() == "unbounded";
    p.window = unbounded ? ops::Duration::max() : ops::Duration(r.span(*v, time, 0).value_or(0));
  }
  if (const YamlValue* v = r.find("slack"))
    p.slack = ops::Duration(r.span(*v, time, 0).value_or(0));
  if (const YamlValue* v = r.find("equal")) {
    if (auto items = r.list(*v)) {
      for (const YamlValue& item : *items) {
        std::pair<std::string, std::string> pair;
        if (auto m = r.mapping(item, Keys(kEqualKeys))) {
          if (const YamlValue* f = r.require(*m, "left")) pair.first = r.string(*f).value_or("");
          if (const YamlValue* f = r.require(*m, "right")) pair.second = r.string(*f).value_or("");
        }
        p.equal.push_back(std::move(pair));
      }
    }
  }
  if (const YamlValue* v = r.find("band")) {
    if (auto m = r.mapping(*v, Keys(kBandKeys))) {
      ops::Band band;
      if (const YamlValue* f = r.require(*m, "left")) band.left = r.string(*f).value_or("");
      if (const YamlValue* f = r.require(*m, "right")) band.right = r.string(*f).value_or("");
      if (const YamlValue* f = r.require(*m, "width")) band.width = r.non_negative(*f).value_or(0);
      p.band = std::move(band);
    }
  }
  if (!inputs_known) return std::nullopt;
  const ops::Schema& left = *inputs[0];
  const ops::Schema& right = *inputs[1];
  r.check(p.validate(left, right));
  if (!r.ok()) return std::nullopt;
  auto output = ops::JoinBox::output_schema(p, left, right);
  if (!output) {
    r.report_plan_failure(output.error());
    return std::nullopt;
  }
  BoxPlan plan;
  plan.outputs.push_back(std::move(output).value());
  plan.make = [p, left, right](std::size_t) { return as_box(ops::JoinBox::make(p, left, right)); };
  return plan;
}

// The plan of a one-input box whose output has its input's schema: `params` validated against
// the input, then boxes made by make(params, input, batch_rows).
template <class Params, class Make>
std::optional<BoxPlan> same_schema_plan(ParamReader& r, const Params& params, Inputs inputs,
                                        Make make) {
  if (!known(inputs, 1, 1)) return std::nullopt;
  const ops::Schema& input = *inputs[0];
  r.check(params.validate(input));
  if (!r.ok()) return std::nullopt;
  BoxPlan plan;
  plan.outputs.push_back(input);
  plan.make = [params, input, make](std::size_t rows) { return as_box(make(params, input, rows)); };
  return plan;
}

std::optional<BoxPlan> plan_bsort(const YamlValue* params, const YamlValue& box_at, Inputs inputs,
                                  Problems& problems) {
  ParamReader r(params, box_at, problems, Keys(kBSortKeys));
  ops::BSortParams p;
  if (const YamlValue* v = r.require("field")) p.field = r.string(*v).value_or("");
  if (const YamlValue* v = r.find("slack")) {
    p.slack = static_cast<std::uint64_t>(
        r.integer(*v, 0, static_cast<std::int64_t>(ops::kMaxBSortSlack)).value_or(0));
  }
  return same_schema_plan(r, p, inputs, [](const ops::BSortParams& q, const ops::Schema& input,
                                            std::size_t) { return ops::BSortBox::make(q, input); });
}

std::optional<BoxPlan> plan_argmax(const YamlValue* params, const YamlValue& box_at, Inputs inputs,
                                   Problems& problems) {
  ParamReader r(params, box_at, problems, Keys(kArgMaxKeys));
  ops::ArgMaxParams p;
  if (const YamlValue* v = r.require("by")) p.by = r.string(*v).value_or("");
  if (const YamlValue* v = r.require("field")) p.field = r.string(*v).value_or("");
  return same_schema_plan(
      r, p, inputs, [](const ops::ArgMaxParams& q, const ops::Schema& input, std::size_t rows) {
        return ops::ArgMax::make(q, input, rows);
      });
}

std::optional<BoxPlan> plan_resample(const YamlValue* params, const YamlValue& box_at,
                                     Inputs inputs, Problems& problems) {
  ParamReader r(params, box_at, problems, Keys(kResampleKeys));
  const bool inputs_known = known(inputs, 1, 1);
  ops::ResampleParams p;
  if (const YamlValue* v = r.require("time_field")) p.time_field = r.string(*v).value_or("");
  const TimeField time = time_field(inputs_known ? inputs[0] : nullptr, p.time_field);
  if (const YamlValue* v = r.require("interval")) p.interval = r.span(*v, time, 1).value_or(0);
  if (const YamlValue* v = r.find("group_by")) p.group_by = r.names(*v).value_or(Names{});
  if (const YamlValue* v = r.find("value_fields")) p.value_fields = r.names(*v).value_or(Names{});
  if (const YamlValue* v = r.find("mode")) {
    if (auto mode = r.string(*v)) {
      if (*mode == "hold" || *mode == "interpolate") {
        p.mode = *mode;
      } else {
        r.problem(*v, "unknown mode " + in_quotes(*mode) + "; expected hold or interpolate");
      }
    }
  }
  if (!inputs_known) return std::nullopt;
  const ops::Schema& input = *inputs[0];
  r.check(p.validate(input));
  if (!r.ok()) return std::nullopt;
  auto output = ops::ResampleBox::output_schema(p, input);
  if (!output) {
    r.report_plan_failure(output.error());
    return std::nullopt;
  }
  BoxPlan plan;
  plan.outputs.push_back(std::move(output).value());
  plan.make = [p, input](std::size_t) { return as_box(ops::ResampleBox::make(p, input)); };
  return plan;
}

std::optional<BoxPlan> plan_split(const YamlValue* params, const YamlValue& box_at, Inputs inputs,
                                  Problems& problems) {
  ParamReader r(params, box_at, problems, Keys(kSplitKeys));
  ops::SplitParams p;
  if (const YamlValue* v = r.require("key_fields")) p.key_fields = r.names(*v).value_or(Names{});
  if (const YamlValue* v = r.find("outputs")) {
    p.outputs = static_cast<std::uint32_t>(r.integer(*v, 1, ops::kMaxSplitOutputs).value_or(2));
  }
  if (!known(inputs, 1, 1)) return std::nullopt;
  const ops::Schema& input = *inputs[0];
  r.check(p.validate(input));
  if (!r.ok()) return std::nullopt;
  BoxPlan plan;
  plan.outputs.assign(p.outputs, input);
  plan.make = [p, input](std::size_t) { return as_box(ops::SplitBox::make(p, input)); };
  return plan;
}

constexpr std::size_t kAny = std::numeric_limits<std::size_t>::max();

constexpr std::array<BoxType, 9> kOperatorTypes = {{
    {"filter", Keys(kFilterKeys), 1, 1, &plan_filter},
    {"map", Keys(kMapKeys), 1, 1, &plan_map},
    {"union", Keys(), 2, kAny, &plan_union},
    {"aggregate", Keys(kAggregateKeys), 1, 1, &plan_aggregate},
    {"join", Keys(kJoinKeys), 2, 2, &plan_join},
    {"bsort", Keys(kBSortKeys), 1, 1, &plan_bsort},
    {"resample", Keys(kResampleKeys), 1, 1, &plan_resample},
    {"split", Keys(kSplitKeys), 1, 1, &plan_split},
    {"argmax", Keys(kArgMaxKeys), 1, 1, &plan_argmax},
}};

}  // namespace

std::span<const BoxType> operator_box_types() noexcept { return kOperatorTypes; }

const BoxType* find_box_type(std::string_view name) noexcept {
  for (const BoxType& type : kOperatorTypes) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

}  // namespace boreal::runtime
