// What `boreal check` prints for a valid network file: the plan a run would follow. Per node,
// its I/O thread with its wait mode and the boxes it runs in arrow order (each with its input
// and output streams); per stream between nodes, the link (medium, provider, wait, budget,
// flush, frame size, window), one per consuming node; every stream's schema, derived or named.
//
// Pure; any thread.
#pragma once

#include <string>

#include "spec/network_spec.hpp"

namespace boreal::runtime {

[[nodiscard]] std::string describe_plan(const NetworkSpec& spec);

}  // namespace boreal::runtime
