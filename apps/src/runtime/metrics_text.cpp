#include "runtime/metrics_text.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace boreal::runtime {
namespace {

using Label = std::pair<std::string_view, std::string_view>;

// The transport's per-link counters that are exported, in exposition order. Exporting another
// LinkStats counter is one line here (and a row in docs/metrics.md's table).
struct LinkCounter {
  std::string_view name;
  std::string_view help;
  std::uint64_t transport::LinkStats::*field;
};
// clang-format off
constexpr LinkCounter kLinkCounters[] = {
    {"boreal_link_tuples_total", "Tuples the link end sent or received.", &transport::LinkStats::tuples},
    {"boreal_link_payload_bytes_total", "Payload bytes of the data frames the link end sent or received (headers excluded).", &transport::LinkStats::payload_bytes},
    {"boreal_link_frames_total", "Data frames the link end sent or received.", &transport::LinkStats::frames},
    {"boreal_link_credit_stalls_total", "Frames the sending end could not claim for lack of credit.", &transport::LinkStats::credit_stalls},
    {"boreal_link_duplicates_dropped_total", "Frames the receiving end discarded as already delivered (by sequence number).", &transport::LinkStats::duplicates_dropped},
    {"boreal_link_frames_replayed_total", "Frames the sending end sent again after reconnecting.", &transport::LinkStats::frames_replayed},
    {"boreal_link_reconnects_total", "Times the link end's connection was re-established after a loss.", &transport::LinkStats::reconnects},
};
// clang-format on

// Appends `value` with the escapes a label value needs: backslash, double quote, newline.
void append_label_value(std::string& out, std::string_view value) {
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

// Appends a number as the format writes it: integers in decimal, doubles in the shortest form
// that reads back exactly (to_chars; "1e-06" parses as Prometheus's float syntax).
template <class T>
void append_number(std::string& out, T value) {
  std::array<char, 32> text{};
  const auto result = std::to_chars(text.data(), text.data() + text.size(), value);
  out.append(text.data(), result.ptr);
}

class Exposition {
 public:
  // HELP and TYPE of the family whose series follow. `help` has no backslash or newline.
  void family(std::string_view name, std::string_view help, std::string_view type) {
    text_.append("# HELP ").append(name).append(" ").append(help).append("\n");
    text_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }

  template <class T>
  void series(std::string_view name, std::initializer_list<Label> labels, T value) {
    text_.append(name);
    char separator = '{';
    for (const auto& [key, label] : labels) {
      text_ += separator;
      text_.append(key).append("=\"");
      append_label_value(text_, label);
      text_ += '"';
      separator = ',';
    }
    if (labels.size() > 0) text_ += '}';
    text_ += ' ';
    append_number(text_, value);
    text_ += '\n';
  }

  [[nodiscard]] std::string take() && { return std::move(text_); }

 private:
  std::string text_;
};

double seconds(std::chrono::nanoseconds ns) { return std::chrono::duration<double>(ns).count(); }

void render_node(Exposition& out, const MetricsSample& s) {
  const std::string_view node = s.node;
  out.family("boreal_process_cpu_seconds_total",
             "CPU time of the whole node process (getrusage user + system).", "counter");
  out.series("boreal_process_cpu_seconds_total", {{"node", node}}, s.process.cpu_s);
  out.family("boreal_process_resident_memory_bytes",
             "Resident memory of the node process now (/proc/self/statm).", "gauge");
  out.series("boreal_process_resident_memory_bytes", {{"node", node}}, s.process.resident_bytes);
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (const ThreadFigures& t : s.threads) {
    sent += t.tuples_sent;
    received += t.tuples_received;
  }
  out.family("boreal_node_tuples_sent_total", "Tuples the node's sources generated.", "counter");
  out.series("boreal_node_tuples_sent_total", {{"node", node}}, sent);
  out.family("boreal_node_tuples_received_total", "Tuples the node's sinks consumed.", "counter");
  out.series("boreal_node_tuples_received_total", {{"node", node}}, received);
}

void render_threads(Exposition& out, const MetricsSample& s) {
  const std::string_view node = s.node;
  auto each_thread = [&](auto&& write) {
    for (std::size_t i = 0; i < s.threads.size() && i < s.labels.size(); ++i) {
      const std::string thread = std::to_string(s.labels[i].thread);
      write(s.labels[i], s.threads[i], thread);
    }
  };
  out.family("boreal_thread_cpu_seconds_total",
             "CPU time of the I/O thread (CLOCK_THREAD_CPUTIME_ID).", "counter");
  each_thread([&](const ThreadLabels& l, const ThreadFigures& f, const std::string& thread) {
    out.series("boreal_thread_cpu_seconds_total",
               {{"node", node}, {"thread", thread}, {"wait", l.wait}}, f.cpu_s);
  });
  out.family("boreal_thread_wait_seconds_total",
             "Time the I/O thread spent waiting for work, by how it waited.", "counter");
  each_thread([&](const ThreadLabels& l, const ThreadFigures& f, const std::string& thread) {
    const double slept = seconds(f.wait.slept + f.wait.sleep_overshoot);
    const auto spin = static_cast<std::size_t>(transport::IdleState::spin);
    const double spun = seconds(f.wait.state_time[spin]);
    for (const auto& [state, value] : {std::pair<std::string_view, double>{"sleep", slept},
                                       {"block", seconds(f.wait.blocked)},
                                       {"spin", spun}}) {
      out.series("boreal_thread_wait_seconds_total",
                 {{"node", node}, {"thread", thread}, {"wait", l.wait}, {"state", state}}, value);
    }
  });
  out.family("boreal_thread_polls_total", "Duty cycles of the I/O thread.", "counter");
  each_thread([&](const ThreadLabels& l, const ThreadFigures& f, const std::string& thread) {
    out.series("boreal_thread_polls_total", {{"node", node}, {"thread", thread}, {"wait", l.wait}},
               f.wait.polls);
  });
  out.family("boreal_thread_empty_polls_total", "Duty cycles of the I/O thread that found no work.",
             "counter");
  each_thread([&](const ThreadLabels& l, const ThreadFigures& f, const std::string& thread) {
    out.series("boreal_thread_empty_polls_total",
               {{"node", node}, {"thread", thread}, {"wait", l.wait}}, f.wait.empty_polls);
  });
}

// Every link end of every thread (or only the sending ends), each with the figure
// `value(thread figures, link figures)`.
template <class Value>
void link_series(Exposition& out, const MetricsSample& s, std::string_view name, Value value,
                 bool sending_only = false) {
  for (std::size_t t = 0; t < s.threads.size() && t < s.labels.size(); ++t) {
    const ThreadLabels& labels = s.labels[t];
    const ThreadFigures& figures = s.threads[t];
    for (std::size_t i = 0; i < labels.links.size() && i < figures.links.size(); ++i) {
      const LinkLabels& l = labels.links[i];
      if (sending_only && l.direction != "send") continue;
      out.series(name,
                 {{"node", s.node}, {"link", l.link}, {"stream", l.stream}, {"peer", l.peer},
                  {"direction", l.direction}, {"medium", l.medium}},
                 value(figures, figures.links[i]));
    }
  }
}

void render_links(Exposition& out, const MetricsSample& s) {
  for (const LinkCounter& counter : kLinkCounters) {
    out.family(counter.name, counter.help, "counter");
    link_series(out, s, counter.name,
                [&](const ThreadFigures&, const LinkFigures& f) { return f.stats.*counter.field; });
  }
  out.family("boreal_link_backpressured_seconds_total",
             "Sending end: time its producers were held back; receiving end: time it was not "
             "polled because its stream was blocked downstream.",
             "counter");
  link_series(out, s, "boreal_link_backpressured_seconds_total",
              [](const ThreadFigures&, const LinkFigures& f) { return f.backpressured_s; });
  // Links have no thread of their own: this is the CPU of the I/O thread that runs the link,
  // shared with every other link and box of that thread (docs/design.md, "Metrics").
  out.family("boreal_link_thread_cpu_seconds_total",
             "CPU time of the I/O thread that runs the link end (shared with that thread's other "
             "links and boxes).",
             "counter");
  link_series(out, s, "boreal_link_thread_cpu_seconds_total",
              [](const ThreadFigures& t, const LinkFigures&) { return t.cpu_s; });
  // How full each sending end is, as of its thread's last tick: what a soak watches for
  // growth (docs/metrics.md, "Per link end").
  out.family("boreal_link_frames_unacknowledged",
             "Sending end: frames committed and still held for the receiver.", "gauge");
  link_series(
      out, s, "boreal_link_frames_unacknowledged",
      [](const ThreadFigures&, const LinkFigures& f) { return f.occupancy.frames_unacknowledged; },
      true);
  out.family("boreal_link_send_buffers_in_use",
             "Sending end: its frame buffers (inproc: ring slots) in use.", "gauge");
  link_series(
      out, s, "boreal_link_send_buffers_in_use",
      [](const ThreadFigures&, const LinkFigures& f) { return f.occupancy.buffers_in_use; }, true);
  out.family("boreal_link_send_buffers", "Sending end: its frame buffers (inproc: ring slots).",
             "gauge");
  link_series(
      out, s, "boreal_link_send_buffers",
      [](const ThreadFigures&, const LinkFigures& f) { return f.occupancy.buffers; }, true);
  out.family("boreal_link_backlog_bytes",
             "Sending end: bytes of rows its writer holds back for lack of credit.", "gauge");
  link_series(
      out, s, "boreal_link_backlog_bytes",
      [](const ThreadFigures&, const LinkFigures& f) { return f.backlog_bytes; }, true);
  // The sender's share of the latency budget (docs/design.md, "Flush").
  out.family("boreal_link_pickup_p99_seconds",
             "The receiver's pickup latency p99 (a frame's arrival at its host to its thread "
             "reading it), as last reported in a credit frame; 0: no report.",
             "gauge");
  link_series(
      out, s, "boreal_link_pickup_p99_seconds",
      [](const ThreadFigures&, const LinkFigures& f) { return f.stats.pickup_p99_us * 1e-6; });
  out.family("boreal_link_flush_hold_seconds",
             "Sending end: how long a partly filled frame is held before it leaves.", "gauge");
  link_series(
      out, s, "boreal_link_flush_hold_seconds",
      [](const ThreadFigures&, const LinkFigures& f) { return f.hold_s; }, true);
}

// Whole nanoseconds as seconds in plain decimal ("0.000001023"): exact, unlike ns / 1e9.
std::string seconds_text(std::int64_t ns) {
  std::string text = std::to_string(ns / 1'000'000'000) + ".";
  std::string fraction = std::to_string(ns % 1'000'000'000);
  text.append(9 - fraction.size(), '0').append(fraction);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

void render_sinks(Exposition& out, const MetricsSample& s) {
  // Every sink of every thread that `wanted(labels)`, with its labels and figures.
  auto each_sink = [&](auto wanted, auto&& write) {
    for (std::size_t t = 0; t < s.threads.size() && t < s.labels.size(); ++t) {
      const ThreadLabels& labels = s.labels[t];
      const std::string thread = std::to_string(labels.thread);
      for (std::size_t i = 0; i < labels.sinks.size() && i < s.threads[t].sinks.size(); ++i) {
        if (wanted(labels.sinks[i])) write(labels.sinks[i], s.threads[t].sinks[i], thread);
      }
    }
  };
  const auto checks = [](const SinkLabels& l) { return l.sequence; };
  const auto times = [](const SinkLabels& l) { return l.latency; };
  out.family("boreal_sink_lost_tuples",
             "Check sink: tuples missing from the sequence so far (falls when a late one arrives).",
             "gauge");
  each_sink(checks, [&](const SinkLabels& l, const SinkFigures& f, const std::string& thread) {
    out.series("boreal_sink_lost_tuples", {{"node", s.node}, {"box", l.box}, {"thread", thread}},
               f.lost);
  });
  out.family("boreal_sink_duplicated_total",
             "Check sink: tuples whose sequence number had been delivered already.", "counter");
  each_sink(checks, [&](const SinkLabels& l, const SinkFigures& f, const std::string& thread) {
    out.series("boreal_sink_duplicated_total",
               {{"node", s.node}, {"box", l.box}, {"thread", thread}}, f.duplicated);
  });
  out.family("boreal_sink_out_of_order_total",
             "Check sink: tuples that arrived after a later sequence number.", "counter");
  each_sink(checks, [&](const SinkLabels& l, const SinkFigures& f, const std::string& thread) {
    out.series("boreal_sink_out_of_order_total",
               {{"node", s.node}, {"box", l.box}, {"thread", thread}}, f.out_of_order);
  });
  out.family("boreal_sink_latency_seconds",
             "Sink: latency of the tuples it received, from their timestamp field.", "histogram");
  each_sink(times, [&](const SinkLabels& l, const SinkFigures& f, const std::string& thread) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kLatencyBuckets; ++i) {
      cumulative += f.latency[i];
      const std::string le =
          i + 1 < kLatencyBuckets ? seconds_text(latency_bucket_le_ns(i)) : std::string("+Inf");
      out.series("boreal_sink_latency_seconds_bucket",
                 {{"node", s.node}, {"box", l.box}, {"thread", thread}, {"le", le}}, cumulative);
    }
    out.series("boreal_sink_latency_seconds_sum",
               {{"node", s.node}, {"box", l.box}, {"thread", thread}},
               static_cast<double>(f.latency_sum_ns) / 1e9);
    out.series("boreal_sink_latency_seconds_count",
               {{"node", s.node}, {"box", l.box}, {"thread", thread}}, f.latency_count);
  });
}

void render_boxes(Exposition& out, const MetricsSample& s) {
  auto box_series = [&](std::string_view name, bool input) {
    for (std::size_t t = 0; t < s.threads.size() && t < s.labels.size(); ++t) {
      const ThreadLabels& labels = s.labels[t];
      const std::string thread = std::to_string(labels.thread);
      for (std::size_t i = 0; i < labels.boxes.size() && i < s.threads[t].boxes.size(); ++i) {
        const BoxLabels& b = labels.boxes[i];
        if (input ? !b.has_input : !b.has_output) continue;
        const BoxFigures& f = s.threads[t].boxes[i];
        out.series(name, {{"node", s.node}, {"box", b.box}, {"type", b.type}, {"thread", thread}},
                   input ? f.tuples_in : f.tuples_out);
      }
    }
  };
  out.family("boreal_box_tuples_in_total", "Tuples the box took in (every box but sources).",
             "counter");
  box_series("boreal_box_tuples_in_total", true);
  out.family("boreal_box_tuples_out_total", "Tuples the box emitted (every box but sinks).",
             "counter");
  box_series("boreal_box_tuples_out_total", false);
}

}  // namespace

std::string render_metrics(const MetricsSample& sample) {
  Exposition out;
  render_node(out, sample);
  render_threads(out, sample);
  render_links(out, sample);
  render_boxes(out, sample);
  render_sinks(out, sample);
  return std::move(out).take();
}

}  // namespace boreal::runtime
