// The sending end of a fabric-msg or fabric-rma link.
//
// Frames are built in place in buffers of one registered pool ([32-byte header][payload])
// and posted in do_work(): fabric-msg with fi_tsend, fabric-rma with fi_writedata into the
// receiver's ring (or, where the receiver polls and writes land in order, fi_write and the
// slot's ring word: fabric_wire.hpp). The pool holds window + backup_frames buffers for
// frames and one for the hello (always a tagged send). kControlSlots small registered
// buffers stay posted for the receiver's tagged control messages: its answer to the hello,
// acknowledgements and credit (fabric-msg), or the answer and the setup (fabric-rma, after
// which credit and acknowledgements arrive as remote writes into credit_words_).
//
// Upstream backup (docs/faults.md; core/backup_queue.hpp): a frame's buffer returns to the
// pool when the receiver has acknowledged the frame and the operation that sent it has
// completed, whichever comes last. The receiver answers every hello with where to resume (an
// ack) and its credit (fabric-msg) or ring (fabric-rma); the link sends from the frame after
// the resume point, spending the connection's credit as frames go.
//
// Connecting: a hello that fails because nobody listens yet (an immediate -FI_ENOENT,
// -FI_ECONNREFUSED, -FI_EHOSTUNREACH, or an error completion of the hello) is sent again
// after a backoff of kRetryFirst doubling to kRetryMost, until connect_timeout; the timeout's
// error then names the last failure. One the provider refuses for now (-FI_EAGAIN, rxm
// connecting) is tried again after a pause (RefusalPause, fabric/refusal_pause.hpp). A hello that
// went out and stays unanswered for kFreshEndpointAfter is followed by a new endpoint and its
// hello. Established: a heartbeat frame (fi_tinject to the listener's hello tag, which routes
// it by stream id) goes out after options.heartbeat without any other send. The connection is
// lost after options.peer_timeout without hearing anything from the receiver (a credit, an
// ack, a heartbeat, a remote write), or when an operation fails: the link then closes its endpoint,
// opens a new one after a backoff (kRetryFirst doubling to kRetryMost), says hello again with
// the same sender id and replays what was not acknowledged; it fails when no receiver
// answered within options.reconnect_timeout. The clock is read once per do_work(); a blocked
// thread is woken for the next deadline by a timer in the EventLoop.
#include <algorithm>
#include <array>
#include <chrono>
#include <cassert>
#include <cstring>
#include <optional>

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/endian/conversion.hpp>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/fabric_medium.hpp>

#include "core/backup_queue.hpp"
#include "fabric/fabric_context.hpp"
#include "fabric/fabric_wire.hpp"
#include "fabric/refusal_pause.hpp"

