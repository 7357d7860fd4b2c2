// The `fabric-msg` medium: links over libfabric messages, provider chosen at run time
// ("tcp;ofi_rxm", "sockets", "shm" here; "verbs;ofi_rxm", "efa" on a cluster).
//
// Wire: the same 32-byte frames as tcp (decode_header / verify_checksum on every frame).
// The receiving node opens one reliable-datagram endpoint bound to host:port; every link it
// expects pre-posts `window` receive buffers (from a registered BufferPool) tagged with its
// stream id, and grants exactly that much credit. The sender resolves the same host:port,
// sends a hello (stream id, schema hash, tuple bytes, cluster token, then its own endpoint
// name) and, once credit arrives, fi_tsend's each committed frame from its own registered
// pool. Credit and the end-of-stream acknowledgement go back as 32-byte frames sent with
// fi_tinject. A send refused with -FI_EAGAIN (rxm during connection set-up) stays queued and
// is retried after the completion queue was read, in the next do_work().
//
// Waiting: each end's completion-queue wait fd is registered in its EventLoop (fi_trywait in
// arm()), next to sockets; a provider without one (shm) re-polls every 50 µs instead.
//
// Threading: each end belongs to the thread that runs its EventLoop. Nothing blocks.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
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

// The sending end of a link to `peer`. Errors (ErrorCategory::fabric): the provider is not
// here or lacks a capability (the message names it), or any fi_* call failed (named, with
// the provider and fi_strerror). The link stays LinkState::connecting until the receiver's
// first credit arrives; a receiver that never answers leaves it there until
// `connect_timeout`, then it fails.
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

  // The receiving end of one stream: registers and posts its `window` receive buffers.
  // Call at set-up; the link lives as long as the listener. Errors: fi_* failures, or a
  // stream id expected twice (ErrorCategory::config).
  [[nodiscard]] virtual Result<RecvLink*> expect(const LinkOptions& options) = 0;

  // Reads the completion queue and answers hellos. Never blocks. Returns work done.
  // (Every link's poll() does the same, so a thread that polls its links need not call it.)
  virtual int do_work() = 0;
  [[nodiscard]] virtual bool arm() = 0;

  // The bound port when the provider's addresses are socket addresses, else 0. (shm names
  // its endpoints after host:port: open it with a port of your choosing, not 0, and give
  // the senders the same one.)
  [[nodiscard]] virtual std::uint16_t port() const = 0;
  // Hellos refused (unknown stream, mismatched schema, token or tuple size...).
  [[nodiscard]] virtual const std::vector<Error>& rejected() const = 0;
  // A failure of the shared endpoint (a CQ error not owned by one link), if any.
  [[nodiscard]] virtual const Error* error() const = 0;
};

}  // namespace boreal::transport
