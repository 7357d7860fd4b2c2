// The sending end of a fabric-msg or fabric-rma link.
//
// Frames are built in place in buffers of one registered pool ([32-byte header][payload]),
// queued in commit order and posted in do_work(): fabric-msg with fi_tsend, fabric-rma with
// fi_writedata into the receiver's ring; a buffer returns to the pool when its operation
// completes. The pool holds window + 1 buffers: one per credit, and the hello (always a
// tagged send). kControlSlots small registered buffers stay posted for the receiver's tagged
// control messages: credit and ack frames (fabric-msg) or the one setup message (fabric-rma,
// after which credit and the ack arrive as remote writes into credit_words_).
//
// Connecting: a hello that fails because nobody listens yet (an immediate -FI_ENOENT,
// -FI_ECONNREFUSED, -FI_EHOSTUNREACH, or an error completion of the hello) is sent again
// after a backoff of kRetryFirst doubling to kRetryMost, until connect_timeout; the timeout's
// error then names the last failure. Established: a heartbeat frame (fi_tinject to the
// listener's hello tag, which routes it by stream id) goes out after options.heartbeat without
// any other send, and the link fails after options.peer_timeout without hearing anything from
// the receiver (a credit, an ack, a heartbeat, a remote write). The clock is read once per
// do_work(); a blocked thread is woken for the next deadline by a timer in the EventLoop.
#include <algorithm>
#include <array>
#include <chrono>
#include <cassert>
#include <cstring>
#include <optional>

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>

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

// Hello retries while nobody listens: quick at first (a receiver started a moment later),
// then at most 5 per second, which costs nothing while it waits.
constexpr std::chrono::milliseconds kRetryFirst{10};
constexpr std::chrono::milliseconds kRetryMost{200};

using Clock = std::chrono::steady_clock;

// An immediate error of a send that means "nobody is listening there (yet)".
bool is_unreachable(ssize_t rc) {
  return rc == -FI_ENOENT || rc == -FI_ECONNREFUSED || rc == -FI_EHOSTUNREACH ||
         rc == -FI_ENOTCONN || rc == -FI_ECONNRESET || rc == -FI_ECONNABORTED;
}

class FabricSendLink final : public SendLink {
 public:
  FabricSendLink(EventLoop& loop, std::unique_ptr<FabricContext> context, std::string peer_text,
                 const LinkOptions& options, FabricTransfer transfer,
                 std::chrono::milliseconds connect_timeout)
      : loop_(loop),
        options_(options),
        transfer_(transfer),
        peer_text_(std::move(peer_text)),
        pool_(options.window + 1,
              std::max(kFrameHeaderBytes + options.max_payload_bytes, kHelloFrameBytes)),
        control_(kControlSlots * kControlMessageBytes),
        credit_words_(2 * kControlWordBytes),
        context_(std::move(context)),
        data_ops_(pool_.capacity()),
        control_ops_(kControlSlots),
        queue_(pool_.capacity()),
        connect_timeout_(connect_timeout),
        connect_deadline_(Clock::now() + connect_timeout),
        wake_(loop) {
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
    const bool rma = transfer_ == FabricTransfer::rma_writes;
    auto pool_reg = context_->register_region(pool_.region(), FI_SEND | (rma ? FI_WRITE : 0));
    if (!pool_reg) return pool_reg.error();
    pool_reg_ = std::move(pool_reg).value();
    HelloExtension extension{.transfer = transfer_};
    if (rma) {
      auto words = context_->register_region(credit_words_, FI_REMOTE_WRITE);
      if (!words) return words.error();
      credit_words_reg_ = std::move(words).value();
      extension.credit_address = context_->remote_address(credit_words_.data());
      extension.credit_key = credit_words_reg_.key();
    }
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
    encode_extension(extension, std::span<std::byte, kHelloExtensionBytes>(
                                    body + kHelloPayloadBytes, kHelloExtensionBytes));
    std::memcpy(body + kHelloPayloadBytes + kHelloExtensionBytes, name.value().data(),
                name.value().size());
    // A standard hello frame, the extension, then the name (see fabric_wire.hpp).
    FrameHeader header{.flags = kFlagHello,
                       .stream_id = options_.stream_id,
                       .payload_bytes = static_cast<std::uint32_t>(kHelloPayloadBytes)};
    encode_header(header, {body, kHelloPayloadBytes},
                  std::span<std::byte, kFrameHeaderBytes>(buffer->data, kFrameHeaderBytes));
    const auto message_bytes = static_cast<std::uint32_t>(
        kFrameHeaderBytes + kHelloPayloadBytes + kHelloExtensionBytes + name.value().size());
    hello_bytes_ = message_bytes;
    queue_[queue_tail_++ % queue_.size()] = {hello_slot_, message_bytes, kHelloTag, 0};
    encode_header({.flags = kFlagHeartbeat, .stream_id = options_.stream_id}, {},
                  std::span<std::byte, kFrameHeaderBytes>(heartbeat_));
    return success();
  }

