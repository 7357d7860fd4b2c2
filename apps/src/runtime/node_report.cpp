#include "runtime/node_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "boreal_commit.hpp"  // BOREAL_COMMIT, generated at build time

namespace boreal::runtime {
namespace {

using nlohmann::json;

double seconds(std::chrono::nanoseconds ns) { return std::chrono::duration<double>(ns).count(); }

json to_json(const transport::LinkStats& s) {
  return {{"frames", s.frames},
          {"tuples", s.tuples},
          {"payload_bytes", s.payload_bytes},
          {"credit_frames", s.credit_frames},
          {"credit_stalls", s.credit_stalls},
          {"duplicates_dropped", s.duplicates_dropped},
          {"frames_replayed", s.frames_replayed},
          {"reconnects", s.reconnects},
          {"fresh_endpoints", s.fresh_endpoints},
          {"read_calls", s.read_calls},
          {"write_calls", s.write_calls},
          {"would_block", s.would_block},
          {"unannounced_frames", s.unannounced_frames},
          {"pickup_p99_us", s.pickup_p99_us}};
}

transport::LinkStats link_stats_from_json(const json& j) {
  transport::LinkStats s;
  s.frames = j.value("frames", 0ULL);
  s.tuples = j.value("tuples", 0ULL);
  s.payload_bytes = j.value("payload_bytes", 0ULL);
  s.credit_frames = j.value("credit_frames", 0ULL);
  s.credit_stalls = j.value("credit_stalls", 0ULL);
  s.duplicates_dropped = j.value("duplicates_dropped", 0ULL);
  s.frames_replayed = j.value("frames_replayed", 0ULL);
  s.reconnects = j.value("reconnects", 0ULL);
  s.fresh_endpoints = j.value("fresh_endpoints", 0ULL);
  s.read_calls = j.value("read_calls", 0ULL);
  s.write_calls = j.value("write_calls", 0ULL);
  s.would_block = j.value("would_block", 0ULL);
  s.unannounced_frames = j.value("unannounced_frames", 0ULL);
  s.pickup_p99_us = j.value("pickup_p99_us", 0U);
  return s;
}

std::chrono::nanoseconds ns_from(const json& j, const char* key) {
  return std::chrono::nanoseconds(
      static_cast<std::int64_t>(j.value(key, 0.0) * 1e9 + (j.value(key, 0.0) >= 0 ? 0.5 : -0.5)));
}

transport::WaitStats wait_stats_from_json(const json& j) {
  transport::WaitStats s;
  s.polls = j.value("polls", 0ULL);
  s.empty_polls = j.value("empty_polls", 0ULL);
  s.spins = j.value("spins", 0ULL);
  s.yields = j.value("yields", 0ULL);
  s.sleeps = j.value("sleeps", 0ULL);
  s.slept = ns_from(j, "slept_s");
  s.sleep_overshoot = ns_from(j, "sleep_overshoot_s");
  s.arms = j.value("arms", 0ULL);
  s.failed_arms = j.value("failed_arms", 0ULL);
  s.blocks = j.value("blocks", 0ULL);
  s.wakeups = j.value("wakeups", 0ULL);
  s.timeouts = j.value("timeouts", 0ULL);
  s.blocked = ns_from(j, "blocked_s");
  s.switches = j.value("switches", 0ULL);
  s.spin_skips = j.value("spin_skips", 0ULL);
  if (j.contains("state_s")) {
    const auto& st = j["state_s"];
    s.state_time[0] = ns_from(st, "spin");
    s.state_time[1] = ns_from(st, "sleep");
    s.state_time[2] = ns_from(st, "block");
  }
  if (j.contains("state_entries")) {
    const auto& se = j["state_entries"];
    s.state_entries[0] = se.value("spin", 0ULL);
    s.state_entries[1] = se.value("sleep", 0ULL);
    s.state_entries[2] = se.value("block", 0ULL);
  }
  return s;
}

json to_json(const transport::MachineCpuReport& m) {
  json processes = json::array();
  for (const auto& p : m.processes) {
    processes.push_back({{"pid", p.pid},
                         {"ppid", p.parent_pid},
                         {"comm", p.comm},
                         {"cpu_s", std::chrono::duration<double>(p.cpu).count()}});
  }
  return {{"wall_s", m.wall_s},       {"cpus", m.cpus},         {"busy_cpu_s", m.busy_cpu_s},
          {"user_s", m.user_s},       {"system_s", m.system_s}, {"softirq_s", m.softirq_s},
          {"irq_s", m.irq_s},         {"steal_s", m.steal_s},   {"idle_s", m.idle_s},
          {"iowait_s", m.iowait_s},   {"processes", processes}};
}

transport::MachineCpuReport machine_from_json(const json& j) {
  transport::MachineCpuReport m;
  m.wall_s = j.value("wall_s", 0.0);
  m.cpus = j.value("cpus", 0);
  m.busy_cpu_s = j.value("busy_cpu_s", 0.0);
  m.user_s = j.value("user_s", 0.0);
  m.system_s = j.value("system_s", 0.0);
  m.softirq_s = j.value("softirq_s", 0.0);
  m.irq_s = j.value("irq_s", 0.0);
  m.steal_s = j.value("steal_s", 0.0);
  for (const auto& p : j.value("processes", json::array())) {
    transport::ProcessCpu process;
    process.pid = p.value("pid", 0);
    process.parent_pid = p.value("ppid", 0);
    process.comm = p.value("comm", "");
    process.cpu = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(p.value("cpu_s", 0.0)));
    m.processes.push_back(std::move(process));
  }
  m.idle_s = j.value("idle_s", 0.0);
  m.iowait_s = j.value("iowait_s", 0.0);
  return m;
}

json to_json(const LatencySummary& l) {
  return {{"p50", l.p50_us}, {"p99", l.p99_us}, {"p999", l.p999_us}, {"max", l.max_us},
          {"samples", l.samples}, {"negative", l.negative}};
}

LatencySummary latency_from_json(const json& j) {
  return {j.value("p50", 0.0), j.value("p99", 0.0), j.value("p999", 0.0), j.value("max", 0.0),
          j.value("samples", 0ULL), j.value("negative", 0ULL)};
}

double per_tuple_us(double cpu_s, std::uint64_t tuples) {
  return tuples == 0 ? 0.0 : cpu_s * 1e6 / static_cast<double>(tuples);
}

}  // namespace

