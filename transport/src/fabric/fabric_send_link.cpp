// The sending end of a fabric-msg link.
//
// Frames are built in place in buffers of one registered pool ([32-byte header][payload]),
// queued in commit order and posted with fi_tsend in do_work(); a buffer returns to the pool
// when its send completes. The pool holds window + 1 buffers: one per credit, and the hello.
// kControlSlots small registered buffers stay posted for credit and ack frames.
#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <optional>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/fabric_medium.hpp>

#include "core/send_path.hpp"
#include "fabric/fabric_context.hpp"
#include "fabric/fabric_wire.hpp"

namespace boreal::transport {
namespace {

using namespace fabric_medium;

// Control frames in flight towards a sender are credits (one per credit_batch frames) and
// one ack; the provider buffers any beyond these as unexpected messages.
constexpr std::uint32_t kControlSlots = 8;

class FabricSendLink final : public SendLink {
 public:
  FabricSendLink(EventLoop& loop, std::unique_ptr<FabricContext> context, std::string peer_text,
                 const LinkOptions& options, std::chrono::milliseconds connect_timeout)
      : loop_(loop),
        options_(options),
        peer_text_(std::move(peer_text)),
        pool_(options.window + 1,
              std::max(kFrameHeaderBytes + options.max_payload_bytes, kHelloFrameBytes)),
        control_(kControlSlots * kFrameHeaderBytes),
        context_(std::move(context)),
        data_ops_(pool_.capacity()),
        control_ops_(kControlSlots),
        queue_(pool_.capacity()),
        connect_timeout_(connect_timeout),
        connect_deadline_(std::chrono::steady_clock::now() + connect_timeout) {
    loop_.add_source([this, alive = alive_] { return !*alive || arm(); });
  }
  FabricSendLink(const FabricSendLink&) = delete;
  FabricSendLink& operator=(const FabricSendLink&) = delete;
  ~FabricSendLink() override {
    *alive_ = false;
    context_->close_endpoint();  // cancels posted operations before the buffers go
  }

  // Registers the buffers, posts the control receives and builds the hello.
  Result<void> start() {
    auto pool_reg = context_->register_region(pool_.region());
    if (!pool_reg) return pool_reg.error();
    pool_reg_ = std::move(pool_reg).value();
    auto control_reg = context_->register_region(control_);
    if (!control_reg) return control_reg.error();
    control_reg_ = std::move(control_reg).value();
    for (std::uint32_t i = 0; i < kControlSlots; ++i) {
      control_ops_[i].owner = kOwnerControl;
      control_ops_[i].slot = i;
      if (auto ok = post_control(i); !ok) return ok;
    }
    auto name = context_->local_name();
    if (!name) return name.error();
    if (name.value().size() > kMaxNameBytes) {
      return fail(ErrorCategory::fabric, 0,
                  describe() + ": endpoint name of " + std::to_string(name.value().size()) +
                      " bytes is longer than the hello allows");
    }
    auto buffer = pool_.acquire();
    assert(buffer);
    hello_slot_ = buffer->index;
    HelloPayload payload{.schema_hash = options_.schema_hash,
                         .cluster_token = options_.cluster_token,
                         .stream_id = options_.stream_id,
                         .tuple_bytes = options_.tuple_bytes,
                         .max_payload_bytes = options_.max_payload_bytes};
    std::byte* body = buffer->data + kFrameHeaderBytes;
    encode_hello(payload, std::span<std::byte, kHelloPayloadBytes>(body, kHelloPayloadBytes));
    std::memcpy(body + kHelloPayloadBytes, name.value().data(), name.value().size());
    // The message is a standard hello frame followed by the name (see fabric_wire.hpp).
    FrameHeader header{.flags = kFlagHello,
                       .stream_id = options_.stream_id,
                       .payload_bytes = static_cast<std::uint32_t>(kHelloPayloadBytes)};
    encode_header(header, {body, kHelloPayloadBytes},
                  std::span<std::byte, kFrameHeaderBytes>(buffer->data, kFrameHeaderBytes));
    const auto message_bytes = static_cast<std::uint32_t>(kFrameHeaderBytes + kHelloPayloadBytes +
                                                          name.value().size());
    queue_[queue_tail_++ % queue_.size()] = {hello_slot_, message_bytes, kHelloTag};
    return success();
  }