namespace boreal::transport {
namespace {

using namespace fabric_medium;

// Control frames in flight towards a sender are credits and acks (one each per credit_batch
// frames), the answer to the hello and the end-of-stream ack; the provider buffers any beyond
// these as unexpected messages.
constexpr std::uint32_t kControlSlots = 8;
// OpContext::owner of the hello's send (data frames are kOwnerData, control receives
// kOwnerControl).
constexpr std::uint32_t kOwnerHello = 3;
// OpContext::owner of a ring word's write (word_ops_).
constexpr std::uint32_t kOwnerWord = 4;

// Hello retries while nobody listens, and new endpoints while reconnecting: quick at first (a
// receiver started a moment later), then at most 5 per second, which costs nothing while it
// waits.
constexpr std::chrono::milliseconds kRetryFirst{10};
constexpr std::chrono::milliseconds kRetryMost{200};
// Reconnecting: a hello that went out but was not answered (the receiver refused it, or still
// holds frames of the lost connection) is sent again after this long.
constexpr std::chrono::milliseconds kHelloAgain{500};
// Connecting or reconnecting: when this long has passed since the first hello on an endpoint
// went out (or since the provider began refusing it for now) and no answer came, the link
// closes that endpoint and opens a new one, whose hello comes on a new connection; each
// further endpoint waits twice as long as the one before (a receiver too busy to answer
// within a second gets longer), until the link is established.
// A receiver answers within milliseconds; what this covers is a hello it refused (it did not
// expect the stream yet), an answer lost with the connection that carried it, or a connection
// the provider stopped serving without an error on either end. The receiver takes the new
// endpoint for the same sender (same sender id, nothing of the old connection arrived), so
// nothing is delivered twice.
constexpr std::chrono::milliseconds kFreshEndpointAfter{1000};

using Clock = std::chrono::steady_clock;

// An immediate error of a send that means "nobody is listening there (yet)".
bool is_unreachable(ssize_t rc) {
  return rc == -FI_ENOENT || rc == -FI_ECONNREFUSED || rc == -FI_EHOSTUNREACH ||
         rc == -FI_ENOTCONN || rc == -FI_ECONNRESET || rc == -FI_ECONNABORTED;
}

class FabricSendLink final : public SendLink {
 public:
  FabricSendLink(EventLoop& loop, FabricEndpoint peer, std::unique_ptr<FabricContext> context,
                 const LinkOptions& options, FabricTransfer transfer,
                 std::chrono::milliseconds connect_timeout)
      : loop_(loop),
        options_(options),
        transfer_(transfer),
        peer_(std::move(peer)),
        peer_text_(peer_.host + ":" + std::to_string(peer_.port)),
        sender_id_(detail::pick_sender_id(options.sender_id)),
        // fabric-rma: a buffer's last kRingWordBytes hold its frame's ring word while that is
        // written (post_ring_word()), from memory registered with the frames.
        pool_(options.window + options.backup_frames + 1,
              std::max(kFrameHeaderBytes + options.max_payload_bytes +
                           (transfer == FabricTransfer::rma_writes ? kRingWordBytes : 0),
                       kHelloFrameBytes)),
        backup_(pool_, options.window + options.backup_frames, options.hold_until_released),
        busy_(pool_.capacity(), 0),
        orphaned_(pool_.capacity(), 0),
        control_(kControlSlots * kControlMessageBytes),
        credit_words_(2 * kControlWordBytes),
        context_(std::move(context)),
        data_ops_(pool_.capacity()),
        word_ops_(transfer == FabricTransfer::rma_writes ? pool_.capacity() : 0),
        control_ops_(kControlSlots),
        connect_timeout_(connect_timeout),
        connect_deadline_(Clock::now() + connect_timeout),
        wake_(loop) {
    loop_.add_source([this, alive = alive_] { return !*alive || arm(); });
  }
  FabricSendLink(const FabricSendLink&) = delete;
  FabricSendLink& operator=(const FabricSendLink&) = delete;
  ~FabricSendLink() override {
    *alive_ = false;
    if (context_) context_->close_endpoint();  // cancels posted operations before the buffers go
  }

  // Takes the hello's buffer, registers the buffers and posts the control receives.
  Result<void> start() {
    auto buffer = pool_.acquire();
    assert(buffer);
    hello_slot_ = buffer->index;
    encode_header({.flags = kFlagHeartbeat, .stream_id = options_.stream_id}, {},
                  std::span<std::byte, kFrameHeaderBytes>(heartbeat_));
    return prepare_endpoint();
  }

  int do_work() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return 0;
    now_ = Clock::now();
    if (!context_) return reopen();
    int work = progress();
    if (state_ == LinkState::failed || state_ == LinkState::finished || !context_) return work;
    work += post_frames();
    if (!context_) return work;
    if (state_ == LinkState::connecting) {
      check_connecting();
    } else if (state_ == LinkState::established) {
      work += keep_alive();
    }
    return work;
  }

  SendStatus try_claim(Claim& out) override {
    return backup_.claim(state_, credits_, options_.max_payload_bytes, stats_, out);
  }

  void commit(const Claim& claim, std::uint32_t tuple_count, std::uint32_t payload_bytes,
              std::uint16_t flags) override {
    assert((flags & kFlagData) != 0 && (flags & ~(kFlagData | kFlagEndOfStream)) == 0);
    assert(payload_bytes <= options_.max_payload_bytes);
    backup_.commit(claim, options_.stream_id, tuple_count, payload_bytes, flags, stats_);
  }

  bool arm() override {
    if (state_ == LinkState::failed || state_ == LinkState::finished) return true;
    const auto now = Clock::now();
    // Frames refused with -FI_EAGAIN are retried by polling, as rxm requires; a hello or a
    // new endpoint waiting for its retry time is not.
    if (state_ == LinkState::established && (backup_.can_send(credits_) || word_due_)) {
      return false;
    }
    const auto deadline = next_deadline();
    if (now >= deadline) return false;
    wake_.wake_at(deadline);
    return context_ ? context_->arm() : true;
  }

  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t max_payload_bytes() const override { return options_.max_payload_bytes; }
  std::uint64_t credits_available() const override { return credits_.available(); }
  std::uint32_t window() const override { return options_.window; }
  // Frames stay in their buffers until the receiver acknowledges them (for replay after a
  // reconnect). The pool's extra buffer holds the hello for the link's whole life (it is sent
  // again on every reconnect), so it is no frame buffer and is not counted.
  SendOccupancy occupancy() const override {
    const std::uint32_t used = pool_.capacity() - pool_.available();  // the hello's from start()
    return {backup_.unacknowledged(), used > 0 ? used - 1 : 0, pool_.capacity() - 1};
  }

