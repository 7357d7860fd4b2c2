// parse_network(): reads the file's sections in order, then checks what spans them (node and
// schema references, the streams and their producers, link overrides). Every check reports
// into one Problems and carries on, so a single run lists everything that is wrong; a value
// that failed its own check is not reported again by the cross-checks (an unknown node is
// only reported when no node of that name was declared, valid or not).
#include "spec/network_spec.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "spec/box_types.hpp"
#include "spec/schema_plan.hpp"
#include "spec/spec_values.hpp"
#include "spec/spec_yaml.hpp"

namespace boreal::runtime {

std::uint64_t default_cluster_token(std::string_view name) {
  const std::uint64_t hash = ops::fnv1a_64("boreal network " + std::string(name));
  return hash == 0 ? 1 : hash;
}

namespace {

using Keys = std::span<const std::string_view>;

constexpr std::array<std::string_view, 7> kTopKeys = {
    "name", "cluster_token", "schemas", "nodes", "transport", "boxes", "links"};
constexpr std::array<std::string_view, 4> kNodeKeys = {"name", "address", "threads",
                                                      "checkpoint"};
constexpr std::array<std::string_view, 9> kTransportKeys = {
    "medium",      "provider", "wait",   "latency_budget_us", "spin_us",
    "batch_bytes", "flush_us", "window", "connection"};
constexpr std::array<std::string_view, 10> kLinkKeys = {
    "stream",  "medium",      "provider", "wait",   "latency_budget_us",
    "spin_us", "batch_bytes", "flush_us", "window", "connection"};
constexpr std::array<std::string_view, 8> kBoxKeys = {"name", "type",   "node",   "in",
                                                      "out",  "schema", "params", "thread"};
constexpr std::array<std::string_view, 20> kSourceParamKeys = {
    "kind",       "path",         "rate",        "tuples",      "duration_s",
    "seed",       "keys",         "key_field",   "distribution", "zipf_s",
    "values",     "seq_field",    "time_field",  "start_ns",    "streams",
    "events",     "first_event",  "gap_us",      "max_delay_ms", "stamp"};
// The keys only a nexmark source takes.
constexpr std::array<std::string_view, 6> kNexmarkKeys = {"streams", "events", "first_event",
                                                          "gap_us", "max_delay_ms", "stamp"};
constexpr std::array<std::string_view, 4> kSinkParamKeys = {"kind", "slow_us_per_frame", "output",
                                                            "field"};
constexpr std::array<std::string_view, 3> kValueKeys = {"field", "min", "max"};

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

template <class Names>
std::string listed(const Names& names) {
  std::string out;
  for (const auto& name : names) out.append(out.empty() ? "" : ", ").append(name);
  return out;
}

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string line_of(const YamlValue& value) { return "line " + std::to_string(value.pos().line); }

// A transport block or link entry, with where batch_bytes was set (for the tuple-fit check).
struct TransportEntry {
  TransportPatch patch;
  std::optional<YamlValue> batch_at;
};

// What parse_network() keeps of a box besides its BoxSpec: where each part is written.
struct BoxPlaces {
  YamlValue whole;
  std::optional<YamlValue> name, node, schema, thread;
  std::vector<YamlValue> inputs, outputs;
};

// A stream name in some box's `in` or `out`.
struct Mention {
  YamlValue at;
  std::size_t box = 0;
  bool output = false;
};

class Parser {
 public:
  explicit Parser(std::string_view file_name) : problems_(file_name) {
    spec_.file_name = std::string(file_name);
  }

  SpecResult<NetworkSpec> run(std::string_view text);

 private:
  void read_schemas(const YamlValue& value);
  void read_nodes(const YamlValue& value);
  TransportEntry read_transport(const YamlMapping& mapping);
  void read_boxes(const YamlValue& value);
  void read_box(const YamlValue& value);
  void read_source_params(const YamlValue* params, BoxSpec& box);
  void read_nexmark_params(const YamlValue& params, const YamlMapping& mapping, BoxSpec& box);
  void read_sink_params(const YamlValue* params, BoxSpec& box);
  void check_box_references();
  void build_streams();
  void check_threads();
  void check_checkpoints();
  void read_links(const YamlValue& value);
  void default_media_from_addresses();
  void check_batch_fit();
  const ops::Schema* schema_of(std::string_view name) const { return spec_.find_schema(name); }

  Problems problems_;
  NetworkSpec spec_;
  std::set<std::string, std::less<>> declared_schemas_;  // valid or not
  std::vector<std::pair<std::string, YamlValue>> declared_nodes_;  // valid or not, file order
  std::vector<std::pair<std::string, YamlValue>> checkpoint_at_;  // node name, its `checkpoint`
  std::optional<YamlValue> default_batch_at_;
  bool default_medium_set_ = false;             // the transport block names a medium
  std::vector<bool> link_medium_set_;           // per stream: its links entry names one
  std::vector<BoxPlaces> places_;           // places_[i] is spec_.boxes[i]
  std::vector<Mention> first_mention_;      // first_mention_[i] is spec_.streams[i]'s
  std::vector<Mention> mentions_;           // every mention, file order
  std::vector<std::optional<YamlValue>> link_batch_at_;  // per stream
  std::vector<std::optional<YamlValue>> link_at_;        // per stream: its links[i].stream
};

SpecResult<NetworkSpec> Parser::run(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& error) {
    problems_.add(error.mark, "", "invalid YAML: " + error.msg);
    return boost::outcome_v2::failure(problems_.sorted());
  }
  if (!root.IsDefined() || root.IsNull()) {
    problems_.add(YAML::Mark(), "", "the file is empty (expected name, nodes and boxes)");
    return boost::outcome_v2::failure(problems_.sorted());
  }
  const auto top = read_mapping(YamlValue{root, "", root.Mark()}, Keys(kTopKeys), problems_);
  if (!top) return boost::outcome_v2::failure(problems_.sorted());

