// The receiving side of a node over libfabric: one bound endpoint, its shared completion
// queue, kHelloSlots posted hello buffers, and one FabricRecvLink per expected stream, of
// either transfer. Completions go to their owner: a remote write (FI_REMOTE_CQ_DATA, no
// op_context) to the rma link its immediate names, anything else by its OpContext.
//
// A 32-byte message on the hello tag is a sender's heartbeat: it is matched to the attached
// link whose stream id its header carries. Every progress() reads the clock once; when the
// earliest link deadline has come it ticks every link (heartbeats out, silence detection),
// and arm() sets a timer in the EventLoop for that deadline so that a blocked thread wakes
// in time.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/endian/conversion.hpp>

#include <boreal/transport/fabric_medium.hpp>

#include "fabric/fabric_recv_link.hpp"
#include "fabric/fabric_wire.hpp"

namespace boreal::transport {
namespace {

using namespace fabric_medium;

// Hellos in flight at once; more wait in the provider's unexpected-message queue.
constexpr std::uint32_t kHelloSlots = 4;
// OpContext::owner of the hello buffers; links are numbered from 1.
constexpr std::uint32_t kOwnerHello = 0;
// How long a closing listener keeps progressing acks not yet completed (an ack over loopback
// completes in well under a millisecond; a peer that takes longer is probably gone).
constexpr std::chrono::milliseconds kAckLinger{250};

class FabricListenerImpl final : public FabricListener, public Hub {
 public:
  using FabricListener::expect;
  using Clock = std::chrono::steady_clock;

  FabricListenerImpl(EventLoop& loop, std::unique_ptr<FabricContext> context, std::string local)
      : loop_(loop),
        local_(std::move(local)),
        hello_buffers_(kHelloSlots * kHelloFrameBytes),
        context_(std::move(context)),
        hello_ops_(kHelloSlots),
        wake_(loop) {
    loop_.add_source([this, alive = alive_] { return !*alive || arm(); });
  }
  ~FabricListenerImpl() override {
    linger();
    *alive_ = false;
    context_->close_endpoint();  // before the links free their posted buffers
    links_.clear();
  }

  Result<void> start() {
    auto registration = context_->register_region(hello_buffers_);
    if (!registration) return registration.error();
    hello_registration_ = std::move(registration).value();
    for (std::uint32_t i = 0; i < kHelloSlots; ++i) {
      hello_ops_[i] = OpContext{.owner = kOwnerHello, .slot = i};
      if (auto ok = post_hello(i); !ok) return ok;
    }
    return success();
  }

  Result<RecvLink*> expect(const LinkOptions& options, FabricTransfer transfer) override {
    for (const auto& link : links_) {
      if (link->stream_id() == options.stream_id) {
        return fail(ErrorCategory::config, 0,
                    "stream " + std::to_string(options.stream_id) + " is expected twice on " +
                        local_);
      }
    }
    if (options.window == 0 || options.max_payload_bytes < options.tuple_bytes ||
        options.tuple_bytes == 0) {
      return fail(ErrorCategory::config, 0,
                  "link '" + options.name + "' on " + local_ +
                      ": batch bytes must hold at least one tuple and the window must be > 0");
    }
    std::uint32_t link_index = 0;
    if (transfer == FabricTransfer::rma_writes) {
      const std::string link = "link '" + options.name + "' on " + local_ + ": ";
      if (!context_->rma_missing().empty()) {
        return fail(ErrorCategory::fabric, -FI_ENODATA, link + context_->rma_missing());
      }
      if (auto problem = rma_options_problem(options); !problem.empty()) {
        return fail(ErrorCategory::config, 0, link + problem);
      }
      if (rma_links_ == kMaxRmaLinks) {
        return fail(ErrorCategory::config, 0,
                    link + "fabric-rma allows at most " + std::to_string(kMaxRmaLinks) +
                        " links per listener (an 8-bit link index in the immediate data)");
      }
      link_index = rma_links_ + 1;
    }
    const auto owner = static_cast<std::uint32_t>(links_.size() + 1);
    auto link =
        std::make_unique<FabricRecvLink>(loop_, *this, options, owner, transfer, link_index);
    auto started = link->start();
    if (link_index != 0) {
      by_index_[link_index] = link.get();
      ++rma_links_;
    }
    // Kept even when it did not start: receives it did post stay on the endpoint, into its
    // buffers, until the endpoint closes. A hello for its stream is then refused ("it
    // failed").
    auto& kept = *links_.emplace_back(std::move(link));
    if (!started) return receives_refused(kept, options, transfer, started.error());
    return static_cast<RecvLink*>(&kept);
  }

  int do_work() override { return progress(); }

  bool arm() override {
    if (error_) return true;
    if (next_tick_ != Clock::time_point::max()) {
      if (Clock::now() >= next_tick_) return false;
      wake_.wake_at(next_tick_);
    }
    return context_->arm();
  }