  void release(std::uint64_t through) override { backup_.release(through); }
  std::uint64_t committed() const override { return backup_.tail(); }
  void append_unacknowledged(std::vector<std::byte>& out) const override {
    backup_.append_unacknowledged(out);
  }
  Result<void> restore(std::span<const std::byte> frames, std::uint64_t committed) override {
    assert(state_ == LinkState::connecting && !was_established_);
    return backup_.restore(frames, committed,
                           FrameLimits{.stream_id = options_.stream_id,
                                       .tuple_bytes = options_.tuple_bytes,
                                       .max_payload_bytes = options_.max_payload_bytes},
                           describe());
  }

 private:
  // Registers the buffers with the current endpoint, posts the control receives and writes
  // the hello (it carries this endpoint's name), due at once.
  Result<void> prepare_endpoint() {
    const bool rma = transfer_ == FabricTransfer::rma_writes;
    auto pool_reg = context_->register_region(pool_.region(), FI_SEND | (rma ? FI_WRITE : 0));
    if (!pool_reg) return pool_reg.error();
    pool_reg_ = std::move(pool_reg).value();
    HelloExtension extension{.transfer = transfer_};
    if (rma) {
      std::memset(credit_words_.data(), 0, credit_words_.size());
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
    const auto buffer = pool_.at(hello_slot_);
    HelloPayload payload{.schema_hash = options_.schema_hash,
                         .cluster_token = options_.cluster_token,
                         .stream_id = options_.stream_id,
                         .tuple_bytes = options_.tuple_bytes,
                         .max_payload_bytes = options_.max_payload_bytes,
                         .sender_id = sender_id_};
    std::byte* body = buffer.data + kFrameHeaderBytes;
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
                  std::span<std::byte, kFrameHeaderBytes>(buffer.data, kFrameHeaderBytes));
    hello_bytes_ = static_cast<std::uint32_t>(kFrameHeaderBytes + kHelloPayloadBytes +
                                              kHelloExtensionBytes + name.value().size());
    hello_due_ = true;
    return success();
  }

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
    while (context_) {
      const OpContext* failed = nullptr;
      auto n = context_->read_cq(entries, &failed);
      ++stats_.read_calls;
      if (!n && failed == context_->injected()) {
        // A heartbeat to a receiver that is gone: its silence tells (keep_alive()).
        ++work;
        continue;
      }
      if (!n && failed && !owns(failed)) {
        // An error entry whose context is none of ours (see owns()): no operation of ours.
        ++work;
        continue;
      }
      if (!n && failed && failed->owner == kOwnerHello && state_ == LinkState::connecting) {
        // The hello failed (nobody listens there yet): send it again after a backoff.
        hello_busy_ = false;
        retry_hello(n.error().message);
        ++work;
        continue;
      }
      if (!n) {
        connection_lost(n.error());
        return work;
      }
      if (n.value() == 0) {
        ++stats_.would_block;
        return work;
      }
      for (std::size_t i = 0; i < n.value(); ++i) {
        const auto* op = owns(entries[i].op_context)
                             ? static_cast<const OpContext*>(entries[i].op_context)
                             : nullptr;
        if (!op || op->owner == kOwnerControl) heard_ = true;
        if (!op) {
          // A remote write (see the listener: no context of ours, NULL or on shm a stale
          // value; FI_REMOTE_CQ_DATA the only flag tested; our own writes carry our context
          // even where flagged FI_REMOTE_CQ_DATA).
          if ((entries[i].flags & FI_REMOTE_CQ_DATA) && !on_remote_write(entries[i].data)) {
            return work;
          }
        } else if (op->owner == kOwnerHello) {
          hello_busy_ = false;
        } else if (op->owner == kOwnerData || op->owner == kOwnerWord) {
          assert(busy_[op->slot] > 0);
          if (--busy_[op->slot] == 0 && orphaned_[op->slot]) drop(op->slot);
        } else if (!on_control(op->slot, entries[i].len)) {
          return work;
        }
        ++work;
      }
    }
    return work;
  }

  // Whether `op` is the context of an operation this link posted (fabric_medium::holds()).
  [[nodiscard]] bool owns(const void* op) const noexcept {
    return holds(data_ops_, op) || holds(control_ops_, op) || holds(word_ops_, op);
  }

  // A frame's buffer once the receiver acknowledged the frame: back to the pool, or when the
  // operation that sent it is still in flight, as soon as it completes.
  void drop(std::uint32_t slot) {
    if (busy_[slot]) {
      orphaned_[slot] = 1;
      return;
    }
    orphaned_[slot] = 0;
    pool_.release(pool_.at(slot));
  }