  if (const YamlValue* name = top->require("name", problems_)) {
    spec_.name = read_string(*name, problems_).value_or("");
  }
  if (const YamlValue* token = top->find("cluster_token")) {
    spec_.cluster_token = read_uint64(*token, problems_).value_or(0);
  } else {
    spec_.cluster_token = default_cluster_token(spec_.name);
  }
  if (const YamlValue* schemas = top->find("schemas")) read_schemas(*schemas);
  if (const YamlValue* nodes = top->require("nodes", problems_)) read_nodes(*nodes);
  if (const YamlValue* transport = top->find("transport")) {
    if (auto mapping = read_mapping(*transport, Keys(kTransportKeys), problems_)) {
      TransportEntry entry = read_transport(*mapping);
      entry.patch.apply_to(spec_.transport);
      default_batch_at_ = entry.batch_at;
      default_medium_set_ = entry.patch.medium.has_value();
    }
  }
  if (const YamlValue* boxes = top->require("boxes", problems_)) read_boxes(*boxes);
  check_box_references();
  build_streams();
  derive_schemas(spec_, problems_);
  if (const YamlValue* links = top->find("links")) read_links(*links);
  default_media_from_addresses();
  check_batch_fit();
  check_threads();
  check_checkpoints();

  if (!problems_.empty()) return boost::outcome_v2::failure(problems_.sorted());
  return std::move(spec_);
}

void Parser::read_schemas(const YamlValue& value) {
  const auto schemas = read_mapping(value, Keys(), problems_);  // any name
  if (!schemas) return;
  for (auto it = value.node.begin(); it != value.node.end(); ++it) {
    const std::string name = it->first.Scalar();
    const YamlValue* fields_value = schemas->find(name);
    if (name.empty() || fields_value == nullptr || !declared_schemas_.insert(name).second) continue;
    const auto items = read_list(*fields_value, problems_);
    if (!items) continue;
    std::vector<std::pair<std::string, std::string>> fields;
    bool ok = true;
    for (const YamlValue& item : *items) {
      const YAML::Node& node = item.node;
      if (!node.IsMap() || node.size() != 1 || !node.begin()->first.IsScalar() ||
          !node.begin()->second.IsScalar()) {
        problems_.add(item, "expected one {field: type} pair, got " + describe_node(node));
        ok = false;
        continue;
      }
      fields.emplace_back(node.begin()->first.Scalar(), node.begin()->second.Scalar());
    }
    if (!ok) continue;
    ops::Result<ops::Schema> schema = ops::Schema::make(std::move(fields));
    if (!schema) {
      // Schema::make locates its error as "fields[i]" or "fields".
      const ops::Error& error = schema.error();
      const YamlValue* at = fields_value;
      if (error.where.starts_with("fields[")) {
        const std::size_t index = std::stoul(error.where.substr(7));
        if (index < items->size()) at = &(*items)[index];
      }
      problems_.add(*at, error.message);
      continue;
    }
    spec_.schemas.emplace(name, std::move(schema).value());
  }
}

void Parser::read_nodes(const YamlValue& value) {
  const auto items = read_list(value, problems_);
  if (!items) return;
  if (items->empty()) problems_.add(value, "a network needs at least one node");
  for (const YamlValue& item : *items) {
    const auto mapping = read_mapping(item, Keys(kNodeKeys), problems_);
    if (!mapping) continue;
    const YamlValue* name_value = mapping->require("name", problems_);
    const YamlValue* address_value = mapping->require("address", problems_);
    const std::optional<std::string> name =
        name_value ? read_string(*name_value, problems_) : std::nullopt;
    const std::optional<std::string> address =
        address_value ? read_string(*address_value, problems_) : std::nullopt;
    if (name) {
      const auto same = std::find_if(declared_nodes_.begin(), declared_nodes_.end(),
                                     [&](const auto& node) { return node.first == *name; });
      if (same != declared_nodes_.end()) {
        problems_.add(*name_value, "duplicate node name " + in_quotes(*name) + " (first at " +
                                       line_of(same->second) + ")");
        continue;
      }
      declared_nodes_.emplace_back(*name, *name_value);
    }
    std::uint32_t threads = 1;
    if (const YamlValue* v = mapping->find("threads")) {
      if (auto n = read_int(*v, 1, kMaxThreads, problems_))
        threads = static_cast<std::uint32_t>(*n);
    }
    std::string checkpoint;
    if (const YamlValue* v = mapping->find("checkpoint")) {
      checkpoint = read_string(*v, problems_).value_or("");
      if (name && !checkpoint.empty()) checkpoint_at_.emplace_back(*name, *v);
    }
    if (!name || !address) continue;
    transport::Result<Uri> uri = parse_uri(*address);
    if (!uri) {
      problems_.add(*address_value, uri.error().message);
      continue;
    }
    for (const NodeSpec& other : spec_.nodes) {
      if (other.uri == uri.value()) {
        problems_.add(*address_value, "address " + in_quotes(*address) +
                                          " is already used by node " + in_quotes(other.name));
      }
    }
    spec_.nodes.push_back(
        NodeSpec{*name, *address, std::move(uri).value(), threads, std::move(checkpoint)});
  }
}

TransportEntry Parser::read_transport(const YamlMapping& mapping) {
  TransportEntry entry;
  TransportPatch& patch = entry.patch;
  if (const YamlValue* v = mapping.find("medium")) {
    if (auto name = read_string(*v, problems_)) {
      if (auto medium = parse_medium(*name)) {
        patch.medium = medium.value();
      } else {
        problems_.add(*v, medium.error().message);
      }
    }
  }
  if (const YamlValue* v = mapping.find("provider")) {
    if (auto name = read_string(*v, problems_)) {
      if (auto provider = parse_provider(*name)) {
        patch.provider = provider.value();
      } else {
        problems_.add(*v, provider.error().message);
      }
    }
  }
  if (const YamlValue* v = mapping.find("wait")) {
    if (auto name = read_string(*v, problems_)) {
      if (auto mode = transport::parse_wait_mode(*name)) {
        patch.wait = mode.value();
      } else {
        problems_.add(*v, mode.error().message);
      }
    }
  }
  using us = std::chrono::microseconds;
  if (const YamlValue* v = mapping.find("latency_budget_us")) {
    if (auto n = read_int(*v, 1, kMaxMicros, problems_)) patch.latency_budget = us(*n);
  }
  if (const YamlValue* v = mapping.find("spin_us")) {
    if (auto n = read_int(*v, 0, kMaxMicros, problems_)) patch.spin = us(*n);
  }
  if (const YamlValue* v = mapping.find("flush_us")) {
    if (auto n = read_int(*v, 0, kMaxMicros, problems_)) patch.flush = us(*n);
  }
  if (const YamlValue* v = mapping.find("batch_bytes")) {
    if (auto n = read_int(*v, 1, kMaxU32, problems_)) {
      patch.batch_bytes = static_cast<std::uint32_t>(*n);
      entry.batch_at = *v;
    }
  }
  if (const YamlValue* v = mapping.find("window")) {
    if (auto n = read_int(*v, 1, kMaxU32, problems_)) patch.window = static_cast<std::uint32_t>(*n);
  }
  if (const YamlValue* v = mapping.find("connection")) {
    if (auto name = read_string(*v, problems_)) {
      if (auto connection = parse_connection(*name)) {
        patch.connection = connection.value();
      } else {
        problems_.add(*v, connection.error().message);
      }
    }
  }
  return entry;
}

void Parser::read_boxes(const YamlValue& value) {
  const auto items = read_list(value, problems_);
  if (!items) return;
  if (items->empty()) problems_.add(value, "a network needs at least one box");
  for (const YamlValue& item : *items) read_box(item);
}

void Parser::read_box(const YamlValue& value) {
  const auto mapping = read_mapping(value, Keys(kBoxKeys), problems_);
  if (!mapping) return;
  BoxSpec box;
  BoxPlaces places{value, {}, {}, {}, {}, {}, {}};
  box.pos = value.pos();
  if (const YamlValue* v = mapping->require("name", problems_)) {
    if (auto name = read_string(*v, problems_)) {
      box.name = *name;
      places.name = *v;
    }
  }
  const YamlValue* type_value = mapping->require("type", problems_);
  if (type_value != nullptr) {
    box.pos = type_value->pos();
    if (auto type = read_string(*type_value, problems_)) {
      if (contains(kBoxTypes, *type)) {
        box.type = *type;
      } else {
        problems_.add(*type_value, "unknown box type " + in_quotes(*type) +
                                       " (valid: " + listed(kBoxTypes) + ")");
      }
    }
  }
  if (const YamlValue* v = mapping->require("node", problems_)) {
    if (auto node = read_string(*v, problems_)) {
      box.node = *node;
      places.node = *v;
    }
  }
  // A list that failed to read is not counted again by the source and sink checks below.
  const YamlValue* in_value = mapping->find("in");
  const YamlValue* out_value = mapping->find("out");
  bool inputs_read = in_value != nullptr;
  bool outputs_read = out_value != nullptr;
  if (in_value != nullptr) {
    auto names = read_names(*in_value, problems_);
    inputs_read = names.has_value();
    if (names) places.inputs = std::move(*names);
  }
  if (out_value != nullptr) {
    auto names = read_names(*out_value, problems_);
    outputs_read = names.has_value();
    if (names) places.outputs = std::move(*names);
  }
  for (const YamlValue& name : places.inputs) box.inputs.push_back(name.node.Scalar());
  for (const YamlValue& name : places.outputs) box.outputs.push_back(name.node.Scalar());
  const YamlValue* schema_value = mapping->find("schema");
  if (schema_value != nullptr) {
    if (auto schema = read_string(*schema_value, problems_)) {
      box.schema = *schema;
      places.schema = *schema_value;
    }
  }
  if (const YamlValue* v = mapping->find("thread")) {
    if (auto n = read_int(*v, 0, kMaxThreads - 1, problems_)) {
      box.thread = static_cast<std::uint32_t>(*n);
      places.thread = *v;
    }
  }
  const YamlValue* params = mapping->find("params");
  if (params != nullptr) box.params = params->node;
  box.at = std::make_shared<const YamlValue>(value);
  if (params != nullptr) box.params_at = std::make_shared<const YamlValue>(*params);

  if (box.type == "source") {
    read_source_params(params, box);
    const bool nexmark = box.source->kind == SourceKind::nexmark;
    if (nexmark && schema_value != nullptr) {
      problems_.add(*schema_value, "a nexmark source's streams have fixed schemas "
                                   "(docs/nexmark.md); remove 'schema'");
    } else if (!nexmark && schema_value == nullptr) {
      problems_.add(value, "missing required key 'schema' (a source names its output's schema)");
    }
    if (out_value == nullptr) {
      problems_.add(value, nexmark ? "missing required key 'out' (a nexmark source has one to "
                                     "three output streams)"
                                   : "missing required key 'out' (a source has one output stream)");
    } else if (outputs_read && nexmark && (box.outputs.empty() || box.outputs.size() > 3)) {
      problems_.add(*out_value, "a nexmark source has one to three output streams, got " +
                                    std::to_string(box.outputs.size()));
    } else if (outputs_read && !nexmark && box.outputs.size() != 1) {
      problems_.add(*out_value, "a source has exactly one output stream, got " +
                                    std::to_string(box.outputs.size()));
    }
    if (in_value != nullptr && !box.inputs.empty()) {
      problems_.add(*in_value, "a source has no input stream");
    }
  } else if (box.type == "sink") {
    if (in_value == nullptr) {
      problems_.add(value, "missing required key 'in' (a sink has one input stream)");
    } else if (inputs_read && box.inputs.size() != 1) {
      problems_.add(*in_value, "a sink has exactly one input stream, got " +
                                   std::to_string(box.inputs.size()));
    }
    if (out_value != nullptr && !box.outputs.empty()) {
      problems_.add(*out_value, "a sink has no output stream");
    }
    read_sink_params(params, box);
  }
  spec_.boxes.push_back(std::move(box));
  places_.push_back(std::move(places));
}

void Parser::read_source_params(const YamlValue* params, BoxSpec& box) {
  SourceParams& source = box.source.emplace();
  if (params == nullptr || params->node.IsNull()) return;
  const auto mapping = read_mapping(*params, Keys(kSourceParamKeys), problems_);
  if (!mapping) return;
  if (const YamlValue* v = mapping->find("kind")) {
    if (auto kind = read_string(*v, problems_)) {
      if (*kind == "generator") {
        source.kind = SourceKind::generator;
      } else if (*kind == "csv") {
        source.kind = SourceKind::csv;
      } else if (*kind == "nexmark") {
        source.kind = SourceKind::nexmark;
      } else {
        problems_.add(*v, "unknown source kind " + in_quotes(*kind) +
                              " (valid: generator, csv, nexmark)");
      }
    }
  }
  const bool csv = source.kind == SourceKind::csv;
  const bool nexmark = source.kind == SourceKind::nexmark;
  if (nexmark) {
    read_nexmark_params(*params, *mapping, box);
  } else {
    for (std::string_view key : kNexmarkKeys) {
      if (const YamlValue* v = mapping->find(key)) {
        problems_.add(*v, in_quotes(key) + " is for a nexmark source (kind: nexmark)");
      }
    }
  }
  if (const YamlValue* v = mapping->find("path")) {
    if (!csv) problems_.add(*v, "'path' is for a csv source (kind: csv)");
    if (auto path = read_string(*v, problems_)) source.path = *path;
  } else if (csv) {
    problems_.add(*params, "missing required key 'path' (the CSV file a csv source reads)");
  }
  if (const YamlValue* v = mapping->find("rate")) {
    if (!v->node.IsScalar()) {
      problems_.add(*v, "expected a positive number of tuples/s, 'max' or 'idle', got " +
                            describe_node(v->node));
    } else if (auto rate = parse_rate(v->node.Scalar())) {
      source.rate = rate.value();
    } else {
      problems_.add(*v, rate.error().message);
    }
  }
  if (const YamlValue* v = mapping->find("tuples")) {
    if (nexmark) problems_.add(*v, "a nexmark source counts events: use 'events'");
    if (auto n = read_uint64(*v, problems_)) source.tuples = *n;
  }
  if (const YamlValue* v = mapping->find("duration_s")) {
    if (auto seconds = read_non_negative(*v, problems_)) {
      source.duration = std::chrono::duration<double>(*seconds);
    }
  }
  // The generator's own keys.
  auto generator_key = [&](std::string_view key) -> const YamlValue* {
    const YamlValue* v = mapping->find(key);
    if (v != nullptr && (csv || nexmark)) {
      problems_.add(*v, in_quotes(key) + " is for a generator source, not kind " +
                            (csv ? "csv" : "nexmark"));
      return nullptr;
    }
    return v;
  };
  if (const YamlValue* v = generator_key("seed")) {
    if (auto n = read_uint64(*v, problems_)) source.seed = *n;
  }
  if (const YamlValue* v = generator_key("keys")) {
    if (auto n = read_int(*v, 1, std::numeric_limits<std::int64_t>::max(), problems_)) {
      source.keys = static_cast<std::uint64_t>(*n);
    }
  }
  if (const YamlValue* v = generator_key("key_field")) {
    if (auto name = read_string(*v, problems_)) source.key_field = *name;
  }
  if (const YamlValue* v = generator_key("distribution")) {
    if (auto name = read_string(*v, problems_)) {
      if (*name == "zipf" || *name == "uniform") {
        source.zipf = *name == "zipf";
      } else {
        problems_.add(*v,
                      "unknown key distribution " + in_quotes(*name) + " (valid: uniform, zipf)");
      }
    }
  }
  if (const YamlValue* v = generator_key("zipf_s")) {
    if (auto x = read_non_negative(*v, problems_)) {
      if (*x <= 0) {
        problems_.add(*v, "the Zipf exponent must be positive, got 0");
      } else {
        source.zipf_s = *x;
      }
    }
  }
  if (const YamlValue* v = generator_key("start_ns")) {
    if (auto n = read_int(*v, 0, std::numeric_limits<std::int64_t>::max(), problems_)) {
      source.start_ns = *n;
    }
  }
  if (const YamlValue* v = generator_key("seq_field")) {
    if (auto name = read_string(*v, problems_)) source.seq_field = *name;
  }
  if (const YamlValue* v = generator_key("time_field")) {
    if (auto name = read_string(*v, problems_)) source.time_field = *name;
  }
  if (const YamlValue* v = generator_key("values")) {
    if (auto items = read_list(*v, problems_)) {
      for (const YamlValue& item : *items) {
        const auto entry = read_mapping(item, Keys(kValueKeys), problems_);
        if (!entry) continue;
        ValueSpec value;
        if (const YamlValue* f = entry->require("field", problems_)) {
          value.field = read_string(*f, problems_).value_or("");
        }
        auto number = [&](std::string_view key, double& out) {
          const YamlValue* n = entry->require(key, problems_);
          if (n == nullptr) return;
          double x = 0;
          const std::string text = n->node.IsScalar() ? n->node.Scalar() : std::string();
          char* end = nullptr;
          x = std::strtod(text.c_str(), &end);
          if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(x)) {
            problems_.add(*n, "expected a number, got " + describe_node(n->node));
            return;
          }
          out = x;
        };
        number("min", value.min);
        number("max", value.max);
        source.values.push_back(std::move(value));
      }
    }
  }
}