  int do_work() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return 0;
    int work = progress();
    if (state_ == LinkState::failed || state_ == LinkState::finished) return work;
    work += post_queued();
    if (state_ == LinkState::connecting && std::chrono::steady_clock::now() >= connect_deadline_) {
      set_failed(Error{ErrorCategory::closed, 0,
                       describe() + ": no credit from the receiver within " +
                           std::to_string(connect_timeout_.count()) +
                           " ms (is it listening, and does it expect this stream?)"});
    }
    return work;
  }

  SendStatus try_claim(Claim& out) override {
    return detail::claim_frame(state_, eos_committed_, credits_, pool_, options_.max_payload_bytes,
                               stats_, out);
  }

  void commit(const Claim& claim, std::uint32_t tuple_count, std::uint32_t payload_bytes,
              std::uint16_t flags) override {
    assert((flags & kFlagData) != 0 && (flags & ~(kFlagData | kFlagEndOfStream)) == 0);
    assert(payload_bytes <= options_.max_payload_bytes && !eos_committed_);
    const FrameHeader header =
        detail::seal_frame(pool_.at(claim.slot), options_.stream_id, ++last_sequence_, tuple_count,
                           payload_bytes, flags, stats_);
    queue_[queue_tail_++ % queue_.size()] = {
        claim.slot, static_cast<std::uint32_t>(kFrameHeaderBytes + payload_bytes),
        options_.stream_id};
    if (flags & kFlagEndOfStream) {
      eos_committed_ = true;
      eos_sequence_ = header.sequence;
    }
  }

  bool arm() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return true;
    // Frames refused with -FI_EAGAIN are retried by polling, as rxm requires.
    if (queue_head_ != queue_tail_) return false;
    return context_->arm();
  }

  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t max_payload_bytes() const override { return options_.max_payload_bytes; }
  std::uint64_t credits_available() const override { return credits_.available(); }
  std::uint32_t window() const override { return options_.window; }

 private:
  struct Queued {
    std::uint32_t slot = 0;
    std::uint32_t bytes = 0;
    std::uint64_t tag = 0;
  };

  Result<void> post_control(std::uint32_t slot) {
    const auto rc = fi_trecv(context_->ep(), control_.data() + slot * kFrameHeaderBytes,
                             kFrameHeaderBytes, control_reg_.desc(), context_->peer(),
                             options_.stream_id, 0, &control_ops_[slot].fi);
    if (rc != 0) return context_->error("fi_trecv", static_cast<int>(rc));
    return success();
  }

  int progress() {
    std::array<fi_cq_tagged_entry, kCqBatch> entries;
    int work = 0;
    for (;;) {
      auto n = context_->read_cq(entries);
      ++stats_.read_calls;
      if (!n) {
        set_failed(Error{n.error().category, n.error().code, describe() + ": " + n.error().message});
        return work;
      }
      if (n.value() == 0) {
        ++stats_.would_block;
        return work;
      }
      for (std::size_t i = 0; i < n.value(); ++i) {
        const auto* op = static_cast<const OpContext*>(entries[i].op_context);
        if (op->owner == kOwnerData) {
          pool_.release(pool_.at(op->slot));
        } else if (!on_control(op->slot, entries[i].len)) {
          return work;
        }
        ++work;
      }
    }
  }

  bool on_control(std::uint32_t slot, std::size_t length) {
    const std::byte* raw = control_.data() + slot * kFrameHeaderBytes;
    Result<FrameHeader> header = fail(ErrorCategory::protocol, 0, "control frame is " +
                                      std::to_string(length) + " bytes (expected 32)");
    if (length == kFrameHeaderBytes) {
      const auto bytes = std::span<const std::byte, kFrameHeaderBytes>(raw, kFrameHeaderBytes);
      header = decode_header(bytes, FrameLimits{.stream_id = options_.stream_id});
      if (header) {
        if (auto ok = verify_checksum(header.value(), bytes, {}); !ok) header = ok.error();
      }
    }
    if (!header) {
      set_failed(Error{ErrorCategory::protocol, 0, describe() + ": " + header.error().message});
      return false;
    }
    const auto& h = header.value();
    if (h.flags & kFlagCredit) {
      ++stats_.credit_frames;
      credits_.on_grant(h.sequence);
      if (state_ == LinkState::connecting) state_ = LinkState::established;
    } else if (h.flags & kFlagAck) {
      if (eos_committed_ && h.sequence == eos_sequence_) state_ = LinkState::finished;
    } else if (!(h.flags & kFlagHeartbeat)) {
      set_failed(Error{ErrorCategory::protocol, 0,
                       describe() + ": unexpected frame with flags " + std::to_string(h.flags) +
                           " from the receiver"});
      return false;
    }
    if (auto ok = post_control(slot); !ok) {
      set_failed(Error{ok.error().category, ok.error().code, describe() + ": " + ok.error().message});
      return false;
    }
    return true;
  }

