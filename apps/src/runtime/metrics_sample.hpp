// What a node's live metrics hold (docs/metrics.md): the labels of its links and boxes, fixed
// once the node's graphs are built, and the figures its I/O threads publish about once a tick.
//
// Labels and figures are kept apart on purpose: an I/O thread copies only numbers into
// vectors sized up front (metrics_board.hpp), so publishing never allocates; the strings are
// copied by the scraping thread alone. Every counter is a running total since the node started
// (Prometheus takes rates itself), never a figure of the measurement window.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <boreal/ops/latency_histogram.hpp>
#include <boreal/transport/link.hpp>
#include <boreal/transport/wait_stats.hpp>

namespace boreal::runtime {

// One link end of the node (the inproc rings between its threads included).
struct LinkLabels {
  std::string link;       // "<from>-><to>:<stream>", the same at both ends of a link
  std::string stream;
  std::string peer;       // the node at the other end; "node/t" for a ring to or from thread t
  std::string direction;  // "send" or "recv"
  std::string medium;     // tcp, fabric-msg, fabric-rma, inproc
};

struct LinkFigures {
  transport::LinkStats stats;   // the link's own counters (frames, tuples, payload bytes...)
  double backpressured_s = 0;   // sending: producers held back; receiving: not polled
  // Sending ends only (gauges, as of the tick): the link's buffers and unacknowledged frames,
  // and the bytes of rows its writer holds back for lack of credit (link_ports.hpp).
  transport::SendOccupancy occupancy;
  std::uint64_t backlog_bytes = 0;
  double hold_s = 0;  // sending ends: how long a partly filled frame is held now (flush_hold.hpp)
};

// The live latency histogram of a sink (docs/metrics.md, "Per sink"): the sink's own
// ops::LatencyHistogram folded into kLatencyBuckets coarser buckets, four per power of two
// of nanoseconds from 1,024 ns to 2^34 ns (17.2 s). Each edge is an edge of the fine
// histogram's buckets, so the folding moves no value across an edge; bucket i holds the
// values ≤ latency_bucket_le_ns(i) (and above the previous bound), the last one everything
// larger (+Inf).
inline constexpr int kLatencyFirstExponent = 10;
inline constexpr int kLatencyLastExponent = 34;  // the last finite edge is 2^34 ns
inline constexpr std::size_t kLatencyBucketsPerOctave = 4;
inline constexpr std::size_t kLatencyBuckets =
    1 + (kLatencyLastExponent - kLatencyFirstExponent) * kLatencyBucketsPerOctave + 1;
using LatencyBuckets = std::array<std::uint64_t, kLatencyBuckets>;
// The largest whole number of nanoseconds in bucket i < kLatencyBuckets − 1: 1023, 1279, ...
[[nodiscard]] std::int64_t latency_bucket_le_ns(std::size_t i) noexcept;
// Adds every value of `histogram` to `buckets` (one count per bucket, not cumulative). Walks
// the fine histogram's 3,970 counters; allocates nothing.
void fold_latency(const ops::LatencyHistogram& histogram, LatencyBuckets& buckets) noexcept;

// One sink of the node, in the thread's sink order.
struct SinkLabels {
  std::string box;
  bool sequence = false;  // a check sink: lost, duplicated and out-of-order counts
  bool latency = false;   // it records latency
};

// A sink's running totals since the node started (the warm-up's latencies included: the
// JSON report drops them, the live histogram keeps counting).
struct SinkFigures {
  std::uint64_t lost = 0;  // missing from the sequence now: falls when a late tuple arrives
  std::uint64_t duplicated = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t latency_count = 0;
  std::uint64_t latency_sum_ns = 0;
  LatencyBuckets latency{};  // per bucket, not cumulative
};

// One box of the node. A source box with several outputs is one box here (its tasks summed).
struct BoxLabels {
  std::string box;
  std::string type;     // source, sink, or the operator's type
  bool has_input = true;   // false for sources
  bool has_output = true;  // false for sinks
};

struct BoxFigures {
  std::uint64_t tuples_in = 0;
  std::uint64_t tuples_out = 0;
};

// One I/O thread's labels, in the order of its figures.
struct ThreadLabels {
  std::uint32_t thread = 0;
  std::string wait;  // its wait mode
  std::vector<LinkLabels> links;
  std::vector<BoxLabels> boxes;
  std::vector<SinkLabels> sinks;
};

// What one I/O thread publishes: numbers only, in the order of its ThreadLabels.
struct ThreadFigures {
  double cpu_s = 0;  // CLOCK_THREAD_CPUTIME_ID since the thread started
  transport::WaitStats wait;
  std::uint64_t tuples_sent = 0;      // by the thread's sources
  std::uint64_t tuples_received = 0;  // by the thread's sinks
  std::vector<LinkFigures> links;
  std::vector<BoxFigures> boxes;
  std::vector<SinkFigures> sinks;
};

// The process as a whole, read by the scraping thread itself (the I/O threads take no part).
struct ProcessFigures {
  double cpu_s = 0;                 // getrusage(RUSAGE_SELF) user + system since start
  std::uint64_t resident_bytes = 0; // current RSS, /proc/self/statm

  // Reads both now; any thread may call it. An unreadable /proc leaves resident_bytes 0.
  [[nodiscard]] static ProcessFigures now() noexcept;
};

// One scrape of a node: what render_metrics() (metrics_text.hpp) turns into text.
struct MetricsSample {
  std::string node;
  ProcessFigures process;
  std::vector<ThreadLabels> labels;    // per I/O thread
  std::vector<ThreadFigures> threads;  // per I/O thread, same order
};

}  // namespace boreal::runtime
