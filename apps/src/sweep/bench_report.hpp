// `boreal bench`: what a sweep's runs add up to. Every grid point's repeats are reduced to
// the median and the spread (min, max); the rows go out as CSV (read by
// scripts/bench_plot.py) and as the summary table on stdout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sweep/bench_plan.hpp"
#include "runtime/node_report.hpp"

namespace boreal::runtime {

// Where and how the figures were made; written at the top of every output.
struct BenchMeta {
  std::string host;
  unsigned cpus = 0;
  std::string kernel;
  std::string cpu_model;
  std::string commit;
  std::string date;     // UTC, ISO 8601
  std::string command;  // as typed, shell-quoted
  // iperf3 over loopback in the same sweep (nullopt: not run).
  std::optional<double> iperf_bytes_per_s;
  std::optional<double> iperf_cores;  // sender + receiver CPU, in cores
  // The calibration's machine CPU-µs per wake-up (wake_cost.hpp; nullopt: not run).
  std::optional<double> wake_cost_us;
};

[[nodiscard]] BenchMeta describe_machine(const std::string& command);

// One run's outcome.
struct BenchSample {
  BenchRun run;
  std::optional<double> offered_rate;  // what was offered (nullopt = max)
  std::optional<RunSummary> summary;   // nullopt when the run could not start
  bool ok = false;                     // ran, and delivered every tuple exactly once in order
};

// The median and spread of one measure over a point's good repeats.
struct Spread {
  double median = 0, min = 0, max = 0;
};

// One grid point.
struct BenchRow {
  BenchGroup group;
  std::string provider;
  std::string wait;
  RatePoint rate;
  std::optional<double> offered_rate;
  double max_rate = 0;  // the group's measured maximum
  int repeats = 0;
  int ok_repeats = 0;
  Spread tuples_per_s, cpu_us_per_tuple, cores, p99_us;
  // Per source event (RunSummary's events figures): medians.
  Spread events_per_s;
  double cpu_us_per_event = 0, events_per_core = 0;
  double sender_cpu_us_per_tuple = 0, receiver_cpu_us_per_tuple = 0;
  double p50_us = 0, p999_us = 0, syscalls_per_tuple = 0;
  std::int64_t latency_budget_us = 0;
  // The receiving end's wait decisions (medians): share of its idle time spinning, sleeping
  // and blocked, and switches between sleep and block per second.
  double receiver_spin_share = 0, receiver_sleep_share = 0, receiver_block_share = 0;
  double receiver_switches_per_s = 0, sender_switches_per_s = 0;
  // Blocking waits and sleeps of both nodes' threads per tuple (median): each ends in a
  // wake-up, so with BenchMeta::wake_cost_us they make the point's floor (wake_floor_ratio()).
  double wakeups_per_tuple = 0;
};

// The point's CPU per tuple against its wake-up floor (wake-ups per tuple × the cost of one);
// nullopt without a calibration or without wake-ups (busy).
[[nodiscard]] std::optional<double> wake_floor_ratio(const BenchMeta& meta, const BenchRow& row);

[[nodiscard]] Spread spread_of(std::vector<double> values);

// The group's maximum: the best wait mode's median at "max" (or the calibration run), in
// tuples/s, or in source events/s (`events`, for --network).
[[nodiscard]] double group_max(const std::vector<BenchSample>& samples, std::size_t group,
                               bool events = false);

[[nodiscard]] std::vector<BenchRow> aggregate(const BenchGrid& grid,
                                              const std::vector<BenchSample>& samples);

// A number as a CSV cell: six significant digits, shortest form.
[[nodiscard]] std::string csv_number(double value);

[[nodiscard]] std::string to_csv(const BenchMeta& meta, const std::vector<BenchRow>& rows);

// Per group: machine CPU-µs per tuple and p99 for every wait mode and rate (idle: cores), the
// best fixed mode at each rate and adaptive's ratio to it, and the iperf3 comparison.
[[nodiscard]] std::string summary_table(const BenchMeta& meta, const BenchGrid& grid,
                                        const std::vector<BenchRow>& rows);

}  // namespace boreal::runtime
