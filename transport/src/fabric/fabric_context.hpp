// One libfabric endpoint with everything it needs: fabric, domain, address vector, one
// completion queue for both directions and, where the provider offers one, the CQ's wait fd
// registered in an EventLoop. Private to the fabric media.
//
// Provider selection (fi_getinfo): endpoint FI_EP_RDM, caps FI_MSG | FI_TAGGED (a tag per
// stream lets many links share one receiving endpoint, each with its own posted buffers),
// plus FI_RMA when fabric-rma is wanted (Rma::required) or welcome (Rma::if_offered: a
// listener may serve rma links, but a provider without FI_RMA still serves fabric-msg).
// FI_RMA_EVENT is not requested: remote CQ data arrives without it (tcp;ofi_rxm lacks it,
// docs/transport-notes.md §1.3.8). Send-after-send ordering, mode FI_CONTEXT (every operation's
// context starts with a struct fi_context, see OpContext), FI_THREAD_DOMAIN (one thread owns
// the endpoint), an FI_AV_TABLE address vector. mr_mode: we offer every bit we can honour and
// obey what the provider returns (register_region(), remote_address()). FI_RX_CQ_DATA is not
// offered, so a remote write never consumes a posted receive and its completion has a NULL
// op_context. tx op_flags stay 0 (docs/transport-notes.md §1.3.3).
//
// Waiting: the CQ is opened with FI_WAIT_FD; arm() calls fi_trywait and, when it succeeds,
// waits for the fd's readability in the EventLoop (asio stream_descriptor, like the inproc
// doorbell), so one I/O thread can block on tcp and fabric links together. A provider
// without a wait fd (shm: -FI_ENOSYS, docs/transport-notes.md §1.3.5) gets a FI_WAIT_NONE CQ; there
// arm() starts a kNoFdRecheck timer instead, so a blocking wait mode degrades to a short
// timed wait that re-polls the CQ (fi_cq_sread is not used: on shm it ignores its timeout).
//
// Errors: every fi_* failure becomes Error{ErrorCategory::fabric, rc, "<call> (provider P):
// fi_strerror"}. Threading: the thread that runs the EventLoop owns the context.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>

#include <boreal/transport/error.hpp>
#include <boreal/transport/event_loop.hpp>

namespace boreal::transport::fabric_medium {

// The context of one posted operation (FI_CONTEXT mode: fi_context must come first).
struct OpContext {
  fi_context fi{};
  std::uint32_t owner = 0;  // who posted it: the medium's own numbering
  std::uint32_t slot = 0;   // buffer index within the owner
  bool outbound = false;    // a send or write the owner posted (else a receive)
};

// Whether `op` (a completion's op_context) is one of `ops`: the only way to tell a context of
// ours from what a provider puts there for a remote write (NULL, or on shm a stale 0x1:
// docs/transport-notes.md §1.3.8). Compares addresses only; never reads through `op`.
[[nodiscard]] inline bool holds(const std::vector<OpContext>& ops, const void* op) noexcept {
  const auto at = reinterpret_cast<std::uintptr_t>(op);
  const auto begin = reinterpret_cast<std::uintptr_t>(ops.data());
  return at >= begin && at < begin + ops.size() * sizeof(OpContext) &&
         (at - begin) % sizeof(OpContext) == 0;
}

// A registered memory region; desc() is what fi_send/fi_recv take (nullptr when the
// provider does not require local registration).
class Registration {
 public:
  Registration() = default;
  explicit Registration(fid_mr* mr) : mr_(mr) {}
  Registration(Registration&& other) noexcept : mr_(std::exchange(other.mr_, nullptr)) {}
  Registration& operator=(Registration&& other) noexcept;
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
  ~Registration();
  [[nodiscard]] void* desc() const noexcept;
  [[nodiscard]] std::uint64_t key() const noexcept;

