#include "sweep/bench_sweep.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "sweep/bench_report.hpp"
#include "sweep/bench_streams.hpp"
#include "sweep/wake_cost.hpp"
#include "launch/launcher.hpp"

extern char** environ;

namespace boreal::runtime {

namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

}  // namespace

std::optional<ProgramResult> run_program(const std::vector<std::string>& args, Seconds timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return std::nullopt;
  }
  ProgramResult result;
  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  bool signalled = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready > 0) {
      char chunk[4096];
      const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n > 0) {
        result.output.append(chunk, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) break;
    }
    if (Clock::now() > give_up && !signalled) {
      ::kill(pid, SIGTERM);
      signalled = true;
    }
    if (Clock::now() > give_up + std::chrono::seconds(5)) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = !signalled && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

namespace {

// iperf3 over loopback: one server for one test, a 3-second client, its JSON read back.
bool measure_iperf(BenchMeta& meta, std::ostream* progress) {
  auto port = lease_tcp_ports("127.0.0.1");  // reserved until iperf3 is done
  if (!port) return false;
  const std::string port_text = std::to_string(port.value().port());
  pid_t server = -1;
  {
    std::vector<std::string> args = {"iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port_text};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    const int rc = ::posix_spawnp(&server, "iperf3", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      if (progress != nullptr)
        *progress << "bench: iperf3 is not installed; no loopback reference\n";
      return false;
    }
  }
  std::optional<ProgramResult> client;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    client =
        run_program({"iperf3", "-c", "127.0.0.1", "-p", port_text, "-t", "3", "-J"}, Seconds(20));
    if (client && client->status == 0) break;
  }
  ::kill(server, SIGTERM);
  while (::waitpid(server, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (!client || client->status != 0) {
    if (progress != nullptr) *progress << "bench: iperf3 failed; no loopback reference\n";
    return false;
  }
  const auto json = nlohmann::json::parse(client->output, nullptr, false);
  if (json.is_discarded() || !json.contains("end")) return false;
  const auto& end = json["end"];
  meta.iperf_bytes_per_s = end["sum_received"].value("bits_per_second", 0.0) / 8.0;
  const auto& cpu = end["cpu_utilization_percent"];
  meta.iperf_cores = (cpu.value("host_total", 0.0) + cpu.value("remote_total", 0.0)) / 100.0;
  return true;
}

}  // namespace

std::optional<std::string> find_plot_python() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("BOREAL_PYTHON")) candidates.emplace_back(env);
  candidates.emplace_back("/usr/bin/python3");
  candidates.emplace_back("python3");
  for (const auto& python : candidates) {
    auto result = run_program({python, "-c", "import matplotlib"}, Seconds(30));
    if (result && result->status == 0) return python;
  }
  return std::nullopt;
}

