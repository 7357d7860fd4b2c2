#include "runtime/media.hpp"

#include <cstdlib>

#include <algorithm>
#include <array>
#include <map>
#include <string>

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

transport::Result<std::unique_ptr<transport::SendLink>> tcp_connect(
    transport::EventLoop& loop, const NetworkSpec&, const StreamSpec&, const NodeSpec& peer,
    std::uint32_t peer_thread, const transport::LinkOptions& options) {
  return transport::make_tcp_send_link(loop, {peer.uri.host, tcp_listen_port(peer, peer_thread)},
                                       options);
}

transport::Result<transport::RecvLink*> tcp_expect(transport::EventLoop& loop,
                                                   Listeners& listeners, const NetworkSpec&,
                                                   const StreamSpec&, const NodeSpec& self,
                                                   std::uint32_t thread,
                                                   const transport::LinkOptions& options) {
  if (!listeners.tcp) {
    const std::uint16_t port = tcp_listen_port(self, thread);
    auto listener = transport::TcpListener::open(loop, {self.uri.host, port});
    if (!listener) {
      return fail(listener.error().category, listener.error().code,
                  "node '" + self.name + "' cannot listen on " + self.address +
                      (thread == 0 ? "" : " (thread " + std::to_string(thread) + ": port " +
                                              std::to_string(port) + ")") +
                      ": " + listener.error().message);
    }
    listeners.tcp = std::move(listener).value();
  }
  return &listeners.tcp->expect(options);
}

template <transport::FabricTransfer kTransfer>
transport::Result<std::unique_ptr<transport::SendLink>> fabric_connect(
    transport::EventLoop& loop, const NetworkSpec& spec, const StreamSpec& stream,
    const NodeSpec& peer, std::uint32_t peer_thread, const transport::LinkOptions& options) {
  return transport::make_fabric_send_link(
      loop,
      {fabric_provider(spec, stream), peer.uri.host, fabric_listen_port(spec, peer, peer_thread)},
      options, kTransfer);
}

template <transport::FabricTransfer kTransfer>
transport::Result<transport::RecvLink*> fabric_expect(transport::EventLoop& loop,
                                                      Listeners& listeners,
                                                      const NetworkSpec& spec,
                                                      const StreamSpec& stream,
                                                      const NodeSpec& self, std::uint32_t thread,
                                                      const transport::LinkOptions& options) {
  if (!listeners.fabric) {
    const transport::FabricEndpoint local{fabric_provider(spec, stream), self.uri.host,
                                          fabric_listen_port(spec, self, thread)};
    auto listener = transport::FabricListener::open(loop, local);
    if (!listener) {
      return fail(listener.error().category, listener.error().code,
                  "node '" + self.name + "' cannot receive over " + stream.transport.medium +
                      ": " + listener.error().message);
    }
    listeners.fabric = std::move(listener).value();
  }
  return listeners.fabric->expect(options, kTransfer);
}

constexpr std::array<Medium, 3> kMediaTable = {{
    {"tcp", &tcp_connect, &tcp_expect},
    {"fabric-msg", &fabric_connect<transport::FabricTransfer::messages>,
     &fabric_expect<transport::FabricTransfer::messages>},
    {"fabric-rma", &fabric_connect<transport::FabricTransfer::rma_writes>,
     &fabric_expect<transport::FabricTransfer::rma_writes>},
}};

}  // namespace

std::span<const Medium> media_between_nodes() noexcept { return kMediaTable; }

const Medium* find_medium(std::string_view name) noexcept {
  const auto it = std::find_if(kMediaTable.begin(), kMediaTable.end(),
                               [&](const Medium& medium) { return medium.name == name; });
  return it == kMediaTable.end() ? nullptr : &*it;
}

transport::LinkOptions link_options(const NetworkSpec& spec, const StreamSpec& stream,
                                    const ops::Schema& schema) {
  transport::LinkOptions options;
  options.stream_id = stream.id;
  options.tuple_bytes = schema.tuple_bytes();
  options.schema_hash = schema.hash();
  options.cluster_token = spec.cluster_token;
  options.max_payload_bytes = stream.transport.batch_bytes;
  options.window = stream.transport.window;
  options.credit_batch = std::max<std::uint32_t>(1, stream.transport.window / 4);
  options.name = stream.name;
  // A checkpointing receiver acknowledges a frame only once a checkpoint holds it, up to a
  // checkpoint interval later than it returns the credit: the sender keeps that much more.
  for (const std::string& node : stream.consumer_nodes) {
    const NodeSpec* consumer = spec.find_node(node);
    if (node != stream.producer_node && consumer != nullptr && !consumer->checkpoint.empty()) {
      options.backup_frames = kCheckpointBackupWindows * options.window;
    }
  }
  return options;
}

std::string size_rxm_receive_queue(const NetworkSpec& spec, const NodeSpec& self) {
  // Per receiving thread (one endpoint each): its fabric-msg links over rxm, and their receives.
  struct Posted {
    std::size_t links = 0;
    std::size_t receives = 0;
  };
  std::map<std::uint32_t, Posted> by_thread;
  for (const StreamSpec& stream : spec.streams) {
    if (stream.producer_node == self.name || !stream.consumed_on(self.name)) continue;
    if (stream.transport.medium != "fabric-msg") continue;
    if (fabric_provider(spec, stream).find("ofi_rxm") == std::string::npos) continue;
    auto& posted = by_thread[stream_thread(spec, stream, self.name)];
    ++posted.links;
    posted.receives += stream.transport.window;
  }
  Posted most;
  for (const auto& [thread, posted] : by_thread) {
    if (posted.receives > most.receives) most = posted;
  }
  // Room for the listener's few hello receives, and to spare.
  constexpr std::size_t kHelloRoom = 64;
  const std::size_t need = most.receives + kHelloRoom;
  if (need <= kRxmReceiveQueue || std::getenv("FI_OFI_RXM_RX_SIZE") != nullptr) return {};
  const std::string value = std::to_string(need);
  ::setenv("FI_OFI_RXM_RX_SIZE", value.c_str(), 0);
  return "FI_OFI_RXM_RX_SIZE=" + value + " (" + std::to_string(most.links) +
         " fabric-msg links into one thread post " + std::to_string(most.receives) +
         " receives on its endpoint; rxm holds " + std::to_string(kRxmReceiveQueue) +
         " unless told)";
}

std::string size_rxm_bounce_buffers(const NetworkSpec& spec, const NodeSpec& self) {
  bool over_rxm = false;
  std::map<std::uint32_t, std::size_t> windows_by_thread;
  for (const StreamSpec& stream : spec.streams) {
    const std::string& medium = stream.transport.medium;
    if (medium != "fabric-msg" && medium != "fabric-rma") continue;
    if (fabric_provider(spec, stream).find("ofi_rxm") == std::string::npos) continue;
    if (!stream.link_end_on(self.name)) continue;
    over_rxm = true;
    if (stream.producer_node != self.name) {
      windows_by_thread[stream_thread(spec, stream, self.name)] += stream.transport.window;
    }
  }
  if (!over_rxm || std::getenv("FI_OFI_RXM_MSG_RX_SIZE") != nullptr) return {};
  std::size_t most = 0;
  for (const auto& [thread, windows] : windows_by_thread) most = std::max(most, windows);
  const std::size_t need = std::max(kRxmMessageReceives, most + kRxmControlReceives);
  const std::string value = std::to_string(need);
  ::setenv("FI_OFI_RXM_MSG_RX_SIZE", value.c_str(), 0);
  return value;
}

}  // namespace boreal::runtime