json to_json(const transport::WaitStats& s) {
  return {{"polls", s.polls},
          {"empty_polls", s.empty_polls},
          {"spins", s.spins},
          {"yields", s.yields},
          {"sleeps", s.sleeps},
          {"slept_s", seconds(s.slept)},
          {"sleep_overshoot_s", seconds(s.sleep_overshoot)},
          {"arms", s.arms},
          {"failed_arms", s.failed_arms},
          {"blocks", s.blocks},
          {"wakeups", s.wakeups},
          {"timeouts", s.timeouts},
          {"blocked_s", seconds(s.blocked)},
          {"switches", s.switches},
          {"spin_skips", s.spin_skips},
          {"state_s",
           {{"spin", seconds(s.state_time[0])},
            {"sleep", seconds(s.state_time[1])},
            {"block", seconds(s.state_time[2])}}},
          {"state_entries",
           {{"spin", s.state_entries[0]},
            {"sleep", s.state_entries[1]},
            {"block", s.state_entries[2]}}}};
}

json to_json(const NodeReport& r) {
  json links = json::array();
  for (const auto& l : r.links) {
    links.push_back({{"stream", l.stream},
                     {"direction", l.direction},
                     {"state", l.state},
                     {"error", l.error},
                     {"stats", to_json(l.stats)},
                     {"peer", l.peer},
                     {"medium", l.medium},
                     {"wait", l.wait},
                     {"provider", l.provider},
                     {"backlog_peak_bytes", l.backlog_peak_bytes},
                     {"backpressured_s", l.backpressured_s},
                     {"hold_us", l.hold_us},
                     {"late_p99_us", l.late_p99_us}});
  }
  json thread_reports = json::array();
  for (const auto& t : r.thread_reports) {
    thread_reports.push_back({{"thread", t.thread},
                              {"wait", t.wait},
                              {"window_s", t.window_s},
                              {"thread_cpu_s", t.thread_cpu_s},
                              {"wait_stats", to_json(t.wait_stats)}});
  }
  json boxes = json::array();
  for (const auto& b : r.boxes) {
    boxes.push_back({{"name", b.name},
                     {"type", b.type},
                     {"thread", b.thread},
                     {"tuples_in", b.tuples_in},
                     {"tuples_out", b.tuples_out},
                     {"batches_in", b.batches_in},
                     {"busy_s", b.busy_s},
                     {"backpressured_s", b.backpressured_s},
                     {"thread_cpu_us_per_tuple", b.thread_cpu_us_per_tuple}});
  }
  json stages = json::array();
  for (const auto& st : r.latency_stages) {
    stages.push_back({{"box", st.box}, {"stage", st.stage}, {"latency_us", to_json(st.latency)}});
  }
  json j = {{"kind", "node"},
            {"node", r.node},
            {"pid", r.pid},
            {"ppid", r.parent_pid},
            {"host", r.host},
            {"wait", r.wait},
            {"window_s", r.window_s},
            {"thread_cpu_s", r.thread_cpu_s},
            {"process_cpu_s", r.process_cpu_s},
            {"voluntary_switches", r.voluntary_switches},
            {"involuntary_switches", r.involuntary_switches},
            {"tuples_sent", r.tuples_sent},
            {"bytes_sent", r.bytes_sent},
            {"checksum_sent", r.checksum_sent},
            {"max_rss_kb_start", r.max_rss_kb_start},
            {"max_rss_kb_end", r.max_rss_kb_end},
            {"tuples_received", r.tuples_received},
            {"bytes_received", r.bytes_received},
            {"checksum_received", r.checksum_received},
            {"content_checked", r.content_checked},
            {"lost", r.lost},
            {"duplicated", r.duplicated},
            {"out_of_order", r.out_of_order},
            {"tuples_sent_measured", r.tuples_sent_measured},
            {"events_sent", r.events_sent},
            {"events_sent_measured", r.events_sent_measured},
            {"events_due_measured", r.events_due_measured},
            {"tuples_received_measured", r.tuples_received_measured},
            {"bytes_received_measured", r.bytes_received_measured},
            {"latency_us", to_json(r.latency)},
            {"wait_stats", to_json(r.wait_stats)},
            {"syscalls",
             {{"read", r.syscalls.read},
              {"write", r.syscalls.write},
              {"would_block", r.syscalls.would_block},
              {"epoll_wait", r.syscalls.epoll_wait},
              {"nanosleep", r.syscalls.nanosleep},
              {"sched_yield", r.syscalls.sched_yield}}},
            {"links", links},
            {"boxes", boxes},
            {"latency_stages", stages},
            {"threads", r.threads},
            {"thread_reports", thread_reports},
            {"errors", r.errors},
            {"rejected", r.rejected},
            {"settings", r.settings}};
  if (r.machine) j["machine"] = to_json(*r.machine);
  if (r.metrics_port) j["metrics_port"] = *r.metrics_port;
  return j;
}

