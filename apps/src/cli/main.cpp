// The `boreal` command: run one node, launch a whole network locally, or run the demo.
//
// Exit status: 0 success; 1 the run went wrong (a link failed, tuples lost, a node timed out);
// 2 bad usage or a bad network file (the message says which flag or which line).

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include <boreal/ops/schema.hpp>

#include "bench_command.hpp"
#include "nexmark_command.hpp"
#include "launch/launcher.hpp"
#include "spec/network_spec.hpp"
#include "spec/plan_text.hpp"
#include "runtime/node.hpp"

namespace {

using namespace boreal::runtime;
using boreal::cli::BenchFlags;
using boreal::cli::bench_command;
namespace transport = boreal::transport;

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};  // the signal that set g_stop
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void on_signal(int signal) {
  g_signal.store(signal);
  g_stop.store(true);
}

// SIGINT's and SIGTERM's handler.
void set_stop_signals(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// SIGINT and SIGTERM set g_stop, which `run` and `launch` watch. Installed first thing in
// main(), then both are unblocked: `boreal launch` starts its nodes with them blocked
// (launcher.cpp), so one sent while a node starts waits for these handlers and the node still
// reports. (libfabric, opened at the first fabric link, brings handlers of its own, which the
// loader takes back: transport/src/fabric/fabric_library.hpp.)
void install_signal_handlers() {
  set_stop_signals(on_signal);
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  ::pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
}

// For the commands that do not watch g_stop: the signals' default action (the process ends
// by the signal), taken at once for one that came while the command line was parsed.
void restore_default_signals() {
  set_stop_signals(SIG_DFL);
  if (const int signal = g_signal.load(); signal != 0) ::raise(signal);
}

// Flags shared by run, launch and demo that override the network file.
struct OverrideFlags {
  Overrides values;
  std::optional<std::string> window_text;

  void add_to(CLI::App& app, bool with_medium = true) {
    if (with_medium) {
      app.add_option("--medium", values.medium,
                     "Medium of every link between nodes: tcp, fabric-msg or fabric-rma")
          ->group("Transport (overrides the file)");
      app.add_option("--provider", values.provider,
                     "libfabric provider of the fabric media, as `fi_info -l` names it: "
                     "tcp;ofi_rxm (default), sockets, shm, net; verbs;ofi_rxm, efa on clusters")
          ->group("Transport (overrides the file)");
    }
    app.add_option("--wait", values.wait, "Wait mode: busy, block, sleep, backoff or adaptive")
        ->group("Transport (overrides the file)");
    app.add_option("--latency-budget", values.latency_budget_us,
                   "Largest delay a wait may add, in microseconds (default 200)")
        ->group("Transport (overrides the file)");
    app.add_option("--spin-us", values.spin_us,
                   "Spin budget before yielding or blocking, in microseconds")
        ->group("Transport (overrides the file)");
    app.add_option("--batch-bytes", values.batch_bytes,
                   "Largest frame payload in bytes (default 32768)")
        ->group("Transport (overrides the file)");
    app.add_option("--flush-us", values.flush_us,
                   "Send a partly filled frame once it is this old, in microseconds (default: half "
                   "the latency budget)")
        ->group("Transport (overrides the file)");
    app.add_option("--window", values.window,
                   "Receive window in frames = initial credit (default 64)")
        ->group("Transport (overrides the file)");
    app.add_option("--connection", values.connection,
                   "tcp: per-link (a connection for each link; default) or per-thread-pair (one "
                   "for all the links between two threads)")
        ->group("Transport (overrides the file)");
    app.add_option("--rate", values.rate,
                   "Offered rate of every source: tuples/s (nexmark: events/s), 'max' or 'idle'")
        ->group("Sources (override the file)");
    app.add_option("--tuples", values.tuples,
                   "Stop every source after this many tuples (nexmark: events; 0 = no limit)")
        ->group("Sources (override the file)");
    app.add_option("--duration", values.duration_s,
                   "Stop every source after this many seconds (0 = no limit)")
        ->group("Sources (override the file)");
    app.add_option("--warmup", values.warmup_s,
                   "Seconds after the links start that are not measured (CPU, rates, latency)")
        ->group("Sources (override the file)");
    app.add_option("--tuple-bytes", values.tuple_bytes,
                   "Tuple size in bytes: resizes the last string field of each source's schema; a "
                   "multiple of 8, at most " + std::to_string(boreal::ops::kMaxTupleBytes) +
                       " (one frame on every medium) and within --batch-bytes")
        ->group("Sources (override the file)");
    app.add_flag("--no-output", values.no_output,
                 "Sinks write no CSV files (a csv sink counts instead): measure the query, not "
                 "the formatting of its results")
        ->group("Sinks (override the file)");
  }
};

// `boreal launch --netns` and the link shaping that needs it.
struct NetnsFlags {
  bool netns = false;
  std::optional<std::string> link_delay;
  std::optional<std::string> link_rate;

  void add_to(CLI::App& app) {
    app.add_flag("--netns", netns,
                 "Run every node in a network namespace of its own (address 198.18.0.N), joined by "
                 "veth pairs to a bridge; needs root and iproute2")
        ->group("Network namespaces");
    app.add_option("--link-delay", link_delay,
                   "With --netns: delay what each node sends by this much (tc netem on its veth), "
                   "e.g. 500us, 2ms")
        ->group("Network namespaces");
    app.add_option("--link-rate", link_rate,
                   "With --netns: pace what each node sends at this rate (tc netem on its veth), "
                   "e.g. 100mbit, 1gbit")
        ->group("Network namespaces");
  }

  // Into `options`; prints the problem and returns false for a bad value.
  bool apply(LaunchOptions& options) const {
    options.netns = netns;
    if (link_delay) {
      auto delay = parse_link_delay(*link_delay);
      if (!delay) {
        std::cerr << "boreal launch " << delay.error().message << '\n';
        return false;
      }
      options.shaping.delay = delay.value();
    }
    if (link_rate) {
      auto rate = parse_link_rate(*link_rate);
      if (!rate) {
        std::cerr << "boreal launch " << rate.error().message << '\n';
        return false;
      }
      options.shaping.rate_bits_per_s = rate.value();
    }
    return true;
  }
};

// Loads the file and applies the overrides; prints every problem and returns nullopt.
std::optional<NetworkSpec> load(const std::string& file, const Overrides& overrides,
                                const std::vector<std::string>& addresses = {}) {
  auto spec = load_network(file);
  if (!spec) {
    std::cerr << spec.error().joined() << '\n';
    return std::nullopt;
  }
  if (auto applied = apply_overrides(spec.value(), overrides); !applied) {
    std::cerr << applied.error().joined() << '\n';
    return std::nullopt;
  }
  if (auto applied = apply_addresses(spec.value(), addresses); !applied) {
    std::cerr << applied.error().joined() << '\n';
    return std::nullopt;
  }
  if (auto runnable = validate_runnable(spec.value()); !runnable) {
    std::cerr << runnable.error().joined() << '\n';
    return std::nullopt;
  }
  return std::move(spec).value();
}

// "-" is stdout; anything else a file opened for writing (truncated).
struct JsonOut {
  std::ofstream file;
  std::ostream* stream = nullptr;

  bool open(const std::string& path) {
    if (path.empty()) return true;
    if (path == "-") {
      stream = &std::cout;
      return true;
    }
    file.open(path, std::ios::out | std::ios::trunc);
    if (!file) {
      std::cerr << "--json: cannot write '" << path << "': " << std::strerror(errno) << '\n';
      return false;
    }
    stream = &file;
    return true;
  }
};

std::string default_demo_file() {
  for (const char* dir : {BOREAL_EXAMPLES_DIR, BOREAL_INSTALLED_EXAMPLES_DIR}) {
    const auto path = std::filesystem::path(dir) / "demo.yaml";
    if (std::filesystem::exists(path)) return path.string();
  }
  return std::string(BOREAL_EXAMPLES_DIR) + "/demo.yaml";
}

std::string rate_text(const std::optional<double>& rate) {
  if (!rate) return "as fast as possible";
  char text[64];
  std::snprintf(text, sizeof text, "%.0f tuples/s", *rate);
  return text;
}

int run_command(const std::string& file, std::string node, const OverrideFlags& flags,
                const std::vector<std::string>& addresses, double timeout_s,
                const std::string& json_path, std::optional<std::uint16_t> metrics_port) {
  auto spec = load(file, flags.values, addresses);
  if (!spec) return 2;
  if (node.empty()) {
    // Under a cluster launcher the node is the process's rank.
    if (const char* rank = std::getenv("SLURM_PROCID")) {
      const auto index = std::strtoul(rank, nullptr, 10);
      if (index < spec->nodes.size()) node = spec->nodes[index].name;
    }
    if (const char* name = std::getenv("BOREAL_NODE")) node = name;
  }
  if (node.empty()) {
    std::cerr << "run: which node? give --node NAME (or set BOREAL_NODE or SLURM_PROCID)\n";
    return 2;
  }
  JsonOut json;
  if (!json.open(json_path)) return 2;
  NodeOptions options;
  options.node = node;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  options.metrics_port = metrics_port;
  std::ostream& out = json.stream != nullptr ? *json.stream : std::cout;
  auto report = run_node(*spec, options, g_stop, out);
  if (!report) {
    std::cerr << report.error().message + '\n';  // one write: nodes share stderr
    return 2;
  }
  for (const auto& e : report.value().errors) std::cerr << "boreal run: " << e << '\n';
  return report.value().ok() ? 0 : 1;
}

int launch_command(const std::string& file, const OverrideFlags& flags, const NetnsFlags& netns,
                   bool free_ports, double timeout_s, const std::string& json_path, bool quiet,
                   std::optional<std::uint16_t> metrics_port) {
  auto spec = load(file, flags.values);
  if (!spec) return 2;
  LaunchOptions options;
  if (!netns.apply(options)) return 2;
  options.file = file;
  options.forwarded = to_args(flags.values);
  options.free_ports = free_ports;
  options.metrics_port = metrics_port;
  if (auto bad = check_netns(*spec, options)) {
    std::cerr << *bad << '\n';
    return 2;
  }
  if (auto bad = check_metrics_port(*spec, options)) {
    std::cerr << *bad << '\n';
    return 2;
  }
  JsonOut json;
  if (!json.open(json_path)) return 2;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  options.json = json.stream;
  options.progress = quiet ? nullptr : &std::cerr;
  options.notices = &std::cerr;
  // SIGINT and SIGTERM (install_signal_handlers()) stop the nodes and remove their
  // namespaces, not the launcher alone.
  options.stop_signal = &g_signal;
  auto result = launch(*spec, options);
  if (!result) {
    std::cerr << result.error().message + '\n';  // one write: nodes share stderr
    return 1;
  }
  if (result.value().summary && json.stream != &std::cout) {
    std::cout << format_table({*result.value().summary});
    std::cout << format_network(*result.value().summary);
  }
  for (const auto& e : result.value().errors) std::cerr << "boreal launch: " << e << '\n';
  return result.value().ok() ? 0 : 1;
}

int demo_command(const std::string& file, const std::vector<std::string>& modes,
                 OverrideFlags flags, const std::string& json_path) {
  JsonOut json;
  if (!json.open(json_path)) return 2;
  std::vector<RunSummary> rows;
  bool ok = true;
  std::size_t index = 0;
  for (const auto& mode : modes) {
    ++index;
    flags.values.wait = mode;
    auto spec = load(file, flags.values);
    if (!spec) return 2;
    if (index == 1) {
      const auto config = run_config_of(*spec);
      double duration = 0;
      for (const auto& box : spec->boxes) {
        if (box.source) duration = box.source->duration.count();
      }
      std::cerr << "boreal demo: " << spec->nodes.size() << " processes on loopback, "
                << config.medium
                << (config.provider.empty() ? "" : " (provider " + config.provider + ")") << ", "
                << config.tuple_bytes << "-byte tuples at " << rate_text(config.offered_rate)
                << ", " << duration << " s per wait mode, "
                << "latency budget " << config.latency_budget_us << " us\n";
    }
    std::cerr << "[" << index << "/" << modes.size() << "] wait mode " << mode << " ...\n";
    LaunchOptions options;
    options.file = file;
    options.forwarded = to_args(flags.values);
    options.free_ports = true;
    options.json = json.stream;
    options.progress = &std::cerr;
    auto result = launch(*spec, options);
    if (!result) {
      std::cerr << result.error().message + '\n';  // one write: nodes share stderr
      return 1;
    }
    for (const auto& e : result.value().errors) std::cerr << "  " << mode << ": " << e << '\n';
    ok = ok && result.value().ok();
    if (result.value().summary) {
      rows.push_back(*result.value().summary);
    } else {
      ok = false;
    }
  }
  std::cout << format_table(rows);
  if (!ok) std::cerr << "boreal demo: some runs failed (see above)\n";
  return ok ? 0 : 1;
}

// The command line as typed, each word quoted where the shell would need it.
std::string command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string word = i == 0 ? "boreal" : argv[i];
    if (word.find_first_of(" \t'\";&|$*?()<>") != std::string::npos || word.empty()) {
      std::string quoted = "'";
      for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      word = quoted + "'";
    }
    line += (i == 0 ? "" : " ") + word;
  }
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handlers();
  CLI::App app{"boreal: a distributed stream-processing engine that measures the CPU it spends "
               "per tuple.\nOperators joined by streams run on several nodes; where a stream "
               "crosses nodes it travels over a chosen medium and wait mode."};
  app.require_subcommand(1);
  app.footer("Run 'boreal SUBCOMMAND --help' for the options of each. Example: boreal demo");

  // run
  auto* run = app.add_subcommand("run", "Run one node of a network file");
  std::string run_file;
  std::string run_node_name;
  std::vector<std::string> run_addresses;
  double run_timeout = 0;
  std::string run_json;
  OverrideFlags run_flags;
  run->add_option("FILE", run_file, "Network file (YAML)")->required();
  run->add_option("--node", run_node_name,
                  "Which node this process is (else $BOREAL_NODE or $SLURM_PROCID)");
  run->add_option("--address", run_addresses,
                  "Move a node: NAME=URI, e.g. dst=tcp://127.0.0.1:7200 (repeatable)");
  run->add_option("--timeout", run_timeout,
                  "Give up after this many seconds (default: sources' duration + 30 s)");
  run->add_option("--json", run_json, "Write the JSON lines here ('-' = stdout, the default)");
  std::optional<std::uint16_t> run_metrics_port;
  run->add_option("--metrics-port", run_metrics_port,
                  "Serve live Prometheus metrics at http://HOST:PORT/metrics while the node runs "
                  "(0 = a free port, printed on stderr); see docs/metrics.md");
  run_flags.add_to(*run);
  run->footer("Prints progress and a final node report as JSON lines on stdout.");

  // check
  auto* check =
      app.add_subcommand("check", "Check a network file and print its plan, or every problem");
  std::string check_file;
  OverrideFlags check_flags;
  check->add_option("FILE", check_file, "Network file (YAML)")->required();
  check_flags.add_to(*check);
  check->footer("A valid file: prints the plan (boxes per node and thread, links with medium and\n"
                "wait mode, every stream's schema) and exits 0. Otherwise prints every problem as\n"
                "FILE:LINE:COL: PATH: WHAT and exits 2. run and launch run the same checks first.");

  // launch
  auto* launch_cmd =
      app.add_subcommand("launch", "Run every node of a network file as local processes");
  std::string launch_file;
  bool launch_free_ports = false;
  double launch_timeout = 0;
  std::string launch_json;
  bool launch_quiet = false;
  OverrideFlags launch_flags;
  NetnsFlags launch_netns;
  launch_cmd->add_option("FILE", launch_file, "Network file (YAML)")->required();
  launch_cmd->add_flag("--free-ports", launch_free_ports, "Move loopback nodes to free TCP ports");
  launch_cmd->add_option("--timeout", launch_timeout, "Stop the nodes after this many seconds");
  launch_cmd->add_option(
      "--json", launch_json,
      "Write every JSON line (progress, node reports, the run summary) here, each as it "
      "comes; '-' = stdout");
  launch_cmd->add_flag("--quiet", launch_quiet, "No progress lines on stderr");
  std::optional<std::uint16_t> launch_metrics_port;
  launch_cmd->add_option("--metrics-port", launch_metrics_port,
                         "Node i of the file serves live Prometheus metrics on port BASE + i "
                         "(0 = free ports, printed on stderr); see docs/metrics.md");
  launch_flags.add_to(*launch_cmd);
  launch_netns.add_to(*launch_cmd);
  launch_cmd->footer(
      "Prints the run table on stdout, then a table per box, per link and per node.\n"
      "Example: boreal launch apps/examples/demo.yaml --wait sleep --rate 100000 --duration 5\n"
      "As root, each node in a network namespace of its own:\n"
      "         boreal launch apps/examples/demo.yaml --netns --link-delay 1ms");

  // demo
  auto* demo = app.add_subcommand(
      "demo", "Stream between two local processes once per wait mode and print one table");
  std::string demo_file = default_demo_file();
  std::vector<std::string> demo_modes = {"busy", "block", "sleep", "backoff", "adaptive"};
  std::string demo_json;
  OverrideFlags demo_flags;
  demo->add_option("--file", demo_file, "Network file to run")->capture_default_str();
  demo->add_option("--modes", demo_modes, "Wait modes to run, in order")
      ->delimiter(',')
      ->capture_default_str();
  demo->add_option("--json", demo_json, "Also write every JSON line here ('-' = stdout)");
  demo_flags.add_to(*demo);
  demo->footer(
      "Columns: wait mode; tuples/s and MB/s received; CPU-us per tuple of the sending and\n"
      "receiving process and of the whole machine (wall x CPUs - idle, softirq included);\n"
      "cores the machine used; end-to-end latency percentiles in microseconds.");

  // nexmark
  auto* nexmark = app.add_subcommand(
      "nexmark", "Write the NEXMark events of an id range as CSV files (for the oracle)");
  boreal::cli::NexmarkDumpFlags nexmark_flags;
  nexmark->add_option("--events", nexmark_flags.events, "How many events (of every kind)")
      ->required();
  nexmark
      ->add_option("--out", nexmark_flags.out,
                   "Directory for persons.csv, auctions.csv and bids.csv")
      ->required();
  nexmark->add_option("--first-event", nexmark_flags.first_event, "The first event id")
      ->capture_default_str();
  nexmark->add_option("--gap-us", nexmark_flags.gap_us, "Event time between events, microseconds")
      ->capture_default_str();
  nexmark->add_option("--max-delay-ms", nexmark_flags.max_delay_ms,
                      "Bounded out-of-orderness: date_time moved earlier by up to this many ms")
      ->capture_default_str();
  nexmark->footer(
      "The same events a nexmark source with these parameters generates (docs/nexmark.md).\n"
      "Example: boreal nexmark --events 100000 --out /tmp/nx && "
      "python3 scripts/nexmark/oracle.py --events /tmp/nx --query all --out-dir /tmp/nx/expected");

  // bench
  auto* bench = app.add_subcommand(
      "bench", "Sweep media x wait modes x offered rates: CPU per tuple, latency, plots");
  BenchFlags bench_flags;
  bench_flags.file = default_demo_file();
  bench_flags.plot_script =
      (std::filesystem::path(BOREAL_EXAMPLES_DIR).parent_path().parent_path() / "scripts" /
       "bench_plot.py")
          .string();
  bench_flags.add_to(*bench);
  bench->footer(
      "Every point runs the two-node network (warm-up, then measured), repeated; rates given as\n"
      "N% are fractions of the maximum measured first in the same sweep. Progress on stderr; the\n"
      "summary table on stdout; OUT/bench.csv (medians, spread), OUT/bench.jsonl (every run),\n"
      "OUT/*.png. Each file records the machine, the commit and this command.\n"
      "--soak DURATION runs one load for long instead (80% of the sustained maximum; README "
      "\"Soak\").\n"
      "Examples: boreal bench --quick\n"
      "          boreal bench --media tcp --waits sleep,adaptive --rates 10k,100k,max --repeats 5\n"
      "          boreal bench --soak 10m --out soak-out");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (!run->parsed() && !launch_cmd->parsed()) restore_default_signals();
  if (run->parsed()) {
    return run_command(run_file, run_node_name, run_flags, run_addresses, run_timeout, run_json,
                       run_metrics_port);
  }
  if (check->parsed()) {
    auto spec = load(check_file, check_flags.values);
    if (!spec) return 2;
    std::cout << describe_plan(*spec);
    return 0;
  }
  if (launch_cmd->parsed()) {
    return launch_command(launch_file, launch_flags, launch_netns, launch_free_ports,
                          launch_timeout, launch_json, launch_quiet, launch_metrics_port);
  }
  if (nexmark->parsed()) return boreal::cli::nexmark_command(nexmark_flags);
  if (bench->parsed()) return bench_command(bench_flags, command_line(argc, argv));
  return demo_command(demo_file, demo_modes, demo_flags, demo_json);
}