void Parser::read_nexmark_params(const YamlValue& params, const YamlMapping& mapping,
                                 BoxSpec& box) {
  SourceParams& source = *box.source;
  if (const YamlValue* v = mapping.find("streams")) {
    if (auto items = read_list(*v, problems_)) {
      for (const YamlValue& item : *items) {
        const auto name = read_string(item, problems_);
        if (!name) continue;
        if (auto stream = ops::nexmark_stream(*name)) {
          source.streams.push_back(*stream);
        } else {
          problems_.add(item, "unknown nexmark stream " + in_quotes(*name) +
                                  " (valid: persons, auctions, bids, events)");
        }
      }
      if (source.streams.size() == items->size() && !box.outputs.empty() &&
          source.streams.size() != box.outputs.size()) {
        problems_.add(*v, "names " + count_text(source.streams.size(), "stream") + " for " +
                              count_text(box.outputs.size(), "output") + " in 'out'");
      }
    }
  } else if (box.outputs.size() == 1) {
    source.streams = {ops::NexmarkStream::events};
  } else if (box.outputs.size() == 3) {
    source.streams = {ops::NexmarkStream::persons, ops::NexmarkStream::auctions,
                      ops::NexmarkStream::bids};
  } else if (box.outputs.size() == 2) {
    problems_.add(params, "missing key 'streams': a nexmark source with two outputs names the "
                          "kind of each (persons, auctions, bids or events)");
  }
  if (const YamlValue* v = mapping.find("events")) {
    if (auto n = read_uint64(*v, problems_)) source.events = *n;
  }
  if (const YamlValue* v = mapping.find("first_event")) {
    if (auto n = read_uint64(*v, problems_)) source.first_event = *n;
  }
  if (const YamlValue* v = mapping.find("gap_us")) {
    if (auto n = read_int(*v, 1, 1'000'000, problems_))
      source.gap_us = static_cast<std::uint32_t>(*n);
  }
  if (const YamlValue* v = mapping.find("stamp")) {
    if (auto b = read_bool(*v, problems_)) source.stamp = *b;
  }
  if (const YamlValue* v = mapping.find("max_delay_ms")) {
    if (auto n = read_int(*v, 0, 1'000'000, problems_)) {
      source.max_delay_ms = static_cast<std::uint32_t>(*n);
    }
  }
}

