// run_node(): builds the node's graph (node_graph.hpp), runs it as one agent on the calling
// thread under the node's wait mode, measures over the window and reports (node_meter.hpp).
#include "runtime/node.hpp"

#include <algorithm>
#include <iostream>
#include <limits>
#include <optional>

#include <boreal/transport/agent_runner.hpp>
#include <boreal/transport/rate_estimator.hpp>

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
        warmup_(warmup) {
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

 private:
  // Boxes with timeouts see the clock this often; progress and rejected connections too.
  static constexpr std::chrono::milliseconds kTick{10};

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
    if (!graph_.boxes.empty()) deadline = std::min(deadline, last_tick_ + kTick);
    hints_.deadline = deadline;
  }

  NodeGraph& graph_;
  SteadyTime started_at_;
  SteadyTime give_up_at_;
  std::chrono::nanoseconds warmup_;
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

  transport::EventLoop loop;
  auto built = build_node_graph(loop, spec, *self);
  if (!built) return std::move(built).error();
  NodeGraph& graph = *built.value();

  NodeAgent agent(graph, timeout, std::chrono::duration_cast<std::chrono::nanoseconds>(spec.warmup));
  auto wait = transport::make_wait(graph.wait);
  NodeMeter meter(graph, wait, *self);
  agent.on_window_start = [&] { meter.open(); };
  agent.on_window_end = [&] { meter.close(); };
  auto last_progress = std::chrono::steady_clock::now();
  const auto node_start = last_progress;
  agent.on_tick = [&](SteadyTime now) {
    meter.note_rejected(std::cerr);
    if (options.progress_interval.count() > 0 && now - last_progress >= options.progress_interval) {
      last_progress = now;
      out << meter.progress(std::chrono::duration<double>(now - node_start).count()).dump()
          << std::endl;
    }
  };

  transport::run_agent(agent, wait, stop);
  if (!agent.window_end) {  // stopped from outside
    agent.window_end = std::chrono::steady_clock::now();
    if (agent.window_start) meter.close();
  }
  meter.note_rejected(std::cerr);  // a last look at refused connections
  double window_s = 0;
  if (agent.window_start) {
    window_s = std::chrono::duration<double>(*agent.window_end - *agent.window_start).count();
  }
  std::vector<std::string> stopped;
  if (agent.timed_out) {
    stopped.push_back("node '" + self->name + "' timed out after " +
                      std::to_string(timeout.count()) + " ms before its streams finished");
  } else if (stop.load() && !agent.done()) {
    stopped.push_back("node '" + self->name + "' was stopped before its streams finished");
  }
  NodeReport report = meter.report(window_s, std::move(stopped));
  out << to_json(report).dump() << std::endl;
  return report;
}

}  // namespace boreal::runtime