  int do_work() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return 0;
    now_ = Clock::now();
    int work = progress();
    if (state_ == LinkState::failed || state_ == LinkState::finished) return work;
    if (now_ >= retry_at_) work += post_queued();
    if (state_ == LinkState::connecting && now_ >= connect_deadline_) {
      set_failed(Error{ErrorCategory::closed, 0,
                       describe() + ": no credit from the receiver within " +
                           std::to_string(connect_timeout_.count()) +
                           " ms (is it listening, and does it expect this stream?)" +
                           (last_hello_failure_.empty()
                                ? std::string()
                                : "; the last hello failed: " + last_hello_failure_)});
    } else if (state_ == LinkState::established) {
      work += keep_alive();
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
        options_.stream_id, header.sequence};
    if (flags & kFlagEndOfStream) {
      eos_committed_ = true;
      eos_sequence_ = header.sequence;
    }
  }

  bool arm() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return true;
    const auto now = Clock::now();
    // Frames refused with -FI_EAGAIN are retried by polling, as rxm requires; a hello waiting
    // for its retry time is not.
    if (queue_head_ != queue_tail_ && now >= retry_at_) return false;
    const auto deadline = next_deadline();
    if (now >= deadline) return false;
    wake_.wake_at(deadline);
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
    std::uint64_t sequence = 0;  // 0: the hello
  };

  Result<void> post_control(std::uint32_t slot) {
    const auto rc = fi_trecv(context_->ep(), control_.data() + slot * kControlMessageBytes,
                             kControlMessageBytes, control_reg_.desc(), context_->peer(),
                             options_.stream_id, 0, &control_ops_[slot].fi);
    if (rc != 0) return context_->error("fi_trecv", static_cast<int>(rc));
    return success();
  }

  int progress() {
    std::array<fi_cq_tagged_entry, kCqBatch> entries;
    int work = 0;
    for (;;) {
      const OpContext* failed = nullptr;
      auto n = context_->read_cq(entries, &failed);
      ++stats_.read_calls;
      if (!n && failed && failed->owner == kOwnerData && failed->slot == hello_slot_ &&
          state_ == LinkState::connecting) {
        // The hello failed (nobody listens there yet): send it again after a backoff.
        retry_hello(n.error().message);
        ++work;
        continue;
      }
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
        if (!op || op->owner == kOwnerControl) heard_ = true;
        if (!op) {
          // A remote write (see the listener: no context, FI_REMOTE_CQ_DATA the only flag
          // tested; our own writes carry our context even where flagged FI_REMOTE_CQ_DATA).
          if ((entries[i].flags & FI_REMOTE_CQ_DATA) && !on_remote_write(entries[i].data)) {
            return work;
          }
          ++work;
          continue;
        }
        if (op->owner == kOwnerData) {
          pool_.release(pool_.at(op->slot));
        } else if (!on_control(op->slot, entries[i].len)) {
          return work;
        }
        ++work;
      }
    }
  }

  // fabric-rma: the receiver wrote a credit total or the ack into credit_words_.
  bool on_remote_write(std::uint64_t data) {
    const auto imm = decode_imm(data);
    if (transfer_ != FabricTransfer::rma_writes || link_index_ == 0 || imm.link != link_index_ ||
        imm.length != kControlWordBytes || (imm.slot != kImmCredit && imm.slot != kImmAck)) {
      set_failed(Error{ErrorCategory::protocol, 0,
                       describe() + ": unexpected remote write with immediate data " +
                           std::to_string(data & 0xFFFFFFFF)});
      return false;
    }
    if (imm.slot == kImmCredit) {
      ++stats_.credit_frames;
      // Cumulative totals: a later write read here first makes the earlier one a no-op.
      credits_.on_grant(wire_detail::get<std::uint64_t>(credit_words_.data() + kCreditWordAt));
    } else {
      const auto acked = wire_detail::get<std::uint64_t>(credit_words_.data() + kAckWordAt);
      if (eos_committed_ && acked == eos_sequence_) state_ = LinkState::finished;
    }
    return true;
  }

  // fabric-rma: the receiver's answer to the hello.
  bool on_setup(const std::byte* raw) {
    const auto setup = decode_setup({raw + kFrameHeaderBytes, kRmaSetupBytes});
    std::string problem;
    if (transfer_ != FabricTransfer::rma_writes) {
      problem = "fabric-rma setup on a fabric-msg link";
    } else if (state_ != LinkState::connecting) {
      problem = "second fabric-rma setup";
    } else if (!setup) {
      problem = "fabric-rma setup is corrupt";
    } else if (setup->slots == 0 || setup->slots > kMaxRmaSlots || setup->link == 0 ||
               setup->slot_bytes < kFrameHeaderBytes + options_.max_payload_bytes) {
      problem = "fabric-rma setup offers " + std::to_string(setup->slots) + " slots of " +
                std::to_string(setup->slot_bytes) + " bytes as link " +
                std::to_string(setup->link) + ", which cannot carry this link's frames";
    }
    if (!problem.empty()) {
      set_failed(Error{ErrorCategory::protocol, 0, describe() + ": " + problem});
      return false;
    }
    ring_ = *setup;
    link_index_ = setup->link;
    return true;
  }

  bool on_control(std::uint32_t slot, std::size_t length) {
    const std::byte* raw = control_.data() + slot * kControlMessageBytes;
    const bool is_setup = length == kControlMessageBytes;
    Result<FrameHeader> header = fail(ErrorCategory::protocol, 0, "control message is " +
                                      std::to_string(length) + " bytes (expected 32 or 64)");
    if (length == kFrameHeaderBytes || is_setup) {
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
    if (is_setup && !((h.flags & kFlagCredit) && on_setup(raw))) {
      if (state_ != LinkState::failed) {
        set_failed(Error{ErrorCategory::protocol, 0,
                         describe() + ": 64-byte control message is not a fabric-rma setup"});
      }
      return false;
    }
    if (!is_setup && transfer_ == FabricTransfer::rma_writes && !(h.flags & kFlagHeartbeat)) {
      set_failed(Error{ErrorCategory::protocol, 0,
                       describe() + ": 32-byte control frame on a fabric-rma link"});
      return false;
    }
    if (h.flags & kFlagCredit) {
      ++stats_.credit_frames;
      credits_.on_grant(h.sequence);
      if (state_ == LinkState::connecting) {
        state_ = LinkState::established;
        last_heard_ = now_;
      }
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
      const void* frame = pool_.at(q.slot).data;
      ssize_t rc = 0;
      if (transfer_ == FabricTransfer::rma_writes && q.sequence != 0) {
        const auto target = static_cast<std::uint32_t>((q.sequence - 1) % ring_.slots);
        rc = fi_writedata(context_->ep(), frame, q.bytes, pool_reg_.desc(),
                          encode_imm(link_index_, target, q.bytes), context_->peer(),
                          ring_.ring_address + std::uint64_t{target} * ring_.slot_bytes,
                          ring_.ring_key, &op.fi);
      } else {
        rc = fi_tsend(context_->ep(), frame, q.bytes, pool_reg_.desc(), context_->peer(), q.tag,
                      &op.fi);
      }
      ++stats_.write_calls;
      if (rc == -FI_EAGAIN) {
        // rxm refuses the first sends while it connects (docs/transport-notes.md §1.3.1): the CQ is
        // read again before the next try.
        ++stats_.would_block;
        if (q.sequence == 0 && state_ == LinkState::connecting && last_hello_failure_.empty()) {
          last_hello_failure_ = context_->error("fi_tsend", static_cast<int>(rc)).message;
        }
        return work;
      }
      if (q.sequence == 0 && state_ == LinkState::connecting && is_unreachable(rc)) {
        ++queue_head_;  // retry_hello() queues it again
        retry_hello(context_->error("fi_tsend", static_cast<int>(rc)).message);
        return work;
      }
      if (rc != 0) {
        auto e = context_->error(q.sequence != 0 && transfer_ == FabricTransfer::rma_writes
                                     ? "fi_writedata"
                                     : "fi_tsend",
                                 static_cast<int>(rc));
        set_failed(Error{e.category, e.code, describe() + ": " + e.message});
        return work;
      }
      ++queue_head_;
      ++work;
      last_sent_ = now_;
    }
    return work;
  }

  // The hello failed with `why`: queue it again, to be posted after the backoff.
  void retry_hello(std::string why) {
    last_hello_failure_ = std::move(why);
    queue_[queue_tail_++ % queue_.size()] = {hello_slot_, hello_bytes_, kHelloTag, 0};
    retry_at_ = now_ + retry_backoff_;
    retry_backoff_ = std::min(retry_backoff_ * 2, kRetryMost);
  }

  // Established: notices a silent peer, and sends a heartbeat when nothing else went out.
  int keep_alive() {
    if (heard_) {
      heard_ = false;
      last_heard_ = now_;
    }
    if (now_ - last_heard_ >= options_.peer_timeout) {
      set_failed(Error{ErrorCategory::closed, 0,
                       describe() + ": peer silent for " +
                           std::to_string(options_.peer_timeout.count()) +
                           " ms (gone, or the network is down)"});
      return 0;
    }
    if (now_ - last_sent_ < options_.heartbeat) return 0;
    const auto rc = fi_tinject(context_->ep(), heartbeat_.data(), heartbeat_.size(),
                               context_->peer(), kHelloTag);
    ++stats_.write_calls;
    if (rc != 0) {
      // -FI_EAGAIN: again on the next do_work. Any other failure is not the link's end: a
      // peer that is really gone is noticed by its silence.
      ++stats_.would_block;
      return 0;
    }
    last_sent_ = now_;
    return 1;
  }

  // When do_work() must run next even if nothing arrives.
  [[nodiscard]] Clock::time_point next_deadline() const {
    if (state_ == LinkState::connecting) {
      return queue_head_ != queue_tail_ ? std::min(retry_at_, connect_deadline_)
                                        : connect_deadline_;
    }
    return std::min(last_sent_ + options_.heartbeat, last_heard_ + options_.peer_timeout);
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
  FabricTransfer transfer_;
  std::string peer_text_;
  // The destructor closes the endpoint first; then the registrations (declared after the
  // context) close before the domain, and the buffers (declared before it) go last.
  BufferPool pool_;
  std::vector<std::byte> control_;
  std::vector<std::byte> credit_words_;  // fabric-rma: [credit total][ack], written remotely
  std::unique_ptr<FabricContext> context_;
  Registration pool_reg_;
  Registration control_reg_;
  Registration credit_words_reg_;
  RmaSetup ring_;                  // fabric-rma: where frames go, from the setup
  std::uint32_t link_index_ = 0;   // fabric-rma: 0 until the setup
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
  std::uint32_t hello_bytes_ = 0;
  std::array<std::byte, kFrameHeaderBytes> heartbeat_{};
  std::chrono::milliseconds connect_timeout_;
  Clock::time_point connect_deadline_;
  // The clock as read at the start of this do_work().
  Clock::time_point now_{};
  Clock::time_point last_sent_{};
  Clock::time_point last_heard_{};
  bool heard_ = false;  // something arrived from the receiver since keep_alive() last ran
  Clock::time_point retry_at_{};  // the queued hello waits until then
  std::chrono::milliseconds retry_backoff_ = kRetryFirst;
  std::string last_hello_failure_;
  WakeTimer wake_;
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
};

}  // namespace