  std::uint16_t port() const override { return context_->bound_port(); }
  const std::vector<Error>& rejected() const override { return rejected_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }

  int progress() override {
    if (error_) return 0;
    now_ = Clock::now();
    int work = drain_cq();
    if (!error_ && now_ >= next_tick_) {
      next_tick_ = Clock::time_point::max();
      for (auto& link : links_) next_tick_ = std::min(next_tick_, link->tick(now_));
    }
    return work;
  }

  FabricContext& context() override { return *context_; }
  Clock::time_point now() const override { return now_; }
  void tick_by(Clock::time_point when) override { next_tick_ = std::min(next_tick_, when); }

 private:
  int drain_cq() {
    std::array<fi_cq_tagged_entry, kCqBatch> entries;
    int work = 0;
    for (;;) {
      const OpContext* failed = nullptr;
      auto n = context_->read_cq(entries, &failed);
      if (!n && failed == context_->injected()) {
        // A credit, ack or heartbeat to a peer that is gone: its link notices the silence.
        ++work;
        continue;
      }
      if (!n && failed && !owns(failed)) {
        // An error entry whose context is none of ours (see owns()): nobody's operation failed.
        rejected_.push_back(Error{n.error().category, n.error().code,
                                  "fabric listener " + local_ +
                                      ": a completion error of no operation of ours: " +
                                      n.error().message});
        ++work;
        continue;
      }
      if (!n && failed && failed->owner != kOwnerHello) {
        // One link's operation failed (a receive, its setup, a credit write or the ack): that
        // link fails.
        links_[failed->owner - 1]->on_operation_failed(*failed, n.error());
        ++work;
        continue;
      }
      if (!n && failed && failed->owner == kOwnerHello) {
        // A receive on the hello tag failed: one sender's connection broke in the middle of a
        // hello or heartbeat, or a peer sent a message too long for one. The endpoint is
        // fine and no link is at fault (a sender gone is noticed by its silence): the slot is
        // posted again and the failure reported.
        rejected_.push_back(Error{n.error().category, n.error().code,
                                  "fabric listener " + local_ +
                                      ": a message on the hello tag was lost (a sender's "
                                      "connection broke, or the message was too long): " +
                                      n.error().message});
        if (auto ok = post_hello(failed->slot); !ok) {
          on_cq_error(ok.error());
          return work;
        }
        ++work;
        continue;
      }
      if (!n) {
        on_cq_error(n.error());
        return work;
      }
      if (n.value() == 0) return work;
      for (std::size_t i = 0; i < n.value(); ++i) {
        const auto& entry = entries[i];
        // Only a completion flagged FI_REMOTE_CQ_DATA can be a remote write, so only those
        // pay for owns() (a scan of the links); NULL needs no scan.
        if (entry.op_context == nullptr ||
            ((entry.flags & FI_REMOTE_CQ_DATA) && !owns(entry.op_context))) {
          // A remote write: no context of ours (FI_RX_CQ_DATA is not offered; NULL, or on shm
          // a stale value, docs/transport-notes.md §1.3.8). Only FI_REMOTE_CQ_DATA is tested,
          // the other flags differ by provider. Our own writes' completions carry our
          // context, and sockets flags them FI_REMOTE_CQ_DATA too, so the context decides
          // first.
          if (entry.flags & FI_REMOTE_CQ_DATA) on_remote_write(entry.data);
          ++work;
          continue;
        }
        const auto* op = static_cast<const OpContext*>(entry.op_context);
        if (op->owner == kOwnerHello) {
          on_hello(op->slot, entry.len);
        } else if (op->outbound) {
          links_[op->owner - 1]->on_outbound_done(op->slot);
        } else {
          links_[op->owner - 1]->on_received(op->slot, entry.len);
        }
        ++work;
      }
    }
  }

  // Whether `op` is the context of an operation posted on this endpoint: a hello receive or
  // one of a link's. Addresses only (fabric_medium::holds()); a completion's context is read
  // through only once this said yes.
  [[nodiscard]] bool owns(const void* op) const noexcept {
    if (holds(hello_ops_, op)) return true;
    return std::any_of(links_.begin(), links_.end(),
                       [op](const auto& link) { return link->owns(op); });
  }

  // A node that closes the listener as soon as it saw the end of its streams (rather than
  // its links' `finished`) would lose acks still queued or in flight: progress them for at
  // most kAckLinger before the endpoint closes.
  void linger() {
    const auto give_up = Clock::now() + kAckLinger;
    for (;;) {
      bool pending = false;
      for (auto& link : links_) {
        if (!link->ack_pending()) continue;
        pending = true;
        link->flush();
      }
      if (!pending || error_ || Clock::now() >= give_up) return;
      progress();
    }
  }

