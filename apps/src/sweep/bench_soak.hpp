// `boreal bench --soak DURATION`: does a network stay flat when it runs for long at a steady
// load? It measures the network's sustained maximum with one run at rate max, scraped once a
// second (sustained_maximum() below), then launches it at 80 % of that (or --rates' one
// value) for DURATION with the live metrics on (docs/metrics.md) and scrapes every node's
// /metrics once a second. It writes
//   OUT/soak.csv   one row per second per node: RSS, the occupancy of its sending links,
//                  tuples/s, the sink's loss and that second's p99 latency
//   OUT/soak.png   those against time, drawn by scripts/bench_plot.py --soak (matplotlib)
// and prints a summary with a verdict of flatness (flatness() below says what "flat" means).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <boreal/transport/error.hpp>

#include "sweep/bench_sweep.hpp"

namespace boreal::runtime {

using SoakSeconds = std::chrono::duration<double>;

// "600" (seconds), "30s", "10m" or "1h": a positive whole number with an optional unit. The
// error names --soak and the value.
[[nodiscard]] transport::Result<SoakSeconds> parse_soak_duration(const std::string& text);

// What one scrape of a node says, summed over its sinks and sending links.
struct SoakScrape {
  double rss_bytes = 0;
  double frames_unacknowledged = 0, buffers_in_use = 0, buffers = 0, backlog_bytes = 0;
  double tuples = 0;  // tuples its sources generated plus tuples its sinks consumed
  double lost = 0, duplicated = 0, out_of_order = 0;
  // boreal_sink_latency_seconds_bucket: upper bound in seconds (+Inf as infinity) →
  // cumulative count, summed over the node's sinks. Empty: no sink records latency.
  std::map<double, double> latency;
};

// Reads the series a soak needs out of Prometheus text (metrics_text.hpp's format).
[[nodiscard]] SoakScrape parse_scrape(const std::string& text);

// The p99 in microseconds of the latencies recorded between two scrapes' cumulative
// histograms, interpolated linearly inside its bucket as Prometheus's histogram_quantile
// does (a p99 in the +Inf bucket is the last finite bound). 0 when none were recorded.
[[nodiscard]] double p99_between(const std::map<double, double>& before,
                                 const std::map<double, double>& after);

// One row of soak.csv.
struct SoakRow {
  int elapsed_s = 0;
  std::string node;
  double rss_kb = 0;
  double frames_unacknowledged = 0, buffers_in_use = 0, buffers = 0, backlog_bytes = 0;
  double tuples_per_s = 0;
  double lost = 0, duplicated = 0, out_of_order = 0;
  double p99_us = 0;  // 0: the node has no sink that records latency, or none arrived
  bool has_latency = false;
};

[[nodiscard]] std::string soak_csv_header();
[[nodiscard]] std::string soak_csv_line(const SoakRow& row);

// The verdict on a soak's rows (every node's). "Flat" means all of:
//   - the first 10 % of the seconds (at least 5) are warm-up and not judged; the next 10 %
//     (at least 5 s) are the early window and the last 10 % (at least 5 s) the late one;
//   - RSS: per node, the late window's median is within 5 % or 4 MiB (the larger) of the
//     early window's;
//   - occupancy: per node, the late window's median of buffers in use is at most the early
//     window's largest plus 10 % of the node's buffers (it does not climb towards full);
//   - p99: per node with a sink, the late window's median is at most twice the early
//     window's plus 5 ms, or at most the early window's largest (latency on a shared
//     machine is noisy; growth is what counts);
//   - no tuple lost or duplicated at any sink, at any second;
//   - at least 15 seconds of rows per node.
struct SoakVerdict {
  bool flat = false;
  std::vector<std::string> reasons;  // why not, one line each
};
[[nodiscard]] SoakVerdict flatness(const std::vector<SoakRow>& rows);

// The summary printed at the end: per node the first and last minute's (or, on runs under
// three minutes, third's) medians of RSS and p99, the largest occupancy, the total loss, and
// the verdict. max_rate 0: not measured.
[[nodiscard]] std::string soak_summary(const std::vector<SoakRow>& rows, const SoakVerdict& verdict,
                                       double max_rate, double offered_rate);

// What a machine sustains at the maximum, from the rows of a scraped run at rate max: per
// second (`from_s` < elapsed <= `to_s`, seconds where every one of `nodes` was scraped) the
// nodes' tuples/s summed; `rate` is `mean_rate` (the run's own measurement, in its unit:
// tuples or source events per second) scaled by the 10th percentile of those seconds over
// their mean. A machine whose speed swings from one half-minute to the next (README "Soak")
// is soaked at a fraction of its slow seconds, not of its average.
struct SustainedMaximum {
  double rate = 0;
  double slow_ratio = 1;     // the 10th percentile over the mean of the per-second rates
  std::size_t seconds = 0;   // seconds it was taken from; 0: none, and rate is mean_rate
};
[[nodiscard]] SustainedMaximum sustained_maximum(const std::vector<SoakRow>& rows,
                                                 std::size_t nodes, int from_s, int to_s,
                                                 double mean_rate);

struct SoakOptions {
  // The grid's file, first medium and first wait mode, sizes, and the run at max's warm-up
  // and duration (the soak's default: 60 s, so that it sees the machine's slow stretches);
  // out_dir, plots, plot_script, executable, progress.
  BenchOptions bench;
  SoakSeconds duration{30};
  // The load: a fraction of the maximum measured first (default 80 %), or tuples/s (then no
  // run at max is needed).
  RatePoint rate{RatePoint::Kind::fraction, 0.8, "80%"};
};

// Returns the exit status: 0 flat; 1 not flat, or a run failed; 2 unusable options or output.
[[nodiscard]] int run_soak(const SoakOptions& options, std::ostream& out);

}  // namespace boreal::runtime
