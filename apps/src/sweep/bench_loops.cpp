#include "sweep/bench_loops.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "loopstudy/loop_study.hpp"

namespace boreal::runtime {

std::vector<std::string> loop_strategy_names() {
  std::vector<std::string> names;
  for (const auto& s : loopstudy::strategies()) names.push_back(s.name);
  return names;
}

std::vector<std::string> check(const LoopPlan& plan) {
  std::vector<std::string> problems;
  const auto names = loop_strategy_names();
  std::string valid;
  for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
  for (const auto& s : plan.strategies) {
    if (std::find(names.begin(), names.end(), s) == names.end()) {
      problems.push_back("--loops: unknown event-loop strategy '" + s + "' (valid: " + valid +
                         ", or none)");
    }
  }
  for (const auto& r : plan.rates) {
    if (r.kind == RatePoint::Kind::idle || r.kind == RatePoint::Kind::fraction) {
      problems.push_back("--loop-rates: '" + r.label +
                         "': the event-loop study takes tuples/s or max, not idle or percentages");
    }
  }
  if (!plan.strategies.empty() && plan.rates.empty()) {
    problems.emplace_back("--loop-rates: give at least one rate");
  }
  return problems;
}

std::size_t loop_runs(const LoopPlan& plan) {
  return plan.strategies.size() * plan.rates.size() * static_cast<std::size_t>(plan.repeats);
}

std::vector<LoopRow> run_loops(const LoopPlan& plan, std::ostream* progress,
                               std::ostream* jsonl, std::size_t done, std::size_t total) {
  std::vector<LoopRow> rows;
  for (const auto& info : loopstudy::strategies()) {
    if (std::find(plan.strategies.begin(), plan.strategies.end(), info.name) ==
        plan.strategies.end()) {
      continue;
    }
    for (const auto& rate : plan.rates) {
      LoopRow row;
      row.strategy = info.name;
      row.description = info.description;
      row.rate_label = rate.label;
      row.offered_rate = rate.offered(0).value_or(0.0);
      rows.push_back(std::move(row));
    }
  }
  // Repeats outermost, as in the main grid.
  std::vector<std::vector<loopstudy::StudyResult>> results(rows.size());
  for (int repeat = 0; repeat < plan.repeats; ++repeat) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      LoopRow& row = rows[i];
      loopstudy::StudyConfig config;
      config.strategy = row.strategy;
      config.rate = row.offered_rate;
      config.tuple_bytes = plan.tuple_bytes;
      config.batch_bytes = plan.batch_bytes;
      config.flush = plan.flush;
      config.duration = std::chrono::duration_cast<std::chrono::milliseconds>(plan.duration);
      config.links = plan.links;
      ++row.repeats;
      auto result = loopstudy::run_study(config);
      ++done;
      if (progress != nullptr) {
        char line[256];
        if (result) {
          std::snprintf(line, sizeof line,
                        "[%3zu/%zu] event loop %s %s #%d: %.0f tuples/s, %.3g CPU-us/tuple, %.3g "
                        "syscalls/tuple\n",
                        done, total, row.strategy.c_str(), row.rate_label.c_str(), repeat + 1,
                        result.value().tuples_per_s, result.value().machine_cpu_us_per_tuple,
                        result.value().syscalls_per_tuple);
        } else {
          std::snprintf(line, sizeof line, "[%3zu/%zu] event loop %s %s #%d: FAILED: %s\n", done,
                        total, row.strategy.c_str(), row.rate_label.c_str(), repeat + 1,
                        result.error().message.c_str());
        }
        *progress << line << std::flush;
      }
      if (jsonl != nullptr) {
        nlohmann::json line = {{"kind", "event_loop"}, {"strategy", row.strategy},
                               {"rate_label", row.rate_label}, {"repeat", repeat + 1},
                               {"ok", static_cast<bool>(result)}};
        if (result) {
          const auto& r = result.value();
          line.update({{"offered_rate", r.offered_rate}, {"tuples", r.tuples},
                       {"tuples_per_s", r.tuples_per_s}, {"wall_s", r.wall_s},
                       {"machine_cpu_us_per_tuple", r.machine_cpu_us_per_tuple},
                       {"process_cpu_us_per_tuple", r.process_cpu_us_per_tuple},
                       {"syscalls_per_tuple", r.syscalls_per_tuple}, {"syscalls", r.syscalls},
                       {"p50_us", r.p50_us}, {"p99_us", r.p99_us}});
        } else {
          line["error"] = result.error().message;
        }
        *jsonl << line.dump() << std::endl;
      }
      if (!result) {
        row.errors.push_back(result.error().message);
        continue;
      }
      ++row.ok_repeats;
      results[i].push_back(std::move(result).value());
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    LoopRow& row = rows[i];
    const auto& runs = results[i];
    auto median_of = [&](auto field) {
      std::vector<double> values;
      for (const auto& r : runs) values.push_back(field(r));
      return spread_of(values);
    };
    using R = loopstudy::StudyResult;
    row.tuples_per_s = median_of([](const R& r) { return r.tuples_per_s; });
    row.cpu_us_per_tuple = median_of([](const R& r) { return r.machine_cpu_us_per_tuple; });
    row.process_cpu_us_per_tuple =
        median_of([](const R& r) { return r.process_cpu_us_per_tuple; }).median;
    row.syscalls_per_tuple = median_of([](const R& r) { return r.syscalls_per_tuple; }).median;
    row.p50_us = median_of([](const R& r) { return r.p50_us; }).median;
    row.p99_us = median_of([](const R& r) { return r.p99_us; }).median;
    std::set<std::string> kinds;
    for (const auto& r : runs) {
      for (const auto& [kind, count] : r.syscalls) kinds.insert(kind);
    }
    for (const auto& kind : kinds) {
      row.syscalls_per_tuple_by_kind[kind] = median_of([&](const R& r) {
        const auto it = r.syscalls.find(kind);
        const double count = it == r.syscalls.end() ? 0.0 : static_cast<double>(it->second);
        return r.tuples > 0 ? count / static_cast<double>(r.tuples) : 0.0;
      }).median;
    }
  }
  return rows;
}

