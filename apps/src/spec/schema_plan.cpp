// Schema derivation: walks the boxes in arrow order and has every box say what it emits.
// A source emits its named schema; an operator box is planned by its BoxType (box_types.hpp)
// from its params and its input streams' schemas; a sink, or any box that names a `schema`,
// asserts the schema it receives or emits. A cycle is reported once, naming its boxes.
#include "spec/schema_plan.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include <boreal/ops/sink.hpp>

#include "spec/box_types.hpp"
#include "spec/spec_values.hpp"

namespace boreal::runtime {
namespace {

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// The value under `key` in the box's mapping, located, if present.
std::optional<YamlValue> child(const YamlValue& parent, std::string_view key) {
  if (!parent.node.IsMap()) return std::nullopt;
  const YAML::Node& map = parent.node;
  const YAML::Node value = map[std::string(key)];
  if (!value.IsDefined()) return std::nullopt;
  return YamlValue{value, parent.key_path(key), value.Mark()};
}

// Which box produces each stream (index into spec.boxes), or npos: the first box that lists
// it in `out` (a second producer is reported by build_streams()).
std::vector<std::size_t> producers(const NetworkSpec& spec) {
  std::vector<std::size_t> out(spec.streams.size(), std::string::npos);
  for (std::size_t b = 0; b < spec.boxes.size(); ++b) {
    for (const std::string& name : spec.boxes[b].outputs) {
      const StreamSpec* stream = spec.find_stream(name);
      if (stream != nullptr && out[stream->id - 1] == std::string::npos) out[stream->id - 1] = b;
    }
  }
  return out;
}

// Boxes that feed box `b` directly.
std::vector<std::size_t> feeders(const NetworkSpec& spec, const std::vector<std::size_t>& made_by,
                                 std::size_t b) {
  std::vector<std::size_t> out;
  for (const std::string& input : spec.boxes[b].inputs) {
    const StreamSpec* stream = spec.find_stream(input);
    if (stream != nullptr && made_by[stream->id - 1] != std::string::npos) {
      out.push_back(made_by[stream->id - 1]);
    }
  }
  return out;
}

// One cycle through box `start`, as "a -> s1 -> b -> s2 -> a", or empty if none.
std::string cycle_through(const NetworkSpec& spec, const std::vector<std::size_t>& made_by,
                          std::size_t start) {
  // Depth-first search backwards along the arrows, from start back to start.
  std::vector<std::size_t> path{start};
  std::vector<bool> seen(spec.boxes.size(), false);
  std::vector<std::pair<std::size_t, std::size_t>> stack{{start, 0}};
  seen[start] = true;
  while (!stack.empty()) {
    auto& [box, next] = stack.back();
    const auto up = feeders(spec, made_by, box);
    if (next >= up.size()) {
      stack.pop_back();
      path.pop_back();
      continue;
    }
    const std::size_t feeder = up[next++];
    if (feeder == start) {
      // path is start, p1, p2, ..., pk with p1 feeding start, p2 feeding p1, ..., and start
      // feeding pk: the arrows run start -> pk -> ... -> p1 -> start.
      std::string text = spec.boxes[start].name;
      for (std::size_t i = path.size(); i-- > 1;) text += " -> " + spec.boxes[path[i]].name;
      return text + " -> " + spec.boxes[start].name;
    }
    if (!seen[feeder]) {
      seen[feeder] = true;
      path.push_back(feeder);
      stack.emplace_back(feeder, 0);
    }
  }
  return {};
}

}  // namespace

std::vector<std::size_t> topological_order(const NetworkSpec& spec) {
  const auto made_by = producers(spec);
  std::vector<std::size_t> waiting(spec.boxes.size(), 0);
  for (std::size_t b = 0; b < spec.boxes.size(); ++b) waiting[b] = feeders(spec, made_by, b).size();
  std::vector<std::size_t> order;
  std::vector<bool> placed(spec.boxes.size(), false);
  // Repeatedly take the first box in file order whose feeders are all placed: O(boxes²), and
  // the order is the file's wherever the arrows allow.
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t b = 0; b < spec.boxes.size(); ++b) {
      if (placed[b] || waiting[b] != 0) continue;
      placed[b] = true;
      order.push_back(b);
      progress = true;
      for (std::size_t d = 0; d < spec.boxes.size(); ++d) {
        for (std::size_t feeder : feeders(spec, made_by, d)) {
          if (feeder == b) --waiting[d];
        }
      }
      break;
    }
  }
  return order;
}

