#include "bench_command.hpp"

#include <algorithm>
#include <iostream>

namespace boreal::cli {

using namespace runtime;

void BenchFlags::add_to(CLI::App& app) {
  app.add_flag("--quick", quick,
               "The one-minute sweep: tcp; busy, block, sleep, adaptive; idle, 1%, 10%, max; 1 "
               "repeat of 1 s; "
               "the event loops at 100k");
  app.add_option("--media", media, "Media (default tcp,fabric-msg,fabric-rma)")
      ->delimiter(',')
      ->group("Grid");
  app.add_option("--provider", provider,
                 "libfabric provider of the fabric media (default tcp;ofi_rxm)")
      ->group("Grid");
  app.add_option("--waits", waits, "Wait modes (default busy,block,sleep,backoff,adaptive)")
      ->delimiter(',')
      ->group("Grid");
  app.add_option("--rates", rates,
                 "Offered rates: idle, max, N% of the measured maximum, or tuples/s such as 100k "
                 "(default idle,1%,10%,50%,90%,max)")
      ->delimiter(',')->group("Grid");
  app.add_option("--tuple-bytes", tuple_bytes, "Tuple sizes (default 64)")
      ->delimiter(',')
      ->group("Grid");
  app.add_option("--batch-bytes", batch_bytes, "Largest frame payloads (default 32768)")
      ->delimiter(',')
      ->group("Grid");
  app.add_option(
         "--streams", streams,
         "Streams into the receiving node, e.g. 1,16,64,256: the --file's source -> sink pair "
         "repeated (written as OUT/streams-N.yaml), the offered rate shared among them; each "
         "count has its own maximum (default 1)")
      ->delimiter(',')
      ->group("Grid");
  app.add_option("--repeats", repeats, "Runs per point; the table shows medians (default 3)")
      ->group("Grid");
  app.add_option("--duration", duration_s, "Measured seconds per run (default 3)")->group("Grid");
  app.add_option("--warmup", warmup_s,
                 "Unmeasured seconds before each run's measurement (default 1)")
      ->group("Grid");
  app.add_option("--latency-budget", latency_budget_us,
                 "Latency budget of the wait modes, in microseconds (default 200)")
      ->group("Grid");
  app.add_option("--flush-us", flush_us,
                 "Hold partly filled frames this many microseconds in every run (default: the "
                 "budget less the receiver's reported pickup, docs/design.md \"Flush\")")
      ->group("Grid");
  app.add_option("--connection", connection,
                 "tcp links' connections in every run: per-link (default) or per-thread-pair "
                 "(one for the links between two threads, docs/design.md)")
      ->group("Grid");
  app.add_option(
         "--loops", loops,
         "Event-loop strategies of the TCP study to run after the grid, or 'none' (default "
         "all: epoll-rearm, epoll-lazy, epoll-et, uring-batched, recycled, thread-per-link, sigio)")
      ->delimiter(',')
      ->group("Event-loop study");
  app.add_option("--loop-rates", loop_rates,
                 "Their offered rates: tuples/s or max (default 10k,100k,max)")
      ->delimiter(',')
      ->group("Event-loop study");
  auto* file_option = app.add_option("--file", file, "Two-node network file each run launches")
                          ->capture_default_str();
  auto* network_option = app.add_option(
      "--network", network,
      "Any network file (e.g. a NEXMark query): run as written, measured per source event "
      "(events/s, per core, CPU-us each); rates are events/s; no event-loop study by default");
  network_option->excludes(file_option);
  app.add_option("--out", out,
                 "Directory for bench.jsonl, bench.csv, summary.txt and the PNG plots")
      ->capture_default_str();
  app.add_option("--time-limit", time_limit_min,
                 "Refuse a grid estimated longer than this many minutes")
      ->capture_default_str();
  app.add_flag("--no-iperf", no_iperf, "Skip the iperf3 loopback reference");
  app.add_option("--contaminated", contaminated,
                 "A run beside more than 0.05 cores of other processes' load: 'repeat' it once "
                 "(its first line stays in bench.jsonl, marked discarded) or 'keep' it")
      ->check(CLI::IsMember({"repeat", "keep"}))
      ->capture_default_str();
  app.add_flag("--no-plots", no_plots, "Skip the PNG plots");
  app.add_option("--plot-script", plot_script, "The plotting script")->capture_default_str();
  app.add_option("--soak", soak,
                 "Instead of the sweep: measure the sustained maximum of --file (one run at max of "
                 "--warmup + --duration, default 1 + 60 s, taken at its slowest 10 % of seconds), "
                 "then run it at 80% of that for DURATION (600 = seconds, 30s, 10m, "
                 "1h), scraping every node's live metrics once a second (--rates: one other load, "
                 "N% or tuples/s). Writes OUT/soak.csv (per "
                 "second and node: RSS, send-buffer occupancy, tuples/s, loss, p99), OUT/soak.txt "
                 "and OUT/soak.png; prints a verdict of flatness (exit 0 flat, 1 not). One medium "
                 "(default tcp) and one wait mode (default sleep)")
      ->type_name("DURATION")
      ->group("Soak");
}

BenchGrid BenchFlags::grid(std::vector<std::string>& problems) const {
  BenchGrid grid = quick ? quick_grid() : full_grid();
  grid.file = file;
  if (!network.empty()) {
    grid.file = network;
    grid.network = true;
    if (!tuple_bytes.empty()) {
      problems.emplace_back("--tuple-bytes: a --network file's sources make their own tuples");
    }
    grid.tuple_bytes = {0};
  }
  grid.provider = provider;
  if (!media.empty()) grid.media = media;
  if (!waits.empty()) grid.waits = waits;
  if (!rates.empty()) {
    grid.rates.clear();
    for (const auto& text : rates) {
      if (auto point = parse_rate_point(text)) {
        grid.rates.push_back(point.value());
      } else {
        problems.push_back(point.error().message);
      }
    }
  }
  if (!tuple_bytes.empty() && !grid.network) grid.tuple_bytes = tuple_bytes;
  if (!batch_bytes.empty()) grid.batch_bytes = batch_bytes;
  if (!streams.empty()) grid.streams = streams;
  if (repeats) grid.repeats = *repeats;
  if (duration_s) grid.duration = std::chrono::duration<double>(*duration_s);
  if (warmup_s) grid.warmup = std::chrono::duration<double>(*warmup_s);
  if (latency_budget_us) grid.latency_budget_us = *latency_budget_us;
  if (flush_us) grid.flush_us = *flush_us;
  grid.connection = connection;
  return grid;
}

LoopPlan BenchFlags::loop_plan(const BenchGrid& grid, std::vector<std::string>& problems) const {
  LoopPlan plan;
  plan.strategies = loop_strategy_names();
  if (grid.network) plan.strategies.clear();  // the study is of the two-node transport
  if (!loops.empty())
    plan.strategies =
        loops == std::vector<std::string>{"none"} ? std::vector<std::string>{} : loops;
  std::vector<std::string> rate_texts = quick ? std::vector<std::string>{"100k"}
                                              : std::vector<std::string>{"10k", "100k", "max"};
  if (!loop_rates.empty()) rate_texts = loop_rates;
  for (const auto& text : rate_texts) {
    if (auto point = parse_rate_point(text)) {
      plan.rates.push_back(point.value());
    } else {
      problems.push_back("--loop-rates: " +
                         point.error().message.substr(std::string("--rates: ").size()));
    }
  }
  plan.repeats = grid.repeats;
  plan.duration = quick ? std::chrono::duration<double>(1.0) : std::chrono::duration<double>(2.0);
  if (duration_s) plan.duration = std::chrono::duration<double>(std::min(*duration_s, 2.0));
  plan.tuple_bytes = grid.tuple_bytes.empty() ? 64 : grid.tuple_bytes.front();
  plan.batch_bytes = grid.batch_bytes.empty() ? 32768 : grid.batch_bytes.front();
  return plan;
}

constexpr double kSoakMaxSeconds = 60.0;

SoakOptions soak_options(const BenchFlags& flags, std::vector<std::string>& problems) {
  SoakOptions options;
  if (auto duration = parse_soak_duration(flags.soak)) {
    options.duration = duration.value();
  } else {
    problems.push_back(duration.error().message);
  }
  // The sweep's grid flags, where they mean something for one network at one load.
  BenchGrid grid = full_grid();
  grid.media = {"tcp"};
  grid.waits = {"sleep"};  // the demo network's own
  grid.rates.clear();
  grid.repeats = 1;
  BenchFlags sweep = flags;
  if (flags.rates.size() > 1) {
    problems.emplace_back("--rates: a soak runs at one rate, got " +
                          std::to_string(flags.rates.size()));
  } else if (flags.rates.size() == 1) {
    if (auto point = parse_rate_point(flags.rates.front()); !point) {
      problems.push_back(point.error().message);
    } else if (point.value().kind == RatePoint::Kind::idle ||
               point.value().kind == RatePoint::Kind::max) {
      problems.push_back("--rates: a soak runs below the maximum: give N% of it or tuples/s, not " +
                         point.value().label);
    } else {
      options.rate = point.value();
    }
  }
  if (flags.repeats) problems.emplace_back("--repeats: a soak runs once");
  sweep.rates.clear();
  sweep.repeats.reset();
  sweep.quick = false;
  BenchGrid flagged = sweep.grid(problems);
  if (!flags.media.empty()) grid.media = flagged.media;
  if (!flags.waits.empty()) grid.waits = flagged.waits;
  grid.file = flagged.file;
  grid.network = flagged.network;
  grid.provider = flagged.provider;
  if (!flags.tuple_bytes.empty() || flagged.network) grid.tuple_bytes = flagged.tuple_bytes;
  if (!flags.batch_bytes.empty()) grid.batch_bytes = flagged.batch_bytes;
  if (!flags.streams.empty()) problems.emplace_back("--streams: a soak runs the --file as written");
  // The run at max lasts a minute unless told: long enough to see a shared machine's slow
  // stretches (README "Soak"), which a few seconds at max do not.
  grid.duration =
      flags.duration_s ? flagged.duration : std::chrono::duration<double>(kSoakMaxSeconds);
  grid.warmup = flagged.warmup;
  grid.latency_budget_us = flagged.latency_budget_us;
  grid.flush_us = flagged.flush_us;
  grid.connection = flagged.connection;
  for (const auto& [flag, count] :
       {std::pair<const char*, std::size_t>{"--media", grid.media.size()},
        {"--waits", grid.waits.size()},
        {"--tuple-bytes", grid.tuple_bytes.size()},
        {"--batch-bytes", grid.batch_bytes.size()}}) {
    if (count != 1)
      problems.push_back(std::string(flag) + ": a soak takes one value, got " +
                         std::to_string(count));
  }
  grid.rates = {parse_rate_point("max").value()};  // the calibration run's; the soak sets its own
  for (auto& p : check(grid)) problems.push_back(std::move(p));
  if (problems.empty() && options.duration > std::chrono::minutes(flags.time_limit_min)) {
    problems.push_back("--soak " + flags.soak + " is longer than --time-limit " +
                       std::to_string(flags.time_limit_min) + " (minutes); raise --time-limit");
  }
  options.bench.grid = grid;
  options.bench.out_dir = flags.out;
  options.bench.plots = !flags.no_plots;
  options.bench.plot_script = flags.plot_script;
  options.bench.iperf = false;
  return options;
}

int bench_command(const BenchFlags& flags, const std::string& command) {
  std::vector<std::string> problems;
  if (!flags.soak.empty()) {
    SoakOptions soak = soak_options(flags, problems);
    if (!problems.empty()) {
      for (const auto& p : problems) std::cerr << "bench: " << p << '\n';
      return 2;
    }
    soak.bench.command = command;
    soak.bench.progress = &std::cerr;
    return run_soak(soak, std::cout);
  }
  BenchOptions options;
  options.grid = flags.grid(problems);
  options.loops = flags.loop_plan(options.grid, problems);
  for (auto& p : check(options.grid)) problems.push_back(std::move(p));
  for (auto& p : check(options.loops)) problems.push_back(std::move(p));
  if (!problems.empty()) {
    for (const auto& p : problems) std::cerr << "bench: " << p << '\n';
    return 2;
  }
  if (flags.time_limit_min <= 0) {
    std::cerr << "bench: --time-limit: must be positive, got " << flags.time_limit_min << '\n';
    return 2;
  }
  options.out_dir = flags.out;
  options.time_limit = std::chrono::minutes(flags.time_limit_min);
  options.iperf = !flags.no_iperf;
  options.repeat_contaminated = flags.contaminated != "keep";
  options.plots = !flags.no_plots;
  options.plot_script = flags.plot_script;
  options.command = command;
  options.progress = &std::cerr;
  return run_bench(options, std::cout);
}

}  // namespace boreal::cli