Result<std::unique_ptr<SendLink>> make_fabric_send_link(EventLoop& loop,
                                                        const FabricEndpoint& peer,
                                                        const LinkOptions& options,
                                                        FabricTransfer transfer,
                                                        std::chrono::milliseconds connect_timeout) {
  const std::string text = peer.host + ":" + std::to_string(peer.port);
  const std::string link = "link '" + options.name + "' to fabric://" + peer.provider + "/" + text;
  if (options.max_payload_bytes == 0 || options.window == 0 || options.tuple_bytes == 0 ||
      options.max_payload_bytes < options.tuple_bytes) {
    return fail(ErrorCategory::config, 0,
                link + ": batch bytes must hold at least one tuple and the window must be > 0");
  }
  const bool rma = transfer == FabricTransfer::rma_writes;
  if (rma) {
    if (auto problem = fabric_medium::rma_options_problem(options); !problem.empty()) {
      return fail(ErrorCategory::config, 0, link + ": " + problem);
    }
  }
  using Rma = fabric_medium::FabricContext::Rma;
  auto context = fabric_medium::FabricContext::open(loop, peer.provider, peer.host, peer.port,
                                                    /*bind_local=*/false,
                                                    rma ? Rma::required : Rma::unwanted);
  if (!context) {
    auto e = context.error();
    e.message = link + ": " + e.message;
    return e;
  }
  auto send = std::make_unique<FabricSendLink>(loop, std::move(context).value(), text, options,
                                               transfer, connect_timeout);
  if (auto ok = send->start(); !ok) return ok.error();
  return std::unique_ptr<SendLink>(std::move(send));
}

Result<std::unique_ptr<SendLink>> make_fabric_send_link(EventLoop& loop,
                                                        const FabricEndpoint& peer,
                                                        const LinkOptions& options,
                                                        std::chrono::milliseconds connect_timeout) {
  return make_fabric_send_link(loop, peer, options, FabricTransfer::messages, connect_timeout);
}

}  // namespace boreal::transport