transport::Result<NodeReport> node_report_from_json(const json& j) {
  if (!j.is_object() || j.value("kind", "") != "node") {
    return transport::fail(transport::ErrorCategory::protocol, 0,
                           "node report: not a {\"kind\": \"node\"} object");
  }
  try {
    NodeReport r;
    r.node = j.at("node").get<std::string>();
    r.pid = j.value("pid", 0);
    r.parent_pid = j.value("ppid", 0);
    r.host = j.value("host", "");
    r.wait = j.value("wait", "");
    r.window_s = j.at("window_s").get<double>();
    r.thread_cpu_s = j.at("thread_cpu_s").get<double>();
    r.process_cpu_s = j.at("process_cpu_s").get<double>();
    r.voluntary_switches = j.value("voluntary_switches", std::int64_t{0});
    r.involuntary_switches = j.value("involuntary_switches", std::int64_t{0});
    r.tuples_sent = j.at("tuples_sent").get<std::uint64_t>();
    r.bytes_sent = j.value("bytes_sent", 0ULL);
    r.checksum_sent = j.value("checksum_sent", 0U);
    r.max_rss_kb_start = j.value("max_rss_kb_start", std::int64_t{0});
    r.max_rss_kb_end = j.value("max_rss_kb_end", std::int64_t{0});
    r.tuples_received = j.at("tuples_received").get<std::uint64_t>();
    r.bytes_received = j.value("bytes_received", 0ULL);
    r.checksum_received = j.value("checksum_received", 0U);
    r.content_checked = j.value("content_checked", true);
    r.lost = j.value("lost", 0ULL);
    r.duplicated = j.value("duplicated", 0ULL);
    r.out_of_order = j.value("out_of_order", 0ULL);
    r.tuples_sent_measured = j.value("tuples_sent_measured", r.tuples_sent);
    r.events_sent = j.value("events_sent", r.tuples_sent);
    r.events_sent_measured = j.value("events_sent_measured", r.tuples_sent_measured);
    r.events_due_measured = j.value("events_due_measured", r.events_sent_measured);
    r.tuples_received_measured = j.value("tuples_received_measured", r.tuples_received);
    r.bytes_received_measured = j.value("bytes_received_measured", r.bytes_received);
    if (j.contains("latency_us")) r.latency = latency_from_json(j["latency_us"]);
    if (j.contains("machine")) r.machine = machine_from_json(j["machine"]);
    if (j.contains("wait_stats")) r.wait_stats = wait_stats_from_json(j["wait_stats"]);
    for (const auto& l : j.value("links", json::array())) {
      LinkReport link;
      link.stream = l.value("stream", "");
      link.direction = l.value("direction", "");
      link.state = l.value("state", "");
      link.error = l.value("error", "");
      link.stats = link_stats_from_json(l.value("stats", json::object()));
      link.peer = l.value("peer", "");
      link.medium = l.value("medium", "");
      link.wait = l.value("wait", "");
      link.provider = l.value("provider", "");
      link.backlog_peak_bytes = l.value("backlog_peak_bytes", 0ULL);
      link.backpressured_s = l.value("backpressured_s", 0.0);
      link.hold_us = l.value("hold_us", 0.0);
      link.late_p99_us = l.value("late_p99_us", 0.0);
      r.links.push_back(std::move(link));
    }
    for (const auto& b : j.value("boxes", json::array())) {
      BoxReport box;
      box.name = b.value("name", "");
      box.type = b.value("type", "");
      box.thread = b.value("thread", 0U);
      box.tuples_in = b.value("tuples_in", 0ULL);
      box.tuples_out = b.value("tuples_out", 0ULL);
      box.batches_in = b.value("batches_in", 0ULL);
      box.busy_s = b.value("busy_s", 0.0);
      box.backpressured_s = b.value("backpressured_s", 0.0);
      box.thread_cpu_us_per_tuple = b.value("thread_cpu_us_per_tuple", 0.0);
      r.boxes.push_back(std::move(box));
    }
    for (const auto& st : j.value("latency_stages", json::array())) {
      r.latency_stages.push_back({st.value("box", ""), st.value("stage", ""),
                                  latency_from_json(st.value("latency_us", json::object()))});
    }
    r.threads = j.value("threads", 1U);
    for (const auto& t : j.value("thread_reports", json::array())) {
      ThreadReport thread;
      thread.thread = t.value("thread", 0U);
      thread.wait = t.value("wait", "");
      thread.window_s = t.value("window_s", 0.0);
      thread.thread_cpu_s = t.value("thread_cpu_s", 0.0);
      if (t.contains("wait_stats")) thread.wait_stats = wait_stats_from_json(t["wait_stats"]);
      r.thread_reports.push_back(std::move(thread));
    }
    if (j.contains("syscalls")) {
      const auto& sc = j["syscalls"];
      r.syscalls = {sc.value("read", 0ULL),       sc.value("write", 0ULL),
                    sc.value("would_block", 0ULL), sc.value("epoll_wait", 0ULL),
                    sc.value("nanosleep", 0ULL),   sc.value("sched_yield", 0ULL)};
    }
    r.errors = j.value("errors", std::vector<std::string>{});
    r.rejected = j.value("rejected", std::vector<std::string>{});
    r.settings = j.value("settings", std::vector<std::string>{});
    if (j.contains("metrics_port")) r.metrics_port = j["metrics_port"].get<std::uint16_t>();
    return r;
  } catch (const json::exception& e) {
    return transport::fail(transport::ErrorCategory::protocol, 0,
                           std::string("node report: ") + e.what());
  }
}

