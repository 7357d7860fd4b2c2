// `boreal bench`: runs a sweep's grid (bench_plan.hpp) as `boreal launch` runs, shows
// progress, keeps to a time limit, and writes what it measured:
//   OUT/bench.jsonl   a header line (machine, commit, command, grid), every run's summary and
//                     every event-loop run
//   OUT/bench.csv     one row per grid point: medians and spread (bench_report.hpp)
//   OUT/event_loops.csv  the event-loop study: one row per strategy and rate
//   OUT/summary.txt   the summary table, also printed on stdout
//   OUT/*.png         CPU per tuple, p99 latency and throughput against cores, drawn by
//                     scripts/bench_plot.py (matplotlib) when a Python with matplotlib is there
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/bench_loops.hpp"
#include "sweep/bench_plan.hpp"
#include "sweep/bench_report.hpp"
#include "spec/network_spec.hpp"

namespace boreal::runtime {

struct BenchOptions {
  BenchGrid grid;
  LoopPlan loops;  // the event-loop study, after the grid
  std::string out_dir = "bench-out";
  // The sweep refuses to start when its estimate exceeds this, and stops starting runs once
  // it has run 25 % past it (what ran is still reported).
  std::chrono::minutes time_limit{60};
  bool iperf = true;  // measure iperf3 over loopback first, if it is installed
  // Repeat, once, a run that other processes' load contaminated (RunSummary::contaminated).
  bool repeat_contaminated = true;
  bool plots = true;
  std::string plot_script;  // scripts/bench_plot.py
  std::string command;      // as typed, for the record
  std::string executable = "/proc/self/exe";
  std::ostream* progress = nullptr;
};

// One run of the grid as `boreal launch` would do it (the grid's file, medium, wait mode,
// sizes, warm-up and duration), at `rate` (nullopt: max), on a copy of `base`, the file's spec
// read once. With `metrics_port`, node i serves its live metrics on *metrics_port + i
// (docs/metrics.md). Problems go to `errors`. The soak (bench_soak.hpp) runs its launches
// through this too.
[[nodiscard]] BenchSample run_bench_launch(const BenchOptions& options, const NetworkSpec& base,
                                           const BenchRun& run, const BenchGroup& group,
                                           std::optional<double> rate,
                                           std::vector<std::string>& errors,
                                           std::optional<std::uint16_t> metrics_port = {});

// A Python that can import matplotlib: $BOREAL_PYTHON, Debian's, or the one on PATH.
[[nodiscard]] std::optional<std::string> find_plot_python();

struct ProgramResult {
  int status = -1;  // exit status; -1 when it did not exit by itself
  std::string output;  // stdout and stderr together
};

// Runs a program (looked up in PATH) to its end, or stops it (SIGTERM, then SIGKILL) after
// `timeout`. Only this child is ever signalled, by its PID. nullopt: it could not start.
[[nodiscard]] std::optional<ProgramResult> run_program(const std::vector<std::string>& args,
                                                       std::chrono::duration<double> timeout);

// Returns the exit status: 0 every run delivered every tuple; 1 some run failed (the table
// says which), or the time limit cut the sweep short; 2 the grid or the output is unusable.
[[nodiscard]] int run_bench(const BenchOptions& options, std::ostream& out);

}  // namespace boreal::runtime
