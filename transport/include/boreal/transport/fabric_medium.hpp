// The `fabric-msg` and `fabric-rma` media: links over libfabric, provider chosen at run time
// ("tcp;ofi_rxm", "sockets", "net", "shm" here; "verbs;ofi_rxm", "efa" on a cluster). The
// transfer is chosen per link (FabricTransfer); one listener serves links of both kinds.
//
// Wire: the same 32-byte frames as tcp (decode_header / verify_checksum on every frame).
// The receiving node opens one reliable-datagram endpoint bound to host:port. The sender
// resolves the same host:port and sends a hello on a tagged message (stream id, schema hash,
// tuple bytes, cluster token, the transfer kind, for fabric-rma its credit words' address and
// key, then its own endpoint name); the listener refuses a hello whose transfer differs from
// the expected link's. Frames are built in place in the sender's registered pool.
//
// fabric-msg: every expected link pre-posts `window` receive buffers (a registered
// BufferPool) tagged with its stream id and grants exactly that much credit. The sender
// fi_tsend's each committed frame. Credit goes back as 32-byte frames sent with fi_tinject,
// the end-of-stream acknowledgement as one sent with a completion (below).
//
// fabric-rma: every expected link registers a ring of `window` frame slots for remote writes
// and answers the hello with one tagged setup message (ring address and key, slots, slot
// bytes, a link index 1..255, initial credit). The sender fi_writedata's frame `sequence` to
// slot (sequence - 1) % window with 32 bits of immediate data, link index (8 bits) | slot
// (8 bits) | frame length (16 bits); the receiver learns of it from its completion queue,
// checks the immediate and the frame, and delivers in order. Credit totals and the ack are
// written back with fi_writedata into two 8-byte words registered by the sender, the
// immediate naming which (src/fabric/fabric_wire.hpp has the byte layouts). Hence its limits:
// window <= 256, header + batch bytes <= 65535, at most 255 fabric-rma links per listener, a
// provider with FI_RMA and >= 4 bytes of remote CQ data.
//
// A send or write refused with -FI_EAGAIN (rxm during connection set-up) stays queued and is
// retried after the completion queue was read, in the next do_work().
//
// Connecting: a hello that fails because nobody listens yet (sockets: -FI_ENOENT at once, or
// an error completion) is sent again after 10 ms, doubling up to 200 ms, until the connect
// timeout, whose error then names the last failure. So a sender may start before its receiver.
//
// End of stream: the receiving link sends the ack as an operation with a completion
// (FI_DELIVERY_COMPLETE where the provider takes it, else FI_TRANSMIT_COMPLETE, else its
// default) and reports `finished` only once it completed, so its node may close the
// endpoint right away.
//
// Liveness (LinkOptions::heartbeat, ::peer_timeout): each established end sends a 32-byte
// heartbeat frame after `heartbeat` without sending anything else (sender: to the listener's
// hello tag, routed by stream id; receiver: to the sender's control receives, both
// transfers), and fails with "peer silent for N ms (gone, or the network is down)"
// (ErrorCategory::closed) after `peer_timeout` without hearing anything. The listener sends
// and checks for every link on each progress, whether or not the link's consumer polls it.
//
// Waiting: each end's completion-queue wait fd is registered in its EventLoop (fi_trywait in
// arm()), next to sockets; a provider without one (shm) re-polls every 50 µs instead.
//
// libfabric: not linked, opened (dlopen) by the first make_fabric_send_link() or
// FabricListener::open() of the process: the file named by the environment variable
// BOREAL_LIBFABRIC, else the soname of the libfabric boreal was built against. The signal
// handlers and CPU affinity the process had are kept (Debian's libfabric brings libinfinipath,
// which installs handlers of its own and calibrates a clock for ~0.2 s when loaded). Where it
// cannot be opened, that call fails with ErrorCategory::fabric naming the file and why.
//
// Threading: each end belongs to the thread that runs its EventLoop. Nothing blocks.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/transport/error.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/link.hpp>