std::string build_commit() { return BOREAL_COMMIT; }

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

MachineShare machine_share(const transport::MachineCpuReport& machine,
                           const std::vector<const NodeReport*>& nodes, const std::string& host) {
  std::vector<int> run;
  for (const NodeReport* node : nodes) {
    if (node == nullptr || (!node->host.empty() && !host.empty() && node->host != host)) continue;
    if (node->pid > 0) run.push_back(node->pid);
    if (node->parent_pid > 1) run.push_back(node->parent_pid);  // not init, which adopts orphans
  }
  MachineShare share;
  share.raw_s = machine.busy_cpu_s;
  for (const auto& process : machine.processes) {
    if (std::find(run.begin(), run.end(), process.pid) != run.end()) continue;
    share.other_s += std::chrono::duration<double>(process.cpu).count();
    share.others.push_back(process);
  }
  share.run_s = std::max(0.0, share.raw_s - share.other_s);
  return share;
}

void set_machine_figures(RunSummary& s, const transport::MachineCpuReport& m,
                         const MachineShare& share) {
  s.cpu_us_per_tuple_machine = per_tuple_us(share.run_s, s.tuples_measured);
  s.cpu_us_per_tuple_machine_raw = per_tuple_us(share.raw_s, s.tuples_measured);
  s.cores_machine = m.wall_s > 0 ? share.run_s / m.wall_s : 0.0;
  s.cores_machine_raw = m.cores_used();
  s.other_cores = m.wall_s > 0 ? share.other_s / m.wall_s : 0.0;
  s.contaminated = s.other_cores > kContaminatedCores;
  s.other_processes.clear();
  for (const auto& p : share.others) {
    if (s.other_processes.size() == 3 || m.wall_s <= 0) break;
    char text[96];
    std::snprintf(text, sizeof text, "%s (%d) %.2f cores", p.comm.c_str(), p.pid,
                  std::chrono::duration<double>(p.cpu).count() / m.wall_s);
    s.other_processes.emplace_back(text);
  }
}