void Parser::read_sink_params(const YamlValue* params, BoxSpec& box) {
  SinkParams& sink = box.sink.emplace();
  if (params == nullptr || params->node.IsNull()) return;
  const auto mapping = read_mapping(*params, Keys(kSinkParamKeys), problems_);
  if (!mapping) return;
  if (const YamlValue* v = mapping->find("kind")) {
    if (auto name = read_string(*v, problems_)) {
      if (auto kind = parse_sink_kind(*name)) {
        sink.kind = kind.value();
      } else {
        problems_.add(*v, kind.error().message);
      }
    }
  }
  if (const YamlValue* v = mapping->find("slow_us_per_frame")) {
    if (auto n = read_int(*v, 0, kMaxMicros, problems_)) {
      sink.slow_per_frame = std::chrono::microseconds(*n);
    }
  }
  if (const YamlValue* v = mapping->find("output")) {
    if (auto path = read_string(*v, problems_)) sink.output = *path;
  }
  if (sink.kind == SinkKind::csv && sink.output.empty()) {
    problems_.add(*params, "a csv sink needs 'output' (the CSV file it writes)");
  }
  if (const YamlValue* v = mapping->find("field")) {
    if (sink.kind != SinkKind::latency) {
      problems_.add(*v, "'field' is for a latency sink (kind: latency)");
    } else if (auto name = read_string(*v, problems_)) {
      sink.field = *name;
    }
  }
}