  // fabric-rma: the receiver wrote a credit total or an acknowledgement into credit_words_.
  bool on_remote_write(std::uint64_t data) {
    const auto imm = decode_imm(data);
    if (transfer_ != FabricTransfer::rma_writes || link_index_ == 0 || imm.link != link_index_ ||
        imm.length != kControlWordBytes || (imm.slot != kImmCredit && imm.slot != kImmAck)) {
      return protocol_failure("unexpected remote write with immediate data " +
                              std::to_string(data & 0xFFFFFFFF));
    }
    if (imm.slot == kImmCredit) {
      ++stats_.credit_frames;
      // Cumulative totals: a later write read here first makes the earlier one a no-op.
      credits_.on_grant(wire_detail::get<std::uint64_t>(credit_words_.data() + kCreditWordAt));
      return true;
    }
    return on_ack(wire_detail::get<std::uint64_t>(credit_words_.data() + kAckWordAt));
  }

  // fabric-rma: the receiver's ring, with the connection's first credit.
  bool on_setup(const std::byte* raw, std::uint64_t credit) {
    const auto setup = decode_setup({raw + kFrameHeaderBytes, kRmaSetupBytes});
    std::string problem;
    if (transfer_ != FabricTransfer::rma_writes) {
      problem = "fabric-rma setup on a fabric-msg link";
    } else if (state_ != LinkState::connecting || link_index_ != 0) {
      problem = "second fabric-rma setup";
    } else if (!setup) {
      problem = "fabric-rma setup is corrupt";
    } else if (setup->slots == 0 || setup->slots > kMaxRmaSlots || setup->link == 0 ||
               setup->slot_bytes < kFrameHeaderBytes + options_.max_payload_bytes) {
      problem = "fabric-rma setup offers " + std::to_string(setup->slots) + " slots of " +
                std::to_string(setup->slot_bytes) + " bytes as link " +
                std::to_string(setup->link) + ", which cannot carry this link's frames";
    }
    if (problem.empty() && setup->ring_words &&
        setup->slot_bytes < kFrameHeaderBytes + options_.max_payload_bytes + kRingWordBytes) {
      problem = "fabric-rma setup offers ring words in slots of " +
                std::to_string(setup->slot_bytes) + " bytes, which leave no room for them";
    }
    if (!problem.empty()) return protocol_failure(problem);
    ring_ = *setup;
    link_index_ = setup->link;
    // Frames without immediate data need the receiver's offer, this end's choice
    // (LinkOptions::ring_words) and an order of write after write that covers a whole slot
    // here (docs/transport-notes.md §1.5).
    using RingWords = LinkOptions::RingWords;
    const bool wanted = options_.ring_words == RingWords::always ||
                        (options_.ring_words == RingWords::automatic && context_->hardware_rma());
    ring_words_ =
        setup->ring_words && wanted && context_->ordered_write_bytes() >= setup->slot_bytes;
    ++stats_.credit_frames;
    credits_.on_grant(credit);
    return establish_if_answered();
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
    if (!header) return protocol_failure(header.error().message);
    const auto& h = header.value();
    bool ok = true;
    if (is_setup) {
      if (!(h.flags & kFlagCredit)) {
        return protocol_failure("64-byte control message is not a fabric-rma setup");
      }
      ok = on_setup(raw, h.sequence);
    } else if (h.flags & kFlagAck) {
      // The answer to the hello says where to resume; later ones acknowledge frames.
      ok = state_ == LinkState::connecting && !resume_after_ ? on_resume(h.sequence)
                                                              : on_ack(h.sequence);
    } else if (h.flags & kFlagCredit) {
      if (transfer_ == FabricTransfer::rma_writes) {
        return protocol_failure("32-byte credit frame on a fabric-rma link");
      }
      ++stats_.credit_frames;
      credits_.on_grant(h.sequence);
      credit_heard_ = true;
      ok = establish_if_answered();
    } else if (!(h.flags & kFlagHeartbeat)) {
      return protocol_failure("unexpected frame with flags " + std::to_string(h.flags) +
                              " from the receiver");
    }
    if (!ok || !context_) return false;
    if (auto posted = post_control(slot); !posted) {
      connection_lost(posted.error());
      return false;
    }
    return true;
  }

  // Where the new connection's receiver resumes: the frames up to `sequence` it has (a
  // restarted receiver: from its checkpoint).
  bool on_resume(std::uint64_t sequence) {
    if (auto problem = backup_.resume_problem(sequence); !problem.empty()) {
      return protocol_failure(problem);
    }
    resume_after_ = sequence;
    return establish_if_answered();
  }

