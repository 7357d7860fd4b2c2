// `boreal bench`: its flags, turned into a sweep grid and an event-loop plan, and the command.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/bench_soak.hpp"
#include "sweep/bench_sweep.hpp"

namespace boreal::cli {

using runtime::BenchGrid;
using runtime::LoopPlan;

// `boreal bench` flags: each list replaces the grid's (quick or full) when given.
struct BenchFlags {
  bool quick = false;
  std::vector<std::string> media, waits, rates, loops, loop_rates;
  std::vector<std::uint32_t> tuple_bytes, batch_bytes, streams;
  std::string provider;
  std::optional<int> repeats;
  std::optional<double> duration_s, warmup_s;
  std::optional<std::int64_t> latency_budget_us;
  std::optional<std::int64_t> flush_us;
  std::optional<std::string> connection;
  std::string file;  // the network file every run launches (main sets the demo's)
  std::string network;  // --network: any network file, measured per source event
  std::string out = "bench-out";
  int time_limit_min = 60;
  bool no_iperf = false, no_plots = false;
  std::string contaminated =
      "repeat";             // --contaminated: repeat a run beside other load, or keep it
  std::string plot_script;  // scripts/bench_plot.py (main sets it)
  std::string soak;         // --soak DURATION: a soak instead of the sweep (bench_soak.hpp)

  void add_to(CLI::App& app);
  // The grid and the event-loop plan these flags describe; bad values go to `problems`.
  [[nodiscard]] BenchGrid grid(std::vector<std::string>& problems) const;
  [[nodiscard]] LoopPlan loop_plan(const BenchGrid& grid, std::vector<std::string>& problems) const;
};

// The soak these flags describe (--soak); bad values go to `problems`.
[[nodiscard]] runtime::SoakOptions soak_options(const BenchFlags& flags,
                                                std::vector<std::string>& problems);

// Checks everything, then runs the sweep (or, with --soak, the soak). Returns the exit status (see
// run_bench).
[[nodiscard]] int bench_command(const BenchFlags& flags, const std::string& command);

}  // namespace boreal::cli