void Parser::check_box_references() {
  std::vector<std::string> node_names;
  for (const auto& node : declared_nodes_) node_names.push_back(node.first);
  for (std::size_t i = 0; i < spec_.boxes.size(); ++i) {
    const BoxSpec& box = spec_.boxes[i];
    const BoxPlaces& places = places_[i];
    if (places.name) {
      for (std::size_t j = 0; j < i; ++j) {
        if (places_[j].name && spec_.boxes[j].name == box.name) {
          problems_.add(*places.name, "duplicate box name " + in_quotes(box.name) + " (first at " +
                                          line_of(*places_[j].name) + ")");
          break;
        }
      }
    }
    const bool known_node =
        std::find(node_names.begin(), node_names.end(), box.node) != node_names.end();
    if (places.node && !known_node) {
      const std::string known = node_names.empty() ? std::string(" (no nodes are declared)")
                                                   : " (nodes: " + listed(node_names) + ")";
      problems_.add(*places.node, "unknown node " + in_quotes(box.node) + known);
    }
    if (const NodeSpec* node = spec_.find_node(box.node); node != nullptr && places.thread &&
                                                          box.thread >= node->threads) {
      problems_.add(*places.thread, "node " + in_quotes(node->name) + " has " +
                                        std::to_string(node->threads) + " thread" +
                                        (node->threads == 1 ? "" : "s") + " (0.." +
                                        std::to_string(node->threads - 1) + "), no thread " +
                                        std::to_string(box.thread) + " (set its `threads`)");
    }
    const bool nexmark = box.source && box.source->kind == SourceKind::nexmark;  // refused
    if (places.schema && !nexmark && !declared_schemas_.contains(box.schema)) {
      const std::string known = declared_schemas_.empty()
                                    ? std::string(" (no schemas are declared)")
                                    : " (schemas: " + listed(declared_schemas_) + ")";
      problems_.add(*places.schema, "unknown schema " + in_quotes(box.schema) + known);
    }
  }
}

void Parser::build_streams() {
  for (std::size_t b = 0; b < places_.size(); ++b) {
    for (const YamlValue& at : places_[b].inputs) mentions_.push_back({at, b, false});
    for (const YamlValue& at : places_[b].outputs) mentions_.push_back({at, b, true});
  }
  std::stable_sort(mentions_.begin(), mentions_.end(), [](const Mention& a, const Mention& b) {
    return std::pair(a.at.mark.line, a.at.mark.column) <
           std::pair(b.at.mark.line, b.at.mark.column);
  });
  for (const Mention& mention : mentions_) {
    const std::string& name = mention.at.node.Scalar();
    if (spec_.find_stream(name) != nullptr) continue;
    StreamSpec stream;
    stream.name = name;
    stream.id = static_cast<std::uint32_t>(spec_.streams.size() + 1);
    stream.transport = spec_.transport;  // links override it in read_links()
    spec_.streams.push_back(std::move(stream));
    first_mention_.push_back(mention);
  }
  // Producers and consumers, each box once per stream (in box order = file order).
  for (StreamSpec& stream : spec_.streams) {
    std::optional<Mention> producer;
    for (std::size_t b = 0; b < places_.size(); ++b) {
      const BoxSpec& box = spec_.boxes[b];
      const auto is_this = [&](const YamlValue& at) { return at.node.Scalar() == stream.name; };
      const auto out = std::find_if(places_[b].outputs.begin(), places_[b].outputs.end(), is_this);
      const auto in = std::find_if(places_[b].inputs.begin(), places_[b].inputs.end(), is_this);
      if (out != places_[b].outputs.end()) {
        if (std::find_if(out + 1, places_[b].outputs.end(), is_this) != places_[b].outputs.end()) {
          problems_.add(*std::find_if(out + 1, places_[b].outputs.end(), is_this),
                        "stream " + in_quotes(stream.name) + " is listed twice");
        }
        if (in != places_[b].inputs.end()) {
          problems_.add(*out, "box " + in_quotes(box.name) + " both reads and writes stream " +
                                  in_quotes(stream.name));
        }
        if (producer) {
          problems_.add(*out, "stream " + in_quotes(stream.name) + " already has a producer, box " +
                                  in_quotes(spec_.boxes[producer->box].name) + " (" +
                                  line_of(producer->at) + ")");
        } else {
          producer = Mention{*out, b, true};
          stream.producer = box.name;
          stream.producer_node = box.node;
        }
      }
      if (in != places_[b].inputs.end()) {
        if (std::find_if(in + 1, places_[b].inputs.end(), is_this) != places_[b].inputs.end()) {
          problems_.add(*std::find_if(in + 1, places_[b].inputs.end(), is_this),
                        "stream " + in_quotes(stream.name) + " is listed twice");
        }
        stream.consumers.push_back(box.name);
        stream.consumer_nodes.push_back(box.node);
      }
    }
    if (!producer) {
      const Mention& first = first_mention_[stream.id - 1];
      problems_.add(first.at, "stream " + in_quotes(stream.name) +
                                  " has no producer (no box lists it in 'out')");
    }
    stream.crosses_nodes =
        std::any_of(stream.consumer_nodes.begin(), stream.consumer_nodes.end(),
                    [&](const std::string& node) { return node != stream.producer_node; });
  }
  for (StreamSpec& stream : spec_.streams) {
    const BoxSpec* producer = spec_.find_box(stream.producer);
    if (producer != nullptr) stream.schema = producer->schema;
  }
}