 private:
  fid_mr* mr_ = nullptr;
};

// Wakes the thread that runs `loop` at a deadline, through the EventLoop, so a blocked wait
// mode returns in time for a heartbeat, a retry or a timeout. An earlier pending wake-up is
// kept; a later one is not needed then.
class WakeTimer {
 public:
  explicit WakeTimer(EventLoop& loop) : loop_(loop), timer_(loop.context()) {}
  WakeTimer(const WakeTimer&) = delete;
  WakeTimer& operator=(const WakeTimer&) = delete;
  ~WakeTimer() { *alive_ = false; }

  void wake_at(std::chrono::steady_clock::time_point deadline) {
    if (pending_ && at_ <= deadline) return;
    pending_ = true;
    at_ = deadline;
    timer_.expires_at(deadline);
    timer_.async_wait(
        with_memory(memory_, [this, alive = alive_](const boost::system::error_code& ec) {
          if (!*alive || ec == boost::asio::error::operation_aborted) return;
          pending_ = false;
          loop_.notify();
        }));
  }

 private:
  EventLoop& loop_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::time_point at_{};
  bool pending_ = false;
  SharedHandlerMemory memory_ = make_handler_memory();  // the wait's handler (handler_memory.hpp)
};

class FabricContext {
 public:
  enum class Rma : std::uint8_t { unwanted, if_offered, required };

  // Opens `provider` ("tcp;ofi_rxm", "sockets", "shm", ...). bind_local: the endpoint is
  // bound to host:port (fi_getinfo with FI_SOURCE; the receiving side). Otherwise host:port
  // is the destination, inserted into the AV as peer() (the sending side).
  [[nodiscard]] static Result<std::unique_ptr<FabricContext>> open(EventLoop& loop,
                                                                   const std::string& provider,
                                                                   const std::string& host,
                                                                   std::uint16_t port,
                                                                   bool bind_local,
                                                                   Rma rma = Rma::unwanted);
  FabricContext(const FabricContext&) = delete;
  FabricContext& operator=(const FabricContext&) = delete;
  ~FabricContext();

  [[nodiscard]] fid_ep* ep() const noexcept { return ep_; }
  [[nodiscard]] const std::string& provider() const noexcept { return provider_; }
  [[nodiscard]] fi_addr_t peer() const noexcept { return peer_; }
  [[nodiscard]] std::size_t inject_bytes() const noexcept { return inject_bytes_; }
  // The receives the endpoint may have posted at once, as the provider states it (rx_attr
  // size): a provider may refuse one more with -FI_EAGAIN.
  [[nodiscard]] std::size_t rx_size() const noexcept;
  // The largest write whose bytes land before those of a later write to the same peer
  // (FI_ORDER_WAW with max_order_waw_size; 0: no such order). fabric-rma's ring words need a
  // slot's worth (docs/transport-notes.md §1.5).
  [[nodiscard]] std::size_t ordered_write_bytes() const noexcept { return ordered_write_bytes_; }
  // Whether a NIC does this provider's RMA (verbs, efa, alone or under rxm): there a target
  // completion costs a posted receive and a CQ entry; the other providers here emulate RMA
  // over sockets or shared memory.
  [[nodiscard]] bool hardware_rma() const noexcept;
  [[nodiscard]] bool has_wait_fd() const noexcept { return descriptor_.has_value(); }
  // Empty when this endpoint can carry fabric-rma, else what the provider lacks
  // ("provider 'P' lacks FI_RMA, which fabric-rma needs").
  [[nodiscard]] const std::string& rma_missing() const noexcept { return rma_missing_; }