  // A link's start() failed; `link` is failed with the error returned. A provider refuses a
  // receive beyond its receive queue with -FI_EAGAIN: fabric-msg posts a window of receives
  // per link, so many links into one node can fill it; the error then says by how much.
  Error receives_refused(FabricRecvLink& link, const LinkOptions& options,
                         FabricTransfer transfer, const Error& error) {
    Error out = error;
    if (transfer == FabricTransfer::messages && error.code == -FI_EAGAIN) {
      // The hello slots and the windows of the fabric-msg links that started before it.
      std::size_t posted = kHelloSlots;
      for (const auto& other : links_) {
        if (other.get() != &link && other->transfer() == FabricTransfer::messages &&
            other->state() != LinkState::failed) {
          posted += other->options().window;
        }
      }
      out = Error{
          ErrorCategory::config, error.code,
          "link '" + options.name + "' (stream " + std::to_string(options.stream_id) + ") on " +
              local_ + ": cannot post its " + std::to_string(options.window) +
              " receives (" + error.message + "): provider " + context_->provider() +
              " holds at most " + std::to_string(context_->rx_size()) +
              " posted receives per endpoint and this node's " + std::to_string(kHelloSlots) +
              " hello slots and earlier fabric-msg links hold " +
              std::to_string(posted) +
              "; fewer or smaller windows (`window`), fabric-rma, or a larger receive queue "
              "(tcp;ofi_rxm, verbs;ofi_rxm: FI_OFI_RXM_RX_SIZE) fit them"};
    }
    link.fail_link(error);
    return out;
  }

  Result<void> post_hello(std::uint32_t slot) {
    const auto rc = fi_trecv(context_->ep(), hello_buffers_.data() + slot * kHelloFrameBytes,
                             kHelloFrameBytes, hello_registration_.desc(), FI_ADDR_UNSPEC,
                             kHelloTag, 0, &hello_ops_[slot].fi);
    if (rc != 0) return context_->error("fi_trecv", static_cast<int>(rc));
    return success();
  }

  // A failed CQ read, or an error entry that names no operation: the shared endpoint is
  // unusable, so the listener and every link fail.
  void on_cq_error(const Error& error) {
    error_ =
        Error{error.category, error.code, "fabric listener on " + local_ + ": " + error.message};
    for (auto& link : links_) link->fail_link(error);
  }

  void on_remote_write(std::uint64_t data) {
    const auto imm = decode_imm(data);
    FabricRecvLink* link = by_index_[imm.link];
    if (!link) {
      rejected_.push_back(Error{ErrorCategory::protocol, 0,
                                "fabric-rma write on fabric listener " + local_ +
                                    " names unknown link index " + std::to_string(imm.link)});
      return;
    }
    link->on_written(imm);
  }

  void on_hello(std::uint32_t slot, std::size_t length) {
    const std::byte* data = hello_buffers_.data() + slot * kHelloFrameBytes;
    if (length == kFrameHeaderBytes) {
      on_heartbeat(std::span<const std::byte, kFrameHeaderBytes>(data, kFrameHeaderBytes));
    } else {
      handle_hello({data, length});
    }
    if (auto ok = post_hello(slot); !ok) on_cq_error(ok.error());
  }

  // A sender's heartbeat: refreshes the attached link of its stream. One that matches no
  // attached link (a sender whose receiving link already ended) is dropped.
  void on_heartbeat(std::span<const std::byte, kFrameHeaderBytes> raw) {
    for (auto& link : links_) {
      if (!link->attached()) continue;
      auto header = decode_header(raw, FrameLimits{.stream_id = link->stream_id()});
      if (!header || header.value().flags != kFlagHeartbeat) continue;
      if (verify_checksum(header.value(), raw, {})) link->on_heartbeat();
      return;
    }
  }