namespace {

// The three most frequent system calls per tuple, e.g. "send 0.10, epoll_wait 0.08, recv 0.05".
std::string top_calls(const LoopRow& row) {
  std::vector<std::pair<double, std::string>> calls;
  for (const auto& [kind, per_tuple] : row.syscalls_per_tuple_by_kind)
    calls.emplace_back(per_tuple, kind);
  std::sort(calls.rbegin(), calls.rend());
  std::string text;
  for (std::size_t i = 0; i < calls.size() && i < 3; ++i) {
    char part[64];
    std::snprintf(part, sizeof part, "%s%s %.3g", i == 0 ? "" : ", ", calls[i].second.c_str(),
                  calls[i].first);
    text += part;
  }
  return text;
}

}  // namespace

std::string loops_csv(const BenchMeta& meta, const std::vector<LoopRow>& rows) {
  std::ostringstream out;
  out << "# boreal bench event loops: host=" << meta.host << " cpus=" << meta.cpus
      << " kernel=" << meta.kernel << " commit=" << meta.commit << " date=" << meta.date << '\n'
      << "# command: " << meta.command << '\n'
      << "strategy,rate_label,offered_rate,repeats,ok_repeats,tuples_per_s,tuples_per_s_min,"
         "tuples_per_s_max,cpu_us_per_tuple,cpu_us_per_tuple_min,cpu_us_per_tuple_max,"
         "process_cpu_us_per_tuple,syscalls_per_tuple,p50_us,p99_us,top_syscalls\n";
  for (const auto& r : rows) {
    const bool ok = r.ok_repeats > 0;
    auto cell = [&](double v) { return ok ? csv_number(v) : std::string(); };
    out << r.strategy << ',' << r.rate_label << ',' << csv_number(r.offered_rate) << ','
        << r.repeats << ',' << r.ok_repeats << ',' << cell(r.tuples_per_s.median) << ','
        << cell(r.tuples_per_s.min) << ',' << cell(r.tuples_per_s.max) << ','
        << cell(r.cpu_us_per_tuple.median) << ',' << cell(r.cpu_us_per_tuple.min) << ','
        << cell(r.cpu_us_per_tuple.max) << ',' << cell(r.process_cpu_us_per_tuple) << ','
        << cell(r.syscalls_per_tuple) << ',' << cell(r.p50_us) << ',' << cell(r.p99_us) << ",\""
        << top_calls(r) << "\"\n";
  }
  return out.str();
}

std::string loops_table(const std::vector<LoopRow>& rows) {
  std::ostringstream out;
  out << "\nEvent-loop strategies (raw-syscall TCP study harness; medians)\n";
  char line[320];
  std::snprintf(line, sizeof line, "  %-16s %7s %12s %10s %9s %8s  %s\n", "strategy", "rate",
                "tuples/s", "CPU-us/t", "calls/t", "p99 us", "most frequent calls per tuple");
  out << line;
  for (const auto& r : rows) {
    if (r.ok_repeats == 0) {
      std::snprintf(line, sizeof line, "  %-16s %7s  failed: %s\n", r.strategy.c_str(),
                    r.rate_label.c_str(), r.errors.empty() ? "" : r.errors.front().c_str());
    } else {
      std::snprintf(line, sizeof line, "  %-16s %7s %12.0f %10.3f %9.3f %8.0f  %s\n",
                    r.strategy.c_str(), r.rate_label.c_str(), r.tuples_per_s.median,
                    r.cpu_us_per_tuple.median, r.syscalls_per_tuple, r.p99_us,
                    top_calls(r).c_str());
    }
    out << line;
  }
  return out.str();
}

}  // namespace boreal::runtime