namespace boreal::transport {

struct FabricEndpoint {
  std::string provider;  // libfabric provider name, as `fi_info -l` prints it
  std::string host;      // numeric address or name
  std::uint16_t port = 0;
};

// How a link's frames travel.
enum class FabricTransfer : std::uint8_t {
  messages,    // "fabric-msg": tagged sends into pre-posted receives
  rma_writes,  // "fabric-rma": fi_writedata into the receiver's registered ring
};
// "fabric-msg" / "fabric-rma".
[[nodiscard]] std::string_view to_string(FabricTransfer transfer) noexcept;

// The sending end of a link to `peer`. Errors: ErrorCategory::config for options the
// transfer cannot carry (fabric-rma: window > 256, header + batch bytes > 65535);
// ErrorCategory::fabric when the provider is not here or lacks a capability (the message
// names it), or any fi_* call failed (named, with the provider and fi_strerror). The link
// stays LinkState::connecting until the receiver's first credit arrives; a receiver that
// never answers (or refuses the hello) leaves it there until `connect_timeout`, then it fails.
[[nodiscard]] Result<std::unique_ptr<SendLink>> make_fabric_send_link(
    EventLoop& loop, const FabricEndpoint& peer, const LinkOptions& options,
    FabricTransfer transfer, std::chrono::milliseconds connect_timeout = std::chrono::seconds(10));
// The same with FabricTransfer::messages.
[[nodiscard]] Result<std::unique_ptr<SendLink>> make_fabric_send_link(
    EventLoop& loop, const FabricEndpoint& peer, const LinkOptions& options,
    std::chrono::milliseconds connect_timeout = std::chrono::seconds(10));

// The receiving side of a node: one endpoint for every link it receives.
class FabricListener {
 public:
  virtual ~FabricListener() = default;

  // Binds an endpoint of `local.provider` to local.host:local.port (port 0: the provider
  // picks one, see port()).
  [[nodiscard]] static Result<std::unique_ptr<FabricListener>> open(EventLoop& loop,
                                                                    const FabricEndpoint& local);

  // The receiving end of one stream whose sender uses `transfer`: registers and posts its
  // `window` receive buffers (fabric-msg) or registers its ring (fabric-rma). Call at set-up;
  // the link lives as long as the listener. Errors: fi_* failures; ErrorCategory::config for
  // a stream id expected twice or options the transfer cannot carry (fabric-rma: window >
  // 256, header + batch bytes > 65535, a 256th rma link); ErrorCategory::fabric when the
  // provider lacks what fabric-rma needs (the message names the capability).
  [[nodiscard]] virtual Result<RecvLink*> expect(const LinkOptions& options,
                                                 FabricTransfer transfer) = 0;
  // The same with FabricTransfer::messages.
  [[nodiscard]] Result<RecvLink*> expect(const LinkOptions& options) {
    return expect(options, FabricTransfer::messages);
  }

  // Reads the completion queue and answers hellos. Never blocks. Returns work done.
  // (Every link's poll() does the same, so a thread that polls its links need not call it.)
  virtual int do_work() = 0;
  [[nodiscard]] virtual bool arm() = 0;

  // The bound port when the provider's addresses are socket addresses, else 0. (shm names
  // its endpoints after host:port: open it with a port of your choosing, not 0, and give
  // the senders the same one.)
  [[nodiscard]] virtual std::uint16_t port() const = 0;
  // Hellos refused (unknown stream, mismatched schema, token, tuple size or transfer...),
  // fabric-rma writes that name no known link, and messages on the hello tag lost (a
  // sender's connection broke mid-message, or a message too long for a hello). A refused
  // sender says hello again from fresh endpoints until its connect timeout: a refusal is
  // listed once, however often the same reason repeats.
  [[nodiscard]] virtual const std::vector<Error>& rejected() const = 0;
  // A failure of the shared endpoint (a CQ error not owned by one link), if any.
  [[nodiscard]] virtual const Error* error() const = 0;
};

}  // namespace boreal::transport
