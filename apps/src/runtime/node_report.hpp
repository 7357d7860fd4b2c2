// What one node measured (NodeReport, one JSON line per node) and the run summary built from
// the reports of a sending and a receiving node (RunSummary, docs/design.md "CPU accounting and
// metrics"; its JSON fields are a public interface: add freely, never rename).
//
// Windows: a sender measures from its link's first credit to the acknowledgement of its end of
// stream; a receiver from its first data frame to its end of stream. The machine's CPU
// (wall × CPUs − idle, docs/transport-notes.md §4) is sampled by the receiver over its window, so
// it covers the streaming and not process start-up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <boreal/transport/cpu_meter.hpp>
#include <boreal/transport/link.hpp>
#include <boreal/transport/wait_stats.hpp>

namespace boreal::runtime {

struct LinkReport {
  std::string stream;
  std::string direction;  // "send" or "recv"
  std::string state;      // transport::to_string(LinkState)
  std::string error;      // empty unless failed
  transport::LinkStats stats;
  std::string peer;       // the node at the other end
  std::string medium;     // tcp, fabric-msg, fabric-rma
  std::string wait;       // the wait mode of the thread that runs the link
  std::string provider;   // fabric media: the libfabric provider
  // Sending: the most bytes of rows that waited for credit at once (bounded by what one
  // input batch produces); the time its producers were held back. Receiving: the time the
  // link was not polled because its stream was blocked downstream.
  std::uint64_t backlog_peak_bytes = 0;
  double backpressured_s = 0;
  // Sending: how long a partly filled frame was held at the end of the run, and the sender's
  // lateness p99 past that hold (runtime/flush_hold.hpp); 0 for a fixed hold (not measured)
  // or before 32 frames left at their deadline.
  double hold_us = 0;
  double late_p99_us = 0;
};

// One box of a node: its own figures (docs/design.md, "Metrics").
struct BoxReport {
  std::string name;
  std::string type;
  std::uint64_t tuples_in = 0;
  std::uint64_t tuples_out = 0;
  std::uint64_t batches_in = 0;
  double busy_s = 0;             // wall time inside the box's own code (operators)
  double backpressured_s = 0;    // sources: time rows were due but the stream was blocked
  // The CPU of the thread that runs the box over the measurement window, per tuple the box
  // handled (in for operators and sinks, out for sources): what the box's place costs.
  double thread_cpu_us_per_tuple = 0;
  std::uint32_t thread = 0;      // the node's I/O thread that runs it
};

struct LatencySummary {
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
  std::uint64_t samples = 0;
  std::uint64_t negative = 0;  // tuples that arrived before their timestamp (a clock problem)
};

// One stage of the latency breakdown (docs/design.md, "Where the latency goes"), per frame
// from its first tuple's due time (that tuple's time field), timed by the box named:
//   due_to_committed  a paced source: due -> the frame committed (pacing and flush hold);
//   due_to_arrived    a sink fed by a tcp link: due -> the kernel of the receiving host took
//                     the frame in (the sender's node, its send call, the kernel's path);
//   arrived_to_read   -> the receiving link's read returned (the thread's pickup);
//   read_to_sink      -> the sink took the tuple's latency (checks, operators between).
// A sink's three add up, frame by frame, to that tuple's latency.
struct LatencyStage {
  std::string box;
  std::string stage;
  LatencySummary latency;
};

// One I/O thread of a node.
struct ThreadReport {
  std::uint32_t thread = 0;
  std::string wait;        // its wait mode
  double window_s = 0;     // its measurement window
  double thread_cpu_s = 0; // its CPU over that window
  transport::WaitStats wait_stats;
};

struct NodeReport {
  std::string node;
  // Which process it was, and where: the machine's CPU (below) is split into the run's
  // processes and other people's by these (machine_share()).
  int pid = 0;
  int parent_pid = 0;
  std::string host;
  std::string wait;  // the I/O thread's wait mode
  double window_s = 0;        // wall time of the streaming window
  double thread_cpu_s = 0;    // the I/O thread over the window (CLOCK_THREAD_CPUTIME_ID)
  double process_cpu_s = 0;   // getrusage user + system over the window
  std::int64_t voluntary_switches = 0;
  std::int64_t involuntary_switches = 0;
  // Sending side (sum over the node's sources).
  std::uint64_t tuples_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint32_t checksum_sent = 0;  // XOR over the node's streams of the CRC-32C of each
                                    // stream's tuples in order
  // Peak resident memory (getrusage ru_maxrss) when the window opened and when it closed:
  // equal when nothing grew while streaming (buffers are allocated once, before).
  std::int64_t max_rss_kb_start = 0;
  std::int64_t max_rss_kb_end = 0;
  // Receiving side (sum over the node's sinks).
  std::uint64_t tuples_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint32_t checksum_received = 0;
  // Every sink of the node is a check sink, so checksum_received covers all it received (the
  // other kinds do not pass over the bytes; their checksum is not compared end to end).
  bool content_checked = true;
  std::uint64_t lost = 0;          // sequence numbers skipped
  std::uint64_t duplicated = 0;    // a sequence number seen again
  std::uint64_t out_of_order = 0;  // a sequence number lower than one already seen
  // Inside the measurement window (after the warm-up): what per-tuple figures divide by.
  std::uint64_t tuples_sent_measured = 0;
  // Events the node's sources walked (a nexmark source's events of every kind; any other
  // source's tuples), in all and inside the window.
  std::uint64_t events_sent = 0;
  std::uint64_t events_sent_measured = 0;
  // Events the sources' schedules made due inside the window (SourceTask::events_due): the
  // offered rate's share of the window. Fewer than events_sent_measured when a source was
  // behind its schedule as the window opened and caught up inside it; more when it fell behind.
  std::uint64_t events_due_measured = 0;
  std::uint64_t tuples_received_measured = 0;
  std::uint64_t bytes_received_measured = 0;
  LatencySummary latency;
  std::optional<transport::MachineCpuReport> machine;  // receiver only
  transport::WaitStats wait_stats;
  // System calls the I/O thread made over the measurement window, by kind: reads and writes by its
  // links (recv/send or eventfd), epoll_wait by its event loop (polls and blocks),
  // clock_nanosleep and sched_yield by its wait mode.
  struct Syscalls {
    std::uint64_t read = 0;
    std::uint64_t write = 0;
    std::uint64_t would_block = 0;  // reads and writes that found nothing to do
    std::uint64_t epoll_wait = 0;
    std::uint64_t nanosleep = 0;
    std::uint64_t sched_yield = 0;
    Syscalls& operator+=(const Syscalls& o) noexcept {
      read += o.read;
      write += o.write;
      would_block += o.would_block;
      epoll_wait += o.epoll_wait;
      nanosleep += o.nanosleep;
      sched_yield += o.sched_yield;
      return *this;
    }
  } syscalls;
  std::vector<LinkReport> links;
  std::vector<BoxReport> boxes;       // every box of the node, thread by thread, in arrow order
  std::vector<LatencyStage> latency_stages;  // those with samples, thread by thread
  std::uint32_t threads = 1;          // I/O threads
  std::vector<ThreadReport> thread_reports;  // one per thread; `wait`, `wait_stats` and
                                             // `thread_cpu_s` above are thread 0's / the sum
  std::vector<std::string> errors;    // every link failure; the run went wrong
  std::vector<std::string> rejected;  // connections refused before they became a link (bad
                                      // hello, garbage, unknown stream): the node kept serving
  std::optional<std::uint16_t> metrics_port;  // where it served live metrics (--metrics-port)
  // Environment variables the node set for libfabric before it loaded, as VAR=value (rxm's
  // queue sizes: runtime/media.hpp); one it found set already it left, and it is not here.
  std::vector<std::string> settings;