RunSummary summarize(const RunConfig& config, const NodeReport& sender,
                     const NodeReport& receiver) {
  RunSummary s;
  s.config = config;
  s.duration_s = receiver.window_s;
  s.tuples_sent = sender.tuples_sent;
  s.tuples_received = receiver.tuples_received;
  s.lost = receiver.lost;
  s.duplicated = receiver.duplicated;
  s.out_of_order = receiver.out_of_order;
  s.checksum_compared = receiver.content_checked;
  s.checksum_ok = sender.tuples_sent == receiver.tuples_received &&
                  (!s.checksum_compared || sender.checksum_sent == receiver.checksum_received);
  // Rates and per-tuple figures count what arrived inside the receiver's measurement window.
  s.tuples_measured = receiver.tuples_received_measured;
  if (s.duration_s > 0) {
    s.tuples_per_s = static_cast<double>(s.tuples_measured) / s.duration_s;
    s.mb_per_s = static_cast<double>(receiver.bytes_received_measured) / 1e6 / s.duration_s;
  }
  s.cpu_us_per_tuple_sender = per_tuple_us(sender.process_cpu_s, s.tuples_measured);
  s.cpu_us_per_tuple_receiver = per_tuple_us(receiver.process_cpu_s, s.tuples_measured);
  auto calls = [&](const NodeReport& r) {
    const auto& c = r.syscalls;
    const double total =
        static_cast<double>(c.read + c.write + c.epoll_wait + c.nanosleep + c.sched_yield);
    return s.tuples_measured > 0 ? total / static_cast<double>(s.tuples_measured) : 0.0;
  };
  s.syscalls_per_tuple_sender = calls(sender);
  s.syscalls_per_tuple_receiver = calls(receiver);
  s.cores_sender = sender.window_s > 0 ? sender.process_cpu_s / sender.window_s : 0.0;
  s.cores_receiver = receiver.window_s > 0 ? receiver.process_cpu_s / receiver.window_s : 0.0;
  s.latency = receiver.latency;
  s.sender_wait = sender.wait_stats;
  s.receiver_wait = receiver.wait_stats;
  for (const auto& e : sender.errors) s.errors.push_back(sender.node + ": " + e);
  for (const auto& e : receiver.errors) s.errors.push_back(receiver.node + ": " + e);
  if (s.tuples_sent != s.tuples_received) {
    s.errors.push_back("sent " + std::to_string(s.tuples_sent) + " tuples but received " +
                       std::to_string(s.tuples_received));
  } else if (!s.checksum_ok) {
    s.errors.push_back("content checksum differs between sender and receiver");
  }
  s.rejected_connections = sender.rejected.size() + receiver.rejected.size();
  s.commit = BOREAL_COMMIT;
  s.host = host_name();
  return s;
}

