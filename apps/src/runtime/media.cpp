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
    transport::EventLoop& loop, Listeners& listeners, const NetworkSpec&,
    const StreamSpec& stream, const NodeSpec& peer, std::uint32_t peer_thread,
    const transport::LinkOptions& options) {
  const bool shared = stream.transport.shares_connection();
  return transport::make_tcp_send_link(loop, {peer.uri.host, tcp_listen_port(peer, peer_thread)},
                                       options, std::chrono::seconds(10),
                                       shared ? &listeners.tcp_shared : nullptr);
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
    transport::EventLoop& loop, Listeners&, const NetworkSpec& spec, const StreamSpec& stream,
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

namespace {

// A fabric stream whose provider is rxm over something (tcp;ofi_rxm, verbs;ofi_rxm).
bool over_rxm(const NetworkSpec& spec, const StreamSpec& stream, bool with_rma) {
  const std::string& medium = stream.transport.medium;
  if (medium != "fabric-msg" && !(with_rma && medium == "fabric-rma")) return false;
  return fabric_provider(spec, stream).find("ofi_rxm") != std::string::npos;
}

// The receiving thread of `self` (one endpoint each) whose links over rxm (fabric-msg, and
// fabric-rma `with_rma`) have the largest windows summed: how many links, and that sum.
struct RxmThread {
  std::size_t links = 0;
  std::size_t windows = 0;
};
RxmThread busiest_rxm_thread(const NetworkSpec& spec, const NodeSpec& self, bool with_rma) {
  std::map<std::uint32_t, RxmThread> by_thread;
  for (const StreamSpec& stream : spec.streams) {
    if (stream.producer_node == self.name || !stream.consumed_on(self.name)) continue;
    if (!over_rxm(spec, stream, with_rma)) continue;
    auto& thread = by_thread[stream_thread(spec, stream, self.name)];
    ++thread.links;
    thread.windows += stream.transport.window;
  }
  RxmThread most;
  for (const auto& [index, thread] : by_thread) {
    if (thread.windows > most.windows) most = thread;
  }
  return most;
}

}  // namespace

std::string size_rxm_receive_queue(const NetworkSpec& spec, const NodeSpec& self) {
  // fabric-msg posts a window of receives per link.
  const RxmThread most = busiest_rxm_thread(spec, self, /*with_rma=*/false);
  // Room for the listener's few hello receives, and to spare.
  constexpr std::size_t kHelloRoom = 64;
  const std::size_t need = most.windows + kHelloRoom;
  if (need <= kRxmReceiveQueue || std::getenv("FI_OFI_RXM_RX_SIZE") != nullptr) return {};
  const std::string value = std::to_string(need);
  ::setenv("FI_OFI_RXM_RX_SIZE", value.c_str(), 0);
  return "FI_OFI_RXM_RX_SIZE=" + value + " (" + std::to_string(most.links) +
         " fabric-msg links into one thread post " + std::to_string(most.windows) +
         " receives on its endpoint; rxm holds " + std::to_string(kRxmReceiveQueue) +
         " unless told)";
}

std::string size_rxm_bounce_buffers(const NetworkSpec& spec, const NodeSpec& self) {
  const bool has_rxm_link = std::any_of(spec.streams.begin(), spec.streams.end(),
                                        [&](const StreamSpec& stream) {
                                          return stream.link_end_on(self.name) &&
                                                 over_rxm(spec, stream, /*with_rma=*/true);
                                        });
  if (!has_rxm_link || std::getenv("FI_OFI_RXM_MSG_RX_SIZE") != nullptr) return {};
  const RxmThread most = busiest_rxm_thread(spec, self, /*with_rma=*/true);
  const std::size_t need = std::max(kRxmMessageReceives, most.windows + kRxmControlReceives);
  const std::string value = std::to_string(need);
  ::setenv("FI_OFI_RXM_MSG_RX_SIZE", value.c_str(), 0);
  return value;
}

}  // namespace boreal::runtime