  // Registers `region` for `access`. Local-only access (FI_SEND, FI_RECV, FI_WRITE) is
  // registered only when the provider's mr_mode has FI_MR_LOCAL, otherwise an empty
  // Registration (desc() nullptr) comes back; remote access (FI_REMOTE_WRITE) is always
  // registered. Under FI_MR_ENDPOINT the region is bound to the endpoint and enabled.
  [[nodiscard]] Result<Registration> register_region(std::span<std::byte> region,
                                                     std::uint64_t access = FI_SEND | FI_RECV);
  // The address a peer names `base` (the start of a region registered for remote access)
  // by: its virtual address under FI_MR_VIRT_ADDR, else offset 0 (docs/transport-notes.md §1.3.7).
  [[nodiscard]] std::uint64_t remote_address(const std::byte* base) const noexcept;
  // This endpoint's address (fi_getname), to send to a peer.
  [[nodiscard]] Result<std::vector<std::byte>> local_name() const;
  // Inserts a peer's fi_getname bytes into the AV.
  [[nodiscard]] Result<fi_addr_t> insert_address(std::span<const std::byte> name);
  // The port this endpoint is bound to, when its address is a socket address (else 0).
  [[nodiscard]] std::uint16_t bound_port() const;

  // Closes the endpoint now, cancelling its posted operations, so that the memory they
  // point into may be freed afterwards (a provider with a progress thread, like sockets,
  // could otherwise still write into it). Owners call it first in their destructors.
  void close_endpoint() noexcept;

  // Reads up to out.size() completions. Returns the count (0 = none); an error entry
  // (fi_cq_readerr) or a failed read becomes an Error naming the operation's context, and
  // `failed` (when given) points to that context (nullptr: none, or the read itself failed),
  // so that the owner alone can fail. An injected send has no context: its error entry (the
  // sockets provider reports one when the peer is gone) points `failed` to injected().
  [[nodiscard]] Result<std::size_t> read_cq(std::span<fi_cq_tagged_entry> out,
                                            const OpContext** failed = nullptr);

  // What `failed` points to for an injected send (fi_tinject) that failed: nobody's operation;
  // the peer it went to is noticed by its silence.
  [[nodiscard]] const OpContext* injected() const noexcept { return &injected_; }

  // Arms a wake-up for the next completion: false when one may be ready now (poll again).
  [[nodiscard]] bool arm();

  // "<call> (provider P): <fi_strerror>".
  [[nodiscard]] Error error(const char* call, int rc) const;

  // Without a wait fd, arm() re-polls after this long (the shm provider: 50 µs keeps a
  // blocked thread under ~2 % of a core in timer wake-ups, docs/transport-notes.md §1.4
  // paced rates).
  static constexpr std::chrono::microseconds kNoFdRecheck{50};
  // With FI_PROGRESS_AUTO the provider may move data in threads of its own (sockets runs 3-4
  // per domain): a thread that spins on an empty CQ (wait mode busy) starves them on a small
  // machine (docs/transport-notes.md §1.3.11), so every kYieldAfter-th empty read in a row yields
  // the CPU. tcp and net also say AUTO without such threads; a yield with nothing else to run
  // returns at once. Measured with `boreal launch apps/examples/demo.yaml --duration 1
  // --provider sockets --wait busy` on the shared 2-vCPU box: latency p50/p99 12.7/24 ms
  // without yielding, 5.4/8.0 ms yielding every 8th empty read, 8.2/14 ms every one.
  static constexpr std::uint32_t kYieldAfter = 8;

 private:
  FabricContext(EventLoop& loop, std::string provider);
  [[nodiscard]] Result<void> setup(fi_info* info, bool bind_local);
  void check_rma();

  EventLoop& loop_;
  std::string provider_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  fi_addr_t peer_ = FI_ADDR_UNSPEC;
  std::size_t inject_bytes_ = 0;
  std::size_t ordered_write_bytes_ = 0;
  std::string rma_missing_;
  std::uint64_t next_key_ = 1;
  bool yield_when_idle_ = false;
  std::uint32_t empty_reads_ = 0;  // empty fi_cq_read calls in a row
  OpContext injected_{};
  std::optional<boost::asio::posix::stream_descriptor> descriptor_;
  boost::asio::steady_timer recheck_;
  bool wait_pending_ = false;
  // The wait's handler (the completion fd's, or the recheck timer's when there is no fd), so
  // a block-mode wake-up allocates nothing (handler_memory.hpp).
  SharedHandlerMemory wait_memory_ = make_handler_memory();
};

}  // namespace boreal::transport::fabric_medium
