// Schema derivation and the order of the arrows (schema_plan.cpp), shared by parse_network()
// and apply_overrides() (which re-derives after --tuple-bytes resizes a source's schema).
// Private to boreal::runtime.
#pragma once

#include "spec/network_spec.hpp"
#include "spec/spec_yaml.hpp"

namespace boreal::runtime {

// Sets every stream's tuple_schema and every operator box's plan, reporting into `problems`:
// a cycle, an input count the box type does not take, params that do not fit the input
// schemas, an output count that differs from the plan's, and a named `schema` that differs
// from the derived one. Boxes downstream of a problem are left unplanned, unreported.
void derive_schemas(NetworkSpec& spec, Problems& problems);

}  // namespace boreal::runtime
