#include "sweep/bench_report.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace boreal::runtime {

BenchMeta describe_machine(const std::string& command) {
  BenchMeta meta;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) meta.host = host;
  meta.cpus = static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
  utsname names{};
  if (uname(&names) == 0) meta.kernel = names.release;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      meta.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
  }
  meta.commit = build_commit();
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  meta.date = date;
  meta.command = command;
  return meta;
}

Spread spread_of(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
  return {median, values.front(), values.back()};
}

double group_max(const std::vector<BenchSample>& samples, std::size_t group, bool events) {
  // Median per wait mode over the good max (or calibration) runs, then the best of those.
  std::vector<std::pair<std::string, std::vector<double>>> by_wait;
  for (const auto& s : samples) {
    if (s.run.group != group || !s.ok || s.offered_rate.has_value()) continue;
    auto it = std::find_if(by_wait.begin(), by_wait.end(),
                           [&](const auto& entry) { return entry.first == s.run.wait; });
    if (it == by_wait.end()) it = by_wait.insert(by_wait.end(), {s.run.wait, {}});
    it->second.push_back(events ? s.summary->events_per_s : s.summary->tuples_per_s);
  }
  double best = 0;
  for (auto& [wait, values] : by_wait) best = std::max(best, spread_of(values).median);
  return best;
}

std::optional<double> wake_floor_ratio(const BenchMeta& meta, const BenchRow& row) {
  if (!meta.wake_cost_us || *meta.wake_cost_us <= 0 || row.wakeups_per_tuple <= 0 ||
      row.ok_repeats == 0) {
    return std::nullopt;
  }
  return row.cpu_us_per_tuple.median / (row.wakeups_per_tuple * *meta.wake_cost_us);
}

