// summarize_network() and format_network(): the run summary of a network of any shape, built
// on the two-node summary (node_report.cpp) so every field of that public interface keeps its
// meaning, plus per-node, per-box and per-link sections.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "runtime/node_report.hpp"

namespace boreal::runtime {
namespace {

bool runs(const NodeReport& report, std::string_view type) {
  return std::any_of(report.boxes.begin(), report.boxes.end(),
                     [&](const BoxReport& box) { return box.type == type; });
}

// Several nodes' reports as one end of the summary: sums of counts and CPU, the longest
// window, the first machine window and latency histogram found.
NodeReport merged(const std::vector<const NodeReport*>& reports) {
  if (reports.size() == 1) return *reports.front();
  NodeReport m;
  for (const NodeReport* r : reports) {
    m.node += (m.node.empty() ? "" : "+") + r->node;
    if (m.wait.empty()) m.wait = r->wait;
    m.window_s = std::max(m.window_s, r->window_s);
    m.thread_cpu_s += r->thread_cpu_s;
    m.process_cpu_s += r->process_cpu_s;
    m.voluntary_switches += r->voluntary_switches;
    m.involuntary_switches += r->involuntary_switches;
    m.tuples_sent += r->tuples_sent;
    m.bytes_sent += r->bytes_sent;
    m.checksum_sent ^= r->checksum_sent;
    m.tuples_received += r->tuples_received;
    m.bytes_received += r->bytes_received;
    m.checksum_received ^= r->checksum_received;
    m.content_checked = m.content_checked && r->content_checked;
    m.lost += r->lost;
    m.duplicated += r->duplicated;
    m.out_of_order += r->out_of_order;
    m.tuples_sent_measured += r->tuples_sent_measured;
    m.events_sent += r->events_sent;
    m.events_sent_measured += r->events_sent_measured;
    m.events_due_measured += r->events_due_measured;
    m.tuples_received_measured += r->tuples_received_measured;
    m.bytes_received_measured += r->bytes_received_measured;
    if (m.latency.samples == 0) m.latency = r->latency;
    if (!m.machine) m.machine = r->machine;
    if (m.wait_stats.polls == 0) m.wait_stats = r->wait_stats;
    m.syscalls += r->syscalls;
    m.rejected.insert(m.rejected.end(), r->rejected.begin(), r->rejected.end());
  }
  return m;
}

double per_tuple_us(double cpu_s, std::uint64_t tuples) {
  return tuples == 0 ? 0.0 : cpu_s * 1e6 / static_cast<double>(tuples);
}

}  // namespace

RunSummary summarize_network(const RunConfig& config, const std::vector<NodeReport>& nodes,
                             bool pass_through) {
  std::vector<const NodeReport*> senders;
  std::vector<const NodeReport*> receivers;
  for (const NodeReport& report : nodes) {
    if (runs(report, "source")) senders.push_back(&report);
    if (runs(report, "sink")) receivers.push_back(&report);
  }
  RunSummary s;
  if (senders.empty() || receivers.empty()) {
    s.config = config;
  } else {
    const NodeReport sender = merged(senders);
    const NodeReport receiver = merged(receivers);
    s = summarize(config, sender, receiver);
    if (!pass_through) {
      // Operators change what arrives: compare nothing end to end, and count per source tuple.
      s.errors.clear();
      for (const auto& e : sender.errors) s.errors.push_back(sender.node + ": " + e);
      for (const auto& e : receiver.errors) s.errors.push_back(receiver.node + ": " + e);
      s.checksum_ok = false;
      s.checksum_compared = false;
      s.tuples_measured = sender.tuples_sent_measured;
      s.tuples_per_s =
          sender.window_s > 0 ? static_cast<double>(s.tuples_measured) / sender.window_s : 0;
      s.cpu_us_per_tuple_sender = per_tuple_us(sender.process_cpu_s, s.tuples_measured);
      s.cpu_us_per_tuple_receiver = per_tuple_us(receiver.process_cpu_s, s.tuples_measured);
      // A check sink behind operators still sees its sequence: gaps and repeats are errors.
      if (s.lost + s.duplicated + s.out_of_order > 0) {
        s.errors.push_back("check sinks saw " + std::to_string(s.lost) + " tuples lost, " +
                           std::to_string(s.duplicated) + " duplicated, " +
                           std::to_string(s.out_of_order) + " out of order");
      }
    }
  }
  s.pass_through = pass_through;
  s.nodes = nodes;
  double cpu = 0;
  for (const NodeReport& report : nodes) {
    cpu += report.process_cpu_s;
    if (report.window_s > 0) s.cores_nodes += report.process_cpu_s / report.window_s;
  }
  s.cpu_us_per_tuple_nodes = per_tuple_us(cpu, s.tuples_measured);
  // Per event: what the sources walked in their window, against the machine's CPU.
  double source_window_s = 0;
  std::uint64_t events_due = 0;
  for (const NodeReport& report : nodes) {
    s.events_measured += report.events_sent_measured;
    events_due += report.events_due_measured;
    if (report.events_sent_measured > 0)
      source_window_s = std::max(source_window_s, report.window_s);
  }
  if (source_window_s > 0) {
    s.events_per_s = static_cast<double>(s.events_measured) / source_window_s;
    s.events_due_per_s = static_cast<double>(events_due) / source_window_s;
  }
  // The machine's figures against every node of the run (not only the two ends): the first
  // node that measured the machine, split into the run's share and other load.
  std::vector<const NodeReport*> all;
  for (const NodeReport& report : nodes) all.push_back(&report);
  for (const NodeReport& report : nodes) {
    if (!report.machine || report.machine->wall_s <= 0) continue;
    const auto& m = *report.machine;
    s.softirq_cores = m.softirq_s / m.wall_s;
    const MachineShare share = machine_share(m, all, report.host);
    set_machine_figures(s, m, share);
    s.cpu_us_per_event_machine = per_tuple_us(share.run_s, s.events_measured);
    if (s.cpu_us_per_event_machine > 0) s.events_per_core = 1e6 / s.cpu_us_per_event_machine;
    break;
  }
  for (const NodeReport& report : nodes) {
    for (const auto& e : report.errors) {
      const std::string line = report.node + ": " + e;
      if (std::find(s.errors.begin(), s.errors.end(), line) == s.errors.end())
        s.errors.push_back(line);
    }
  }
  return s;
}

std::string format_network(const RunSummary& s) {
  std::ostringstream out;
  char line[512];
  out << "boxes\n";
  std::snprintf(line, sizeof line, "  %-10s %-14s %-10s %12s %12s %10s %12s %10s\n", "node", "box",
                "type", "tuples in", "tuples out", "busy ms", "thread us/t", "held ms");
  out << line;
  for (const NodeReport& node : s.nodes) {
    for (const BoxReport& box : node.boxes) {
      std::snprintf(line, sizeof line, "  %-10s %-14s %-10s %12llu %12llu %10.1f %12.3f %10.1f\n",
                    node.node.c_str(), box.name.c_str(), box.type.c_str(),
                    static_cast<unsigned long long>(box.tuples_in),
                    static_cast<unsigned long long>(box.tuples_out), box.busy_s * 1e3,
                    box.thread_cpu_us_per_tuple, box.backpressured_s * 1e3);
      out << line;
    }
  }
  out << "links\n";
  std::snprintf(line, sizeof line, "  %-10s %-12s %-4s %-10s %-10s %-9s %9s %12s %10s %9s  %s\n",
                "node", "stream", "dir", "peer", "medium", "wait", "frames", "tuples", "peak KiB",
                "held ms", "state");
  out << line;
  for (const NodeReport& node : s.nodes) {
    for (const LinkReport& link : node.links) {
      std::snprintf(line, sizeof line,
                    "  %-10s %-12s %-4s %-10s %-10s %-9s %9llu %12llu %10.1f %9.1f  %s\n",
                    node.node.c_str(), link.stream.c_str(), link.direction.c_str(),
                    link.peer.c_str(), link.medium.c_str(), link.wait.c_str(),
                    static_cast<unsigned long long>(link.stats.frames),
                    static_cast<unsigned long long>(link.stats.tuples),
                    static_cast<double>(link.backlog_peak_bytes) / 1024.0,
                    link.backpressured_s * 1e3, link.state.c_str());
      out << line;
    }
  }
  bool any_stage = false;
  for (const NodeReport& node : s.nodes) any_stage = any_stage || !node.latency_stages.empty();
  if (any_stage) {
    out << "latency stages (per frame, from its first tuple's due time; docs/design.md)\n";
    std::snprintf(line, sizeof line, "  %-10s %-14s %-17s %10s %10s %10s %10s\n", "node", "box",
                  "stage", "frames", "p50 us", "p99 us", "p99.9 us");
    out << line;
    for (const NodeReport& node : s.nodes) {
      for (const LatencyStage& stage : node.latency_stages) {
        std::snprintf(line, sizeof line, "  %-10s %-14s %-17s %10llu %10.1f %10.1f %10.1f\n",
                      node.node.c_str(), stage.box.c_str(), stage.stage.c_str(),
                      static_cast<unsigned long long>(stage.latency.samples),
                      stage.latency.p50_us, stage.latency.p99_us, stage.latency.p999_us);
        out << line;
      }
    }
  }
  out << "nodes\n";
  std::snprintf(line, sizeof line, "  %-10s %-9s %9s %10s %7s %12s %12s\n", "node", "wait",
                "window s", "CPU s", "cores", "sent", "received");
  out << line;
  for (const NodeReport& node : s.nodes) {
    std::snprintf(line, sizeof line, "  %-10s %-9s %9.2f %10.3f %7.2f %12llu %12llu\n",
                  node.node.c_str(), node.wait.c_str(), node.window_s, node.process_cpu_s,
                  node.window_s > 0 ? node.process_cpu_s / node.window_s : 0.0,
                  static_cast<unsigned long long>(node.tuples_sent),
                  static_cast<unsigned long long>(node.tuples_received));
    out << line;
  }
  std::snprintf(line, sizeof line,
                "network: %llu tuples from the sources, %llu into the sinks, %.0f tuples/s; "
                "CPU-us per %s tuple: all nodes %.3f, machine %.3f; cores: nodes %.2f, machine "
                "%.2f; latency p50 %.1f us, p99 %.1f us; %s\n",
                static_cast<unsigned long long>(s.tuples_sent),
                static_cast<unsigned long long>(s.tuples_received), s.tuples_per_s,
                s.pass_through ? "delivered" : "source", s.cpu_us_per_tuple_nodes,
                s.cpu_us_per_tuple_machine, s.cores_nodes, s.cores_machine, s.latency.p50_us,
                s.latency.p99_us, s.errors.empty() ? "ok" : "FAILED");
  out << line;
  std::snprintf(line, sizeof line,
                "events: %llu walked by the sources in their window, %.0f events/s, machine "
                "CPU-us per event %.3f, %.0f events/s per core\n",
                static_cast<unsigned long long>(s.events_measured), s.events_per_s,
                s.cpu_us_per_event_machine, s.events_per_core);
  out << line;
  if (s.other_cores >= 0.01) out << other_load_text(s) << '\n';
  return out.str();
}

}  // namespace boreal::runtime
