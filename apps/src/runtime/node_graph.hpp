// What one I/O thread of a node runs, wired from the network file (docs/design.md, "Threads, ports
// and back-pressure"): its boxes in arrow order, one StreamFanout per stream it produces or
// receives, a LinkReader per stream it receives from another node, a LinkWriter per stream
// and consuming node it sends to, and its sources and sinks.
//
//   build_node_graph()   places and wires; opens the listeners first (receiving side), then
//                        starts connecting the sending links
//   NodeGraph::do_work() one duty cycle: receive, generate, flush the boxes' partial
//                        batches, send; returns the work done (docs/design.md, convention 1)
//
// A source whose stream goes to exactly one other node and to no box of its own node writes
// into that link's frames directly (no copy); any other stream is handed on through its
// fan-out. Between boxes of one thread an arrow is a direct call; between threads of one node
// it is an inproc ring (transport/inproc_medium.hpp): the stream's home thread (the producer's,
// or the one receiving it from another node: stream_thread()) writes it into one ring per
// other thread that consumes it, made up front by make_thread_links().
//
// Threading: built on the node's main thread before the I/O threads start; run on its own.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/inproc_medium.hpp>
#include <boreal/transport/wait_mode.hpp>

#include "runtime/checkpoint.hpp"
#include "runtime/link_ports.hpp"
#include "runtime/media.hpp"
#include "runtime/sink_task.hpp"
#include "runtime/source_task.hpp"
#include "runtime/stream_fanout.hpp"
#include "spec/network_spec.hpp"

namespace boreal::runtime {

// The inproc rings between a node's threads: one per stream and thread that consumes it away
// from its home thread, keyed by (stream, consuming thread). build_node_graph() takes the ends.
using ThreadLinks = std::map<std::pair<std::string, std::uint32_t>, transport::InprocPair>;

// Makes every ring node `self` needs; loops[t] is thread t's loop.
[[nodiscard]] transport::Result<ThreadLinks> make_thread_links(
    const std::vector<transport::EventLoop*>& loops, const NetworkSpec& spec, const NodeSpec& self);

struct NodeGraph {
  NodeGraph(transport::EventLoop& event_loop, std::uint32_t thread_index)
      : loop(event_loop), thread(thread_index) {}

  transport::EventLoop& loop;
  std::uint32_t thread;
  std::vector<std::unique_ptr<transport::RecvLink>> inproc_in;  // ends from ThreadLinks
  Listeners listeners;
  // The wave its links that share tcp connections flush in (made with the first of them).
  std::unique_ptr<FlushWave> flush_wave;
  std::map<std::string, std::unique_ptr<StreamFanout>, std::less<>> fanouts;
  std::vector<std::unique_ptr<BoxRunner>> boxes;  // arrow order
  std::vector<std::string> box_types;             // boxes[i]'s type
  std::vector<std::unique_ptr<BoxInput>> inputs;
  std::vector<std::unique_ptr<SinkTask>> sinks;
  std::vector<std::unique_ptr<LinkWriter>> writers;
  std::vector<LinkWriter*> pumped;  // the writers fed through a fan-out (not by one source)
  std::vector<std::unique_ptr<LinkReader>> readers;
  std::vector<std::unique_ptr<FanoutTarget>> targets;
  std::vector<std::unique_ptr<SourceTask>> sources;
  // The node's one wait: the streams' mode and spin (parse_network() checked they agree) and
  // the smallest latency budget left to it (a receiver's share is the budget minus the
  // sender's flush).
  transport::WaitConfig wait;


  // The node's checkpoint (runtime/checkpoint.hpp): its file (empty: none) and, on a restart,
  // what the last run recorded.
  std::string checkpoint_path;
  std::optional<Checkpoint> resumed;

  // One duty cycle at `now`; `tick_ns` (realtime) when the boxes' clock should advance, else 0.
  int do_work(std::chrono::steady_clock::time_point now, std::int64_t tick_ns);
  // Checkpoints when it is due: every kCheckpointInterval, when an input holds
  // kCheckpointBackupWindows - 1 windows unacknowledged, or when an input has just ended.
  // Then acknowledges every input up to what the checkpoint holds. Between duty cycles only.
  [[nodiscard]] transport::Result<void> maybe_checkpoint(std::chrono::steady_clock::time_point now);
  // The run is over: the checkpoint is of no more use.
  void drop_checkpoint();
  // Every source, reader, writer and sink is done: the node's part of the run is over.
  [[nodiscard]] bool done() const noexcept;
  // Whether something on this thread acts on the clock while no tuple comes: a box that
  // ticks on it (an aggregate's timeout, a hold resample) or a checkpoint file (a checkpoint
  // every kCheckpointInterval). An idle thread then still ticks every 10 ms; others less
  // often (node.cpp, NodeAgent).
  [[nodiscard]] bool follows_clock() const noexcept;

  std::string node_name;

 private:
  friend transport::Result<std::unique_ptr<NodeGraph>> build_node_graph(
      transport::EventLoop&, const NetworkSpec&, const NodeSpec&, std::uint32_t, ThreadLinks&);
  std::chrono::steady_clock::time_point last_checkpoint_{};
  std::size_t readers_ended_ = 0;
  // Per reader: the frame acknowledged last, and after how many more frames a checkpoint is due.
  std::vector<std::uint64_t> acknowledged_;
  std::vector<std::uint64_t> checkpoint_every_;
  // Per writer: its link's sender id, and the frame its last checkpoint released.
  std::vector<std::uint32_t> sender_ids_;
  std::vector<std::uint64_t> released_;
  std::uint64_t generation_ = 0;  // of the last checkpoint written or resumed from
};

// How often a checkpointing node checkpoints at the least.
inline constexpr std::chrono::milliseconds kCheckpointInterval{100};

// Places the boxes of thread `thread` of node `self` and wires them, taking its ends of
// `links`. An Error when it cannot start: a medium that cannot join nodes, a listener that
// cannot open, an output file that cannot be written.
// Rows per batch of a box's outputs on a node: ops::Output's default (1024), fewer for wide
// tuples, so one output batch stays within kOutputBatchBytes (a 1024-row batch of 64-byte
// tuples): a batch of 64 KiB tuples holds one row, not 64 MiB.
inline constexpr std::size_t kOutputBatchBytes = 64 * 1024;
[[nodiscard]] std::size_t output_batch_rows(const NetworkSpec& spec, const BoxSpec& box);

[[nodiscard]] transport::Result<std::unique_ptr<NodeGraph>> build_node_graph(
    transport::EventLoop& loop, const NetworkSpec& spec, const NodeSpec& self,
    std::uint32_t thread, ThreadLinks& links);

}  // namespace boreal::runtime
