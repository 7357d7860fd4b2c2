#include "spec/spec_yaml.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "spec/spec_values.hpp"

namespace boreal::runtime {
namespace {

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// yaml-cpp tags a quoted scalar "!" and a plain one "?".
bool is_plain_scalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "!"; }

// What a number reader got, for its message: a quoted scalar is called a string.
std::string got(const YAML::Node& node) {
  if (node.IsScalar() && !is_plain_scalar(node)) return "the string \"" + node.Scalar() + "\"";
  return describe_node(node);
}

// A whole-text decimal number (std::from_chars: no leading '+', no hex).
template <class Number>
bool parse_number(const std::string& text, Number& out) {
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, out);
  return !text.empty() && stop == end && ec == std::errc{};
}

}  // namespace

YamlValue& YamlValue::operator=(const YamlValue& other) {
  node.reset(other.node);  // rebind; never Node::operator=, which writes into the tree
  path = other.path;
  mark = other.mark;
  return *this;
}

std::string YamlValue::key_path(std::string_view key) const {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string YamlValue::index_path(std::size_t index) const {
  return path + "[" + std::to_string(index) + "]";
}

void Problems::add(const YAML::Mark& mark, std::string_view path, std::string_view what) {
  std::string text =
      path.empty() ? std::string(what) : std::string(path) + ": " + std::string(what);
  // yaml-cpp's marks are 0-based, and -1 when a node did not come from the text.
  const int line = mark.line < 0 ? 0 : mark.line + 1;
  const int column = mark.column < 0 ? 0 : mark.column + 1;
  problems_.push_back({line, column, std::move(text)});
}

SpecErrors Problems::sorted() const {
  std::vector<Problem> ordered = problems_;
  std::stable_sort(ordered.begin(), ordered.end(), [](const Problem& a, const Problem& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  SpecErrors errors;
  for (const Problem& problem : ordered) {
    std::string where = file_name_;
    if (problem.line > 0) {
      where += ":" + std::to_string(problem.line) + ":" + std::to_string(problem.column);
    }
    errors.messages.push_back(where + ": " + problem.text);
  }
  return errors;
}

std::string describe_node(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (node.IsScalar()) return in_quotes(node.Scalar());
  return "nothing";
}

const YamlValue* YamlMapping::find(std::string_view key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

const YamlValue* YamlMapping::require(std::string_view key, Problems& problems) const {
  const YamlValue* value = find(key);
  if (value == nullptr) problems.add(whole_, "missing required key " + in_quotes(key));
  return value;
}

std::optional<YamlMapping> read_mapping(const YamlValue& value,
                                        std::span<const std::string_view> keys,
                                        Problems& problems) {
  if (!value.node.IsMap()) {
    problems.add(value, "expected a mapping, got " + describe_node(value.node));
    return std::nullopt;
  }
  YamlMapping mapping;
  mapping.whole_ = value;
  std::string valid;
  for (std::string_view key : keys) valid.append(valid.empty() ? "" : ", ").append(key);
  for (auto it = value.node.begin(); it != value.node.end(); ++it) {
    // Copies: the iterator hands out a temporary pair, so references to it would dangle.
    const YAML::Node key_node = it->first;
    const YAML::Node value_node = it->second;
    if (!key_node.IsScalar()) {
      problems.add(key_node.Mark(), value.path,
                   "expected a name as key, got " + describe_node(key_node));
      continue;
    }
    const std::string& key = key_node.Scalar();
    YamlValue entry{value_node, value.key_path(key), value_node.Mark()};
    if (value_node.IsNull() || entry.mark.line < 0) entry.mark = key_node.Mark();
    if (!keys.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) {
      problems.add(key_node.Mark(), entry.path, "unknown key (valid: " + valid + ")");
      continue;
    }
    if (mapping.entries_.contains(key)) {
      problems.add(key_node.Mark(), entry.path,
                   "repeated key (first at line " +
                       std::to_string(mapping.entries_.at(key).mark.line + 1) + ")");
      continue;
    }
    mapping.entries_.emplace(key, std::move(entry));
  }
  return mapping;
}

std::optional<std::vector<YamlValue>> read_list(const YamlValue& value, Problems& problems) {
  std::vector<YamlValue> items;
  if (value.node.IsNull()) return items;
  if (!value.node.IsSequence()) {
    problems.add(value, "expected a list, got " + describe_node(value.node));
    return std::nullopt;
  }
  for (std::size_t i = 0; i < value.node.size(); ++i) {
    const YAML::Node item = value.node[i];
    YamlValue entry{item, value.index_path(i), item.Mark()};
    if (entry.mark.line < 0) entry.mark = value.mark;
    items.push_back(std::move(entry));
  }
  return items;
}

std::optional<std::string> read_string(const YamlValue& value, Problems& problems) {
  if (!value.node.IsScalar() || value.node.Scalar().empty()) {
    problems.add(value, "expected a string, got " + describe_node(value.node));
    return std::nullopt;
  }
  return value.node.Scalar();
}

std::optional<std::int64_t> read_int(const YamlValue& value, std::int64_t min, std::int64_t max,
                                     Problems& problems) {
  std::int64_t number = 0;
  if (!is_plain_scalar(value.node) || !parse_number(value.node.Scalar(), number)) {
    problems.add(value, "expected an integer, got " + got(value.node));
    return std::nullopt;
  }
  if (auto bad = check_range(number, min, max)) {
    problems.add(value, *bad);
    return std::nullopt;
  }
  return number;
}

std::optional<std::uint64_t> read_uint64(const YamlValue& value, Problems& problems) {
  std::uint64_t number = 0;
  if (!is_plain_scalar(value.node) || !parse_number(value.node.Scalar(), number)) {
    problems.add(value, "expected an integer from 0 to " +
                            std::to_string(std::numeric_limits<std::uint64_t>::max()) + ", got " +
                            got(value.node));
    return std::nullopt;
  }
  return number;
}

std::optional<bool> parse_bool(const YAML::Node& node) {
  if (!is_plain_scalar(node)) return std::nullopt;
  const std::string& text = node.Scalar();
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

std::optional<bool> read_bool(const YamlValue& value, Problems& problems) {
  auto b = parse_bool(value.node);
  if (!b) problems.add(value, "expected true or false, got " + got(value.node));
  return b;
}

std::optional<double> read_non_negative(const YamlValue& value, Problems& problems) {
  double number = 0;
  if (!is_plain_scalar(value.node) || !parse_number(value.node.Scalar(), number) ||
      !std::isfinite(number)) {
    problems.add(value, "expected a number, got " + got(value.node));
    return std::nullopt;
  }
  if (number < 0) {
    problems.add(value, "must not be negative, got " + value.node.Scalar());
    return std::nullopt;
  }
  return number;
}

std::optional<std::vector<YamlValue>> read_names(const YamlValue& value, Problems& problems) {
  if (value.node.IsScalar()) {
    if (!read_string(value, problems)) return std::nullopt;
    return std::vector<YamlValue>{value};
  }
  if (!value.node.IsSequence()) {
    problems.add(value,
                 "expected a stream name or a list of them, got " + describe_node(value.node));
    return std::nullopt;
  }
  auto items = read_list(value, problems);
  if (!items) return std::nullopt;
  std::vector<YamlValue> names;
  bool ok = true;
  for (YamlValue& item : *items) {
    if (read_string(item, problems)) {
      names.push_back(std::move(item));
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return names;
}

}  // namespace boreal::runtime