  bool on_ack(std::uint64_t sequence) {
    if (state_ == LinkState::connecting) return true;  // a lost connection's, superseded
    if (auto problem = backup_.ack_problem(sequence); !problem.empty()) {
      return protocol_failure(problem);
    }
    backup_.acknowledge(sequence, [this](std::uint32_t slot) { drop(slot); });
    if (backup_.finished()) state_ = LinkState::finished;
    return true;
  }

  // Established once the receiver said where to resume and granted credit (fabric-msg: a
  // credit frame; fabric-rma: the setup), in whichever order they completed.
  bool establish_if_answered() {
    const bool credit = transfer_ == FabricTransfer::rma_writes ? link_index_ != 0 : credit_heard_;
    if (state_ != LinkState::connecting || !resume_after_ || !credit) return true;
    backup_.resume(*resume_after_, [this](std::uint32_t slot) { drop(slot); });
    state_ = LinkState::established;
    was_established_ = true;
    first_hello_at_.reset();
    answer_wait_ = kFreshEndpointAfter;
    last_heard_ = now_;
    if (reconnecting_) {
      reconnecting_ = false;
      ++stats_.reconnects;
    }
    if (backup_.finished()) state_ = LinkState::finished;
    return true;
  }

  int post_frames() {
    int work = 0;
    if (hello_due_ && !hello_busy_ && now_ >= retry_at_) {
      if (!post_hello()) return work;
      ++work;
    }
    if (state_ != LinkState::established) return work;
    // A ring word the provider refused last time goes before the next frame.
    if (word_due_ && !post_ring_word()) return work;
    backup_.spend(credits_);
    while (backup_.sent() != backup_.credited()) {
      const auto position = backup_.sent();
      const auto& frame = backup_.at(position);
      assert(!busy_[frame.slot]);
      auto& op = data_ops_[frame.slot];
      op.owner = kOwnerData;
      op.slot = frame.slot;
      const void* data = pool_.at(frame.slot).data;
      ssize_t rc = 0;
      const char* call = "fi_tsend";
      std::uint32_t target = 0;  // fabric-rma: frame position + 1 goes to slot position % slots
      if (transfer_ == FabricTransfer::rma_writes) {
        target = static_cast<std::uint32_t>(position % ring_.slots);
        const auto address = ring_.ring_address + std::uint64_t{target} * ring_.slot_bytes;
        if (ring_words_) {
          call = "fi_write";
          rc = fi_write(context_->ep(), data, frame.bytes, pool_reg_.desc(), context_->peer(),
                        address, ring_.ring_key, &op.fi);
        } else {
          call = "fi_writedata";
          rc = fi_writedata(context_->ep(), data, frame.bytes, pool_reg_.desc(),
                            encode_imm(link_index_, target, frame.bytes), context_->peer(),
                            address, ring_.ring_key, &op.fi);
        }
      } else {
        rc = fi_tsend(context_->ep(), data, frame.bytes, pool_reg_.desc(), context_->peer(),
                      options_.stream_id, &op.fi);
      }
      ++stats_.write_calls;
      if (rc == -FI_EAGAIN) {
        // rxm refuses the first sends while it connects (docs/transport-notes.md §1.3.1): the
        // CQ is read again before the next try.
        ++stats_.would_block;
        return work;
      }
      if (rc != 0) {
        connection_lost(context_->error(call, static_cast<int>(rc)));
        return work;
      }
      busy_[frame.slot] = 1;
      if (backup_.mark_sent()) ++stats_.frames_replayed;
      ++work;
      last_sent_ = now_;
      if (ring_words_) {
        const auto word =
            boost::endian::native_to_little(encode_ring_word(position + 1, frame.bytes));
        std::memcpy(ring_word_buffer(frame.slot), &word, kRingWordBytes);
        word_due_ = RingWord{.slot = frame.slot,
                             .address = ring_.ring_address +
                                        ring_word_offset(target, ring_.slot_bytes)};
        ++stats_.unannounced_frames;
        if (!post_ring_word()) return work;
      }
    }
    return work;
  }

  // Where frame buffer `slot` keeps its frame's ring word while it is written.
  [[nodiscard]] std::byte* ring_word_buffer(std::uint32_t slot) const noexcept {
    return pool_.at(slot).data + pool_.buffer_bytes() - kRingWordBytes;
  }