  int post_queued() {
    int work = 0;
    while (queue_head_ != queue_tail_) {
      const auto& q = queue_[queue_head_ % queue_.size()];
      auto& op = data_ops_[q.slot];
      op.owner = kOwnerData;
      op.slot = q.slot;
      const auto rc = fi_tsend(context_->ep(), pool_.at(q.slot).data, q.bytes, pool_reg_.desc(),
                               context_->peer(), q.tag, &op.fi);
      ++stats_.write_calls;
      if (rc == -FI_EAGAIN) {
        // rxm refuses the first sends while it connects (TRANSPORT_NOTES §1.3.1): the CQ is
        // read again before the next try.
        ++stats_.would_block;
        return work;
      }
      if (rc != 0) {
        auto e = context_->error("fi_tsend", static_cast<int>(rc));
        set_failed(Error{e.category, e.code, describe() + ": " + e.message});
        return work;
      }
      ++queue_head_;
      ++work;
    }
    return work;
  }

  void set_failed(Error error) {
    if (state_ == LinkState::failed) return;
    state_ = LinkState::failed;
    error_ = std::move(error);
  }

  std::string describe() const {
    return "link '" + options_.name + "' (stream " + std::to_string(options_.stream_id) +
           ") to fabric://" + context_->provider() + "/" + peer_text_;
  }

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  LinkOptions options_;
  std::string peer_text_;
  // The destructor closes the endpoint first; then the registrations (declared after the
  // context) close before the domain, and the buffers (declared before it) go last.
  BufferPool pool_;
  std::vector<std::byte> control_;
  std::unique_ptr<FabricContext> context_;
  Registration pool_reg_;
  Registration control_reg_;
  std::vector<OpContext> data_ops_;     // one per pool buffer
  std::vector<OpContext> control_ops_;  // one per control slot
  std::vector<Queued> queue_;           // committed, not yet posted; sized once
  std::uint64_t queue_head_ = 0;
  std::uint64_t queue_tail_ = 0;
  std::uint32_t hello_slot_ = 0;
  SenderCredits credits_;
  std::uint64_t last_sequence_ = 0;
  std::uint64_t eos_sequence_ = 0;
  bool eos_committed_ = false;
  std::chrono::milliseconds connect_timeout_;
  std::chrono::steady_clock::time_point connect_deadline_;
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
};

}  // namespace

Result<std::unique_ptr<SendLink>> make_fabric_send_link(EventLoop& loop,
                                                        const FabricEndpoint& peer,
                                                        const LinkOptions& options,
                                                        std::chrono::milliseconds connect_timeout) {
  const std::string text = peer.host + ":" + std::to_string(peer.port);
  if (options.max_payload_bytes == 0 || options.window == 0 || options.tuple_bytes == 0 ||
      options.max_payload_bytes < options.tuple_bytes) {
    return fail(ErrorCategory::config, 0,
                "link '" + options.name + "' to fabric://" + peer.provider + "/" + text +
                    ": batch bytes must hold at least one tuple and the window must be > 0");
  }
  auto context = fabric_medium::FabricContext::open(loop, peer.provider, peer.host, peer.port,
                                                    /*bind_local=*/false);
  if (!context) {
    auto e = context.error();
    e.message = "link '" + options.name + "' to fabric://" + peer.provider + "/" + text + ": " +
                e.message;
    return e;
  }
  auto link = std::make_unique<FabricSendLink>(loop, std::move(context).value(), text, options,
                                               connect_timeout);
  if (auto ok = link->start(); !ok) return ok.error();
  return std::unique_ptr<SendLink>(std::move(link));
}

}  // namespace boreal::transport
