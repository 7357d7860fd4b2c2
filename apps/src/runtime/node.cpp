// run_node(): builds the node's graph (node_graph.hpp), runs it as one agent on the calling
// thread under the node's wait mode, measures over the window and reports (node_meter.hpp).
#include "runtime/node.hpp"

#include <algorithm>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>

#include <boreal/transport/agent_runner.hpp>
#include <boreal/transport/rate_estimator.hpp>

#include "runtime/media.hpp"
#include "runtime/metrics_board.hpp"
#include "runtime/metrics_server.hpp"
#include "runtime/metrics_text.hpp"
#include "runtime/node_graph.hpp"
#include "runtime/node_meter.hpp"

namespace boreal::runtime {
namespace {

using namespace std::chrono_literals;
using transport::ErrorCategory;
using transport::fail;

// The node's graph as one agent (docs/design.md, convention 1): do_work() is a duty cycle,
// update() keeps the wait mode's hints (arrival rate, free capacity, next deadline) and the
// measurement window.
class NodeAgent {
 public:
  NodeAgent(NodeGraph& graph, std::chrono::milliseconds timeout, std::chrono::nanoseconds warmup)
      : graph_(graph),
        started_at_(std::chrono::steady_clock::now()),
        give_up_at_(timeout.count() > 0 ? started_at_ + timeout : SteadyTime::max()),
        warmup_(warmup),
        idle_tick_(graph.follows_clock() ? kTick : kIdleTick) {
    // Every task tells the agent when it starts, before its first tuple: with no warm-up the
    // window opens right then, so it holds every tuple of the run.
    auto mark = [this](SteadyTime now) { mark_active(now); };
    for (auto& reader : graph_.readers) reader->on_start = mark;
    for (auto& source : graph_.sources) source->on_start = mark;
  }

  int do_work() {
    const auto now = std::chrono::steady_clock::now();
    std::int64_t tick_ns = 0;
    if (now - last_tick_ >= kTick) {
      last_tick_ = now;
      tick_ns = realtime_ns();
      if (on_tick) on_tick(now);
    }
    const int work = graph_.do_work(now, tick_ns);
    if (auto ok = graph_.maybe_checkpoint(now); !ok && checkpoint_error.empty()) {
      checkpoint_error = ok.error().message;
    }
    update(now);
    return work;
  }

  [[nodiscard]] bool done() const noexcept { return finished_; }
  [[nodiscard]] transport::Waitable& waitable() noexcept { return graph_.loop; }
  [[nodiscard]] const transport::LoadHints& hints() const noexcept { return hints_; }

  std::optional<SteadyTime> window_start;
  std::optional<SteadyTime> window_end;
  std::function<void()> on_window_start;
  std::function<void()> on_window_end;
  std::function<void(SteadyTime)> on_tick;  // every kTick
  bool timed_out = false;
  std::string checkpoint_error;  // the first checkpoint that could not be written

 private:
  // Boxes with timeouts see the clock this often; progress and rejected connections too.
  static constexpr std::chrono::milliseconds kTick{10};
  // How long an idle thread waits for its next tick when nothing on it follows the clock
  // (NodeGraph::follows_clock()). Each tick of an idle thread is a wake-up: with a 10 ms one,
  // two idle nodes used 0.013-0.018 machine cores (their own 0.008-0.012), with 100 ms
  // 0.005-0.009 (0.002-0.005) on tcp and fabric-rma (docs/bench/experiments/idle-tick/). What
  // the tick still serves there (published metrics, progress lines every second, hello and
  // reconnect timeouts of seconds) does not need it sooner; a thread with work ticks every
  // kTick.
  static constexpr std::chrono::milliseconds kIdleTick{100};

  void mark_active(SteadyTime now) {
    if (!active_since_) active_since_ = now;
    if (!window_start && warmup_.count() == 0) open_window(now);
  }

  void open_window(SteadyTime now) {
    window_start = now;
    if (on_window_start) on_window_start();
  }

