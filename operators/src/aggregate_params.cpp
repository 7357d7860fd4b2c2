// AggregateParams::validate and output_schema: plan-time checks, all problems at once.
#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <boreal/ops/aggregate.hpp>

#include "aggregate_plan.hpp"

namespace boreal::ops {
namespace {

bool is_identifier(std::string_view name) {
  if (name.empty()) return false;
  const auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!alpha(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

std::string in_quotes(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  out.append(s);
  out.push_back('\'');
  return out;
}

const char* unit_name(bool time) { return time ? "ns" : "tuples"; }

// An expression argument's problems: compile errors moved under `where` ("expression col 5"
// -> "params.aggregates[1].field col 5"), and a kind the function cannot take.
void check_expression(const AggregateField& a, AggFunction fn, const Schema& input,
                      const std::string& where, std::vector<Error>& errors) {
  auto expr = Expr::compile(a.field, input);
  if (!expr) {
    Error e = std::move(expr).error();
    constexpr std::string_view kPrefix = "expression";
    e.where = "params." + where +
              (e.where.starts_with(kPrefix) ? e.where.substr(kPrefix.size()) : std::string());
    errors.push_back(std::move(e));
    return;
  }
  const ValueKind kind = expr.value().kind();
  const bool number = kind == ValueKind::integer || kind == ValueKind::floating;
  const bool sums = fn == AggFunction::sum || fn == AggFunction::avg;
  if (!number && (sums || kind == ValueKind::string)) {
    errors.push_back(Error{a.function + (sums ? " needs a number" : " needs a number or a bool") +
                               "; expression " + in_quotes(a.field) + " is " +
                               std::string(kind_name(kind)),
                           "params." + where});
  }
}

}  // namespace

std::optional<AggFunction> parse_agg_function(std::string_view name) {
  if (name == "count") return AggFunction::count;
  if (name == "sum") return AggFunction::sum;
  if (name == "min") return AggFunction::min;
  if (name == "max") return AggFunction::max;
  if (name == "avg") return AggFunction::avg;
  if (name == "first") return AggFunction::first;
  if (name == "last") return AggFunction::last;
  return std::nullopt;
}

std::vector<Error> AggregateParams::validate(const Schema& input) const {
  std::vector<Error> errors;
  const auto add = [&](std::string message, std::string where) {
    errors.push_back(Error{std::move(message), "params." + std::move(where)});
  };
  std::vector<std::string> names;  // output names in order, for duplicates
  const auto claim = [&](const std::string& name, std::string where) {
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      add("duplicate output name " + in_quotes(name), std::move(where));
    }
    names.push_back(name);
  };
  // An output column the parameters name (`as`, partial_field): an identifier, not taken.
  const auto name_output = [&](const std::string& name, std::string where) {
    if (!is_identifier(name)) {
      add("output name " + in_quotes(name) +
              " is not an identifier (letters, digits, '_', not starting with a digit)",
          std::move(where));
    } else {
      claim(name, std::move(where));
    }
  };

  for (std::size_t i = 0; i < group_by.size(); ++i) {
    const std::string where = "group_by[" + std::to_string(i) + "]";
    if (!input.index_of(group_by[i])) {
      add("unknown field " + in_quotes(group_by[i]), where);
    } else {
      claim(group_by[i], where);
    }
  }
  claim("window_start", "window");
  claim("window_end", "window");

  const bool time = window.kind() == WindowKind::time;
  if (time) {
    if (window.field.empty()) {
      add("a time window needs a time field", "window.field");
    } else if (auto index = input.index_of(window.field); !index) {
      add("unknown field " + in_quotes(window.field), "window.field");
    } else {
      const Field& f = input.field(*index);
      if (f.type != FieldType::timestamp && f.type != FieldType::i64 && f.type != FieldType::i32) {
        add("time field " + in_quotes(f.name) + " is " + f.type_name() +
                "; expected timestamp, i64 or i32",
            "window.field");
      }
    }
  } else if (!window.field.empty()) {
    add("a count window has no time field; got " + in_quotes(window.field), "window.field");
  }
  // Sizes in tuples or nanoseconds; a negative Duration reads as 0 and is refused with it.
  const std::uint64_t size = window_units(window.size);
  const std::uint64_t slide = window_units(window.slide);
  const bool size_ok = size >= 1 && size <= kMaxSpan;
  if (size == 0) add("size must be positive; got " + to_string(window.size), "window.size");
  if (size > kMaxSpan)
    add(std::string("size must be at most 2^61 ") + unit_name(time), "window.size");
  bool slide_ok = false;
  if (window.size.index() != window.slide.index()) {
    add("slide is " + to_string(window.slide) + " but size is " + to_string(window.size) +
            ": a window is either a Duration (time) or a Count (tuples) in both",
        "window.slide");
  } else if (slide == 0) {
    add("slide must be positive; got " + to_string(window.slide), "window.slide");
  } else if (size_ok && slide > size) {
    add("slide " + to_string(window.slide) + " is larger than size " + to_string(window.size),
        "window.slide");
  } else {
    slide_ok = size_ok;
  }
  if (!time && timeout) add("a timeout needs a time window", "timeout");
  if (time && timeout && timeout->count() <= 0) {
    add("timeout must be positive; got " + to_string(*timeout), "timeout");
  }
  if (time && timeout && static_cast<std::uint64_t>(timeout->count()) > kMaxSpan) {
    add("timeout must be at most 2^61 ns", "timeout");
  }
  if (!time && slack != Duration::zero()) add("slack needs a time window", "slack");
  if (slack < Duration::zero()) add("slack must not be negative; got " + to_string(slack), "slack");
  const auto slack_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(slack.count(), 0));
  if (slack_ns > kMaxSpan) add("slack must be at most 2^61 ns", "slack");
  if (slide_ok && slack_ns <= kMaxSpan) {
    const std::uint64_t panes = pane_ring_need(size, slide, time ? slack_ns : 0);
    if (panes > kMaxPanes) {
      const std::uint64_t pane = std::gcd(size, slide);
      const std::string pane_text = time ? to_string(Duration{static_cast<std::int64_t>(pane)})
                                         : to_string(WindowLength{Count{pane}});
      add("size + slack spans " + std::to_string(panes) + " panes of gcd(size, slide) = " +
              pane_text + "; at most " + std::to_string(kMaxPanes) + " are supported",
          "window");
    }
  }

