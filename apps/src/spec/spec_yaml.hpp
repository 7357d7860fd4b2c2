// Reading a query-network file's YAML tree with every problem located: a collector of
// "file:line:col: path: what" messages, and readers of mappings and typed scalars that report
// into it instead of throwing (yaml-cpp's as<T>() throws). parse_network() builds on these.
//
// Private to boreal::runtime. Plain values; one Problems per parse, used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "spec/network_spec.hpp"

namespace boreal::runtime {

// A YAML node with its path ("boxes[1].params.rate") and the place to report it at. For a
// mapping value left empty (`address:`) yaml-cpp marks the next token, so `mark` is then the
// key's mark instead.
//
// Assigning a YamlValue rebinds `node` (YAML::Node::reset): YAML::Node's own operator= would
// overwrite the node it referred to inside the parsed tree, so sorting or reassigning values
// would corrupt the document.
struct YamlValue {
  YAML::Node node;
  std::string path;
  YAML::Mark mark;

  YamlValue() = default;
  YamlValue(YAML::Node node_in, std::string path_in, YAML::Mark mark_in)
      : node(std::move(node_in)), path(std::move(path_in)), mark(mark_in) {}
  YamlValue(const YamlValue&) = default;
  YamlValue(YamlValue&&) = default;
  YamlValue& operator=(const YamlValue& other);
  YamlValue& operator=(YamlValue&& other) { return *this = std::as_const(other); }
  ~YamlValue() = default;

  [[nodiscard]] SourcePos pos() const { return {mark.line + 1, mark.column + 1}; }
  // The path of a key below this one, or of an element of this list.
  [[nodiscard]] std::string key_path(std::string_view key) const;
  [[nodiscard]] std::string index_path(std::size_t index) const;
};

// Every problem of one file, sortable into file order.
class Problems {
 public:
  explicit Problems(std::string_view file_name) : file_name_(file_name) {}

  void add(const YAML::Mark& mark, std::string_view path, std::string_view what);
  void add(const YamlValue& at, std::string_view what) { add(at.mark, at.path, what); }
  [[nodiscard]] bool empty() const noexcept { return problems_.empty(); }
  // "file:line:col: path: what" (no "path: " when the path is empty), by line, then column,
  // then the order they were added.
  [[nodiscard]] SpecErrors sorted() const;

 private:
  struct Problem {
    int line;  // 1-based; 0 when unknown (sorts first)
    int column;
    std::string text;  // "path: what"
  };
  std::string file_name_;
  std::vector<Problem> problems_;
};

// "a mapping", "a list", "nothing" or the scalar in quotes: what a type error says it got.
[[nodiscard]] std::string describe_node(const YAML::Node& node);

// The entries of a mapping, first occurrence of each key. read_mapping() reports a value that
// is not a mapping, keys not in `keys` (listing them; an empty `keys` accepts any key),
// non-scalar keys and repeated keys.
class YamlMapping {
 public:
  [[nodiscard]] const YamlValue* find(std::string_view key) const;
  // find(), or "missing required key 'key'" reported at the mapping.
  const YamlValue* require(std::string_view key, Problems& problems) const;
  [[nodiscard]] const YamlValue& whole() const noexcept { return whole_; }

 private:
  friend std::optional<YamlMapping> read_mapping(const YamlValue&,
                                                 std::span<const std::string_view>, Problems&);
  YamlValue whole_;
  std::map<std::string, YamlValue, std::less<>> entries_;
};
std::optional<YamlMapping> read_mapping(const YamlValue& value,
                                        std::span<const std::string_view> keys, Problems& problems);

// The elements of a list. A null value is an empty list; anything else is reported.
std::optional<std::vector<YamlValue>> read_list(const YamlValue& value, Problems& problems);

// Typed scalars; each reports "expected ..., got ..." and returns nullopt on a wrong type.
// A quoted scalar is a string, never a number.
std::optional<std::string> read_string(const YamlValue& value, Problems& problems);
// A decimal integer, then check_range(min, max).
std::optional<std::int64_t> read_int(const YamlValue& value, std::int64_t min, std::int64_t max,
                                     Problems& problems);
std::optional<std::uint64_t> read_uint64(const YamlValue& value, Problems& problems);
// An unquoted true/True/TRUE or false/False/FALSE; nullopt for anything else.
std::optional<bool> parse_bool(const YAML::Node& node);
// parse_bool, or "expected true or false, got ..." reported at the value.
std::optional<bool> read_bool(const YamlValue& value, Problems& problems);
// A finite number >= 0.
std::optional<double> read_non_negative(const YamlValue& value, Problems& problems);

// One stream name or a list of them, each with where it is written.
std::optional<std::vector<YamlValue>> read_names(const YamlValue& value, Problems& problems);

}  // namespace boreal::runtime