  [[nodiscard]] bool ok() const noexcept { return errors.empty(); }
};

[[nodiscard]] nlohmann::json to_json(const NodeReport& report);
// Reads a line written by to_json. An error names the missing or mistyped field.
[[nodiscard]] transport::Result<NodeReport> node_report_from_json(const nlohmann::json& json);

[[nodiscard]] nlohmann::json to_json(const transport::WaitStats& stats);

// The machine's CPU over a window, split into the run's and other people's. A run is its
// nodes' processes on `host` and their parents (the launcher, the bench); every other
// user-space process the window saw is other load; kernel threads stay in the run's share
// (they do its network work, and cannot be told apart per process).
struct MachineShare {
  double raw_s = 0;    // busy_cpu_s: all the machine did
  double other_s = 0;  // user processes outside the run
  double run_s = 0;    // raw_s − other_s, at least 0
  std::vector<transport::ProcessCpu> others;  // largest first
};
[[nodiscard]] MachineShare machine_share(const transport::MachineCpuReport& machine,
                                         const std::vector<const NodeReport*>& nodes,
                                         const std::string& host);
// Other load above this many cores marks a run "contaminated" (the bench repeats it once).
inline constexpr double kContaminatedCores = 0.05;

struct RunSummary;
// Sets the summary's machine figures from a window and its split: per tuple (of
// s.tuples_measured) and in cores, the run's share and the raw one, the other load, whether it
// is contaminated, and the three largest other processes.
void set_machine_figures(RunSummary& s, const transport::MachineCpuReport& machine,
                         const MachineShare& share);

// The configuration half of the summary, from the spec after overrides.
struct RunConfig {
  std::string medium;
  std::string provider;  // fabric media: the libfabric provider; else empty
  std::string wait;
  std::uint32_t tuple_bytes = 0;
  std::uint32_t batch_bytes = 0;
  std::int64_t latency_budget_us = 0;
  std::int64_t flush_us = 0;
  std::optional<double> offered_rate;  // nullopt = "max", 0 = "idle"
  double warmup_s = 0;                 // not measured, at the start
  std::string network;  // the spec's name
};

struct RunSummary {
  RunConfig config;
  double duration_s = 0;  // the receiver's window
  std::uint64_t tuples_sent = 0;
  std::uint64_t tuples_received = 0;
  std::uint64_t lost = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t out_of_order = 0;
  bool checksum_ok = false;
  // The content checksum was compared: every sink checks content (a check sink) and the
  // network passes tuples through. False: checksum_ok is null in JSON.
  bool checksum_compared = true;
  std::uint64_t tuples_measured = 0;  // received inside the window: what per-tuple figures use
  double tuples_per_s = 0;
  double mb_per_s = 0;
  // Per source event (NEXMark's unit; a tuple of any other source): events/s the sources
  // walked in their window, machine CPU-µs per event, and events/s per core the machine used.
  std::uint64_t events_measured = 0;
  double events_per_s = 0;
  double events_due_per_s = 0;  // events_due_measured over the sources' window
  double cpu_us_per_event_machine = 0;
  double events_per_core = 0;
  double cpu_us_per_tuple_sender = 0;
  double cpu_us_per_tuple_receiver = 0;
  double cpu_us_per_tuple_machine = 0;
  double cores_sender = 0;
  double cores_receiver = 0;
  double cores_machine = 0;
  double softirq_cores = 0;  // breakdown only: already inside the processes' system time
  // The machine figures (cpu_us_per_tuple_machine, cores_machine, cpu_us_per_event_machine)
  // leave out the user processes that are not part of the run; the raw ones keep them.
  double cpu_us_per_tuple_machine_raw = 0;
  double cores_machine_raw = 0;
  double other_cores = 0;    // user processes outside the run: load we did not cause
  bool contaminated = false;  // other_cores above kContaminatedCores
  std::vector<std::string> other_processes;  // the largest of them, "comm (pid) 0.51 cores"
  // System calls of each end's I/O thread in its window, per tuple measured.
  double syscalls_per_tuple_sender = 0;
  double syscalls_per_tuple_receiver = 0;
  LatencySummary latency;
  transport::WaitStats sender_wait;
  transport::WaitStats receiver_wait;
  std::vector<std::string> errors;
  std::uint64_t rejected_connections = 0;
  std::string commit;
  std::string host;
  // Networks of any shape (summarize_network). pass_through: every sink reads a stream a
  // source produced, so the counts and the content checksum must match end to end; otherwise
  // checksum_ok is not applicable (null in JSON) and per-tuple figures count source tuples.
  bool pass_through = true;
  std::vector<NodeReport> nodes;       // every node's report, in the file's node order
  double cpu_us_per_tuple_nodes = 0;   // every node's process CPU, per tuple measured
  double cores_nodes = 0;              // every node's process CPU over its window
};

// "other processes used 0.51 cores (stress (812) 0.50 cores), left out of the machine
// figures; with them: 9.8 CPU-us per tuple, 1.21 cores (contaminated)".
[[nodiscard]] std::string other_load_text(const RunSummary& s);

// This machine's host name (gethostname), or "unknown".
[[nodiscard]] std::string host_name();

// The commit this binary was built from (as of configure time), or "unknown".
[[nodiscard]] std::string build_commit();

// Builds the two ends' part of a run's summary: counts, rates, checks and per-process
// figures. The machine's figures need every node of the run and the final tuple count, so
// summarize_network, its only caller, sets them once.
[[nodiscard]] RunSummary summarize(const RunConfig& config, const NodeReport& sender,
                                   const NodeReport& receiver);
// The summary of a network of any shape from every node's report: the "sender" figures sum
// the nodes that run sources, the "receiver" figures the nodes that run sinks (one node may
// be both); nodes in between count in the all-node totals and their own sections. With
// `pass_through` false (some sink reads an operator's output) counts are not compared and
// per-tuple figures divide by the tuples the sources sent in their window.
[[nodiscard]] RunSummary summarize_network(const RunConfig& config,
                                           const std::vector<NodeReport>& nodes,
                                           bool pass_through);
[[nodiscard]] nlohmann::json to_json(const RunSummary& summary);
// The per-node, per-box and per-link tables of a summary from summarize_network, then the
// network's totals: what `boreal launch` prints.
[[nodiscard]] std::string format_network(const RunSummary& summary);

// The human table of `boreal demo` and `boreal launch`: a header and one row per summary.
[[nodiscard]] std::string format_table(const std::vector<RunSummary>& rows);

}  // namespace boreal::runtime