  // Writes word_due_ from its frame's buffer, with a completion like the frame's: the buffer
  // stays busy until both completed. (fi_inject_write would need neither the buffer nor the
  // completion, but libfabric 1.17's tcp;ofi_rxm then crashed in fi_close of an endpoint
  // whose connection had been lost, in fabric_link_test's restarted-receiver case run
  // repeatedly in one process; and a buffer of the registered pool is what FI_MR_LOCAL
  // providers (verbs) need.)
  // false: refused for now (-FI_EAGAIN; it stays due) or the connection was lost.
  bool post_ring_word() {
    const auto slot = word_due_->slot;
    auto& op = word_ops_[slot];
    op.owner = kOwnerWord;
    op.slot = slot;
    const auto rc = fi_write(context_->ep(), ring_word_buffer(slot), kRingWordBytes,
                             pool_reg_.desc(), context_->peer(), word_due_->address,
                             ring_.ring_key, &op.fi);
    ++stats_.write_calls;
    if (rc == -FI_EAGAIN) {
      ++stats_.would_block;
      return false;
    }
    if (rc != 0) {
      connection_lost(context_->error("fi_write", static_cast<int>(rc)));
      return false;
    }
    ++busy_[slot];
    word_due_.reset();
    return true;
  }

  bool post_hello() {
    auto& op = data_ops_[hello_slot_];
    op.owner = kOwnerHello;
    op.slot = hello_slot_;
    const auto rc = fi_tsend(context_->ep(), pool_.at(hello_slot_).data, hello_bytes_,
                             pool_reg_.desc(), context_->peer(), kHelloTag, &op.fi);
    ++stats_.write_calls;
    if (rc == -FI_EAGAIN) {
      // Refused for now (rxm while it sets up the connection): tried again after a pause.
      ++stats_.would_block;
      if (!hello_refused_.since()) {
        last_hello_failure_ = context_->error("fi_tsend", static_cast<int>(rc)).message;
      }
      retry_at_ = hello_refused_.refused(now_);
      return false;
    }
    hello_refused_.clear();
    if (is_unreachable(rc)) {
      retry_hello(context_->error("fi_tsend", static_cast<int>(rc)).message);
      return false;
    }
    if (rc != 0) {
      connection_lost(context_->error("fi_tsend", static_cast<int>(rc)));
      return false;
    }
    last_hello_failure_.clear();  // this one went out: what became of it is told apart
    hello_due_ = false;
    hello_busy_ = true;
    hello_sent_at_ = now_;
    if (!first_hello_at_) first_hello_at_ = now_;
    last_sent_ = now_;
    return true;
  }

  // The hello failed with `why`: send it again after the backoff.
  void retry_hello(std::string why) {
    last_hello_failure_ = std::move(why);
    hello_due_ = true;
    retry_at_ = now_ + retry_backoff_;
    retry_backoff_ = std::min(retry_backoff_ * 2, kRetryMost);
  }

  // Connecting: gives up at the deadline; opens a new endpoint when this one's hello went
  // unanswered for answer_wait_ (reopen() then says hello from it); while
  // reconnecting, says hello again on the same endpoint when the last one went unanswered.
  void check_connecting() {
    if (now_ >= give_up_at()) return connect_timed_out("no receiver answered");
    if (const auto since = waiting_since(); since && now_ - *since >= answer_wait_) {
      ++stats_.fresh_endpoints;
      answer_wait_ *= 2;
      return replace_endpoint(now_);
    }
    if (reconnecting_ && !hello_due_ && !hello_busy_ && now_ - hello_sent_at_ >= kHelloAgain) {
      hello_due_ = true;
    }
  }

  // No connection by the deadline: the first one's error names the connect timeout and what
  // became of the hello, a reconnect's the loss and `last_attempt`.
  void connect_timed_out(const std::string& last_attempt) {
    if (reconnecting_) return give_up(last_attempt);
    set_failed(Error{ErrorCategory::closed, 0,
                     describe() + ": no credit from the receiver within " +
                         std::to_string(connect_timeout_.count()) +
                         " ms (is it listening, and does it expect this stream?)" +
                         what_became_of_the_hello()});
  }

  // For the connect timeout's error: the provider still refusing the hello, the last one
  // failing, or the last one sent and never answered.
  std::string what_became_of_the_hello() const {
    const auto ms = [](Clock::duration d) {
      return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
    };
    if (const auto since = hello_refused_.since()) {
      return "; the provider has refused the hello for the last " + ms(now_ - *since) +
             " ms (still connecting?): " + last_hello_failure_;
    }
    if (!last_hello_failure_.empty()) return "; the last hello failed: " + last_hello_failure_;
    if (hello_sent_at_ != Clock::time_point{}) {
      return "; the last hello went out " + ms(now_ - hello_sent_at_) + " ms before and " +
             (hello_busy_ ? "has not completed" : "was not answered");
    }
    return {};
  }

