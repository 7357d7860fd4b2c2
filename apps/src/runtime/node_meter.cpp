#include "runtime/node_meter.hpp"

#include <sys/resource.h>

namespace boreal::runtime {
namespace {

std::int64_t max_rss_kb() noexcept {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

double to_us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }
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

NodeMeter::Totals NodeMeter::totals() const {
  Totals t;
  for (const auto& source : graph_.sources) t.sent += source->generated();
  for (const auto& sink : graph_.sinks) {
    t.received += sink->tuples_;
    t.bytes += sink->bytes_;
  }
  return t;
}

NodeReport::Syscalls NodeMeter::syscalls() const {
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

void NodeMeter::open() {
  syscalls_start_ = syscalls();
  start_ = totals();
  box_tuples_start_ = box_tuples(graph_);
  for (auto& sink : graph_.sinks) sink->latency_.reset();  // the warm-up's are not measured
  thread_start_ = transport::ThreadCpu::now();
  usage_start_ = transport::ProcessUsage::sample();
  rss_start_kb_ = max_rss_kb();
  if (!graph_.sinks.empty()) {
    if (auto window = transport::MachineWindow::start()) machine_ = window.value();
  }
}

void NodeMeter::close() {
  closed_ = true;
  thread_cpu_s_ = seconds(transport::ThreadCpu::now() - thread_start_);
  const auto usage = transport::ProcessUsage::sample() - usage_start_;
  process_cpu_s_ = std::chrono::duration<double>(usage.total()).count();
  voluntary_ = usage.voluntary_switches;
  involuntary_ = usage.involuntary_switches;
  rss_end_kb_ = max_rss_kb();
  const auto calls = syscalls();
  syscalls_ = {calls.read - syscalls_start_.read,
               calls.write - syscalls_start_.write,
               calls.would_block - syscalls_start_.would_block,
               calls.epoll_wait - syscalls_start_.epoll_wait,
               calls.nanosleep - syscalls_start_.nanosleep,
               calls.sched_yield - syscalls_start_.sched_yield};
  const Totals now = totals();
  measured_ = {now.sent - start_.sent, now.received - start_.received, now.bytes - start_.bytes};
  box_tuples_measured_ = box_tuples(graph_);
  for (std::size_t i = 0; i < box_tuples_measured_.size() && i < box_tuples_start_.size(); ++i) {
    box_tuples_measured_[i] -= box_tuples_start_[i];
  }
  if (machine_) {
    if (auto m = machine_->stop()) machine_report_ = m.value();
  }
}

void NodeMeter::note_rejected(std::ostream& err) {
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

nlohmann::json NodeMeter::progress(double elapsed_s) const {
  const Totals t = totals();
  return {{"kind", "progress"},
          {"node", self_.name},
          {"elapsed_s", elapsed_s},
          {"tuples_sent", t.sent},
          {"tuples_received", t.received}};
}

NodeReport NodeMeter::report(double window_s, std::vector<std::string> stopped) const {
  NodeReport r;
  r.node = self_.name;
  r.wait = std::string(transport::to_string(graph_.wait.mode));
  r.window_s = window_s;
  r.thread_cpu_s = thread_cpu_s_;
  r.process_cpu_s = process_cpu_s_;
  r.voluntary_switches = voluntary_;
  r.involuntary_switches = involuntary_;
  r.max_rss_kb_start = rss_start_kb_;
  r.max_rss_kb_end = rss_end_kb_;
  r.syscalls = syscalls_;
  r.tuples_sent_measured = measured_.sent;
  r.tuples_received_measured = measured_.received;
  r.bytes_received_measured = measured_.bytes;
  r.machine = machine_report_;
  r.wait_stats = transport::stats_of(wait_);
  r.rejected = rejected_;
  std::vector<std::string> errors;

  for (const auto& source : graph_.sources) {
    r.tuples_sent += source->generated();
    r.checksum_sent ^= source->checksum();
    if (source->error()) errors.push_back(*source->error());
  }
  for (const auto& sink : graph_.sinks) {
    r.tuples_received += sink->tuples_;
    r.bytes_received += sink->bytes_;
    r.checksum_received ^= sink->crc_;
    r.lost += sink->lost_;
    r.duplicated += sink->duplicated_;
    r.out_of_order += sink->out_of_order_;
    const auto& h = sink->latency_;
    if (h.count() > 0 && r.latency.samples == 0) {
      r.latency = {to_us(h.percentile(50.0)), to_us(h.percentile(99.0)), to_us(h.percentile(99.9)),
                   to_us(h.max()), h.count(), h.negative_count()};
    }
    if (auto bad = sink->output_error()) errors.push_back("sink '" + sink->name() + "' output: " + *bad);
  }

  const std::string wait = r.wait;
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
    lr.wait = wait;
    lr.backlog_peak_bytes = writer->backlog_peak_bytes();
    lr.backpressured_s = seconds(writer->backpressured());
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
    r.boxes.push_back(std::move(b));
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
    r.boxes.push_back(std::move(b));
  }
  for (const auto& sink : graph_.sinks) {
    BoxReport b;
    b.name = sink->name();
    b.type = "sink";
    b.tuples_in = sink->tuples_;
    b.batches_in = sink->batches_;
    b.thread_cpu_us_per_tuple = per_tuple(i++);
    r.boxes.push_back(std::move(b));
  }
  for (auto& message : stopped) errors.push_back(std::move(message));
  r.errors = std::move(errors);
  return r;
}

}  // namespace boreal::runtime