void derive_schemas(NetworkSpec& spec, Problems& problems) {
  for (StreamSpec& stream : spec.streams) stream.tuple_schema.reset();
  const auto order = topological_order(spec);
  if (order.size() < spec.boxes.size()) {
    const auto made_by = producers(spec);
    std::vector<bool> placed(spec.boxes.size(), false);
    for (std::size_t b : order) placed[b] = true;
    std::vector<bool> reported(spec.boxes.size(), false);
    for (std::size_t b = 0; b < spec.boxes.size(); ++b) {
      if (placed[b] || reported[b] || !spec.boxes[b].at) continue;
      const std::string ring = cycle_through(spec, made_by, b);
      if (ring.empty()) continue;  // downstream of a cycle, not on one
      for (std::size_t other = 0; other < spec.boxes.size(); ++other) {
        if (ring.find(spec.boxes[other].name) != std::string::npos) reported[other] = true;
      }
      problems.add(*spec.boxes[b].at, "box " + in_quotes(spec.boxes[b].name) +
                                          " is on a cycle: " + ring +
                                          " (a query network's arrows must not loop)");
    }
  }
  for (std::size_t b : order) {
    BoxSpec& box = spec.boxes[b];
    if (!box.at) continue;
    const YamlValue& at = *box.at;
    std::vector<const ops::Schema*> inputs;
    bool inputs_known = true;
    for (const std::string& name : box.inputs) {
      const StreamSpec* stream = spec.find_stream(name);
      const ops::Schema* schema =
          stream != nullptr && stream->tuple_schema ? &*stream->tuple_schema : nullptr;
      inputs_known = inputs_known && schema != nullptr;
      inputs.push_back(schema);
    }
    const ops::Schema* named = box.schema.empty() ? nullptr : spec.find_schema(box.schema);
    auto set_output = [&](std::size_t port, const ops::Schema& schema) {
      if (port >= box.outputs.size()) return;
      StreamSpec* stream = nullptr;
      for (StreamSpec& s : spec.streams) {
        if (s.name == box.outputs[port] && s.producer == box.name) stream = &s;
      }
      if (stream != nullptr) stream->tuple_schema = schema;
    };
    if (box.type == "source") {
      if (box.source && box.source->kind == SourceKind::nexmark) {
        for (std::size_t port = 0; port < box.source->streams.size(); ++port) {
          set_output(port, ops::nexmark_schema(box.source->streams[port], box.source->stamp));
        }
        continue;
      }
      if (named == nullptr) continue;
      set_output(0, *named);
      if (box.source && box.source->kind == SourceKind::generator) {
        const auto params_at = box.params_at ? *box.params_at : at;
        for (const ops::Error& error : generator_params(*box.source, *named).validate()) {
          problems.add(params_at, error.describe());
        }
      }
      continue;
    }
    if (box.type == "sink") {
      if (named != nullptr && !inputs.empty() && inputs[0] != nullptr && !(*named == *inputs[0])) {
        problems.add(child(at, "schema").value_or(at),
                     "schema " + in_quotes(box.schema) + " (" + named->to_string() +
                         ") differs from the schema of input stream " +
                         in_quotes(box.inputs[0]) + " (" + inputs[0]->to_string() + ")");
      }
      if (inputs.empty() || inputs[0] == nullptr || !box.sink) continue;
      const YamlValue where = box.params_at ? *box.params_at : at;
      const auto seq = inputs[0]->index_of("seq");
      if (box.sink->kind == SinkKind::check &&
          (!seq || inputs[0]->field(*seq).type != ops::FieldType::i64)) {
        problems.add(where, "a check sink needs an i64 field 'seq' (the generator's sequence "
                            "number); stream " + in_quotes(box.inputs[0]) + " carries " +
                                inputs[0]->to_string() + " (use kind count, discard or latency)");
      }
      if (box.sink->kind == SinkKind::latency) {
        for (const ops::Error& error :
             ops::LatencySinkParams{.field = box.sink->field}.validate(*inputs[0])) {
          problems.add(where, error.describe());
        }
      }
      continue;
    }
    const BoxType* type = find_box_type(box.type);
    if (type == nullptr) continue;  // an unknown type was reported where it is written
    const std::size_t n = box.inputs.size();
    if (n < type->min_inputs || n > type->max_inputs) {
      std::string want = type->min_inputs == type->max_inputs
                             ? "exactly " + count_text(type->min_inputs, "input stream")
                             : "at least " + count_text(type->min_inputs, "input stream");
      problems.add(child(at, "in").value_or(at), "a " + box.type + " box has " + want + ", got " +
                                                     std::to_string(n) +
                                                     (child(at, "in") ? "" : " (no 'in' key)"));
      continue;
    }
    std::vector<const ops::Schema*> known = inputs;
    auto plan = type->plan(box.params_at.get(), at, known, problems);
    if (!plan) continue;
    if (plan->outputs.size() != box.outputs.size()) {
      problems.add(child(at, "out").value_or(at),
                   "this " + box.type + " box has " + count_text(plan->outputs.size(), "output") +
                       ", but 'out' lists " + count_text(box.outputs.size(), "stream"));
      continue;
    }
    for (std::size_t port = 0; port < plan->outputs.size(); ++port) {
      set_output(port, plan->outputs[port]);
    }
    if (named != nullptr && !(*named == plan->outputs.front())) {
      problems.add(child(at, "schema").value_or(at),
                   "schema " + in_quotes(box.schema) + " (" + named->to_string() +
                       ") differs from what the box emits on " + in_quotes(box.outputs.front()) +
                       " (" + plan->outputs.front().to_string() + ")");
    }
    box.plan = std::make_shared<const BoxPlan>(std::move(*plan));
  }
}

}  // namespace boreal::runtime