std::string csv_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::vector<BenchRow> aggregate(const BenchGrid& grid, const std::vector<BenchSample>& samples) {
  std::vector<BenchRow> rows;
  const auto all_groups = groups(grid);
  for (std::size_t g = 0; g < all_groups.size(); ++g) {
    const double max_rate = group_max(samples, g, grid.network);
    for (std::size_t r = 0; r < grid.rates.size(); ++r) {
      for (const auto& wait : grid.waits) {
        BenchRow row;
        row.group = all_groups[g];
        row.wait = wait;
        row.rate = grid.rates[r];
        row.max_rate = max_rate;
        row.latency_budget_us = grid.latency_budget_us;
        std::vector<double> rate, cpu, cores, p99, sender, receiver, p50, p999, calls;
        std::vector<double> spin, sleep, block, rx_switches, tx_switches;
        std::vector<double> events, per_event, per_core, wakeups;
        for (const auto& s : samples) {
          if (s.run.group != g || s.run.rate != r || s.run.wait != wait) continue;
          ++row.repeats;
          row.offered_rate = s.offered_rate;
          if (!s.ok) continue;
          ++row.ok_repeats;
          const RunSummary& m = *s.summary;
          row.provider = m.config.provider;
          row.latency_budget_us = m.config.latency_budget_us;
          rate.push_back(m.tuples_per_s);
          cpu.push_back(m.cpu_us_per_tuple_machine);
          events.push_back(m.events_per_s);
          per_event.push_back(m.cpu_us_per_event_machine);
          per_core.push_back(m.events_per_core);
          cores.push_back(m.cores_machine);
          p99.push_back(m.latency.p99_us);
          sender.push_back(m.cpu_us_per_tuple_sender);
          receiver.push_back(m.cpu_us_per_tuple_receiver);
          p50.push_back(m.latency.p50_us);
          p999.push_back(m.latency.p999_us);
          calls.push_back(m.syscalls_per_tuple_sender + m.syscalls_per_tuple_receiver);
          const auto& w = m.receiver_wait;
          const double idle = std::chrono::duration<double>(w.state_time[0] + w.state_time[1] +
                                                            w.state_time[2]).count();
          auto share = [&](std::size_t i) {
            return idle > 0 ? std::chrono::duration<double>(w.state_time[i]).count() / idle : 0.0;
          };
          spin.push_back(share(0));
          sleep.push_back(share(1));
          block.push_back(share(2));
          const double run_s = m.duration_s + m.config.warmup_s;
          rx_switches.push_back(run_s > 0 ? static_cast<double>(w.switches) / run_s : 0.0);
          tx_switches.push_back(run_s > 0 ? static_cast<double>(m.sender_wait.switches) / run_s
                                          : 0.0);
          // The wait counters cover the whole run, warm-up included, as tuples_sent does.
          const auto woken = w.blocks + w.sleeps + m.sender_wait.blocks + m.sender_wait.sleeps;
          wakeups.push_back(m.tuples_sent > 0
                                ? static_cast<double>(woken) / static_cast<double>(m.tuples_sent)
                                : 0.0);
        }
        if (row.repeats == 0) continue;
        row.tuples_per_s = spread_of(rate);
        row.events_per_s = spread_of(events);
        row.cpu_us_per_event = spread_of(per_event).median;
        row.events_per_core = spread_of(per_core).median;
        row.cpu_us_per_tuple = spread_of(cpu);
        row.cores = spread_of(cores);
        row.p99_us = spread_of(p99);
        row.sender_cpu_us_per_tuple = spread_of(sender).median;
        row.receiver_cpu_us_per_tuple = spread_of(receiver).median;
        row.p50_us = spread_of(p50).median;
        row.p999_us = spread_of(p999).median;
        row.syscalls_per_tuple = spread_of(calls).median;
        row.receiver_spin_share = spread_of(spin).median;
        row.receiver_sleep_share = spread_of(sleep).median;
        row.receiver_block_share = spread_of(block).median;
        row.receiver_switches_per_s = spread_of(rx_switches).median;
        row.sender_switches_per_s = spread_of(tx_switches).median;
        row.wakeups_per_tuple = spread_of(wakeups).median;
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

namespace {

// A CSV cell: quoted when it holds a comma, a quote or a semicolon (provider names do).
std::string cell(const std::string& text) {
  if (text.find_first_of(",\";") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string floor_cell(const BenchMeta& meta, const BenchRow& row) {
  const auto ratio = wake_floor_ratio(meta, row);
  return ratio ? csv_number(*ratio) : std::string();
}

std::string metadata(const BenchMeta& meta, const char* prefix) {
  std::ostringstream out;
  out << prefix << "boreal bench: host=" << meta.host << " cpus=" << meta.cpus
      << " kernel=" << meta.kernel << " cpu=\"" << meta.cpu_model << "\" commit=" << meta.commit
      << " date=" << meta.date << '\n'
      << prefix << "command: " << meta.command << '\n';
  if (meta.wake_cost_us) {
    out << prefix << "one wake-up: " << csv_number(*meta.wake_cost_us)
        << " machine CPU-us (calibration)\n";
  }
  if (meta.iperf_bytes_per_s) {
    out << prefix << "iperf3 loopback: " << csv_number(*meta.iperf_bytes_per_s / 1e6)
        << " MB/s with " << csv_number(meta.iperf_cores.value_or(0)) << " cores\n";
  }
  return out.str();
}

}  // namespace

std::string to_csv(const BenchMeta& meta, const std::vector<BenchRow>& rows) {
  std::ostringstream out;
  out << metadata(meta, "# ");
  out << "medium,provider,wait,tuple_bytes,batch_bytes,rate_label,offered_rate,max_rate,repeats,"
         "ok_repeats,tuples_per_s,tuples_per_s_min,tuples_per_s_max,cpu_us_per_tuple,"
         "cpu_us_per_tuple_min,cpu_us_per_tuple_max,sender_cpu_us_per_tuple,"
         "receiver_cpu_us_per_tuple,cores,cores_min,cores_max,p50_us,p99_us,p99_us_min,"
         "p99_us_max,p999_us,latency_budget_us,syscalls_per_tuple,receiver_spin_share,"
         "receiver_sleep_share,receiver_block_share,receiver_switches_per_s,"
         "sender_switches_per_s,events_per_s,cpu_us_per_event,events_per_core,streams,"
         "wakeups_per_tuple,wake_floor_ratio\n";
  for (const auto& r : rows) {
    const bool idle = r.rate.kind == RatePoint::Kind::idle;
    const bool measured = r.ok_repeats > 0;
    // Per-tuple and latency figures mean nothing with no tuples: empty cells.
    auto per_tuple = [&](double value) {
      return measured && !idle ? csv_number(value) : std::string();
    };
    auto any = [&](double value) { return measured ? csv_number(value) : std::string(); };
    out << cell(r.group.medium) << ',' << cell(r.provider) << ',' << r.wait << ','
        << r.group.tuple_bytes << ',' << r.group.batch_bytes << ',' << r.rate.label << ','
        << (r.offered_rate ? csv_number(*r.offered_rate) : std::string()) << ','
        << csv_number(r.max_rate) << ',' << r.repeats << ',' << r.ok_repeats << ','
        << any(r.tuples_per_s.median) << ',' << any(r.tuples_per_s.min) << ','
        << any(r.tuples_per_s.max) << ',' << per_tuple(r.cpu_us_per_tuple.median) << ','
        << per_tuple(r.cpu_us_per_tuple.min) << ',' << per_tuple(r.cpu_us_per_tuple.max) << ','
        << per_tuple(r.sender_cpu_us_per_tuple) << ',' << per_tuple(r.receiver_cpu_us_per_tuple)
        << ',' << any(r.cores.median) << ',' << any(r.cores.min) << ',' << any(r.cores.max) << ','
        << per_tuple(r.p50_us) << ',' << per_tuple(r.p99_us.median) << ','
        << per_tuple(r.p99_us.min) << ',' << per_tuple(r.p99_us.max) << ',' << per_tuple(r.p999_us)
        << ',' << r.latency_budget_us << ',' << per_tuple(r.syscalls_per_tuple) << ','
        << any(r.receiver_spin_share) << ',' << any(r.receiver_sleep_share) << ','
        << any(r.receiver_block_share) << ',' << any(r.receiver_switches_per_s) << ','
        << any(r.sender_switches_per_s) << ',' << per_tuple(r.events_per_s.median) << ','
        << per_tuple(r.cpu_us_per_event) << ',' << per_tuple(r.events_per_core) << ','
        << r.group.streams << ',' << per_tuple(r.wakeups_per_tuple) << ','
        << (idle ? std::string() : floor_cell(meta, r)) << '\n';
  }
  return out.str();
}

namespace {

const BenchRow* find_row(const std::vector<BenchRow>& rows, const BenchGroup& g,
                         const std::string& wait, const std::string& label) {
  for (const auto& r : rows) {
    if (r.group == g && r.wait == wait && r.rate.label == label) {
      return &r;
    }
  }
  return nullptr;
}

std::string fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// A per-tuple figure with about three significant digits.
std::string figure(double value) {
  return fixed(value, value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3);
}

bool is_fixed_mode(const std::string& wait) { return wait != "adaptive"; }

}  // namespace

std::string summary_table(const BenchMeta& meta, const BenchGrid& grid,
                          const std::vector<BenchRow>& rows) {
  std::ostringstream out;
  out << metadata(meta, "");
  const int cell_width = 9;
  constexpr int kLabelWidth = 16;
  auto header = [&](const char* title) {
    out << "  " << std::left << std::setw(kLabelWidth) << title << std::right;
    for (const auto& rate : grid.rates) out << std::setw(cell_width) << rate.label;
    out << '\n';
  };
  for (const auto& g : groups(grid)) {
    const BenchRow* any = nullptr;
    for (const auto& r : rows) {
      if (r.group == g) {
        any = &r;
        break;
      }
    }
    if (any == nullptr) continue;
    out << '\n'
        << g.medium << (any->provider.empty() ? "" : " (" + any->provider + ")") << ", "
        << (grid.network ? std::string("the file's tuples")
                         : std::to_string(g.tuple_bytes) + "-byte tuples")
        << ", " << g.batch_bytes << "-byte frames"
        << (g.streams > 1 ? ", " + std::to_string(g.streams) + " streams into one node" : "")
        << "; "
        << (any->max_rate > 0 ? "maximum " + fixed(any->max_rate / 1e6, 2) +
                                    (grid.network ? " M events/s" : " M tuples/s")
                              : std::string("maximum not measured"))
        << "; median of " << grid.repeats << '\n';
    // --network: per source event, and a second table of events/s per core of the machine.
    auto table = [&](const char* title, auto value) {
      header(title);
      for (const auto& wait : grid.waits) {
        out << "  " << std::left << std::setw(kLabelWidth) << wait << std::right;
        for (const auto& rate : grid.rates) {
          const BenchRow* r = find_row(rows, g, wait, rate.label);
          std::string text = "-";
          if (r != nullptr && r->ok_repeats > 0) {
            text = rate.kind == RatePoint::Kind::idle ? fixed(r->cores.median, 2) + "c" : value(*r);
          } else if (r != nullptr) {
            text = "failed";
          }
          out << std::setw(cell_width) << text;
        }
        out << '\n';
      }
    };
    if (grid.network) {
      table("CPU-us/event", [](const BenchRow& r) { return figure(r.cpu_us_per_event); });
      table("M events/s/core", [](const BenchRow& r) { return fixed(r.events_per_core / 1e6, 2); });
    } else {
      table("CPU-us/tuple", [](const BenchRow& r) { return figure(r.cpu_us_per_tuple.median); });
      if (meta.wake_cost_us) {
        table("x wake floor", [&](const BenchRow& r) {
          const auto ratio =
              r.rate.kind == RatePoint::Kind::max ? std::nullopt : wake_floor_ratio(meta, r);
          return ratio ? fixed(*ratio, 2) : std::string("-");
        });
      }
    }
    // The best fixed mode at each rate, and adaptive against it (the goal is ≤ 1.1); then the
    // same among the fixed modes whose p99 met the budget ("at the latency I need"), and
    // whether adaptive's did.
    const bool has_adaptive =
        std::find(grid.waits.begin(), grid.waits.end(), "adaptive") != grid.waits.end();
    auto in_budget = [&](const BenchRow& r) {
      return r.rate.kind == RatePoint::Kind::idle ||
             r.p99_us.median <= static_cast<double>(grid.latency_budget_us);
    };
    auto value_of = [](const BenchRow& r) {
      return r.rate.kind == RatePoint::Kind::idle ? r.cores.median : r.cpu_us_per_tuple.median;
    };
    auto comparison = [&](const char* best_title, const char* ratio_title, bool budget_only) {
      std::string best_line, ratio_line;
      for (const auto& rate : grid.rates) {
        const BenchRow* best = nullptr;
        for (const auto& wait : grid.waits) {
          const BenchRow* r = find_row(rows, g, wait, rate.label);
          if (r == nullptr || r->ok_repeats == 0 || !is_fixed_mode(wait)) continue;
          if (budget_only && !in_budget(*r)) continue;
          if (best == nullptr || value_of(*r) < value_of(*best)) best = r;
        }
        const BenchRow* adaptive = find_row(rows, g, "adaptive", rate.label);
        std::string ratio = "-";
        if (best != nullptr && adaptive != nullptr && adaptive->ok_repeats > 0 &&
            value_of(*best) > 0) {
          ratio = fixed(value_of(*adaptive) / value_of(*best), 2);
        }
        std::ostringstream b, q;
        b << std::setw(cell_width) << (best != nullptr ? best->wait : budget_only ? "none" : "-");
        q << std::setw(cell_width) << ratio;
        best_line += b.str();
        ratio_line += q.str();
      }
      out << "  " << std::left << std::setw(kLabelWidth) << best_title << std::right << best_line
          << '\n';
      if (has_adaptive) {
        out << "  " << std::left << std::setw(kLabelWidth) << ratio_title << std::right
            << ratio_line << '\n';
      }
    };
    comparison("best fixed", "adaptive/best", false);
    comparison("best in budget", "adaptive/that", true);
    if (has_adaptive) {
      out << "  " << std::left << std::setw(kLabelWidth) << "adaptive p99" << std::right;
      for (const auto& rate : grid.rates) {
        const BenchRow* r = find_row(rows, g, "adaptive", rate.label);
        const bool shown = r != nullptr && r->ok_repeats > 0 && rate.kind != RatePoint::Kind::idle;
        out << std::setw(cell_width) << (!shown ? "-" : in_budget(*r) ? "in" : "over");
      }
      out << '\n';
    }
    header("p99 us");
    for (const auto& wait : grid.waits) {
      out << "  " << std::left << std::setw(kLabelWidth) << wait << std::right;
      for (const auto& rate : grid.rates) {
        const BenchRow* r = find_row(rows, g, wait, rate.label);
        const bool shown = r != nullptr && r->ok_repeats > 0 && rate.kind != RatePoint::Kind::idle;
        out << std::setw(cell_width) << (shown ? fixed(r->p99_us.median, 0) : std::string("-"));
      }
      out << '\n';
    }
    if (meta.iperf_bytes_per_s && g.medium == "tcp") {
      double best_bytes = 0;
      for (const auto& wait : grid.waits) {
        if (const BenchRow* r = find_row(rows, g, wait, "max"); r != nullptr && r->ok_repeats > 0) {
          best_bytes = std::max(best_bytes, r->tuples_per_s.median * g.tuple_bytes);
        }
      }
      if (best_bytes > 0) {
        out << "  at max: " << fixed(best_bytes / 1e6, 0) << " MB/s of tuples = "
            << fixed(best_bytes / *meta.iperf_bytes_per_s, 2) << "x iperf3's "
            << fixed(*meta.iperf_bytes_per_s / 1e6, 0) << " MB/s over loopback in this sweep\n";
      }
    }
  }
  out << "\nidle: cores the machine used with the link open and no tuples. CPU = wall x CPUs - "
         "idle over the receiver's window; latency from each tuple's scheduled send time.\n"
         "best in budget: the cheapest fixed mode whose median p99 was within the latency "
         "budget (none: no fixed mode was); adaptive/that: adaptive's CPU per tuple against it; "
         "adaptive p99: whether adaptive's median p99 was within the budget.\n";
  if (meta.wake_cost_us) {
    out << "x wake floor: CPU per tuple over (blocking waits and sleeps per tuple, both nodes) x "
           "the calibrated cost of one wake-up; 1.00 would be nothing but wake-ups.\n";
  }
  return out.str();
}

}  // namespace boreal::runtime