json to_json(const RunSummary& s) {
  json rate = s.config.offered_rate ? json(*s.config.offered_rate) : json("max");
  json j = {
      {"kind", "run"},
      {"network", s.config.network},
      {"medium", s.config.medium},
      {"provider", s.config.provider.empty() ? json(nullptr) : json(s.config.provider)},
      {"wait", s.config.wait},
      {"tuple_bytes", s.config.tuple_bytes},
      {"batch_bytes", s.config.batch_bytes},
      {"latency_budget_us", s.config.latency_budget_us},
      {"flush_us", s.config.flush_us},
      {"offered_rate", rate},
      {"warmup_s", s.config.warmup_s},
      {"duration_s", s.duration_s},
      {"tuples_sent", s.tuples_sent},
      {"tuples_received", s.tuples_received},
      {"lost", s.lost},
      {"duplicated", s.duplicated},
      {"out_of_order", s.out_of_order},
      {"checksum_ok", s.checksum_ok},
      {"tuples_measured", s.tuples_measured},
      {"tuples_per_s", s.tuples_per_s},
      {"events", s.events_measured},
      {"events_per_s", s.events_per_s},
      {"events_due_per_s", s.events_due_per_s},
      {"cpu_us_per_event_machine", s.cpu_us_per_event_machine},
      {"events_per_core", s.events_per_core},
      {"mb_per_s", s.mb_per_s},
      {"cpu_us_per_tuple",
       {{"sender", s.cpu_us_per_tuple_sender},
        {"receiver", s.cpu_us_per_tuple_receiver},
        {"machine", s.cpu_us_per_tuple_machine},
        {"machine_raw", s.cpu_us_per_tuple_machine_raw}}},
      {"cores_used",
       {{"sender", s.cores_sender},
        {"receiver", s.cores_receiver},
        {"machine", s.cores_machine},
        {"machine_raw", s.cores_machine_raw},
        {"softirq", s.softirq_cores},
        {"other", s.other_cores}}},
      {"contaminated", s.contaminated},
      {"other_processes", s.other_processes},
      {"syscalls_per_tuple",
       {{"sender", s.syscalls_per_tuple_sender}, {"receiver", s.syscalls_per_tuple_receiver}}},
      {"latency_us",
       {{"p50", s.latency.p50_us},
        {"p99", s.latency.p99_us},
        {"p999", s.latency.p999_us},
        {"max", s.latency.max_us}}},
      {"wait_stats", {{"sender", to_json(s.sender_wait)}, {"receiver", to_json(s.receiver_wait)}}},
      {"errors", s.errors},
      {"rejected_connections", s.rejected_connections},
      {"commit", s.commit},
      {"host", s.host}};
  j["pass_through"] = s.pass_through;
  // Operators change the tuples, and only check sinks read them: not compared.
  if (!s.pass_through || !s.checksum_compared) j["checksum_ok"] = nullptr;
  j["cpu_us_per_tuple"]["nodes"] = s.cpu_us_per_tuple_nodes;
  j["cores_used"]["nodes"] = s.cores_nodes;
  if (!s.nodes.empty()) {
    json nodes = json::array();
    json boxes = json::array();
    json links = json::array();
    json stages = json::array();
    for (const NodeReport& r : s.nodes) {
      nodes.push_back({{"node", r.node},
                       {"wait", r.wait},
                       {"threads", r.threads},
                       {"window_s", r.window_s},
                       {"process_cpu_s", r.process_cpu_s},
                       {"thread_cpu_s", r.thread_cpu_s},
                       {"cores", r.window_s > 0 ? r.process_cpu_s / r.window_s : 0.0},
                       {"tuples_sent", r.tuples_sent},
                       {"tuples_received", r.tuples_received},
                       {"max_rss_kb", r.max_rss_kb_end},
                       {"errors", r.errors}});
      const json report = to_json(r);
      for (json box : report["boxes"]) {
        box["node"] = r.node;
        boxes.push_back(std::move(box));
      }
      for (json link : report["links"]) {
        link["node"] = r.node;
        links.push_back(std::move(link));
      }
      for (json stage : report["latency_stages"]) {
        stage["node"] = r.node;
        stages.push_back(std::move(stage));
      }
    }
    j["nodes"] = std::move(nodes);
    j["boxes"] = std::move(boxes);
    j["links"] = std::move(links);
    j["latency_stages"] = std::move(stages);
  }
  return j;
}

