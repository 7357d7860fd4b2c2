// The Prometheus text of a node's metrics (runtime/metrics_text.hpp): the exact exposition of
// a known sample, label escaping, the shape every family keeps; and the board the I/O threads
// publish to (runtime/metrics_board.hpp), read while it is written.
#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <boreal/ops/latency_histogram.hpp>

#include "runtime/metrics_board.hpp"
#include "runtime/metrics_text.hpp"

namespace {

using namespace boreal::runtime;
using namespace std::chrono_literals;

// Node dst: thread 0 receives `ticks` from src over tcp and runs a filter and a sink; thread 1
// runs a source whose stream goes to thread 0 over an inproc ring.
MetricsSample two_threads() {
  MetricsSample s;
  s.node = "dst";
  s.process.cpu_s = 1.5;
  s.process.resident_bytes = 4096000;

  ThreadLabels t0;
  t0.thread = 0;
  t0.wait = "block";
  t0.links.push_back({"src->dst:ticks", "ticks", "src", "recv", "tcp"});
  t0.boxes.push_back({"keep", "filter", true, true});
  t0.boxes.push_back({"check", "sink", true, false});
  ThreadFigures f0;
  f0.cpu_s = 0.25;
  f0.wait.slept = 2ms;
  f0.wait.sleep_overshoot = 500us;
  f0.wait.blocked = 1500ms;
  f0.wait.polls = 10;
  f0.wait.empty_polls = 4;
  f0.tuples_received = 900;
  LinkFigures l0;
  l0.stats.frames = 4;
  l0.stats.tuples = 1000;
  l0.stats.payload_bytes = 64000;
  l0.stats.duplicates_dropped = 2;
  l0.stats.reconnects = 1;
  l0.stats.read_calls = 99;  // not exported
  l0.backpressured_s = 0.125;
  l0.stats.pickup_p99_us = 21;
  f0.links.push_back(l0);
  f0.boxes.push_back({1000, 900});
  f0.boxes.push_back({900, 0});
  t0.sinks.push_back({"check", true, false});
  SinkFigures k0;
  k0.lost = 2;
  k0.duplicated = 1;
  k0.out_of_order = 3;
  f0.sinks.push_back(k0);

  ThreadLabels t1;
  t1.thread = 1;
  t1.wait = "adaptive";
  t1.links.push_back({"dst/1->dst/0:local", "local", "dst/0", "send", "inproc"});
  t1.boxes.push_back({"gen", "source", false, true});
  ThreadFigures f1;
  f1.cpu_s = 0.5;
  f1.wait.state_time[static_cast<std::size_t>(boreal::transport::IdleState::spin)] = 750ms;
  f1.wait.polls = 7;
  f1.wait.empty_polls = 1;
  f1.tuples_sent = 1200;
  LinkFigures l1;
  l1.stats.frames = 3;
  l1.stats.tuples = 1200;
  l1.stats.payload_bytes = 76800;
  l1.stats.credit_stalls = 5;
  l1.occupancy = {3, 5, 64};
  l1.backlog_bytes = 128;
  l1.hold_s = 0.00025;
  f1.links.push_back(l1);
  f1.boxes.push_back({0, 1200});

  s.labels = {t0, t1};
  s.threads = {f0, f1};
  return s;
}

TEST(MetricsText, RendersAKnownSampleExactly) {
  const std::string expected =
      R"text(# HELP boreal_process_cpu_seconds_total CPU time of the whole node process (getrusage user + system).
# TYPE boreal_process_cpu_seconds_total counter
boreal_process_cpu_seconds_total{node="dst"} 1.5
# HELP boreal_process_resident_memory_bytes Resident memory of the node process now (/proc/self/statm).
# TYPE boreal_process_resident_memory_bytes gauge
boreal_process_resident_memory_bytes{node="dst"} 4096000
# HELP boreal_node_tuples_sent_total Tuples the node's sources generated.
# TYPE boreal_node_tuples_sent_total counter
boreal_node_tuples_sent_total{node="dst"} 1200
# HELP boreal_node_tuples_received_total Tuples the node's sinks consumed.
# TYPE boreal_node_tuples_received_total counter
boreal_node_tuples_received_total{node="dst"} 900
# HELP boreal_thread_cpu_seconds_total CPU time of the I/O thread (CLOCK_THREAD_CPUTIME_ID).
# TYPE boreal_thread_cpu_seconds_total counter
boreal_thread_cpu_seconds_total{node="dst",thread="0",wait="block"} 0.25
boreal_thread_cpu_seconds_total{node="dst",thread="1",wait="adaptive"} 0.5
# HELP boreal_thread_wait_seconds_total Time the I/O thread spent waiting for work, by how it waited.
# TYPE boreal_thread_wait_seconds_total counter
boreal_thread_wait_seconds_total{node="dst",thread="0",wait="block",state="sleep"} 0.0025
boreal_thread_wait_seconds_total{node="dst",thread="0",wait="block",state="block"} 1.5
boreal_thread_wait_seconds_total{node="dst",thread="0",wait="block",state="spin"} 0
boreal_thread_wait_seconds_total{node="dst",thread="1",wait="adaptive",state="sleep"} 0
boreal_thread_wait_seconds_total{node="dst",thread="1",wait="adaptive",state="block"} 0
boreal_thread_wait_seconds_total{node="dst",thread="1",wait="adaptive",state="spin"} 0.75
# HELP boreal_thread_polls_total Duty cycles of the I/O thread.
# TYPE boreal_thread_polls_total counter
boreal_thread_polls_total{node="dst",thread="0",wait="block"} 10
boreal_thread_polls_total{node="dst",thread="1",wait="adaptive"} 7
# HELP boreal_thread_empty_polls_total Duty cycles of the I/O thread that found no work.
# TYPE boreal_thread_empty_polls_total counter
boreal_thread_empty_polls_total{node="dst",thread="0",wait="block"} 4
boreal_thread_empty_polls_total{node="dst",thread="1",wait="adaptive"} 1
# HELP boreal_link_tuples_total Tuples the link end sent or received.
# TYPE boreal_link_tuples_total counter
boreal_link_tuples_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 1000
boreal_link_tuples_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 1200
# HELP boreal_link_payload_bytes_total Payload bytes of the data frames the link end sent or received (headers excluded).
# TYPE boreal_link_payload_bytes_total counter
boreal_link_payload_bytes_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 64000
boreal_link_payload_bytes_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 76800
# HELP boreal_link_frames_total Data frames the link end sent or received.
# TYPE boreal_link_frames_total counter
boreal_link_frames_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 4
boreal_link_frames_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 3
# HELP boreal_link_credit_stalls_total Frames the sending end could not claim for lack of credit.
# TYPE boreal_link_credit_stalls_total counter
boreal_link_credit_stalls_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 0
boreal_link_credit_stalls_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 5
# HELP boreal_link_duplicates_dropped_total Frames the receiving end discarded as already delivered (by sequence number).
# TYPE boreal_link_duplicates_dropped_total counter
boreal_link_duplicates_dropped_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 2
boreal_link_duplicates_dropped_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 0
# HELP boreal_link_frames_replayed_total Frames the sending end sent again after reconnecting.
# TYPE boreal_link_frames_replayed_total counter
boreal_link_frames_replayed_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 0
boreal_link_frames_replayed_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 0
# HELP boreal_link_reconnects_total Times the link end's connection was re-established after a loss.
# TYPE boreal_link_reconnects_total counter
boreal_link_reconnects_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 1
boreal_link_reconnects_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 0
# HELP boreal_link_backpressured_seconds_total Sending end: time its producers were held back; receiving end: time it was not polled because its stream was blocked downstream.
# TYPE boreal_link_backpressured_seconds_total counter
boreal_link_backpressured_seconds_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 0.125
boreal_link_backpressured_seconds_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 0
# HELP boreal_link_thread_cpu_seconds_total CPU time of the I/O thread that runs the link end (shared with that thread's other links and boxes).
# TYPE boreal_link_thread_cpu_seconds_total counter
boreal_link_thread_cpu_seconds_total{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 0.25
boreal_link_thread_cpu_seconds_total{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 0.5
# HELP boreal_link_frames_unacknowledged Sending end: frames committed and still held for the receiver.
# TYPE boreal_link_frames_unacknowledged gauge
boreal_link_frames_unacknowledged{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 3
# HELP boreal_link_send_buffers_in_use Sending end: its frame buffers (inproc: ring slots) in use.
# TYPE boreal_link_send_buffers_in_use gauge
boreal_link_send_buffers_in_use{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 5
# HELP boreal_link_send_buffers Sending end: its frame buffers (inproc: ring slots).
# TYPE boreal_link_send_buffers gauge
boreal_link_send_buffers{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 64
# HELP boreal_link_backlog_bytes Sending end: bytes of rows its writer holds back for lack of credit.
# TYPE boreal_link_backlog_bytes gauge
boreal_link_backlog_bytes{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 128
# HELP boreal_link_pickup_p99_seconds The receiver's pickup latency p99 (a frame's arrival at its host to its thread reading it), as last reported in a credit frame; 0: no report.
# TYPE boreal_link_pickup_p99_seconds gauge
boreal_link_pickup_p99_seconds{node="dst",link="src->dst:ticks",stream="ticks",peer="src",direction="recv",medium="tcp"} 2.1e-05
boreal_link_pickup_p99_seconds{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 0
# HELP boreal_link_flush_hold_seconds Sending end: how long a partly filled frame is held before it leaves.
# TYPE boreal_link_flush_hold_seconds gauge
boreal_link_flush_hold_seconds{node="dst",link="dst/1->dst/0:local",stream="local",peer="dst/0",direction="send",medium="inproc"} 0.00025
# HELP boreal_box_tuples_in_total Tuples the box took in (every box but sources).
# TYPE boreal_box_tuples_in_total counter
boreal_box_tuples_in_total{node="dst",box="keep",type="filter",thread="0"} 1000
boreal_box_tuples_in_total{node="dst",box="check",type="sink",thread="0"} 900
# HELP boreal_box_tuples_out_total Tuples the box emitted (every box but sinks).
# TYPE boreal_box_tuples_out_total counter
boreal_box_tuples_out_total{node="dst",box="keep",type="filter",thread="0"} 900
boreal_box_tuples_out_total{node="dst",box="gen",type="source",thread="1"} 1200
# HELP boreal_sink_lost_tuples Check sink: tuples missing from the sequence so far (falls when a late one arrives).
# TYPE boreal_sink_lost_tuples gauge
boreal_sink_lost_tuples{node="dst",box="check",thread="0"} 2
# HELP boreal_sink_duplicated_total Check sink: tuples whose sequence number had been delivered already.
# TYPE boreal_sink_duplicated_total counter
boreal_sink_duplicated_total{node="dst",box="check",thread="0"} 1
# HELP boreal_sink_out_of_order_total Check sink: tuples that arrived after a later sequence number.
# TYPE boreal_sink_out_of_order_total counter
boreal_sink_out_of_order_total{node="dst",box="check",thread="0"} 3
# HELP boreal_sink_latency_seconds Sink: latency of the tuples it received, from their timestamp field.
# TYPE boreal_sink_latency_seconds histogram
)text";
  EXPECT_EQ(render_metrics(two_threads()), expected);
}

// A latency sink's histogram: the sink's fine histogram folded into the coarse buckets
// (metrics_sample.hpp), cumulative, each bound the largest whole nanosecond it holds, in
// seconds. The expected bounds are 2^k (1 + j/4) − 1 ns, worked out apart from the code.
TEST(MetricsText, RendersASinkLatencyHistogramExactly) {
  boreal::ops::LatencyHistogram histogram;
  for (const std::int64_t ns : {500LL, 1024LL, 1279LL, 1280LL, 3'000'000'000LL, 20'000'000'000LL}) {
    histogram.record(ns);
  }
  MetricsSample s;
  s.node = "dst";
  ThreadLabels labels;
  labels.thread = 2;
  labels.wait = "sleep";
  labels.sinks.push_back({"timed", false, true});
  ThreadFigures figures;
  SinkFigures sink;
  fold_latency(histogram, sink.latency);
  sink.latency_count = histogram.count();
  sink.latency_sum_ns = histogram.sum();
  figures.sinks.push_back(sink);
  s.labels = {labels};
  s.threads = {figures};
  const std::string text = render_metrics(s);
  const std::string expected =
      R"text(# HELP boreal_sink_latency_seconds Sink: latency of the tuples it received, from their timestamp field.
# TYPE boreal_sink_latency_seconds histogram
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000001023"} 1
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000001279"} 3
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000001535"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000001791"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000002047"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000002559"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000003071"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000003583"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000004095"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000005119"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000006143"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000007167"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000008191"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000010239"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000012287"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000014335"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000016383"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000020479"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000024575"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000028671"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000032767"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000040959"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000049151"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000057343"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000065535"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000081919"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000098303"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000114687"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000131071"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000163839"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000196607"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000229375"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000262143"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000327679"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000393215"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000458751"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000524287"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000655359"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000786431"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.000917503"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.001048575"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.001310719"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.001572863"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.001835007"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.002097151"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.002621439"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.003145727"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.003670015"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.004194303"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.005242879"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.006291455"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.007340031"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.008388607"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.010485759"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.012582911"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.014680063"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.016777215"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.020971519"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.025165823"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.029360127"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.033554431"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.041943039"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.050331647"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.058720255"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.067108863"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.083886079"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.100663295"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.117440511"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.134217727"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.167772159"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.201326591"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.234881023"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.268435455"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.335544319"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.402653183"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.469762047"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.536870911"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.671088639"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.805306367"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="0.939524095"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="1.073741823"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="1.342177279"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="1.610612735"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="1.879048191"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="2.147483647"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="2.684354559"} 4
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="3.221225471"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="3.758096383"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="4.294967295"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="5.368709119"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="6.442450943"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="7.516192767"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="8.589934591"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="10.737418239"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="12.884901887"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="15.032385535"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="17.179869183"} 5
boreal_sink_latency_seconds_bucket{node="dst",box="timed",thread="2",le="+Inf"} 6
boreal_sink_latency_seconds_sum{node="dst",box="timed",thread="2"} 23.000004083
boreal_sink_latency_seconds_count{node="dst",box="timed",thread="2"} 6
)text";
  const auto at = text.find("# HELP boreal_sink_latency_seconds ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.substr(at), expected);
  // A sink that does not check sequences has no loss series.
  EXPECT_EQ(text.find("boreal_sink_lost_tuples{"), std::string::npos) << text;
}

TEST(MetricsText, LatencyBucketBoundsAreEdgesOfTheFineHistogram) {
  for (std::size_t i = 0; i + 1 < kLatencyBuckets; ++i) {
    const std::int64_t le = latency_bucket_le_ns(i);
    const auto fine = boreal::ops::LatencyHistogram::bucket_of(le);
    EXPECT_EQ(boreal::ops::LatencyHistogram::bucket_highest(fine), le) << i;
    EXPECT_EQ(boreal::ops::LatencyHistogram::bucket_of(le + 1), fine + 1) << i;
  }
  EXPECT_EQ(latency_bucket_le_ns(kLatencyBuckets - 2), (std::int64_t{1} << 34) - 1);
}

TEST(MetricsText, EscapesBackslashQuoteAndNewlineInLabelValues) {
  MetricsSample s = two_threads();
  s.node = "a\\b\"c\nd";
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("boreal_process_cpu_seconds_total{node=\"a\\\\b\\\"c\\nd\"} 1.5\n"),
            std::string::npos)
      << text;
}

// Every family: HELP, then TYPE, then at least one series of that name; counters end in _total.
TEST(MetricsText, EveryFamilyHasHelpTypeAndSeriesAndCountersEndInTotal) {
  std::istringstream in(render_metrics(two_threads()));
  std::string line;
  std::string family;
  std::string type;
  int families = 0;
  int series = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      ++families;
      ASSERT_TRUE(std::getline(in, line));
      ASSERT_EQ(line.rfind("# TYPE " + family + " ", 0), 0U) << line;
      type = line.substr(8 + family.size());
      EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram") << line;
      if (type == "counter") {
        EXPECT_TRUE(family.ends_with("_total")) << family;
      }
      EXPECT_EQ(family.rfind("boreal_", 0), 0U) << family;
      continue;
    }
    ASSERT_EQ(line.rfind(family + "{node=\"dst\"", 0), 0U) << line;
    ++series;
  }
  EXPECT_EQ(families, 29);
  EXPECT_GT(series, families);
}

TEST(MetricsText, AnEmptyNodeStillHasItsProcessAndNodeFamilies) {
  MetricsSample s;
  s.node = "idle";
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("boreal_node_tuples_sent_total{node=\"idle\"} 0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE boreal_link_tuples_total counter\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("boreal_link_tuples_total{"), std::string::npos) << text;
}

TEST(MetricsBoard, SampleReturnsWhatEachThreadPublishedWithItsLabels) {
  const MetricsSample known = two_threads();
  MetricsBoard board("dst", known.labels);
  ASSERT_EQ(board.threads(), 2U);
  for (std::size_t t = 0; t < 2; ++t) board.publish(t, known.threads[t]);
  MetricsSample read = board.sample();
  EXPECT_GT(read.process.cpu_s, 0.0);
  EXPECT_GT(read.process.resident_bytes, 0U);
  read.process = known.process;
  EXPECT_EQ(render_metrics(read), render_metrics(known));
}

TEST(MetricsBoard, BeforeAnyPublishEveryFigureIsZero) {
  MetricsBoard board("dst", two_threads().labels);
  const MetricsSample read = board.sample();
  ASSERT_EQ(read.threads.size(), 2U);
  ASSERT_EQ(read.threads[0].links.size(), 1U);
  EXPECT_EQ(read.threads[0].links[0].stats.tuples, 0U);
  ASSERT_EQ(read.threads[0].boxes.size(), 2U);
  EXPECT_EQ(read.threads[1].tuples_sent, 0U);
  ASSERT_EQ(read.threads[0].sinks.size(), 1U);
  EXPECT_EQ(read.threads[0].sinks[0].latency_count, 0U);
  EXPECT_EQ(read.threads[1].links[0].occupancy.buffers, 0U);
}

// A writer publishes figures whose every number is its round k; a reader sampling meanwhile
// must never see two rounds mixed in one thread's figures (run under ThreadSanitizer too).
TEST(MetricsBoard, AReaderNeverSeesHalfAPublication) {
  MetricsBoard board("dst", two_threads().labels);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    ThreadFigures f = board.blank(0);
    for (std::uint64_t k = 1; k <= 20000; ++k) {
      f.tuples_received = k;
      f.wait.polls = k;
      for (auto& link : f.links) link.stats.tuples = k;
      for (auto& box : f.boxes) box = {k, k};
      board.publish(0, f);
    }
    done = true;
  });
  std::uint64_t last = 0;
  int samples = 0;
  while (!done.load() || samples == 0) {
    const MetricsSample s = board.sample();
    const ThreadFigures& f = s.threads[0];
    const std::uint64_t k = f.tuples_received;
    ASSERT_EQ(f.wait.polls, k);
    ASSERT_EQ(f.links[0].stats.tuples, k);
    ASSERT_EQ(f.boxes[1].tuples_in, k);
    ASSERT_GE(k, last);
    last = k;
    ++samples;
  }
  writer.join();
  EXPECT_EQ(board.sample().threads[0].tuples_received, 20000U);
}

}  // namespace
