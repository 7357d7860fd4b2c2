// What one node runs, wired from the network file (docs/design.md, "Threads, ports and
// back-pressure"): its boxes in arrow order, one StreamFanout per stream it produces or
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
// fan-out. Inside a node every arrow is a direct call on the one I/O thread.
//
// Threading: built and run on the node's I/O thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/wait_mode.hpp>

#include "runtime/link_ports.hpp"
#include "runtime/media.hpp"
#include "runtime/sink_task.hpp"
#include "runtime/source_task.hpp"
#include "runtime/stream_fanout.hpp"
#include "spec/network_spec.hpp"

namespace boreal::runtime {

struct NodeGraph {
  explicit NodeGraph(transport::EventLoop& event_loop) : loop(event_loop) {}

  transport::EventLoop& loop;
  Listeners listeners;
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

  // One duty cycle at `now`; `tick_ns` (realtime) when the boxes' clock should advance, else 0.
  int do_work(std::chrono::steady_clock::time_point now, std::int64_t tick_ns);
  // Every source, reader, writer and sink is done: the node's part of the run is over.
  [[nodiscard]] bool done() const noexcept;
};

// Places the boxes of node `self` and wires them. An Error when the node cannot start: no
// box on it, a medium that cannot join nodes, a listener that cannot open, an output file
// that cannot be written.
[[nodiscard]] transport::Result<std::unique_ptr<NodeGraph>> build_node_graph(
    transport::EventLoop& loop, const NetworkSpec& spec, const NodeSpec& self);

}  // namespace boreal::runtime