  // Established: notices a silent peer, and sends a heartbeat when nothing else went out.
  int keep_alive() {
    if (heard_) {
      heard_ = false;
      last_heard_ = now_;
    }
    if (now_ - last_heard_ >= options_.peer_timeout) {
      connection_lost(Error{ErrorCategory::closed, 0,
                            "peer silent for " + std::to_string(options_.peer_timeout.count()) +
                                " ms (gone, or the network is down)"});
      return 0;
    }
    if (now_ - last_sent_ < options_.heartbeat) return 0;
    const auto rc = fi_tinject(context_->ep(), heartbeat_.data(), heartbeat_.size(),
                               context_->peer(), kHelloTag);
    ++stats_.write_calls;
    if (rc != 0) {
      // -FI_EAGAIN: again on the next do_work. Any other failure is noticed by the peer's
      // silence, or by the next frame's failure.
      ++stats_.would_block;
      return 0;
    }
    last_sent_ = now_;
    return 1;
  }

  // The connection broke with `why`. Before the link was ever established the link fails;
  // after, it closes the endpoint and opens a new one (reopen()), failing only when no
  // receiver answers within the reconnect timeout.
  void connection_lost(const Error& why) {
    if (!was_established_) {
      return set_failed(Error{why.category, why.code, describe() + ": " + why.message});
    }
    if (!reconnecting_) {
      reconnecting_ = true;
      lost_because_ = why.message;
      reconnect_deadline_ = now_ + options_.reconnect_timeout;
      retry_backoff_ = kRetryFirst;
    }
    replace_endpoint(now_ + retry_backoff_);
    retry_backoff_ = std::min(retry_backoff_ * 2, kRetryMost);
  }

  // Closes the endpoint; reopen() opens its successor at `at`, whose hello starts a new
  // connection.
  void replace_endpoint(Clock::time_point at) {
    close_connection();
    backup_.connection_lost();  // nothing is credited on the next connection before its answer
    retry_at_ = at;
  }

  // Closes the endpoint: its posted operations are cancelled, so every buffer they held is
  // the link's again (those acknowledged meanwhile go back to the pool).
  void close_connection() {
    context_->close_endpoint();
    for (std::uint32_t slot = 0; slot < pool_.capacity(); ++slot) {
      busy_[slot] = 0;
      if (orphaned_[slot]) drop(slot);
    }
    hello_busy_ = false;
    hello_refused_.clear();
    first_hello_at_.reset();
    // Registrations before the context that owns their domain.
    pool_reg_ = Registration{};
    control_reg_ = Registration{};
    credit_words_reg_ = Registration{};
    context_.reset();
    state_ = LinkState::connecting;
    credits_ = SenderCredits{};
    credit_heard_ = false;
    resume_after_.reset();
    ring_ = RmaSetup{};
    ring_words_ = false;
    word_due_.reset();
    link_index_ = 0;
  }

  // Without an endpoint (a lost connection, or an unanswered hello): opens a new one when the
  // backoff has passed.
  int reopen() {
    if (now_ >= give_up_at()) {
      connect_timed_out(last_hello_failure_.empty() ? "no endpoint opened yet"
                                                    : last_hello_failure_);
      return 0;
    }
    if (now_ < retry_at_) return 0;
    using Rma = FabricContext::Rma;
    auto context = FabricContext::open(
        loop_, peer_.provider, peer_.host, peer_.port, /*bind_local=*/false,
        transfer_ == FabricTransfer::rma_writes ? Rma::required : Rma::unwanted);
    if (context) {
      context_ = std::move(context).value();
      auto ok = prepare_endpoint();
      if (ok) {
        retry_at_ = now_;
        return 1;
      }
      last_hello_failure_ = ok.error().message;
      close_connection();
    } else {
      last_hello_failure_ = context.error().message;
    }
    retry_at_ = now_ + retry_backoff_;
    retry_backoff_ = std::min(retry_backoff_ * 2, kRetryMost);
    return 1;
  }

  void give_up(const std::string& last_attempt) {
    set_failed(Error{ErrorCategory::closed, 0,
                     describe() + ": " + lost_because_ + "; no connection within " +
                         std::to_string(options_.reconnect_timeout.count()) +
                         " ms after that (last attempt: " + last_attempt + "); " +
                         std::to_string(backup_.unacknowledged()) +
                         " frames were not acknowledged"});
  }

  // The connect deadline, or the reconnect deadline once the link was established and lost.
  [[nodiscard]] Clock::time_point give_up_at() const {
    return reconnecting_ ? reconnect_deadline_ : connect_deadline_;
  }

  // Connecting: when this endpoint began waiting for an answer: its first hello went out, or
  // the provider began refusing the hello for now (rxm retrying a connection: after connects
  // that failed while nobody listened yet, its later connection may be one the receiver
  // cannot answer on; a new endpoint starts clean). Empty: not waiting yet.
  [[nodiscard]] std::optional<Clock::time_point> waiting_since() const {
    return first_hello_at_ ? first_hello_at_ : hello_refused_.since();
  }