namespace {

std::string duration_text(Seconds s) {
  const auto total = static_cast<long>(s.count() + 0.5);
  char text[32];
  if (total >= 60) {
    std::snprintf(text, sizeof text, "%ldm%02lds", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%lds", total);
  }
  return text;
}

std::string rate_text(std::optional<double> rate) {
  if (!rate) return "max";
  if (*rate == 0) return "idle";
  char text[32];
  if (*rate >= 1e6) {
    std::snprintf(text, sizeof text, "%.2fM/s", *rate / 1e6);
  } else if (*rate >= 1e3) {
    std::snprintf(text, sizeof text, "%.1fk/s", *rate / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f/s", *rate);
  }
  return text;
}

// A paced point whose sources did not keep to their schedule inside the window: they sent
// more than came due there (they were behind as it opened, on a busy host) or less (they fell
// behind). Empty within 5 %.
std::string pace_note(const RunSummary& s, std::optional<double> rate) {
  if (!rate || *rate <= 0 || s.events_due_per_s <= 0) return "";
  const double ratio = s.events_per_s / s.events_due_per_s;
  if (std::abs(ratio - 1.0) <= 0.05) return "";
  char text[96];
  std::snprintf(text, sizeof text, " (sources sent %.2fx their schedule: %s)", ratio,
                ratio > 1.0 ? "behind as the window opened" : "fell behind");
  return text;
}

// The grid's file with its source -> sink pair repeated `count` times, written as
// OUT/streams-COUNT.yaml and read back.
transport::Result<NetworkSpec> write_streams_network(const NetworkSpec& base,
                                                     const std::string& file_text,
                                                     std::uint32_t count,
                                                     const std::string& out_dir) {
  auto yaml = many_streams_network(base, file_text, count);
  if (!yaml) return std::move(yaml).error();
  const std::string path = out_dir + "/streams-" + std::to_string(count) + ".yaml";
  std::ofstream(path, std::ios::trunc) << yaml.value();
  auto spec = load_network(path);
  if (!spec) {
    return transport::fail(transport::ErrorCategory::config, 0,
                           "--streams: " + path + ": " + spec.error().joined());
  }
  return std::move(spec).value();
}

nlohmann::json grid_json(const BenchGrid& grid) {
  std::vector<std::string> rates;
  for (const auto& r : grid.rates) rates.push_back(r.label);
  return {{"file", grid.file},         {"network", grid.network}, {"media", grid.media},
          {"provider", grid.provider}, {"waits", grid.waits},
          {"rates", rates},            {"tuple_bytes", grid.tuple_bytes},
          {"batch_bytes", grid.batch_bytes}, {"streams", grid.streams}, {"repeats", grid.repeats},
          {"duration_s", grid.duration.count()}, {"warmup_s", grid.warmup.count()},
          {"latency_budget_us", grid.latency_budget_us},
          {"flush_us", grid.flush_us ? nlohmann::json(*grid.flush_us) : nlohmann::json(nullptr)},
          {"connection", grid.connection.value_or("per-link")}};
}

}  // namespace

BenchSample run_bench_launch(const BenchOptions& options, const NetworkSpec& base,
                             const BenchRun& run, const BenchGroup& group,
                             std::optional<double> rate, std::vector<std::string>& errors,
                             std::optional<std::uint16_t> metrics_port) {
  const BenchGrid& grid = options.grid;
  BenchSample sample{run, rate, std::nullopt, false};
  Overrides overrides;
  overrides.medium = group.medium;
  if (!grid.provider.empty() && group.medium != "tcp") overrides.provider = grid.provider;
  overrides.wait = run.wait;
  overrides.latency_budget_us = grid.latency_budget_us;
  overrides.flush_us = grid.flush_us;
  if (group.medium == "tcp") overrides.connection = grid.connection;
  overrides.batch_bytes = group.batch_bytes;
  if (group.tuple_bytes > 0) overrides.tuple_bytes = group.tuple_bytes;
  if (grid.network) {
    overrides.tuples = 0;         // the duration ends each run
    overrides.no_output = true;   // the query, not CSV formatting (NEXMark's blackhole sinks)
  }
  char number[64];
  if (!rate) {
    overrides.rate = "max";
  } else if (*rate == 0) {
    overrides.rate = "idle";
  } else {
    // Every source offers its share: the streams together offer `rate`.
    std::snprintf(number, sizeof number, "%.0f",
                  *rate / static_cast<double>(std::max(group.streams, 1U)));
    overrides.rate = number;
  }
  overrides.duration_s = (grid.warmup + grid.duration).count();
  overrides.warmup_s = grid.warmup.count();
  NetworkSpec spec = base;
  if (auto applied = apply_overrides(spec, overrides); !applied) {
    errors.push_back(applied.error().joined());
    return sample;
  }
  LaunchOptions launch_options;
  launch_options.file = base.file_name;  // the grid's file, or its --streams copy
  launch_options.forwarded = to_args(overrides);
  launch_options.free_ports = true;
  launch_options.executable = options.executable;
  launch_options.metrics_port = metrics_port;
  auto result = launch(spec, launch_options);
  if (!result) {
    errors.push_back(result.error().message);
    return sample;
  }
  for (const auto& e : result.value().errors) errors.push_back(e);
  sample.summary = result.value().summary;
  sample.ok = result.value().ok() && sample.summary && sample.summary->errors.empty();
  if (sample.summary) {
    for (const auto& e : sample.summary->errors) errors.push_back(e);
  }
  return sample;
}

int run_bench(const BenchOptions& options, std::ostream& out) {
  const BenchGrid& grid = options.grid;
  auto problems = check(grid);
  for (auto& p : check(options.loops)) problems.push_back(std::move(p));
  if (!problems.empty()) {
    for (const auto& p : problems) std::cerr << "bench: " << p << '\n';
    return 2;
  }
  const auto file_text = read_network_file(grid.file);
  if (!file_text) {
    std::cerr << file_text.error().joined() << '\n';
    return 2;
  }
  const auto base = parse_network(file_text.value(), grid.file);
  if (!base) {
    std::cerr << base.error().joined() << '\n';
    return 2;
  }
  const auto runs = schedule(grid);
  const std::size_t study_runs = loop_runs(options.loops);
  const std::size_t total_runs = runs.size() + study_runs;
  const auto expected = estimate(grid, runs.size()) +
                        static_cast<double>(study_runs) * (options.loops.duration + Seconds(0.3));
  const Seconds limit = options.time_limit;
  if (expected > limit) {
    std::cerr << "bench: this grid is " << total_runs << " runs, about " << duration_text(expected)
              << ", over --time-limit " << duration_text(limit)
              << "; drop media, wait modes or rates, lower --repeats, --duration or --warmup, or "
                 "raise --time-limit\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  std::ofstream jsonl(options.out_dir + "/bench.jsonl", std::ios::trunc);
  if (ec || !jsonl) {
    std::cerr << "bench: cannot write to '" << options.out_dir << "': "
              << (ec ? ec.message() : std::strerror(errno)) << '\n';
    return 2;
  }
  // --streams: each count above one launches the file with its pair repeated, written
  // beside the results so a run can be repeated by hand.
  std::map<std::uint32_t, NetworkSpec> networks;
  networks.emplace(1, base.value());
  for (const std::uint32_t count : grid.streams) {
    if (networks.contains(count)) continue;
    auto written = write_streams_network(base.value(), file_text.value(), count, options.out_dir);
    if (!written) {
      std::cerr << "bench: " << written.error().message << '\n';
      return 2;
    }
    networks.emplace(count, std::move(written).value());
  }

  BenchMeta meta = describe_machine(options.command);
  std::ostream* progress = options.progress;
  if (progress != nullptr) {
    *progress << "bench: " << total_runs << " runs of " << Seconds(grid.warmup).count()
              << " s warm-up + " << grid.duration.count() << " s, about " << duration_text(expected)
              << "; writing " << options.out_dir << "/\n";
  }
  if (options.iperf && measure_iperf(meta, progress) && progress != nullptr) {
    *progress << "bench: iperf3 over loopback: " << *meta.iperf_bytes_per_s / 1e6 << " MB/s\n";
  }
  // The wake-up floor's calibration (wake_cost.hpp): half a second on an idle machine.
  if (auto cost = measure_wake_cost(std::chrono::milliseconds(500))) {
    meta.wake_cost_us = cost.value().cpu_us_per_wakeup;
    if (progress != nullptr) {
      *progress << "bench: one wake-up costs " << *meta.wake_cost_us << " machine CPU-us ("
                << cost.value().wakeups << " in " << cost.value().seconds << " s)\n";
    }
  } else if (progress != nullptr) {
    *progress << "bench: " << cost.error().message << "; no wake-up floor in this sweep\n";
  }
  jsonl << nlohmann::json{{"kind", "bench"},
                          {"host", meta.host},
                          {"cpus", meta.cpus},
                          {"kernel", meta.kernel},
                          {"cpu", meta.cpu_model},
                          {"commit", meta.commit},
                          {"date", meta.date},
                          {"command", meta.command},
                          {"grid", grid_json(grid)},
                          {"iperf3_bytes_per_s", meta.iperf_bytes_per_s
                                                     ? nlohmann::json(*meta.iperf_bytes_per_s)
                                                     : nlohmann::json(nullptr)},
                          {"iperf3_cores", meta.iperf_cores ? nlohmann::json(*meta.iperf_cores)
                                                            : nlohmann::json(nullptr)},
                          {"wake_cost_us", meta.wake_cost_us ? nlohmann::json(*meta.wake_cost_us)
                                                             : nlohmann::json(nullptr)}}
               .dump()
        << std::endl;

  const auto all_groups = groups(grid);
  std::vector<BenchSample> samples;
  std::vector<double> max_rate(all_groups.size(), -1.0);
  const auto start = Clock::now();
  bool cut_short = false;
  int failures = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const BenchRun& run = runs[i];
    const Seconds elapsed = Clock::now() - start;
    if (elapsed > 1.25 * limit) {
      cut_short = true;
      std::cerr << "bench: stopped after " << i << " of " << runs.size() << " runs: "
                << duration_text(elapsed) << " is 25% past --time-limit\n";
      break;
    }
    const BenchGroup& group = all_groups[run.group];
    std::optional<double> rate;
    std::string label = "max (calibration)";
    if (run.rate != kCalibrationRun) {
      const RatePoint& point = grid.rates[run.rate];
      label = point.label;
      if (point.needs_max() && max_rate[run.group] < 0) {
        max_rate[run.group] = group_max(samples, run.group, grid.network);
      }
      if (point.needs_max() && max_rate[run.group] <= 0) {
        std::cerr << "bench: " << group.medium << ": no maximum was measured, so " << point.label
                  << " has no rate; skipped\n";
        samples.push_back({run, 0.0, std::nullopt, false});
        ++failures;
        continue;
      }
      rate = point.offered(max_rate[run.group]);
    }
    // One bench.jsonl line: the run's summary and where in the sweep it belongs.
    auto write_line = [&](const RunSummary& summary, bool ok, const char* key,
                          nlohmann::json value) {
      auto line = to_json(summary);
      line["bench"] = {{"medium", group.medium}, {"wait", run.wait}, {"rate_label", label},
                       {"streams", group.streams}, {"repeat", run.repeat + 1}, {"ok", ok}};
      if (key != nullptr) line["bench"][key] = std::move(value);
      jsonl << line.dump() << std::endl;
    };
    std::vector<std::string> errors;
    const NetworkSpec& network = networks.at(group.streams);
    BenchSample sample = run_bench_launch(options, network, run, group, rate, errors);
    // Other people's load beside the run: its machine figure leaves them out, but they also
    // took CPU and caches from the nodes, so the run is repeated once (docs/measurement.md §2).
    std::optional<double> contaminated_first;
    if (options.repeat_contaminated && sample.summary && sample.summary->contaminated) {
      const auto& first = *sample.summary;
      contaminated_first = first.other_cores;
      if (progress != nullptr) {
        *progress << "bench: other processes used " << std::fixed << std::setprecision(2)
                  << first.other_cores << std::defaultfloat << " cores during the run (";
        for (std::size_t k = 0; k < first.other_processes.size(); ++k) {
          *progress << (k > 0 ? ", " : "") << first.other_processes[k];
        }
        *progress << "): contaminated, repeating it once\n";
      }
      write_line(first, sample.ok, "discarded", "contaminated");
      errors.clear();
      sample = run_bench_launch(options, network, run, group, rate, errors);
    }
    if (!sample.ok) ++failures;
    if (progress != nullptr) {
      const Seconds spent = Clock::now() - start;
      const Seconds left =
          spent / static_cast<double>(i + 1) * static_cast<double>(total_runs - i - 1);
      char head[160];
      const std::string streams =
          group.streams > 1 ? " " + std::to_string(group.streams) + " streams" : "";
      std::snprintf(head, sizeof head, "[%3zu/%zu %s, ~%s left] %s %uB%s %s %s (%s) #%d: ", i + 1,
                    total_runs, duration_text(spent).c_str(), duration_text(left).c_str(),
                    group.medium.c_str(), group.tuple_bytes, streams.c_str(), run.wait.c_str(),
                    label.c_str(), rate_text(rate).c_str(), run.repeat + 1);
      *progress << head;
      if (sample.summary && sample.ok) {
        const auto& s = *sample.summary;
        char tail[160];
        if (rate && *rate == 0) {
          std::snprintf(tail, sizeof tail, "%.2f cores idle", s.cores_machine);
        } else if (grid.network) {
          std::snprintf(tail, sizeof tail,
                        "%.0f events/s, %.0f events/s per core, %.3g CPU-us/event", s.events_per_s,
                        s.events_per_core, s.cpu_us_per_event_machine);
        } else {
          std::snprintf(tail, sizeof tail, "%.0f tuples/s, %.3g CPU-us/tuple, p99 %.0f us",
                        s.tuples_per_s, s.cpu_us_per_tuple_machine, s.latency.p99_us);
        }
        *progress << tail << pace_note(s, rate)
                  << (!s.contaminated      ? ""
                      : contaminated_first ? " (contaminated again: kept)"
                                           : " (contaminated: kept)")
                  << '\n';
      } else {
        *progress << "FAILED" << (errors.empty() ? std::string() : ": " + errors.front()) << '\n';
      }
    }
    if (sample.summary && contaminated_first) {
      write_line(*sample.summary, sample.ok, "repeated_after_other_cores", *contaminated_first);
    } else if (sample.summary) {
      write_line(*sample.summary, sample.ok, nullptr, nullptr);
    }
    samples.push_back(std::move(sample));
  }

  std::vector<LoopRow> loop_rows;
  if (study_runs > 0 && !cut_short) {
    loop_rows = run_loops(options.loops, progress, &jsonl, runs.size(), total_runs);
    std::ofstream(options.out_dir + "/event_loops.csv", std::ios::trunc)
        << loops_csv(meta, loop_rows);
    for (const auto& row : loop_rows) failures += row.repeats - row.ok_repeats;
  }
  const auto rows = aggregate(grid, samples);
  const std::string csv_path = options.out_dir + "/bench.csv";
  std::ofstream(csv_path, std::ios::trunc) << to_csv(meta, rows);
  const std::string table = summary_table(meta, grid, rows) +
                            (loop_rows.empty() ? std::string() : loops_table(loop_rows));
  std::ofstream(options.out_dir + "/summary.txt", std::ios::trunc) << table;
  out << table;
  if (options.plots) {
    if (auto python = find_plot_python()) {
      auto plotted = run_program({*python, options.plot_script, csv_path, "--out", options.out_dir},
                                 Seconds(120));
      if (!plotted || plotted->status != 0) {
        std::cerr << "bench: plotting failed: "
                  << (plotted ? plotted->output : "cannot run " + *python);
      } else if (progress != nullptr) {
        *progress << plotted->output;
      }
    } else {
      std::cerr << "bench: no Python with matplotlib (apt-get install python3-matplotlib); "
                   "no plots. The CSV is "
                << csv_path << '\n';
    }
  }
  if (progress != nullptr) {
    *progress << "bench: done in " << duration_text(Clock::now() - start) << "; " << failures
              << " failed runs; " << options.out_dir << "/{bench.csv,bench.jsonl,summary.txt}\n";
  }
  return failures > 0 || cut_short ? 1 : 0;
}

}  // namespace boreal::runtime