  void handle_hello(std::span<const std::byte> message) {
    constexpr std::size_t kFrame = kFrameHeaderBytes + kHelloPayloadBytes;
    constexpr std::size_t kFixed = kFrame + kHelloExtensionBytes;
    if (message.size() <= kFixed) {
      return reject("hello message of " + std::to_string(message.size()) +
                    " bytes carries no endpoint name");
    }
    const auto raw = message.first<kFrameHeaderBytes>();
    auto header = decode_header(raw, FrameLimits{.max_payload_bytes = kHelloPayloadBytes});
    if (header && !(header.value().flags & kFlagHello)) {
      header = fail(ErrorCategory::protocol, 0, "first message is not a hello");
    }
    const auto body = message.subspan(kFrameHeaderBytes, kHelloPayloadBytes);
    if (header) {
      if (auto ok = verify_checksum(header.value(), raw, body); !ok) header = ok.error();
    }
    if (!header) return reject(header.error().message);
    auto hello = decode_hello(body);
    if (!hello) return reject(hello.error().message);
    const auto extension = decode_extension(message.subspan(kFrame, kHelloExtensionBytes));
    if (!extension) return reject("hello extension is corrupt or of an unknown transfer");
    const auto& h = hello.value();
    FabricRecvLink* link = nullptr;
    std::string known;
    for (auto& candidate : links_) {
      known += (known.empty() ? "" : ", ") + std::to_string(candidate->stream_id());
      if (candidate->stream_id() == h.stream_id) link = candidate.get();
    }
    if (!link) {
      return reject("unknown stream id " + std::to_string(h.stream_id) +
                    " (this node expects " + (known.empty() ? "none" : known) + ")");
    }
    const auto& o = link->options();
    const std::string stream = "stream " + std::to_string(h.stream_id) + " '" + o.name + "'";
    if (extension->transfer != link->transfer()) {
      return reject(stream + ": the sender uses " + std::string(to_string(extension->transfer)) +
                    ", this node expects " + std::string(to_string(link->transfer())));
    }
    if (h.cluster_token != o.cluster_token) return reject(stream + ": wrong cluster token");
    if (h.schema_hash != o.schema_hash) {
      return reject(stream + ": schema hash " + std::to_string(h.schema_hash) +
                    " differs from " + std::to_string(o.schema_hash));
    }
    if (h.tuple_bytes != o.tuple_bytes) {
      return reject(stream + ": tuple size " + std::to_string(h.tuple_bytes) +
                    " differs from " + std::to_string(o.tuple_bytes));
    }
    if (h.max_payload_bytes > o.max_payload_bytes) {
      return reject(stream + ": sender's batch bytes " + std::to_string(h.max_payload_bytes) +
                    " exceed the receiver's " + std::to_string(o.max_payload_bytes));
    }
    // Last, so that a bad sender is refused for what is wrong with it, whether or not the
    // good one attached first.
    const auto name = message.subspan(kFixed);
    if (auto why = link->refuses(h.sender_id, name); !why.empty()) {
      // A sender says hello again while its answer is on the way: it was answered.
      if (why == FabricRecvLink::kRepeatedHello) return;
      return reject(stream + ": " + why);
    }
    auto peer = context_->insert_address(name);
    if (!peer) return reject(stream + ": " + peer.error().message);
    link->attach(peer.value(), "peer of " + local_, *extension, h.sender_id, name);
  }

  // Records a refusal, once per reason (a refused sender says hello again from new endpoints).
  void reject(std::string why) {
    Error refusal{ErrorCategory::protocol, 0,
                  "hello refused on fabric listener " + local_ + ": " + why};
    const bool known = std::any_of(rejected_.begin(), rejected_.end(), [&](const Error& e) {
      return e.category == refusal.category && e.message == refusal.message;
    });
    if (!known) rejected_.push_back(std::move(refusal));
  }

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  std::string local_;
  std::vector<std::byte> hello_buffers_;
  std::unique_ptr<FabricContext> context_;
  Registration hello_registration_;
  std::vector<OpContext> hello_ops_;
  std::vector<std::unique_ptr<FabricRecvLink>> links_;
  std::array<FabricRecvLink*, kMaxRmaLinks + 1> by_index_{};  // [0] stays null
  std::uint32_t rma_links_ = 0;
  std::vector<Error> rejected_;
  std::optional<Error> error_;
  Clock::time_point now_{};
  Clock::time_point next_tick_ = Clock::time_point::max();
  WakeTimer wake_;
};

}  // namespace

std::string_view to_string(FabricTransfer transfer) noexcept {
  switch (transfer) {
    case FabricTransfer::messages:
      return "fabric-msg";
    case FabricTransfer::rma_writes:
      return "fabric-rma";
  }
  return "fabric-?";
}

Result<std::unique_ptr<FabricListener>> FabricListener::open(EventLoop& loop,
                                                             const FabricEndpoint& local) {
  const std::string text =
      "fabric://" + local.provider + "/" + local.host + ":" + std::to_string(local.port);
  auto context = FabricContext::open(loop, local.provider, local.host, local.port,
                                     /*bind_local=*/true, FabricContext::Rma::if_offered);
  if (!context) {
    auto e = context.error();
    e.message = "cannot listen on " + text + ": " + e.message;
    return e;
  }
  // Named by the port it has: the one asked for, or the free one it got for port 0.
  const std::uint16_t bound = local.port != 0 ? local.port : context.value()->bound_port();
  auto listener = std::make_unique<FabricListenerImpl>(
      loop, std::move(context).value(),
      "fabric://" + local.provider + "/" + local.host + ":" + std::to_string(bound));
  if (auto ok = listener->start(); !ok) return ok.error();
  return std::unique_ptr<FabricListener>(std::move(listener));
}

}  // namespace boreal::transport