  // When do_work() must run next even if nothing arrives.
  [[nodiscard]] Clock::time_point next_deadline() const {
    if (!context_) return retry_at_;
    if (state_ == LinkState::connecting) {
      auto deadline = give_up_at();
      if (hello_due_) deadline = std::min(deadline, retry_at_);
      if (reconnecting_ && !hello_busy_)
        deadline = std::min(deadline, hello_sent_at_ + kHelloAgain);
      if (const auto since = waiting_since()) {
        deadline = std::min(deadline, *since + answer_wait_);
      }
      return deadline;
    }
    return std::min(last_sent_ + options_.heartbeat, last_heard_ + options_.peer_timeout);
  }

  bool protocol_failure(const std::string& what) {
    set_failed(Error{ErrorCategory::protocol, 0, describe() + ": " + what});
    return false;
  }

  void set_failed(Error error) {
    if (state_ == LinkState::failed) return;
    state_ = LinkState::failed;
    error_ = std::move(error);
  }

  std::string describe() const {
    return "link '" + options_.name + "' (stream " + std::to_string(options_.stream_id) +
           ") to fabric://" + peer_.provider + "/" + peer_text_;
  }

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  LinkOptions options_;
  FabricTransfer transfer_;
  FabricEndpoint peer_;
  std::string peer_text_;
  std::uint32_t sender_id_;
  // The destructor closes the endpoint first; then the registrations (declared after the
  // context) close before the domain, and the buffers (declared before it) go last.
  BufferPool pool_;
  detail::BackupQueue backup_;          // every committed frame until acknowledged
  std::vector<std::uint8_t> busy_;      // per pool buffer: operations on it in flight (0-2)
  std::vector<std::uint8_t> orphaned_;  // per pool buffer: acknowledged while busy
  std::vector<std::byte> control_;
  std::vector<std::byte> credit_words_;  // fabric-rma: [credit total][ack], written remotely
  std::unique_ptr<FabricContext> context_;  // null between a lost connection and reopen()
  Registration pool_reg_;
  Registration control_reg_;
  Registration credit_words_reg_;
  RmaSetup ring_;                  // fabric-rma: where frames go, from the setup
  std::uint32_t link_index_ = 0;   // fabric-rma: 0 until the setup
  // fabric-rma with ring words: frames go without immediate data, each followed by its word
  // (fabric_wire.hpp); a word the provider refused is written before the next frame.
  struct RingWord {
    std::uint32_t slot = 0;    // the frame's buffer, whose last bytes hold the word
    std::uint64_t address = 0;  // where it goes in the receiver's ring
  };
  bool ring_words_ = false;
  std::optional<RingWord> word_due_;
  std::vector<OpContext> data_ops_;     // one per pool buffer
  std::vector<OpContext> word_ops_;     // fabric-rma: one per pool buffer, for its ring word
  std::vector<OpContext> control_ops_;  // one per control slot
  std::uint32_t hello_slot_ = 0;
  std::uint32_t hello_bytes_ = 0;
  bool hello_due_ = false;   // to be sent at retry_at_
  bool hello_busy_ = false;  // its send is in flight
  Clock::time_point hello_sent_at_{};
  // When the first hello on this endpoint went out, until the connection is established or
  // the endpoint closes (kFreshEndpointAfter).
  std::optional<Clock::time_point> first_hello_at_;
  std::chrono::milliseconds answer_wait_ = kFreshEndpointAfter;  // doubles per fresh endpoint
  // The provider refusing the hello for now (-FI_EAGAIN): since when, and when to try again.
  RefusalPause hello_refused_;
  // The current connection's answer to the hello: the resume point and (fabric-msg) credit.
  std::optional<std::uint64_t> resume_after_;
  bool credit_heard_ = false;
  SenderCredits credits_;  // of the current connection
  std::array<std::byte, kFrameHeaderBytes> heartbeat_{};
  std::chrono::milliseconds connect_timeout_;
  Clock::time_point connect_deadline_;
  // The clock as read at the start of this do_work().
  Clock::time_point now_{};
  Clock::time_point last_sent_{};
  Clock::time_point last_heard_{};
  bool heard_ = false;  // something arrived from the receiver since keep_alive() last ran
  Clock::time_point retry_at_{};  // the hello, or reopen(), waits until then
  std::chrono::milliseconds retry_backoff_ = kRetryFirst;
  std::string last_hello_failure_;
  // Reconnecting: since the connection was lost, until a receiver answered a new hello.
  bool reconnecting_ = false;
  bool was_established_ = false;
  std::string lost_because_;
  Clock::time_point reconnect_deadline_{};
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
  auto send = std::make_unique<FabricSendLink>(loop, peer, std::move(context).value(), options,
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
