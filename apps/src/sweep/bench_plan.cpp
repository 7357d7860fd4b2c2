#include "sweep/bench_plan.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <boreal/transport/wait_mode.hpp>

#include "spec/spec_values.hpp"

namespace boreal::runtime {

using transport::ErrorCategory;
using transport::fail;

std::optional<double> RatePoint::offered(double max_rate) const {
  switch (kind) {
    case Kind::idle: return 0.0;
    case Kind::fraction: return value * max_rate;
    case Kind::absolute: return value;
    case Kind::max: return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// A finite number with nothing after it but `suffix_chars` (one of them at most).
std::optional<std::pair<double, char>> number_with_suffix(std::string_view text,
                                                          std::string_view suffix_chars) {
  char suffix = 0;
  if (!text.empty() && suffix_chars.find(text.back()) != std::string_view::npos) {
    suffix = text.back();
    text.remove_suffix(1);
  }
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || stop != end || ec != std::errc{} || !std::isfinite(value))
    return std::nullopt;
  return std::pair{value, suffix};
}

std::string shortest(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

}  // namespace

transport::Result<RatePoint> parse_rate_point(const std::string& text) {
  if (text == "idle") return RatePoint{RatePoint::Kind::idle, 0.0, "idle"};
  if (text == "max") return RatePoint{RatePoint::Kind::max, 0.0, "max"};
  const auto bad = [&] {
    return fail(ErrorCategory::config, 0,
                "--rates: '" + text +
                    "' is not a rate (expected idle, max, a percentage of the maximum such as "
                    "10%, or tuples/s such as 100000 or 100k)");
  };
  const auto parsed = number_with_suffix(text, "%kM");
  if (!parsed) return bad();
  const auto [value, suffix] = *parsed;
  if (suffix == '%') {
    if (value <= 0 || value > 100) {
      return fail(ErrorCategory::config, 0,
                  "--rates: '" + text + "': a percentage of the maximum must be in (0, 100]");
    }
    return RatePoint{RatePoint::Kind::fraction, value / 100.0, shortest(value) + "%"};
  }
  const double rate = value * (suffix == 'k' ? 1e3 : suffix == 'M' ? 1e6 : 1.0);
  if (rate <= 0) return bad();
  return RatePoint{RatePoint::Kind::absolute, rate, shortest(rate)};
}

BenchGrid full_grid() {
  BenchGrid grid;
  grid.media = {"tcp", "fabric-msg", "fabric-rma"};
  for (auto mode : transport::kAllWaitModes) grid.waits.emplace_back(transport::to_string(mode));
  for (const char* r : {"idle", "1%", "10%", "50%", "90%", "max"}) {
    grid.rates.push_back(parse_rate_point(r).value());
  }
  grid.tuple_bytes = {64};
  grid.batch_bytes = {32768};
  return grid;
}

BenchGrid quick_grid() {
  BenchGrid grid = full_grid();
  grid.media = {"tcp"};
  grid.waits = {"busy", "block", "sleep", "adaptive"};
  grid.rates.clear();
  for (const char* r : {"idle", "1%", "10%", "max"})
    grid.rates.push_back(parse_rate_point(r).value());
  grid.repeats = 1;
  grid.duration = std::chrono::duration<double>(1.0);
  grid.warmup = std::chrono::duration<double>(0.5);
  return grid;
}

std::vector<BenchGroup> groups(const BenchGrid& grid) {
  std::vector<BenchGroup> out;
  for (const auto& medium : grid.media) {
    for (auto tuple : grid.tuple_bytes) {
      for (auto batch : grid.batch_bytes) {
        for (auto streams : grid.streams) out.push_back({medium, tuple, batch, streams});
      }
    }
  }
  return out;
}

std::vector<BenchRun> schedule(const BenchGrid& grid) {
  std::vector<BenchRun> runs;
  const auto max_point = std::find_if(grid.rates.begin(), grid.rates.end(), [](const RatePoint& r) {
    return r.kind == RatePoint::Kind::max;
  });
  const bool fractions = std::any_of(grid.rates.begin(), grid.rates.end(),
                                     [](const RatePoint& r) { return r.needs_max(); });
  const std::size_t group_count = groups(grid).size();
  for (std::size_t g = 0; g < group_count; ++g) {
    if (max_point != grid.rates.end()) {
      const auto index = static_cast<std::size_t>(max_point - grid.rates.begin());
      for (int repeat = 0; repeat < grid.repeats; ++repeat) {
        for (const auto& wait : grid.waits) runs.push_back({g, wait, index, repeat});
      }
    } else if (fractions) {
      runs.push_back({g, grid.max_wait, kCalibrationRun, 0});
    }
    for (int repeat = 0; repeat < grid.repeats; ++repeat) {
      for (std::size_t r = 0; r < grid.rates.size(); ++r) {
        if (grid.rates[r].kind == RatePoint::Kind::max) continue;
        for (const auto& wait : grid.waits) runs.push_back({g, wait, r, repeat});
      }
    }
  }
  return runs;
}

std::chrono::duration<double> estimate(const BenchGrid& grid, std::size_t runs) {
  return static_cast<double>(runs) * (grid.warmup + grid.duration + kRunOverhead);
}

std::vector<std::string> check(const BenchGrid& grid) {
  std::vector<std::string> problems;
  auto need = [&](bool ok, const std::string& message) {
    if (!ok) problems.push_back(message);
  };
  need(!grid.media.empty(), "--media: give at least one medium");
  need(!grid.waits.empty(), "--waits: give at least one wait mode");
  need(!grid.rates.empty(), "--rates: give at least one rate");
  need(!grid.tuple_bytes.empty(), "--tuple-bytes: give at least one size");
  need(!grid.batch_bytes.empty(), "--batch-bytes: give at least one size");
  need(grid.repeats >= 1, "--repeats: must be at least 1, got " + std::to_string(grid.repeats));
  need(grid.duration.count() > 0,
       "--duration: must be positive, got " + shortest(grid.duration.count()));
  need(grid.warmup.count() >= 0,
       "--warmup: must not be negative, got " + shortest(grid.warmup.count()));
  need(grid.latency_budget_us > 0,
       "--latency-budget: must be positive, got " + std::to_string(grid.latency_budget_us));
  need(!grid.flush_us || (*grid.flush_us > 0 && *grid.flush_us <= grid.latency_budget_us),
       "--flush-us: must be positive and at most the latency budget (" +
           std::to_string(grid.latency_budget_us) + " us), got " +
           std::to_string(grid.flush_us.value_or(0)));
  if (grid.connection) {
    if (auto parsed = parse_connection(*grid.connection); !parsed) {
      problems.push_back("--connection: " + parsed.error().message);
    }
  }
  for (const auto& medium : grid.media) {
    if (medium == "inproc") {
      problems.emplace_back(
          "--media: inproc runs inside one node; the sweep measures media between nodes");
    } else if (auto parsed = parse_medium(medium); !parsed) {
      problems.push_back("--media: " + parsed.error().message);
    }
  }
  for (const auto& wait : grid.waits) {
    if (auto parsed = transport::parse_wait_mode(wait); !parsed) {
      problems.push_back("--waits: " + parsed.error().message);
    }
  }
  if (!grid.network) {
    for (auto size : grid.tuple_bytes)
      need(size > 0, "--tuple-bytes: sizes must be positive, got 0");
  }
  for (auto size : grid.batch_bytes) need(size > 0, "--batch-bytes: sizes must be positive, got 0");
  need(!grid.streams.empty(), "--streams: give at least one count");
  for (auto count : grid.streams) {
    need(count >= 1 && count <= kMaxBenchStreams, "--streams: counts must be 1 to " +
                                                      std::to_string(kMaxBenchStreams) + ", got " +
                                                      std::to_string(count));
  }
  need(!grid.network || grid.streams == std::vector<std::uint32_t>{1},
       "--streams: a --network file runs as written; --streams repeats a --file's source -> sink "
       "pair");
  return problems;
}

}  // namespace boreal::runtime
