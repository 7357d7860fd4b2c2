#include "sweep/bench_streams.hpp"

#include <vector>

#include <yaml-cpp/yaml.h>

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

// The entry of `boxes` (a YAML list) named `name`; parse_network() accepted the file, so it is
// there.
YAML::Node box_named(const YAML::Node& boxes, const std::string& name) {
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i]["name"].as<std::string>("") == name) return boxes[i];
  }
  return {};
}

}  // namespace

transport::Result<std::string> many_streams_network(const NetworkSpec& spec,
                                                    const std::string& file_text,
                                                    std::uint32_t streams) {
  auto refuse = [&](const std::string& why) {
    return fail(
        ErrorCategory::config, 0,
        "--streams: " + spec.file_name + " " + why +
            "; --streams repeats a file's one source -> sink pair (like apps/examples/demo.yaml)");
  };
  const BoxSpec* source = nullptr;
  const BoxSpec* sink = nullptr;
  for (const BoxSpec& box : spec.boxes) {
    if (box.type == "source" && source == nullptr) {
      source = &box;
    } else if (box.type == "sink" && sink == nullptr) {
      sink = &box;
    } else {
      return refuse("has a box of type '" + box.type + "' besides one source and one sink");
    }
  }
  if (source == nullptr || sink == nullptr) return refuse("has no source or no sink box");
  if (source->outputs.size() != 1 || sink->inputs != source->outputs) {
    return refuse("has a sink that does not read the source's one stream");
  }
  const std::string& stream = source->outputs.front();
  const auto seed = static_cast<long long>(source->source ? source->source->seed : 1);

  YAML::Node root = YAML::Load(file_text);
  const YAML::Node source_yaml = box_named(root["boxes"], source->name);
  const YAML::Node sink_yaml = box_named(root["boxes"], sink->name);
  YAML::Node copies(YAML::NodeType::Sequence);
  for (std::uint32_t i = 0; i < streams; ++i) {
    const std::string suffix = "-" + std::to_string(i);
    YAML::Node s = YAML::Clone(source_yaml);
    s["name"] = source->name + suffix;
    s["out"] = stream + suffix;
    s["params"]["seed"] = seed + static_cast<long long>(i);
    copies.push_back(s);
    YAML::Node k = YAML::Clone(sink_yaml);
    k["name"] = sink->name + suffix;
    k["in"] = stream + suffix;
    copies.push_back(k);
  }
  root["boxes"] = copies;
  if (const YAML::Node links = root["links"]; links && links.IsSequence()) {
    YAML::Node kept(YAML::NodeType::Sequence);
    for (std::size_t l = 0; l < links.size(); ++l) {
      const YAML::Node link = links[l];
      if (!link["stream"] || link["stream"].as<std::string>("") != stream) {
        kept.push_back(link);
        continue;
      }
      for (std::uint32_t i = 0; i < streams; ++i) {
        YAML::Node copy = YAML::Clone(link);
        copy["stream"] = stream + "-" + std::to_string(i);
        kept.push_back(copy);
      }
    }
    root["links"] = kept;
  }
  YAML::Emitter out;
  out << root;
  return "# " + spec.file_name + " with its source -> sink pair repeated " +
         std::to_string(streams) + " times (boreal bench --streams)\n" + out.c_str() + "\n";
}

}  // namespace boreal::runtime
