// `boreal bench`: the grid of a CPU-efficiency sweep and the order its runs take.
//
// A sweep runs every point of media × wait modes × offered rates × tuple sizes × frame sizes
// × stream counts, each `repeats` times, each run a `boreal launch` of the two-node demo network
// with a warm-up that is not measured. Rates are absolute (tuples/s) or fractions of the maximum
// measured in the same sweep for that medium, tuple size, frame size and stream count: the "max"
// points run first, and the best wait mode's median is the maximum the fractions refer to.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boreal/transport/error.hpp>

namespace boreal::runtime {

struct RatePoint {
  enum class Kind : std::uint8_t { idle, fraction, absolute, max };
  Kind kind = Kind::max;
  double value = 0;   // fraction in (0, 1], or tuples/s
  std::string label;  // "idle", "10%", "100000", "max": as the user wrote it, normalised

  // The rate to offer, given the group's measured maximum; nullopt = as fast as possible.
  [[nodiscard]] std::optional<double> offered(double max_rate) const;
  [[nodiscard]] bool needs_max() const noexcept { return kind == Kind::fraction; }
};

// Parses "idle", "max", "N%" (0 < N ≤ 100) or a positive number of tuples/s with an optional
// k or M suffix ("100k"). An error names the bad item and what is accepted.
[[nodiscard]] transport::Result<RatePoint> parse_rate_point(const std::string& text);

struct BenchGrid {
  std::string file;  // the network file every run launches
  // --network: `file` is any network, run as written (its sources' tuples, no count limit so
  // the duration rules), and measured per source event (events/s, per core, CPU-µs each).
  // tuple_bytes is then {0}: the file's own.
  bool network = false;
  std::vector<std::string> media;
  std::string provider;  // fabric media; empty = each run's default
  std::vector<std::string> waits;
  std::vector<RatePoint> rates;
  std::vector<std::uint32_t> tuple_bytes;  // 0: as the file says (--network)
  std::vector<std::uint32_t> batch_bytes;
  // --streams: runs with N streams from the sending node into the receiving one (the file's
  // source -> sink pair repeated, bench_streams.hpp), the offered rate shared among them.
  std::vector<std::uint32_t> streams{1};
  int repeats = 3;
  std::chrono::duration<double> duration{3.0};  // measured, per run
  std::chrono::duration<double> warmup{1.0};    // before it, not measured
  std::int64_t latency_budget_us = 200;
  // --flush-us: every run's frames held this long; unset, the hold adapts to the receiver
  // (runtime/flush_hold.hpp).
  std::optional<std::int64_t> flush_us;
  // --connection: how every run's tcp links connect (per-link when unset).
  std::optional<std::string> connection;
  std::string max_wait = "block";  // calibrates the maximum when "max" is not a rate point
};

// The grid `boreal bench --quick` runs (about a minute) and the full default grid.
[[nodiscard]] BenchGrid quick_grid();
[[nodiscard]] BenchGrid full_grid();

// One medium, tuple size, frame size and stream count: the rates' fractions share its
// maximum (all its streams together).
struct BenchGroup {
  std::string medium;
  std::uint32_t tuple_bytes = 0;
  std::uint32_t batch_bytes = 0;
  std::uint32_t streams = 1;
  bool operator==(const BenchGroup&) const = default;
};

// One run of the sweep.
struct BenchRun {
  std::size_t group = 0;  // index into groups()
  std::string wait;
  std::size_t rate = 0;   // index into BenchGrid::rates; SIZE_MAX = calibration of the maximum
  int repeat = 0;         // 0-based
};

inline constexpr std::size_t kCalibrationRun = static_cast<std::size_t>(-1);

[[nodiscard]] std::vector<BenchGroup> groups(const BenchGrid& grid);
// Every run in the order the sweep takes them. Per group: the max points (or one calibration
// run with max_wait), then the other points with the repeats outermost, so that a slow spell
// of the machine spreads over all points instead of spoiling one.
[[nodiscard]] std::vector<BenchRun> schedule(const BenchGrid& grid);

// Wall time one run takes on top of its warm-up and duration (process start, connect, drain).
inline constexpr std::chrono::duration<double> kRunOverhead{0.7};
[[nodiscard]] std::chrono::duration<double> estimate(const BenchGrid& grid, std::size_t runs);

// The most streams --streams runs into one node (each is a connection and a sink).
inline constexpr std::uint32_t kMaxBenchStreams = 1024;

// Every problem of the grid at once (empty lists, a repeat count below 1, sizes of zero, an
// unknown medium or wait mode), one message each.
[[nodiscard]] std::vector<std::string> check(const BenchGrid& grid);

}  // namespace boreal::runtime