  void close_window(SteadyTime now) {
    finished_ = true;
    window_end = now;
    if (on_window_end) on_window_end();
  }

  void update(SteadyTime now) {
    const bool all_done = graph_.done();
    bool any_active = false;
    double rate = 0.0;
    double capacity = std::numeric_limits<double>::infinity();
    SteadyTime deadline = SteadyTime::max();
    for (auto& reader : graph_.readers) {
      any_active = any_active || reader->active();
      rate += reader->rate_hz();
      capacity = std::min(capacity, reader->link().free_capacity());
    }
    std::uint64_t frames_sent = 0;
    for (auto& source : graph_.sources) {
      any_active = any_active || source->active();
      deadline = std::min(deadline, source->deadline());
      frames_sent += source->frames_sent();
      // A sending link sets no capacity: nothing of ours overflows while the thread sleeps,
      // and its own flush and pacing times are in the deadline.
    }
    for (LinkWriter* writer : graph_.pumped) deadline = std::min(deadline, writer->deadline());
    if (!graph_.sources.empty()) {
      sent_rate_.add(frames_sent - frames_seen_, now);
      frames_seen_ = frames_sent;
      rate += sent_rate_.rate_hz();
    }
    if (!active_since_ && any_active) active_since_ = now;
    // The window opens once the warm-up has passed, or at the end if the run was shorter.
    if (!window_start && active_since_ && (now - *active_since_ >= warmup_ || all_done)) {
      open_window(now);
    }
    if (all_done && !finished_) close_window(now);
    if (now >= give_up_at_ && !finished_) {
      timed_out = true;
      close_window(now);
    }
    hints_.arrival_rate_hz = rate;
    hints_.free_capacity = std::max(capacity, 0.0);  // +inf: no receive ring to fill
    deadline = std::min(deadline, give_up_at_);
    if (active_since_ && !window_start) deadline = std::min(deadline, *active_since_ + warmup_);
    // The tick (boxes' clocks, progress lines, refused connections) comes even when nothing
    // arrives, so an idle thread still reports: every kTick where boxes or checkpoints follow
    // the clock, else every kIdleTick.
    deadline = std::min(deadline, last_tick_ + idle_tick_);
    hints_.deadline = deadline;
  }

  NodeGraph& graph_;
  SteadyTime started_at_;
  SteadyTime give_up_at_;
  std::chrono::nanoseconds warmup_;
  std::chrono::milliseconds idle_tick_;
  std::optional<SteadyTime> active_since_;
  SteadyTime last_tick_{};
  transport::LoadHints hints_;
  transport::RateEstimator sent_rate_;
  std::uint64_t frames_seen_ = 0;
  bool finished_ = false;
};

}  // namespace

std::chrono::milliseconds time_limit(const NetworkSpec& spec, std::chrono::milliseconds slack) {
  double longest_s = 0;
  for (const auto& box : spec.boxes) {
    if (!box.source) continue;
    if (box.source->duration.count() <= 0) return std::chrono::milliseconds(0);
    longest_s = std::max(longest_s, box.source->duration.count());
  }
  if (longest_s <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<std::int64_t>(longest_s * 1000)) + slack;
}

namespace {

// One I/O thread of the node: its graph run as an agent under its own wait, with its meter.
struct ThreadRun {
  ThreadRun(NodeGraph& graph, std::chrono::milliseconds timeout, std::chrono::nanoseconds warmup,
            const NodeSpec& self, ProcessMeter& process)
      : agent(graph, timeout, warmup), wait(transport::make_wait(graph.wait)),
        meter(graph, wait, self, process) {}

  NodeAgent agent;
  transport::AnyWait wait;
  ThreadMeter meter;
  double window_s = 0;