void Parser::read_links(const YamlValue& value) {
  link_batch_at_.assign(spec_.streams.size(), std::nullopt);
  link_at_.assign(spec_.streams.size(), std::nullopt);
  link_medium_set_.assign(spec_.streams.size(), false);
  const auto items = read_list(value, problems_);
  if (!items) return;
  std::vector<std::string> stream_names;
  for (const StreamSpec& stream : spec_.streams) stream_names.push_back(stream.name);
  for (const YamlValue& item : *items) {
    const auto mapping = read_mapping(item, Keys(kLinkKeys), problems_);
    if (!mapping) continue;
    const YamlValue* stream_value = mapping->require("stream", problems_);
    const TransportEntry entry = read_transport(*mapping);
    const std::optional<std::string> name =
        stream_value ? read_string(*stream_value, problems_) : std::nullopt;
    if (!name) continue;
    const StreamSpec* found = spec_.find_stream(*name);
    if (found == nullptr) {
      const std::string known = stream_names.empty() ? std::string(" (no streams)")
                                                     : " (streams: " + listed(stream_names) + ")";
      problems_.add(*stream_value, "unknown stream " + in_quotes(*name) + known);
      continue;
    }
    const std::size_t s = found->id - 1;
    if (link_at_[s]) {
      problems_.add(*stream_value, "stream " + in_quotes(*name) + " already has a link entry (" +
                                       line_of(*link_at_[s]) + ")");
      continue;
    }
    link_at_[s] = *stream_value;
    link_batch_at_[s] = entry.batch_at;
    link_medium_set_[s] = entry.patch.medium.has_value();
    entry.patch.apply_to(spec_.streams[s].transport);
  }
}

// A stream into a node with a fabric:// address goes over fabric-msg unless a medium is named.
void Parser::default_media_from_addresses() {
  if (default_medium_set_) return;
  link_medium_set_.resize(spec_.streams.size(), false);  // no `links` section: never filled
  for (std::size_t s = 0; s < spec_.streams.size(); ++s) {
    StreamSpec& stream = spec_.streams[s];
    if (link_medium_set_[s] || stream.consumer_nodes.empty()) continue;
    const NodeSpec* node = spec_.find_node(stream.consumer_nodes.front());
    if (node != nullptr && node->uri.scheme == "fabric") stream.transport.medium = "fabric-msg";
  }
}

void Parser::check_batch_fit() {
  link_batch_at_.resize(spec_.streams.size());  // no `links` section: never filled
  for (std::size_t s = 0; s < spec_.streams.size(); ++s) {
    const StreamSpec& stream = spec_.streams[s];
    const ops::Schema* schema = stream.tuple_schema ? &*stream.tuple_schema : nullptr;
    if (schema == nullptr || schema->tuple_bytes() <= stream.transport.batch_bytes) continue;
    const std::string tuple = "one tuple of stream " + in_quotes(stream.name) + " (" +
                              std::to_string(schema->tuple_bytes()) + " bytes)";
    const std::string batch = std::to_string(stream.transport.batch_bytes);
    if (link_batch_at_[s]) {
      problems_.add(*link_batch_at_[s], batch + " bytes cannot hold " + tuple);
    } else if (default_batch_at_) {
      problems_.add(*default_batch_at_, batch + " bytes cannot hold " + tuple);
    } else {
      // A schema's tuple is at most ops::kMaxTupleBytes, which every medium's frame holds
      // (spec_values.hpp), so the size asked for here is always one the links can take.
      problems_.add(first_mention_[s].at, "the default batch_bytes (" + batch + ") cannot hold " +
                                              tuple + "; set transport.batch_bytes to " +
                                              std::to_string(schema->tuple_bytes()) + " or more");
    }
  }
}

// A checkpoint holds the input positions, the sinks' files, the boxes' states and the
// unacknowledged output of a node on one thread; every medium between nodes (tcp, fabric-msg,
// fabric-rma) resumes its links (docs/faults.md).
void Parser::check_checkpoints() {
  for (const auto& [node, at] : checkpoint_at_) {
    const NodeSpec* spec = spec_.find_node(node);
    if (spec == nullptr) continue;
    const std::string who = "node " + in_quotes(node) + " keeps a checkpoint, but ";
    if (spec->threads != 1) {
      problems_.add(at, who + "it has " + std::to_string(spec->threads) +
                            " threads (a checkpoint needs threads: 1)");
    }
    for (const BoxSpec& box : spec_.boxes) {
      if (box.node != node) continue;
      if (std::find(kCheckpointableBoxes.begin(), kCheckpointableBoxes.end(), box.type) ==
          kCheckpointableBoxes.end()) {
        problems_.add(at, who + "box " + in_quotes(box.name) + " (" + box.type +
                              ") has state it cannot hold yet; a checkpointing node runs only "
                              "filter, map, union, split, aggregate, join, bsort, resample, "
                              "argmax and sink boxes");
      } else if (box.type == "resample" && !box.inputs.empty()) {
        // Hold mode emits grid points as the node's clock passes them (tick()): a replay
        // after a restart would not see the same ticks between the same tuples.
        const StreamSpec* in = spec_.find_stream(box.inputs[0]);
        if (in != nullptr && in->tuple_schema && ticks_on_clock(box, &*in->tuple_schema)) {
          problems_.add(at, who + "resample " + in_quotes(box.name) +
                                " is in hold mode on a timestamp field, where the wall clock "
                                "emits grid points and would not emit them alike after a "
                                "restart");
        }
      } else if (box.type == "aggregate" && box.params.IsMap() && box.params["timeout"]) {
        // A timeout closes windows by the wall clock, which a replay after a restart does not
        // repeat: the rows would differ.
        problems_.add(at, who + "aggregate " + in_quotes(box.name) +
                              " has a timeout, which closes windows by the wall clock and "
                              "would not close them alike after a restart");
      }
    }
  }
}

