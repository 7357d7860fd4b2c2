#include "spec/plan_text.hpp"

#include <algorithm>
#include <sstream>

namespace boreal::runtime {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "-" : out;
}

std::string rate_text(const std::optional<double>& rate) {
  if (!rate) return "max";
  if (*rate == 0) return "idle";
  std::ostringstream out;
  out << *rate << " tuples/s";
  return out.str();
}

std::string box_detail(const BoxSpec& box) {
  std::ostringstream out;
  if (box.source) {
    const SourceParams& s = *box.source;
    if (s.kind == SourceKind::csv) {
      out << "csv " << s.path;
    } else if (s.kind == SourceKind::nexmark) {
      out << "nexmark";
      for (std::size_t i = 0; i < s.streams.size(); ++i)
        out << (i == 0 ? " " : "/") << ops::to_string(s.streams[i]);
      out << ", " << (s.rate ? rate_text(s.rate) + " (events)" : "max");
      if (s.events > 0) out << ", " << s.events << " events from " << s.first_event;
      if (s.duration.count() > 0) out << ", " << s.duration.count() << " s";
      out << ", gap " << s.gap_us << " us";
      if (s.max_delay_ms > 0) out << ", delays up to " << s.max_delay_ms << " ms";
    } else {
      out << "generator, " << rate_text(s.rate);
      if (s.tuples > 0) out << ", " << s.tuples << " tuples";
      if (s.duration.count() > 0) out << ", " << s.duration.count() << " s";
      out << ", seed " << s.seed;
    }
  } else if (box.sink) {
    out << to_string(box.sink->kind);
    if (!box.sink->output.empty()) out << ", csv " << box.sink->output;
  }
  return out.str();
}

}  // namespace

std::string describe_plan(const NetworkSpec& spec) {
  std::ostringstream out;
  out << "network '" << spec.name << "' (" << spec.file_name << "): " << spec.nodes.size()
      << " nodes, " << spec.boxes.size() << " boxes, " << spec.streams.size() << " streams\n";
  const auto order = topological_order(spec);
  for (const NodeSpec& node : spec.nodes) {
    out << "node " << node.name << " (" << node.address << "): " << node.threads << " I/O thread"
        << (node.threads == 1 ? "" : "s") << "\n";
    for (std::uint32_t thread = 0; thread < node.threads; ++thread) {
      const transport::WaitConfig wait = thread_wait(spec, node, thread);
      std::string links;
      for (const StreamSpec& stream : spec.streams) {
        if (!stream.link_end_on(node.name) || stream_thread(spec, stream, node.name) != thread) {
          continue;
        }
        links += (links.empty() ? "" : ", ") + stream.name;
      }
      out << "  thread " << thread << ": wait " << transport::to_string(wait.mode) << ", budget "
          << wait.latency_budget.count() << " us"
          << (links.empty() ? std::string(", no links") : ", links " + links) << "\n";
      for (std::size_t b : order) {
        const BoxSpec& box = spec.boxes[b];
        if (box.node != node.name || box.thread != thread) continue;
        const std::string detail = box_detail(box);
        out << "    " << box.name << " (" << box.type << (detail.empty() ? "" : ": " + detail)
            << "): " << joined(box.inputs) << " -> " << joined(box.outputs) << "\n";
      }
    }
  }
  out << "links\n";
  bool any_link = false;
  for (const StreamSpec& stream : spec.streams) {
    std::vector<std::string> peers;
    for (const std::string& node : stream.consumer_nodes) {
      if (node != stream.producer_node &&
          std::find(peers.begin(), peers.end(), node) == peers.end()) {
        peers.push_back(node);
      }
    }
    for (const std::string& peer : peers) {
      any_link = true;
      const TransportSpec& t = stream.transport;
      out << "  " << stream.name << ": " << stream.producer_node << " -> " << peer << " over "
          << t.medium;
      if (is_fabric(t.medium)) out << " (provider " << fabric_provider(spec, stream) << ")";
      out << ", wait " << transport::to_string(t.wait.mode) << ", budget "
          << t.wait.latency_budget.count() << " us, flush " << t.flush.count() << " us, frames of "
          << t.batch_bytes << " bytes, window " << t.window;
      if (t.connection != "per-link") out << ", connection " << t.connection;
      out << "\n";
    }
  }
  if (!any_link) out << "  (none: every stream stays inside its node)\n";
  out << "streams\n";
  for (const StreamSpec& stream : spec.streams) {
    out << "  " << stream.name << " (" << stream.producer << " -> " << joined(stream.consumers)
        << "): ";
    if (stream.tuple_schema) {
      out << stream.tuple_schema->to_string() << " (" << stream.tuple_schema->tuple_bytes()
          << " bytes" << (stream.schema.empty() ? ", derived" : ", schema " + stream.schema) << ")";
    } else {
      out << "unknown";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace boreal::runtime