  if (aggregates.empty()) add("at least one aggregate is needed", "aggregates");
  for (std::size_t i = 0; i < aggregates.size(); ++i) {
    const AggregateField& a = aggregates[i];
    const std::string at = "aggregates[" + std::to_string(i) + "]";
    const std::optional<AggFunction> fn = parse_agg_function(a.function);
    if (!fn) {
      add("unknown function " + in_quotes(a.function) +
              "; expected count, sum, min, max, avg, first or last",
          at + ".function");
    }
    if (fn == AggFunction::count) {
      if (!a.field.empty()) add("count takes no field; got " + in_quotes(a.field), at + ".field");
    } else if (fn) {
      if (a.field.empty()) {
        add(a.function + " needs a field", at + ".field");
      } else if (is_expression_argument(a.field, input)) {
        check_expression(a, *fn, input, at + ".field", errors);
      } else if (auto index = input.index_of(a.field); !index) {
        add("unknown field " + in_quotes(a.field), at + ".field");
      } else if (fn == AggFunction::sum || fn == AggFunction::avg) {
        const Field& f = input.field(*index);
        if (f.type != FieldType::i32 && f.type != FieldType::i64 && f.type != FieldType::f64) {
          add(a.function + " needs an i32, i64 or f64 field; " + in_quotes(f.name) + " is " +
                  f.type_name(),
              at + ".field");
        }
      }
    }
    name_output(a.as, at + ".as");
  }
  if (!partial_field.empty()) name_output(partial_field, "partial_field");
  return errors;
}

Result<Schema> AggregateParams::output_schema(const Schema& input) const {
  if (std::vector<Error> errors = validate(input); !errors.empty()) {
    return fail(describe(errors));
  }
  std::vector<std::pair<std::string, std::string>> fields;
  for (const std::string& name : group_by) {
    fields.emplace_back(name, input.field(*input.index_of(name)).type_name());
  }
  const bool ts = window.kind() == WindowKind::time &&
                  input.field(*input.index_of(window.field)).type == FieldType::timestamp;
  fields.emplace_back("window_start", ts ? "timestamp" : "i64");
  fields.emplace_back("window_end", ts ? "timestamp" : "i64");
  for (const AggregateField& a : aggregates) {
    const AggFunction fn = *parse_agg_function(a.function);
    std::string type;
    if (fn == AggFunction::count) {
      type = "i64";
    } else {
      // An expression's values are typed like an i64, f64 or bool field.
      const Field f =
          is_expression_argument(a.field, input)
              ? Field{"", expression_field_type(Expr::compile(a.field, input).value().kind())}
              : input.field(*input.index_of(a.field));
      if (fn == AggFunction::avg) {
        type = "f64";
      } else if (fn == AggFunction::sum) {
        type = f.type == FieldType::f64 ? "f64" : "i64";
      } else {
        type = f.type_name();
      }
    }
    fields.emplace_back(a.as, std::move(type));
  }
  if (!partial_field.empty()) fields.emplace_back(partial_field, "bool");
  return Schema::make(std::move(fields));
}

}  // namespace boreal::ops
