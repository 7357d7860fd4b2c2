// One node of a query network, run on the calling thread (`boreal run FILE --node NAME`).
//
// The node runs its part of the network (node_graph.hpp): every box placed on it, a receiving
// link for every stream that enters it, a sending link for every stream and other node that
// consumes it, on its I/O threads (`threads`, default 1): the calling thread is thread 0 and
// each other one a std::thread. Each runs its boxes and links with its own EventLoop and wait
// mode, as one agent whose do_work() receives, runs the boxes, sends (docs/design.md,
// convention 1); streams between threads go over inproc rings.
//
// The node writes JSON lines to `out`: progress objects ({"kind":"progress",...}) about once
// a second, then one {"kind":"node",...} object with everything it measured (NodeReport),
// with a section per box and per link.
//
// With a metrics port, the node also serves its running totals over HTTP for Prometheus
// (metrics_server.hpp, docs/metrics.md) from a thread of its own, for as long as it runs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "spec/network_spec.hpp"
#include "runtime/node_report.hpp"

namespace boreal::runtime {

struct NodeOptions {
  std::string node;  // which node of the spec this process is
  // Progress lines at this interval (0 = none).
  std::chrono::milliseconds progress_interval{1000};
  // The node gives up (and reports an error) when it has not finished this long after start;
  // 0 = derived from the sources' limits (duration + 30 s) or unlimited.
  std::chrono::milliseconds timeout{0};
  // Serve live metrics on this TCP port (0: a free one), at the node's own host address when
  // it is numeric (metrics_bind_address()); the URL goes to stderr and the port into the
  // report. nullopt: no server.
  std::optional<std::uint16_t> metrics_port;
};

// How long a run of `spec` may take when every source stops by time: the longest source
// duration plus `slack` (for start-up, connecting and draining). 0 when some source has no
// time limit (it may run as long as its tuple count takes, or for ever).
[[nodiscard]] std::chrono::milliseconds time_limit(const NetworkSpec& spec,
                                                   std::chrono::milliseconds slack);

// Runs the node until every source has sent its end of stream and had it acknowledged and
// every sink has received its end of stream, or a link failed, or `stop` is set, or the
// timeout passed. Returns the node's report; a failed link is recorded in it
// (report.errors), not returned as an error. Returns an error only when the node cannot
// start (unknown node, unsupported medium, port in use...).
[[nodiscard]] transport::Result<NodeReport> run_node(const NetworkSpec& spec,
                                                     const NodeOptions& options,
                                                     const std::atomic<bool>& stop,
                                                     std::ostream& out);

}  // namespace boreal::runtime
