#include <boreal/ops/window.hpp>

namespace boreal::ops {

std::string to_string(Duration duration) {
  struct Unit {
    std::int64_t ns;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{3'600'000'000'000, "h"}, {60'000'000'000, "min"},
                                    {1'000'000'000, "s"},      {1'000'000, "ms"},
                                    {1'000, "us"}};
  const std::int64_t ns = duration.count();
  for (const Unit& unit : kUnits) {
    if (ns != 0 && ns % unit.ns == 0) return std::to_string(ns / unit.ns) + unit.suffix;
  }
  return std::to_string(ns) + "ns";
}

std::string to_string(const WindowLength& length) {
  if (const Count* count = std::get_if<Count>(&length)) {
    return std::to_string(count->tuples) + (count->tuples == 1 ? " tuple" : " tuples");
  }
  return to_string(std::get<Duration>(length));
}

}  // namespace boreal::ops
