#include "runtime/node_meter.hpp"

#include <sys/resource.h>
#include <unistd.h>

namespace boreal::runtime {
namespace {

std::int64_t max_rss_kb() noexcept {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

double to_us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

LatencySummary summary_of(const ops::LatencyHistogram& h) {
  return {to_us(h.percentile(50.0)), to_us(h.percentile(99.0)), to_us(h.percentile(99.9)),
          to_us(h.max()), h.count(), h.negative_count()};
}

double seconds(std::chrono::nanoseconds ns) { return std::chrono::duration<double>(ns).count(); }

// Tuples each box handled so far, in report order (sources, operators, sinks): out of a
// source, into any other box.
std::vector<std::uint64_t> box_tuples(const NodeGraph& graph) {
  std::vector<std::uint64_t> out;
  for (const auto& source : graph.sources) out.push_back(source->generated());
  for (const auto& box : graph.boxes) out.push_back(box->tuples_in());
  for (const auto& sink : graph.sinks) out.push_back(sink->tuples_);
  return out;
}

}  // namespace

namespace {

// Events the sources walked: per source box, the fewest of its tasks (each output's task
// walks the same ids at its own pace; a box's tasks follow each other, port 0 first).
std::uint64_t source_events(const NodeGraph& graph) {
  std::uint64_t total = 0;
  std::uint64_t box = 0;
  for (const auto& source : graph.sources) {
    if (source->port() == 0) {
      total += box;
      box = source->events();
    } else {
      box = std::min(box, source->events());
    }
  }
  return total + box;
}

// Events the sources' schedules had made due by `now`, per source box as source_events().
std::uint64_t source_events_due(const NodeGraph& graph, SteadyTime now) {
  std::uint64_t total = 0;
  std::uint64_t box = 0;
  for (const auto& source : graph.sources) {
    if (source->port() == 0) {
      total += box;
      box = source->events_due(now);
    } else {
      box = std::min(box, source->events_due(now));
    }
  }
  return total + box;
}

}  // namespace

ThreadMeter::Totals ThreadMeter::totals() const {
  Totals t;
  for (const auto& source : graph_.sources) t.sent += source->generated();
  t.events = source_events(graph_);
  t.due = source_events_due(graph_, std::chrono::steady_clock::now());
  for (const auto& sink : graph_.sinks) {
    t.received += sink->tuples_;
    t.bytes += sink->bytes_;
  }
  return t;
}

NodeReport::Syscalls ThreadMeter::syscalls() const {
  NodeReport::Syscalls calls;
  calls.epoll_wait = graph_.loop.stats().polls + graph_.loop.stats().runs;
  const auto& waits = transport::stats_of(wait_);
  calls.nanosleep = waits.sleeps;
  calls.sched_yield = waits.yields;
  auto add = [&](const transport::LinkStats& stats) {
    calls.read += stats.read_calls;
    calls.write += stats.write_calls;
    calls.would_block += stats.would_block;
  };
  for (const auto& writer : graph_.writers) add(writer->link().stats());
  for (const auto& reader : graph_.readers) add(reader->link().stats());
  return calls;
}

void ProcessMeter::open() {
  std::lock_guard lock(mutex_);
  if (opened_) return;
  opened_ = true;
  usage_start_ = transport::ProcessUsage::sample();
  rss_start_kb_ = max_rss_kb();
  if (machine_wanted_) {
    if (auto window = transport::MachineWindow::start()) machine_ = window.value();
  }
}

void ProcessMeter::close() {
  std::lock_guard lock(mutex_);
  if (++closed_ < threads_ || !opened_) return;
  const auto usage = transport::ProcessUsage::sample() - usage_start_;
  process_cpu_s_ = std::chrono::duration<double>(usage.total()).count();
  voluntary_ = usage.voluntary_switches;
  involuntary_ = usage.involuntary_switches;
  rss_end_kb_ = max_rss_kb();
  if (machine_) {
    if (auto m = machine_->stop()) machine_report_ = m.value();
  }
}

void ProcessMeter::fill(NodeReport& r) const {
  r.pid = static_cast<int>(::getpid());
  r.parent_pid = static_cast<int>(::getppid());
  r.host = host_name();
  r.process_cpu_s = process_cpu_s_;
  r.voluntary_switches = voluntary_;
  r.involuntary_switches = involuntary_;
  r.max_rss_kb_start = rss_start_kb_;
  r.max_rss_kb_end = rss_end_kb_;
  r.machine = machine_report_;
}

void ThreadMeter::open() {
  opened_ = true;
  syscalls_start_ = syscalls();
  start_ = totals();
  box_tuples_start_ = box_tuples(graph_);
  for (std::size_t k = 0; k < graph_.sinks.size(); ++k) {
    auto& histogram = graph_.sinks[k]->latency();
    if (board_ != nullptr && k < latency_before_.size()) {
      SinkFigures& before = latency_before_[k];
      fold_latency(histogram, before.latency);
      before.latency_count += histogram.count();
      before.latency_sum_ns += histogram.sum();
    }
    histogram.reset();  // the warm-up's are not measured
    if (auto* stages = graph_.sinks[k]->stages()) stages->reset();
  }
  for (const auto& source : graph_.sources) source->due_to_committed().reset();
  thread_start_ = transport::ThreadCpu::now();
  process_.open();
}

void ThreadMeter::close() {
  if (closed_) return;
  closed_ = true;
  if (opened_) {
    thread_cpu_s_ = seconds(transport::ThreadCpu::now() - thread_start_);
    const auto calls = syscalls();
    syscalls_ = {calls.read - syscalls_start_.read,
                 calls.write - syscalls_start_.write,
                 calls.would_block - syscalls_start_.would_block,
                 calls.epoll_wait - syscalls_start_.epoll_wait,
                 calls.nanosleep - syscalls_start_.nanosleep,
                 calls.sched_yield - syscalls_start_.sched_yield};
    const Totals now = totals();
    measured_ = {now.sent - start_.sent, now.events - start_.events, now.due - start_.due,
                 now.received - start_.received, now.bytes - start_.bytes};
    box_tuples_measured_ = box_tuples(graph_);
    for (std::size_t i = 0; i < box_tuples_measured_.size() && i < box_tuples_start_.size(); ++i) {
      box_tuples_measured_[i] -= box_tuples_start_[i];
    }
  }
  process_.close();
}

void ThreadMeter::tick(std::ostream& err) {
  ticker_.check();
  note_rejected(err);
  const Totals t = totals();
  sent_seen_.store(t.sent, std::memory_order_relaxed);
  received_seen_.store(t.received, std::memory_order_relaxed);
  if (board_ != nullptr) publish_metrics();
}

namespace {

// A ring between two threads of a node names its ends "node/t"; a link between nodes, the node.
std::string link_end(const std::string& node, std::uint32_t thread, const LinkIdentity& identity) {
  return identity.medium == "inproc" ? node + "/" + std::to_string(thread) : node;
}

LinkLabels link_labels(const LinkIdentity& identity, std::string from, std::string to,
                       const char* direction) {
  return {from + "->" + to + ":" + identity.stream, identity.stream, identity.peer, direction,
          identity.medium};
}

}  // namespace

ThreadLabels ThreadMeter::metrics_labels() const {
  ThreadLabels labels;
  labels.thread = graph_.thread;
  labels.wait = std::string(transport::to_string(graph_.wait.mode));
  for (const auto& writer : graph_.writers) {
    const auto& id = writer->identity();
    const std::string me = link_end(self_.name, graph_.thread, id);
    labels.links.push_back(link_labels(id, me, id.peer, "send"));
  }
  for (const auto& reader : graph_.readers) {
    const auto& id = reader->identity();
    const std::string me = link_end(self_.name, graph_.thread, id);
    labels.links.push_back(link_labels(id, id.peer, me, "recv"));
  }
  // A source box's tasks (one per output, port 0 first) are one box.
  for (const auto& source : graph_.sources) {
    if (source->port() == 0) labels.boxes.push_back({source->name(), "source", false, true});
  }
  for (std::size_t k = 0; k < graph_.boxes.size(); ++k) {
    labels.boxes.push_back({graph_.boxes[k]->name(), graph_.box_types[k], true, true});
  }
  for (const auto& sink : graph_.sinks) labels.boxes.push_back({sink->name(), "sink", true, false});
  for (const auto& sink : graph_.sinks) {
    labels.sinks.push_back(
        {sink->name(), sink->kind() == SinkKind::check, sink->records_latency()});
  }
  return labels;
}

void ThreadMeter::publish_to(MetricsBoard& board) {
  board_ = &board;
  metrics_ = board.blank(graph_.thread);
  latency_before_.assign(graph_.sinks.size(), SinkFigures{});
}

void ThreadMeter::publish_metrics() {
  ThreadFigures& f = metrics_;
  f.cpu_s = seconds(transport::ThreadCpu::now());
  f.wait = transport::stats_of(wait_);
  f.tuples_sent = sent_seen_.load(std::memory_order_relaxed);
  f.tuples_received = received_seen_.load(std::memory_order_relaxed);
  std::size_t i = 0;
  for (const auto& writer : graph_.writers) {
    f.links[i++] = {writer->link().stats(), seconds(writer->backpressured()),
                    writer->link().occupancy(), writer->backlog_bytes(),
                    seconds(writer->hold().get())};
  }
  for (const auto& reader : graph_.readers) {
    f.links[i++] = {reader->link().stats(), seconds(reader->backpressured()), {}, 0, 0};
  }
  // Same order as metrics_labels(): sources summed per box, operators, sinks.
  std::size_t b = 0;
  for (const auto& source : graph_.sources) {
    if (source->port() == 0) f.boxes[b++] = {};
    if (b > 0) f.boxes[b - 1].tuples_out += source->generated();
  }
  for (const auto& box : graph_.boxes) f.boxes[b++] = {box->tuples_in(), box->tuples_out()};
  for (const auto& sink : graph_.sinks) f.boxes[b++] = {sink->tuples_, 0};
  for (std::size_t k = 0; k < graph_.sinks.size(); ++k) {
    const SinkTask& sink = *graph_.sinks[k];
    SinkFigures& out = f.sinks[k];
    out.lost = sink.lost_;
    out.duplicated = sink.duplicated_;
    out.out_of_order = sink.out_of_order_;
    if (!sink.records_latency()) continue;
    // Folding walks the fine histogram (a few microseconds), so only when it changed.
    const auto& histogram = graph_.sinks[k]->latency();
    const SinkFigures& before = latency_before_[k];
    const std::uint64_t count = before.latency_count + histogram.count();
    if (count == out.latency_count) continue;
    out.latency = before.latency;
    fold_latency(histogram, out.latency);
    out.latency_count = count;
    out.latency_sum_ns = before.latency_sum_ns + histogram.sum();
  }
  board_->publish(graph_.thread, f);
}

void ThreadMeter::note_rejected(std::ostream& err) {
  auto note = [&](const std::vector<transport::Error>& rejected, std::size_t& seen) {
    for (; seen < rejected.size(); ++seen) {
      rejected_.push_back(rejected[seen].message);
      err << "boreal run: node '" << self_.name
          << "' refused a connection: " << rejected[seen].message << '\n';
    }
  };
  if (graph_.listeners.tcp) note(graph_.listeners.tcp->rejected(), tcp_rejected_seen_);
  if (graph_.listeners.fabric) note(graph_.listeners.fabric->rejected(), fabric_rejected_seen_);
}

nlohmann::json progress_line(const NodeSpec& self, const std::vector<const ThreadMeter*>& threads,
                             double elapsed_s) {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (const ThreadMeter* thread : threads) {
    sent += thread->sent_so_far();
    received += thread->received_so_far();
  }
  return {{"kind", "progress"},
          {"node", self.name},
          {"elapsed_s", elapsed_s},
          {"tuples_sent", sent},
          {"tuples_received", received}};
}

void ThreadMeter::add_to(NodeReport& r, double window_s) const {
  r.thread_cpu_s += thread_cpu_s_;
  r.syscalls += syscalls_;
  r.tuples_sent_measured += measured_.sent;
  r.events_sent_measured += measured_.events;
  r.events_due_measured += measured_.due;
  r.tuples_received_measured += measured_.received;
  r.bytes_received_measured += measured_.bytes;
  r.rejected.insert(r.rejected.end(), rejected_.begin(), rejected_.end());
  ThreadReport thread;
  thread.thread = graph_.thread;
  thread.wait = std::string(transport::to_string(graph_.wait.mode));
  thread.window_s = window_s;
  thread.thread_cpu_s = thread_cpu_s_;
  thread.wait_stats = transport::stats_of(wait_);
  r.thread_reports.push_back(thread);
  std::vector<std::string>& errors = r.errors;

  r.events_sent += source_events(graph_);
  for (const auto& source : graph_.sources) {
    r.tuples_sent += source->generated();
    r.checksum_sent ^= source->checksum();
    if (source->error()) errors.push_back(*source->error());
  }
  for (const auto& sink : graph_.sinks) {
    r.tuples_received += sink->tuples_;
    r.bytes_received += sink->bytes_;
    r.checksum_received ^= sink->crc_;
    r.content_checked = r.content_checked && sink->kind() == SinkKind::check;
    r.lost += sink->lost_;
    r.duplicated += sink->duplicated_;
    r.out_of_order += sink->out_of_order_;
    const auto& h = sink->latency();
    if (h.count() > 0 && r.latency.samples == 0) r.latency = summary_of(h);
    if (auto bad = sink->output_error())
      errors.push_back("sink '" + sink->name() + "' output: " + *bad);
  }

  const std::string wait = thread.wait;
  for (const auto& writer : graph_.writers) {
    const auto& link = writer->link();
    r.bytes_sent += link.stats().payload_bytes;
    LinkReport lr;
    lr.stream = writer->identity().stream;
    lr.direction = "send";
    lr.state = std::string(transport::to_string(link.state()));
    lr.stats = link.stats();
    lr.peer = writer->identity().peer;
    lr.medium = writer->identity().medium;
    lr.provider = writer->identity().provider;
    lr.wait = wait;
    lr.backlog_peak_bytes = writer->backlog_peak_bytes();
    lr.backpressured_s = seconds(writer->backpressured());
    lr.hold_us = seconds(writer->hold().get()) * 1e6;
    lr.late_p99_us = seconds(writer->hold().lateness_p99()) * 1e6;
    if (link.error() != nullptr) {
      lr.error = link.error()->message;
      errors.push_back(link.error()->message);
    } else if (writer->dropped() > 0) {
      errors.push_back("stream '" + writer->identity().stream + "' to node '" +
                       writer->identity().peer + "': " + std::to_string(writer->dropped()) +
                       " tuples not sent");
    }
    r.links.push_back(std::move(lr));
  }
  for (const auto& reader : graph_.readers) {
    auto& link = reader->link();
    LinkReport lr;
    lr.stream = reader->identity().stream;
    lr.direction = "recv";
    lr.state = std::string(transport::to_string(link.state()));
    lr.stats = link.stats();
    lr.peer = reader->identity().peer;
    lr.medium = reader->identity().medium;
    lr.provider = reader->identity().provider;
    lr.wait = wait;
    lr.backpressured_s = seconds(reader->backpressured());
    if (link.error() != nullptr) {
      lr.error = link.error()->message;
      errors.push_back(link.error()->message);
    }
    if (!reader->payload_error().empty()) errors.push_back(reader->payload_error());
    r.links.push_back(std::move(lr));
  }
  if (graph_.listeners.fabric && graph_.listeners.fabric->error() != nullptr) {
    errors.push_back(graph_.listeners.fabric->error()->message);
  }

  std::size_t i = 0;
  auto per_tuple = [&](std::size_t index) {
    const std::uint64_t n = index < box_tuples_measured_.size() ? box_tuples_measured_[index] : 0;
    return n == 0 ? 0.0 : thread_cpu_s_ * 1e6 / static_cast<double>(n);
  };
  for (const auto& source : graph_.sources) {
    BoxReport b;
    b.name = source->name();
    b.type = "source";
    b.tuples_out = source->generated();
    b.backpressured_s = seconds(source->backpressured());
    b.thread_cpu_us_per_tuple = per_tuple(i++);
    b.thread = graph_.thread;
    r.boxes.push_back(std::move(b));
  }
  auto add_stage = [&](const std::string& box, const char* stage,
                       const ops::LatencyHistogram& h) {
    if (h.count() == 0) return;
    r.latency_stages.push_back({box, stage, summary_of(h)});
  };
  for (const auto& source : graph_.sources) {
    add_stage(source->name(), "due_to_committed", source->due_to_committed());
  }
  for (const auto& sink : graph_.sinks) {
    if (const auto* stages = sink->stages()) {
      add_stage(sink->name(), "due_to_arrived", stages->due_to_arrived);
      add_stage(sink->name(), "arrived_to_read", stages->arrived_to_read);
      add_stage(sink->name(), "read_to_sink", stages->read_to_sink);
    }
  }
  for (std::size_t k = 0; k < graph_.boxes.size(); ++k) {
    const auto& box = graph_.boxes[k];
    BoxReport b;
    b.name = box->name();
    b.type = graph_.box_types[k];
    b.tuples_in = box->tuples_in();
    b.tuples_out = box->tuples_out();
    b.batches_in = box->batches_in();
    b.busy_s = seconds(box->busy());
    b.thread_cpu_us_per_tuple = per_tuple(i++);
    b.thread = graph_.thread;
    r.boxes.push_back(std::move(b));
  }
  for (const auto& sink : graph_.sinks) {
    BoxReport b;
    b.name = sink->name();
    b.type = "sink";
    b.tuples_in = sink->tuples_;
    b.batches_in = sink->batches_;
    b.thread_cpu_us_per_tuple = per_tuple(i++);
    b.thread = graph_.thread;
    r.boxes.push_back(std::move(b));
  }
}

}  // namespace boreal::runtime
