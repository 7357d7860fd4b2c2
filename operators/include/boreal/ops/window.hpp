// Lengths of windows in types (docs/design.md, convention 6): a time window, a slack, a timeout
// and a join's window are a Duration; a tuple window is a Count. The aggregate and the join
// take the same types, so `.size = 10s` means ten seconds in both, and a bare `10` does not
// compile where a length is expected.
//
//   using namespace std::chrono_literals;
//   WindowSpec{.field = "ts", .size = 10s, .slide = 2s};         // sliding, on a time field
//   WindowSpec{.size = Count{100}, .slide = Count{100}};          // tumbling, 100 tuples
//
// A time field is a timestamp (nanoseconds since the Unix epoch) or an integer (i64, i32)
// that also counts nanoseconds: a Duration is compared with the field's values as its
// nanosecond count.
//
// Slack: out-of-order input, the same in the aggregate and the join (Borealis-style slack,
// not watermarks carried by the stream). A box keeps the greatest time it has seen on an
// input (the aggregate: its one input; the join: each port). A tuple at most `slack` older
// than that is taken as if it had arrived in order: the box keeps every state it could still
// need for `slack` longer, so the output equals that of the sorted input. An older tuple is
// late: it is dropped and counted (dropped_late()), and changes nothing. So with a slack of at
// least the input's largest disorder nothing is dropped, and slack 0 expects each input in
// non-decreasing time order. The price is memory and delay: windows close, and join partners
// are evicted, `slack` later.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>

namespace boreal::ops {

using Duration = std::chrono::nanoseconds;

// A number of tuples: the length of a count window.
struct Count {
  std::uint64_t tuples = 0;
  friend bool operator==(Count, Count) = default;
};

// A window's size or slide: a span of time or a number of tuples.
using WindowLength = std::variant<Duration, Count>;

// The length in tuples (a Count) or nanoseconds (a Duration; a negative one gives 0).
[[nodiscard]] inline std::uint64_t window_units(const WindowLength& length) noexcept {
  if (const Count* count = std::get_if<Count>(&length)) return count->tuples;
  const std::int64_t ns = std::get<Duration>(length).count();
  return ns < 0 ? 0 : static_cast<std::uint64_t>(ns);
}

// "10s", "1500us", "7ns" (the largest unit that states it exactly), or "100 tuples".
[[nodiscard]] std::string to_string(Duration duration);
[[nodiscard]] std::string to_string(const WindowLength& length);

}  // namespace boreal::ops
