// The media a stream between nodes can take, as a table of named factories: each knows how to
// open the sending end toward a peer and how to expect the receiving end on this node's
// listener. A name not in the table is an error that lists the valid ones.
//
//   tcp         Boost.Asio sockets to the peer's address (transport/tcp_medium.hpp)
//   fabric-msg  libfabric messages into pre-posted buffers (transport/fabric_medium.hpp)
//   fabric-rma  libfabric RDMA writes into a registered ring
//
// (inproc links only join threads of one process and are made by the node itself.)
//
// Threading: the factories run on the node's thread at set-up.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/fabric_medium.hpp>
#include <boreal/transport/link.hpp>
#include <boreal/transport/tcp_medium.hpp>

#include "spec/network_spec.hpp"

namespace boreal::runtime {

// One I/O thread's listeners, opened when the first stream that needs one is expected, and
// the tcp connections its sending links share (connection: per-thread-pair).
struct Listeners {
  std::unique_ptr<transport::TcpListener> tcp;
  std::unique_ptr<transport::FabricListener> fabric;
  transport::TcpConnections tcp_shared;
};

struct Medium {
  std::string_view name;
  // The sending end of `stream` toward node `peer`, whose thread `peer_thread` receives it.
  transport::Result<std::unique_ptr<transport::SendLink>> (*connect)(
      transport::EventLoop& loop, Listeners& listeners, const NetworkSpec& spec,
      const StreamSpec& stream, const NodeSpec& peer, std::uint32_t peer_thread,
      const transport::LinkOptions& options);
  // The receiving end of `stream` on thread `thread` of node `self`, on that thread's
  // listener for this medium (network_spec.hpp: tcp_listen_port, fabric_listen_port).
  transport::Result<transport::RecvLink*> (*expect)(
      transport::EventLoop& loop, Listeners& listeners, const NetworkSpec& spec,
      const StreamSpec& stream, const NodeSpec& self, std::uint32_t thread,
      const transport::LinkOptions& options);
};

// The media between nodes, in the order the docs list them.
[[nodiscard]] std::span<const Medium> media_between_nodes() noexcept;
// nullptr when `name` is not a medium between nodes.
[[nodiscard]] const Medium* find_medium(std::string_view name) noexcept;

// How a stream's link is set up: its id, tuple size, schema hash, window, frame size.
// Windows of frames a sender keeps beyond its window for a checkpointing receiver, which
// checkpoints (and acknowledges) at the latest when it holds this many windows unacknowledged.
inline constexpr std::uint32_t kCheckpointBackupWindows = 4;

[[nodiscard]] transport::LinkOptions link_options(const NetworkSpec& spec,
                                                  const StreamSpec& stream,
                                                  const ops::Schema& schema);

// fabric-msg posts a window of receives per link on its receiving thread's endpoint, and
// libfabric's rxm (tcp;ofi_rxm, verbs;ofi_rxm) holds kRxmReceiveQueue posted receives per
// endpoint unless FI_OFI_RXM_RX_SIZE says otherwise, which libfabric reads when it first loads
// its providers. Before that, in a node whose fabric-msg links into one thread need more, this
// sets FI_OFI_RXM_RX_SIZE to what they need, unless it is set already, and says what it set
// (empty: nothing). Called once, before the node opens anything.
inline constexpr std::size_t kRxmReceiveQueue = 2048;  // libfabric 1.17's default (fi_info -e)
[[nodiscard]] std::string size_rxm_receive_queue(const NetworkSpec& spec, const NodeSpec& self);

// Under each rxm endpoint over tcp, libfabric 1.17 posts FI_OFI_RXM_MSG_RX_SIZE bounce
// buffers of 16 KiB (FI_OFI_RXM_BUFFER_SIZE) on a shared receive context, 4096 unless told:
// ~64 MiB, and ~86 MiB resident per endpoint with its pools, where a sending endpoint takes in
// only credit, acknowledgement and heartbeat frames, and a receiving one at most a window of
// frames per link (each link's credit bounds what its sender has in flight), plus hellos.
// Before libfabric loads, in a node with a fabric link over rxm, this sets
// FI_OFI_RXM_MSG_RX_SIZE (unless it is set already) to the most any of the node's receiving
// threads needs: the sum of its rxm links' windows plus kRxmControlReceives, and at least
// kRxmMessageReceives, rxm's own size where it shares no receive context. A buffer short only
// delays: the connection waits until rxm has one again. Returns the value set (empty:
// nothing). Called once, before the node opens anything.
inline constexpr std::size_t kRxmSharedReceives = 4096;   // libfabric 1.17's default with srx
inline constexpr std::size_t kRxmMessageReceives = 128;   // and without
inline constexpr std::size_t kRxmControlReceives = 64;    // hellos, heartbeats, to spare
[[nodiscard]] std::string size_rxm_bounce_buffers(const NetworkSpec& spec, const NodeSpec& self);

}  // namespace boreal::runtime