std::string format_table(const std::vector<RunSummary>& rows) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-9s %12s %8s %29s %6s %26s  %s\n", "", "", "",
                "CPU-us per tuple", "", "latency us", "");
  out << line;
  std::snprintf(line, sizeof line, "%-9s %12s %8s %9s %9s %9s %6s %8s %8s %8s  %s\n", "mode",
                "tuples/s", "MB/s", "sender", "receiver", "machine", "cores", "p50", "p99",
                "p99.9", "check");
  out << line;
  for (const auto& r : rows) {
    const std::string check = r.errors.empty() ? "ok" : "FAILED";
    std::snprintf(line, sizeof line,
                  "%-9s %12.0f %8.1f %9.3f %9.3f %9.3f %6.2f %8.1f %8.1f %8.1f  %s\n",
                  r.config.wait.c_str(), r.tuples_per_s, r.mb_per_s, r.cpu_us_per_tuple_sender,
                  r.cpu_us_per_tuple_receiver, r.cpu_us_per_tuple_machine, r.cores_machine,
                  r.latency.p50_us, r.latency.p99_us, r.latency.p999_us, check.c_str());
    out << line;
  }
  for (const auto& r : rows) {
    if (r.contaminated) out << r.config.wait << ": " << other_load_text(r) << '\n';
  }
  return out.str();
}

std::string other_load_text(const RunSummary& s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << "other processes used " << s.other_cores
      << " cores (";
  for (std::size_t k = 0; k < s.other_processes.size(); ++k) {
    out << (k > 0 ? ", " : "") << s.other_processes[k];
  }
  out << std::setprecision(3) << "), left out of the machine figures; with them: "
      << s.cpu_us_per_tuple_machine_raw << " CPU-us per tuple, " << std::setprecision(2)
      << s.cores_machine_raw << " cores" << (s.contaminated ? " (contaminated)" : "");
  return out.str();
}

}  // namespace boreal::runtime