  // Runs the agent on the calling thread until it is done or `stop` is set.
  void run(const std::atomic<bool>& stop) {
    transport::run_agent(agent, wait, stop);
    if (!agent.window_end) agent.window_end = std::chrono::steady_clock::now();  // stopped
    meter.close();
    meter.tick(std::cerr);  // a last look at refused connections
    if (agent.window_start) {
      window_s = std::chrono::duration<double>(*agent.window_end - *agent.window_start).count();
    }
  }
};

// The node's live metrics: a board every thread publishes to, and the server that renders it.
// Made before any I/O thread starts; the board outlives the server (declared first).
struct LiveMetrics {
  std::unique_ptr<MetricsBoard> board;
  std::unique_ptr<MetricsServer> server;
};

transport::Result<LiveMetrics> start_metrics(const NodeSpec& self,
                                             std::vector<std::unique_ptr<ThreadRun>>& runs,
                                             std::uint16_t port) {
  std::vector<ThreadLabels> labels;
  for (auto& run : runs) labels.push_back(run->meter.metrics_labels());
  LiveMetrics live;
  live.board = std::make_unique<MetricsBoard>(self.name, std::move(labels));
  MetricsServerOptions options;
  options.address = metrics_bind_address(self.uri.host);
  options.port = port;
  auto server = MetricsServer::start(options, [board = live.board.get()] {
    return render_metrics(board->sample());
  });
  if (!server) return std::move(server).error();
  live.server = std::move(server).value();
  for (auto& run : runs) run->meter.publish_to(*live.board);
  return live;
}

}  // namespace

transport::Result<NodeReport> run_node(const NetworkSpec& spec, const NodeOptions& options,
                                       const std::atomic<bool>& stop, std::ostream& out) {
  const NodeSpec* self = spec.find_node(options.node);
  if (self == nullptr) {
    std::string names;
    for (const auto& node : spec.nodes) names += (names.empty() ? "" : ", ") + node.name;
    return fail(ErrorCategory::config, 0,
                spec.file_name + ": no node named '" + options.node + "' (nodes: " + names + ")");
  }
  // Without an explicit timeout, a node whose sources all stop by time gives up 30 s after
  // the longest of them should have ended.
  std::chrono::milliseconds timeout = options.timeout;
  if (timeout.count() == 0) timeout = time_limit(spec, std::chrono::seconds(30));
  const auto warmup = std::chrono::duration_cast<std::chrono::nanoseconds>(spec.warmup);

  // Before anything loads libfabric's providers (media.hpp). The report lists what was set.
  std::vector<std::string> settings;
  if (const auto set = size_rxm_receive_queue(spec, *self); !set.empty()) {
    std::cerr << "node '" << self->name << "': " << set << std::endl;
    settings.push_back(set.substr(0, set.find(' ')));
  }
  if (const auto value = size_rxm_bounce_buffers(spec, *self); !value.empty()) {
    settings.push_back("FI_OFI_RXM_MSG_RX_SIZE=" + value);
  }

  // Every thread's loop first: the rings between threads join two loops.
  const std::uint32_t threads = self->threads;
  std::vector<std::unique_ptr<transport::EventLoop>> loops;
  std::vector<transport::EventLoop*> loop_of;
  for (std::uint32_t t = 0; t < threads; ++t) {
    loops.push_back(std::make_unique<transport::EventLoop>());
    loop_of.push_back(loops.back().get());
  }
  auto links = make_thread_links(loop_of, spec, *self);
  if (!links) return std::move(links).error();
  std::vector<std::unique_ptr<NodeGraph>> graphs;
  for (std::uint32_t t = 0; t < threads; ++t) {
    auto graph = build_node_graph(*loops[t], spec, *self, t, links.value());
    if (!graph) return std::move(graph).error();
    graphs.push_back(std::move(graph).value());
  }

  if (const auto& resumed = graphs[0]->resumed) {
    std::string where;
    for (const auto& [stream, frame] : resumed->inputs) {
      where += (where.empty() ? "" : ", ") + stream + " after frame " + std::to_string(frame);
    }
    std::cerr << "node '" << self->name << "': resuming from checkpoint " << self->checkpoint
              << " (" << (where.empty() ? "no inputs" : where) << ")" << std::endl;
  }

  const bool has_sinks = std::any_of(spec.boxes.begin(), spec.boxes.end(), [&](const BoxSpec& box) {
    return box.node == self->name && box.type == "sink";
  });
  ProcessMeter process(threads, has_sinks);
  std::vector<std::unique_ptr<ThreadRun>> runs;
  std::vector<const ThreadMeter*> meters;
  for (auto& graph : graphs) {
    runs.push_back(std::make_unique<ThreadRun>(*graph, timeout, warmup, *self, process));
    meters.push_back(&runs.back()->meter);
  }
  LiveMetrics metrics;
  if (options.metrics_port) {
    auto started = start_metrics(*self, runs, *options.metrics_port);
    if (!started) {
      auto error = std::move(started).error();
      error.message = "node '" + self->name + "': " + error.message;
      return error;
    }
    metrics = std::move(started).value();
    // One write, so that nodes sharing a stderr (boreal launch) do not interleave their lines.
    const std::string line =
        "node '" + self->name + "': metrics on " + metrics.server->url() + "\n";
    std::cerr.write(line.data(), static_cast<std::streamsize>(line.size())).flush();
  }
  auto last_progress = std::chrono::steady_clock::now();
  const auto node_start = last_progress;
  for (auto& run : runs) {
    ThreadRun& r = *run;
    r.agent.on_window_start = [&r] { r.meter.open(); };
    r.agent.on_window_end = [&r] { r.meter.close(); };
    r.agent.on_tick = [&r](SteadyTime) { r.meter.tick(std::cerr); };
  }
  // Thread 0 writes the progress lines, from every thread's published totals.
  runs[0]->agent.on_tick = [&](SteadyTime now) {
    runs[0]->meter.tick(std::cerr);
    if (options.progress_interval.count() > 0 && now - last_progress >= options.progress_interval) {
      last_progress = now;
      out << progress_line(*self, meters, std::chrono::duration<double>(now - node_start).count())
                 .dump()
          << std::endl;
    }
  };

  std::vector<std::thread> workers;
  for (std::uint32_t t = 1; t < threads; ++t) {
    workers.emplace_back([&, t] { runs[t]->run(stop); });
  }
  runs[0]->run(stop);
  for (auto& worker : workers) worker.join();
  // Every thread published its last figures as it stopped; the server goes with the node.
  if (metrics.server) metrics.server->stop();

  NodeReport report;
  report.node = self->name;
  report.settings = std::move(settings);
  if (metrics.server) report.metrics_port = metrics.server->port();
  report.threads = threads;
  report.wait = std::string(transport::to_string(graphs[0]->wait.mode));
  report.wait_stats = transport::stats_of(runs[0]->wait);
  process.fill(report);
  for (auto& run : runs) {
    report.window_s = std::max(report.window_s, run->window_s);
    run->meter.add_to(report, run->window_s);
  }
  bool timed_out = false;
  bool all_done = true;
  for (auto& run : runs) {
    timed_out = timed_out || run->agent.timed_out;
    all_done = all_done && run->agent.done();
  }
  for (auto& run : runs) {
    if (!run->agent.checkpoint_error.empty()) report.errors.push_back(run->agent.checkpoint_error);
  }
  if (timed_out) {
    report.errors.push_back("node '" + self->name + "' timed out after " +
                            std::to_string(timeout.count()) + " ms before its streams finished");
  } else if (stop.load() && !all_done) {
    report.errors.push_back("node '" + self->name + "' was stopped before its streams finished");
  }
  // A finished run leaves no checkpoint: running the network again starts it afresh.
  if (all_done && !timed_out && report.errors.empty()) graphs[0]->drop_checkpoint();
  out << to_json(report).dump() << std::endl;
  return report;
}

}  // namespace boreal::runtime
