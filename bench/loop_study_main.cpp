// boreal-loop-study: runs one event-loop study (apps/src/runtime/loopstudy/) and prints its
// result as one JSON line, for sweeps from a shell loop:
//   boreal-loop-study --strategy epoll-et --rate 100000 --duration 2000 --links 4 --json
// Without --json it prints a short human-readable line. --list prints the strategies.
#include <cstdio>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "loopstudy/loop_study.hpp"

namespace ls = boreal::runtime::loopstudy;

int main(int argc, char** argv) {
  CLI::App app{"Runs one event-loop study over loopback TCP and prints its result."};
  ls::StudyConfig config;
  long duration_ms = config.duration.count();
  long flush_us = config.flush.count();
  bool json = false;
  bool list = false;
  app.add_option("--strategy", config.strategy, "strategy name (--list shows them)");
  app.add_option("--rate", config.rate, "offered tuples/s over all links; 0 = as fast as possible");
  app.add_option("--duration", duration_ms, "milliseconds");
  app.add_option("--links", config.links, "concurrent TCP connections");
  app.add_option("--reconnect-every", config.reconnect_every, "frames per connection; 0 = never");
  app.add_option("--tuple-bytes", config.tuple_bytes, "bytes per tuple (>= 16)");
  app.add_option("--batch-bytes", config.batch_bytes, "frame payload limit");
  app.add_option("--flush-us", flush_us, "seal a frame when its oldest tuple is this old");
  app.add_flag("--json", json, "one JSON line");
  app.add_flag("--list", list, "print the strategies and exit");
  CLI11_PARSE(app, argc, argv);

  if (list) {
    for (const auto& s : ls::strategies()) std::cout << s.name << ": " << s.description << "\n";
    return 0;
  }
  config.duration = std::chrono::milliseconds(duration_ms);
  config.flush = std::chrono::microseconds(flush_us);
  auto run = ls::run_study(config);
  if (!run) {
    std::cerr << "boreal-loop-study: " << run.error().describe() << "\n";
    return 1;
  }
  const auto& r = run.value();
  if (json) {
    nlohmann::json out{{"strategy", r.strategy},
                       {"offered_rate", r.offered_rate},
                       {"links", config.links},
                       {"reconnect_every", config.reconnect_every},
                       {"tuples", r.tuples},
                       {"frames", r.frames},
                       {"wall_s", r.wall_s},
                       {"tuples_per_s", r.tuples_per_s},
                       {"machine_cpu_us_per_tuple", r.machine_cpu_us_per_tuple},
                       {"process_cpu_us_per_tuple", r.process_cpu_us_per_tuple},
                       {"syscalls_per_tuple", r.syscalls_per_tuple},
                       {"p50_us", r.p50_us},
                       {"p99_us", r.p99_us},
                       {"allocations_after_warmup", r.allocations_after_warmup},
                       {"epoll_ctl_saved", r.epoll_ctl_saved},
                       {"syscalls", r.syscalls},
                       {"sender_syscalls", r.sender_syscalls},
                       {"receiver_syscalls", r.receiver_syscalls}};
    std::cout << out.dump() << std::endl;
  } else {
    std::printf("%s: %.0f tuples/s, machine %.3f CPU-us/tuple, process %.3f, %.3f syscalls/tuple, "
                "p50 %.1f us, p99 %.1f us\n",
                r.strategy.c_str(), r.tuples_per_s, r.machine_cpu_us_per_tuple,
                r.process_cpu_us_per_tuple, r.syscalls_per_tuple, r.p50_us, r.p99_us);
  }
  return 0;
}
