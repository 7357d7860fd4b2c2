// `boreal bench`: the event-loop part of the sweep. Each TCP event-loop strategy of the study
// harness (loopstudy/loop_study.hpp) runs at each of a few offered rates, repeated; the
// medians of its CPU and system calls per tuple go to OUT/event_loops.csv and the table.
#pragma once

#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/bench_plan.hpp"
#include "sweep/bench_report.hpp"

namespace boreal::runtime {

struct LoopPlan {
  std::vector<std::string> strategies;  // empty = none
  std::vector<RatePoint> rates;         // absolute or max (fractions and idle are refused)
  int repeats = 3;
  std::chrono::duration<double> duration{2.0};
  std::uint32_t tuple_bytes = 64;
  std::uint32_t batch_bytes = 32768;
  std::chrono::microseconds flush{100};
  int links = 4;
};

// Every strategy name of the harness, in its order.
[[nodiscard]] std::vector<std::string> loop_strategy_names();
// Problems with the plan (unknown strategy, a rate that is not absolute or max), one each.
[[nodiscard]] std::vector<std::string> check(const LoopPlan& plan);
[[nodiscard]] std::size_t loop_runs(const LoopPlan& plan);

struct LoopRow {
  std::string strategy;
  std::string description;
  std::string rate_label;
  double offered_rate = 0;  // 0 = as fast as possible
  int repeats = 0;
  int ok_repeats = 0;
  Spread tuples_per_s, cpu_us_per_tuple;
  double process_cpu_us_per_tuple = 0;
  double syscalls_per_tuple = 0;
  double p50_us = 0, p99_us = 0;
  std::map<std::string, double> syscalls_per_tuple_by_kind;  // medians
  std::vector<std::string> errors;
};

// Runs the plan, one progress line per run; `done` and `total` number the runs across the
// whole sweep for the progress lines. Each run also goes to `jsonl` (when not null) as a
// {"kind": "event_loop", ...} line.
[[nodiscard]] std::vector<LoopRow> run_loops(const LoopPlan& plan, std::ostream* progress,
                                             std::ostream* jsonl, std::size_t done,
                                             std::size_t total);

[[nodiscard]] std::string loops_csv(const BenchMeta& meta, const std::vector<LoopRow>& rows);
[[nodiscard]] std::string loops_table(const std::vector<LoopRow>& rows);

}  // namespace boreal::runtime
