// Private to the aggregate box: the parsed function names and the pane-ring arithmetic that
// validate() and the box share.
#pragma once

#include <cstdint>
#include <numeric>
#include <optional>
#include <string_view>

namespace boreal::ops {

enum class AggFunction : std::uint8_t { count, sum, min, max, avg, first, last };

std::optional<AggFunction> parse_agg_function(std::string_view name);

// Panes a group's ring must hold: the live span is at most size + slack time units (or size
// tuples), i.e. (size + slack) / pane panes, plus one pane at each end that is partly covered.
// Preconditions: 1 <= slide <= size <= 2^61, slack <= 2^61.
inline std::uint64_t pane_ring_need(std::uint64_t size, std::uint64_t slide, std::uint64_t slack) {
  const std::uint64_t pane = std::gcd(size, slide);
  return size / pane + slack / pane + 2;
}

}  // namespace boreal::ops
