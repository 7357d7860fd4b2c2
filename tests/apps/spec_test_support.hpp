// Helpers for tests of network files: a listing with numbered lines replaced, and the problems
// parse_network() reports for a text (as file "t.yaml").
#pragma once

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spec/network_spec.hpp"

namespace boreal::test {

// `base` with lines replaced, numbered from 1 (a replacement may hold several lines, or be
// empty to drop one), joined with newlines.
inline std::string lines_with(const std::vector<std::string>& base,
                              const std::map<int, std::string>& changes) {
  std::string text;
  for (std::size_t i = 0; i < base.size(); ++i) {
    const auto change = changes.find(static_cast<int>(i + 1));
    const std::string& line = change == changes.end() ? base[i] : change->second;
    if (!line.empty()) text += line + "\n";
  }
  return text;
}

// Every problem parse_network() reports for `text`; a valid text fails the calling test.
inline std::vector<std::string> spec_errors_of(const std::string& text) {
  runtime::SpecResult<runtime::NetworkSpec> spec = runtime::parse_network(text, "t.yaml");
  EXPECT_FALSE(spec) << "unexpectedly valid:\n" << text;
  return spec ? std::vector<std::string>{} : spec.error().messages;
}

}  // namespace boreal::test
