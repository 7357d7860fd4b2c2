#include "sweep/bench_streams.hpp"

#include <vector>

#include <yaml-cpp/yaml.h>

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

// A box's one stream in `key` (in or out): a scalar or a one-element list; empty otherwise.
std::string single_stream(const YAML::Node& box, const char* key) {
  const YAML::Node value = box[key];
  if (value.IsScalar()) return value.as<std::string>();
  if (value.IsSequence() && value.size() == 1 && value[0].IsScalar()) return value[0].as<std::string>();
  return {};
}

}  // namespace

transport::Result<std::string> many_streams_network(const std::string& file_text,
                                                    const std::string& file_name,
                                                    std::uint32_t streams) {
  auto refuse = [&](const std::string& why) {
    return fail(ErrorCategory::config, 0,
                "--streams: " + file_name + " " + why +
                    "; --streams repeats a file's one source -> sink pair (like apps/examples/demo.yaml)");
  };
  YAML::Node root;
  try {
    root = YAML::Load(file_text);
  } catch (const YAML::Exception& error) {
    return refuse("is not YAML: " + error.msg);
  }
  const YAML::Node boxes = root["boxes"];
  if (!boxes || !boxes.IsSequence()) return refuse("has no list of boxes");
  YAML::Node source;
  YAML::Node sink;
  bool have_source = false;
  bool have_sink = false;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const YAML::Node box = boxes[i];
    const std::string type = box["type"] ? box["type"].as<std::string>("") : "";
    if (type == "source" && !have_source) {
      source = box;
      have_source = true;
    } else if (type == "sink" && !have_sink) {
      sink = box;
      have_sink = true;
    } else {
      return refuse("has a box of type '" + type + "' besides one source and one sink");
    }
  }
  if (!have_source || !have_sink) return refuse("has no source or no sink box");
  const std::string stream = single_stream(source, "out");
  if (stream.empty() || single_stream(sink, "in") != stream) {
    return refuse("has a sink that does not read the source's one stream");
  }
  const std::string source_name = source["name"].as<std::string>("source");
  const std::string sink_name = sink["name"].as<std::string>("sink");
  const YAML::Node params = source["params"];
  const long long seed = params && params["seed"] ? params["seed"].as<long long>(1) : 1;

  YAML::Node copies(YAML::NodeType::Sequence);
  for (std::uint32_t i = 0; i < streams; ++i) {
    const std::string suffix = "-" + std::to_string(i);
    YAML::Node s = YAML::Clone(source);
    s["name"] = source_name + suffix;
    s["out"] = stream + suffix;
    s["params"]["seed"] = seed + static_cast<long long>(i);
    copies.push_back(s);
    YAML::Node k = YAML::Clone(sink);
    k["name"] = sink_name + suffix;
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
  return "# " + file_name + " with its source -> sink pair repeated " + std::to_string(streams) +
         " times (boreal bench --streams)\n" + out.c_str() + "\n";
}

}  // namespace boreal::runtime