// The links of one I/O thread share its wait: every link end a thread runs must agree on the
// wait mode and the spin. (The latency budgets may differ: the thread waits within the
// smallest.) A disagreement is reported at the later stream's `links` entry, or where the
// stream is first written; the cure is the same wait, or the boxes on different threads.
void Parser::check_threads() {
  link_at_.resize(spec_.streams.size());
  std::vector<bool> reported(spec_.streams.size(), false);  // once per stream, at its first node
  for (const NodeSpec& node : spec_.nodes) {
    std::vector<const StreamSpec*> first(node.threads, nullptr);
    for (std::size_t s = 0; s < spec_.streams.size(); ++s) {
      const StreamSpec& stream = spec_.streams[s];
      if (!stream.link_end_on(node.name)) continue;
      const std::uint32_t thread = stream_thread(spec_, stream, node.name);
      if (thread >= node.threads) continue;  // reported with the box
      if (first[thread] == nullptr) {
        first[thread] = &stream;
        continue;
      }
      const auto& a = first[thread]->transport.wait;
      const auto& b = stream.transport.wait;
      if ((a.mode == b.mode && a.spin == b.spin) || reported[s]) continue;
      reported[s] = true;
      auto describe = [](const transport::WaitConfig& w) {
        return std::string(transport::to_string(w.mode)) + ", spin_us " +
               std::to_string(w.spin.count());
      };
      const std::string where =
          node.threads == 1 ? "node " + in_quotes(node.name) + ", whose links share one I/O thread"
                            : "thread " + std::to_string(thread) + " of node " +
                                  in_quotes(node.name) + ", whose links share its wait";
      const YamlValue& at = link_at_[s] ? *link_at_[s] : first_mention_[s].at;
      problems_.add(at, "stream " + in_quotes(stream.name) + " waits " + describe(b) +
                            ", but stream " + in_quotes(first[thread]->name) + " waits " +
                            describe(a) + ", and both are links of " + where +
                            ": give them the same wait and spin_us, or put their boxes on "
                            "different threads (`threads` on the node, `thread` on the box)");
    }
  }
}

}  // namespace

bool ticks_on_clock(const BoxSpec& box, const ops::Schema* input) {
  if (input == nullptr || (box.type != "aggregate" && box.type != "resample")) return false;
  const YAML::Node& params = box.params;
  if (!params.IsMap()) return false;
  std::string field;
  if (box.type == "aggregate") {
    const YAML::Node& window = params["window"];
    if (!params["timeout"] || !window.IsMap() || !window["field"]) return false;
    field = window["field"].Scalar();
  } else {
    if (params["mode"] && params["mode"].Scalar() == "interpolate") return false;
    if (!params["time_field"]) return false;
    field = params["time_field"].Scalar();
  }
  const auto index = input->index_of(field);
  return index && input->field(*index).type == ops::FieldType::timestamp;
}

ops::GeneratorParams generator_params(const SourceParams& source, const ops::Schema& schema) {
  ops::GeneratorParams params;
  params.schema = schema;
  params.seed = source.seed;
  if (source.tuples > 0) params.limit = source.tuples;
  std::string key = source.key_field;
  if (key.empty() && schema.index_of("key")) key = "key";
  params.keys = {
      .field = key,
      .count = source.keys,
      .distribution = source.zipf ? ops::KeyDistribution::zipf : ops::KeyDistribution::uniform,
      .zipf_s = source.zipf_s};
  for (const ValueSpec& value : source.values)
    params.values.push_back({value.field, value.min, value.max});
  // The defaults apply only where the schema has such a field; a named field must exist.
  const bool default_seq = source.seq_field == "seq" && !schema.index_of("seq");
  const bool default_time = source.time_field == "ts" && !schema.index_of("ts");
  params.seq_field = default_seq ? std::string() : source.seq_field;
  params.time_field = default_time ? std::string() : source.time_field;
  return params;
}

bool is_fabric(std::string_view medium) noexcept {
  return medium == "fabric-msg" || medium == "fabric-rma";
}

std::string fabric_provider(const NetworkSpec& spec, const StreamSpec& stream) {
  if (!stream.transport.provider.empty()) return stream.transport.provider;
  if (!stream.consumer_nodes.empty()) {
    const NodeSpec* node = spec.find_node(stream.consumer_nodes.front());
    if (node != nullptr && node->uri.scheme == "fabric") return node->uri.provider;
  }
  return std::string(kDefaultProvider);
}

std::uint16_t tcp_listen_port(const NodeSpec& node, std::uint32_t thread) {
  return static_cast<std::uint16_t>(node.uri.port + 2 * thread);
}

std::uint32_t stream_thread(const NetworkSpec& spec, const StreamSpec& stream,
                            std::string_view node) {
  const std::string& box_name =
      stream.producer_node == node ? stream.producer : [&]() -> const std::string& {
    for (std::size_t i = 0; i < stream.consumers.size(); ++i) {
      if (stream.consumer_nodes[i] == node) return stream.consumers[i];
    }
    return stream.producer;
  }();
  const BoxSpec* box = spec.find_box(box_name);
  return box == nullptr ? 0 : box->thread;
}

transport::WaitConfig thread_wait(const NetworkSpec& spec, const NodeSpec& self,
                                  std::uint32_t thread) {
  transport::WaitConfig wait = spec.transport.wait;
  bool any = false;
  for (const StreamSpec& stream : spec.streams) {
    if (!stream.link_end_on(self.name) || stream_thread(spec, stream, self.name) != thread)
      continue;
    transport::WaitConfig w = stream.transport.wait;
    if (stream.producer_node != self.name) {  // the receiving end
      // The budget is end to end: a tuple may already have waited up to `flush` in its
      // sender's open frame, so the receiver's waits get what is left (at least a quarter).
      const auto budget = w.latency_budget;
      w.latency_budget = std::max(
          budget - std::chrono::duration_cast<std::chrono::microseconds>(stream.transport.flush),
          budget / 4);
    }
    if (!any) {
      wait = w;
    } else {
      wait.latency_budget = std::min(wait.latency_budget, w.latency_budget);
    }
    any = true;
  }
  return wait;
}

std::uint16_t fabric_listen_port(const NetworkSpec& spec, const NodeSpec& node,
                                 std::uint32_t thread) {
  if (thread > 0) return static_cast<std::uint16_t>(node.uri.port + 2 * thread + 1);
  for (const StreamSpec& stream : spec.streams) {
    if (!stream.crosses_nodes || stream.transport.medium != "tcp") continue;
    const auto& consumers = stream.consumer_nodes;
    if (std::find(consumers.begin(), consumers.end(), node.name) != consumers.end()) {
      return static_cast<std::uint16_t>(node.uri.port + 1);
    }
  }
  return node.uri.port;
}

std::string SpecErrors::joined() const {
  std::string out;
  for (const std::string& message : messages) {
    if (!out.empty()) out.push_back('\n');
    out.append(message);
  }
  return out;
}

std::string_view to_string(SinkKind kind) noexcept {
  switch (kind) {
    case SinkKind::check: return "check";
    case SinkKind::count: return "count";
    case SinkKind::discard: return "discard";
    case SinkKind::latency: return "latency";
    case SinkKind::csv: return "csv";
  }
  return "?";
}

const NodeSpec* NetworkSpec::find_node(std::string_view node_name) const {
  const auto it = std::find_if(nodes.begin(), nodes.end(),
                               [&](const NodeSpec& node) { return node.name == node_name; });
  return it == nodes.end() ? nullptr : &*it;
}

const BoxSpec* NetworkSpec::find_box(std::string_view box_name) const {
  const auto it = std::find_if(boxes.begin(), boxes.end(),
                               [&](const BoxSpec& box) { return box.name == box_name; });
  return it == boxes.end() ? nullptr : &*it;
}

const StreamSpec* NetworkSpec::find_stream(std::string_view stream_name) const {
  const auto it = std::find_if(streams.begin(), streams.end(), [&](const StreamSpec& stream) {
    return stream.name == stream_name;
  });
  return it == streams.end() ? nullptr : &*it;
}

const ops::Schema* NetworkSpec::find_schema(std::string_view schema_name) const {
  const auto it = schemas.find(schema_name);
  return it == schemas.end() ? nullptr : &it->second;
}

SpecResult<NetworkSpec> parse_network(std::string_view yaml_text, std::string_view file_name) {
  return Parser(file_name).run(yaml_text);
}

SpecResult<std::string> read_network_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  std::string text;
  int error = file == nullptr ? errno : 0;
  if (file != nullptr) {
    char buffer[8192];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, got);
    if (std::ferror(file)) error = errno != 0 ? errno : EIO;
    std::fclose(file);
  }
  if (error != 0) {
    return boost::outcome_v2::failure(
        SpecErrors{{path + ": cannot read the file: " + std::strerror(error)}});
  }
  return text;
}

SpecResult<NetworkSpec> load_network(const std::string& path) {
  auto text = read_network_file(path);
  if (!text) return std::move(text).error();
  return parse_network(text.value(), path);
}

SpecResult<void> validate_runnable(const NetworkSpec& spec) {
  SpecErrors errors;
  for (std::size_t i = 0; i < spec.boxes.size(); ++i) {
    const BoxSpec& box = spec.boxes[i];
    std::string where = spec.file_name;
    if (box.pos.line > 0) {
      where += ":" + std::to_string(box.pos.line) + ":" + std::to_string(box.pos.column);
    }
    where += ": boxes[" + std::to_string(i) + "]";
    const bool idle = box.source && box.source->rate && *box.source->rate == 0.0;
    if (idle && box.source->duration.count() <= 0) {
      errors.messages.push_back(where + ".params.rate: an idle source needs a duration "
                                        "(duration_s or --duration), or it never ends");
    }
  }
  // What the media can carry, after the flags: inproc stays in a process, and one libfabric
  // endpoint (one per receiving thread) receives over one provider.
  std::map<std::pair<std::string, std::uint32_t>, const StreamSpec*> fabric_in;
  for (const StreamSpec& stream : spec.streams) {
    if (!stream.crosses_nodes) continue;
    for (const std::string& node : stream.consumer_nodes) {
      if (node == stream.producer_node) continue;
      if (stream.transport.medium == "inproc") {
        errors.messages.push_back(spec.file_name + ": stream " + in_quotes(stream.name) +
                                  " goes from node " + in_quotes(stream.producer_node) +
                                  " to node " + in_quotes(node) +
                                  " over 'inproc', which stays inside one process; use tcp, "
                                  "fabric-msg or fabric-rma");
        break;
      }
      if (stream.transport.connection != "per-link" && stream.transport.medium != "tcp") {
        errors.messages.push_back(spec.file_name + ": stream " + in_quotes(stream.name) +
                                  " goes over " + in_quotes(stream.transport.medium) +
                                  " with connection " + in_quotes(stream.transport.connection) +
                                  ", which only tcp links share; use connection per-link");
        break;
      }
      if (!is_fabric(stream.transport.medium)) continue;
      const auto key = std::make_pair(node, stream_thread(spec, stream, node));
      const auto [it, first] = fabric_in.emplace(key, &stream);
      if (!first && fabric_provider(spec, *it->second) != fabric_provider(spec, stream)) {
        errors.messages.push_back(
            spec.file_name + ": node " + in_quotes(node) + " receives stream " +
            in_quotes(it->second->name) + " over provider " +
            in_quotes(fabric_provider(spec, *it->second)) + " and stream " +
            in_quotes(stream.name) + " over provider " + in_quotes(fabric_provider(spec, stream)) +
            " on one thread; one endpoint receives over one provider (set `provider` on the "
            "links, or put the consumers on different threads)");
      }
    }
  }
  for (const NodeSpec& node : spec.nodes) {
    if (std::none_of(spec.boxes.begin(), spec.boxes.end(),
                     [&](const BoxSpec& box) { return box.node == node.name; })) {
      errors.messages.push_back(spec.file_name + ": node " + in_quotes(node.name) +
                                " runs no box (place a box on it, or remove it)");
    }
  }
  if (!errors.messages.empty()) return boost::outcome_v2::failure(std::move(errors));
  return boost::outcome_v2::success();
}

}  // namespace boreal::runtime
