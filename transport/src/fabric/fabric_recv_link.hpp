// The receiving end of a fabric-msg or fabric-rma link. Private: made by
// FabricListener::expect(). What differs between the transfers is how frames arrive (posted
// receives / remote writes into the ring) and how control leaves (fi_tinject / fi_writedata);
// checking and delivering frames and granting credit is the same code.
#pragma once

#include <chrono>
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/fabric_medium.hpp>
#include <boreal/transport/link.hpp>

#include "fabric/fabric_context.hpp"
#include "fabric/fabric_wire.hpp"
#include "fabric/refusal_pause.hpp"

namespace boreal::transport::fabric_medium {

// What a link needs of the listener that owns the shared endpoint.
class Hub {
 public:
  virtual ~Hub() = default;
  // Reads the shared CQ, handing each completion to its owner. Returns work done.
  virtual int progress() = 0;
  virtual FabricContext& context() = 0;
  // The clock as read at the start of the current progress().
  [[nodiscard]] virtual std::chrono::steady_clock::time_point now() const = 0;
  // Asks for a tick() of every link no later than `when`.
  virtual void tick_by(std::chrono::steady_clock::time_point when) = 0;
};

// `window` buffers of header + max payload, registered once.
// fabric-msg: each buffer is posted with fi_trecv tagged with the stream id. Receive
// completions (in arrival order: the provider matches posted buffers in order and the
// sender's sends are ordered) are queued by the hub and delivered by poll(); each buffer is
// reposted as soon as the sink returned, and freed slots are granted back `credit_batch` at
// a time with fi_tinject.
// fabric-rma: the buffers are the ring, registered for FI_REMOTE_WRITE. The hub hands over
// each remote write's immediate (on_written). Writes may complete out of posting order (EFA
// promises no order), so a write may land in any slot of the credit window: the slots of the
// frames after the last one released, up to the credit total sent. It is recorded there and
// frames are released in slot order (= sequence order) as the head slot fills. A slot is free
// again once the sink returned, and freed slots are granted back with fi_writedata from
// kSources small registered buffers, each reused after its completion.
// With LinkOptions::never_blocks the setup offers ring words (fabric_wire.hpp): a sender whose
// provider orders write after write then writes frames without immediate data, and poll()
// finds each by the word in its slot, in ring order (find_unannounced()); frames announced by
// immediate data are still taken as above.
//
// Credit is checked as frames arrive, against the total actually sent to the peer: a frame
// that arrives beyond it (fabric-msg: the n-th message with less than n granted; fabric-rma:
// a write to a slot outside the window) fails the link, as does a second write to a slot
// whose frame is not released yet or a slot beyond the ring.
//
// The end-of-stream ack (both transfers) is sent from one of those buffers as an operation
// with a completion, asking for FI_DELIVERY_COMPLETE (else FI_TRANSMIT_COMPLETE, else the
// provider's default) in its own flags; the link reports `finished` only when that
// completion arrived, so a node may close the endpoint as soon as its links finished (a
// provider that transmits later, like sockets from its progress thread, would otherwise lose
// the ack). A failed ack fails the link ("the end-of-stream ack failed: ...").
//
// Liveness (attached and not finished): the hub's tick() sends a heartbeat frame (fi_tinject,
// tag = stream id, to the sender's control receives) after options.heartbeat without any
// other control message, and notices after options.peer_timeout without hearing from the
// sender (a frame, a remote write, a heartbeat) that the sender is gone. The hub ticks links
// whether or not their consumer polls them, so a slow consumer does not look like a lost peer.
//
// Upstream backup (docs/faults.md): every answer to a hello starts with an ack frame saying
// where the sender resumes (the last frame acknowledged: options.resume_after on a restarted
// node), and acks of the frames delivered (or, with options.manual_ack, acknowledged by the
// owner) go with each credit grant: fabric-msg as tagged ack frames, fabric-rma as writes
// into the sender's ack word. A sender that went silent or whose operation failed is waited
// for options.reconnect_timeout: it comes back with a new endpoint and the same sender id,
// and the link attaches it once everything of the lost connection was delivered (a hello
// before that is refused, and the sender says hello again). Replayed frames already
// delivered are dropped by sequence (duplicates_dropped). A sender id of 0 never reconnects:
// its silence fails the link.
class FabricRecvLink final : public RecvLink {
 public:
  // link_index: 1..255 for fabric-rma (the immediate's link field), 0 for fabric-msg.
  FabricRecvLink(EventLoop& loop, Hub& hub, const LinkOptions& options, std::uint32_t owner,
                 FabricTransfer transfer, std::uint32_t link_index);
  FabricRecvLink(const FabricRecvLink&) = delete;
  FabricRecvLink& operator=(const FabricRecvLink&) = delete;
  ~FabricRecvLink() override;

  // Registers the pool and posts every buffer (fabric-msg) or registers the ring (rma).
  [[nodiscard]] Result<void> start();
  // Why a hello of this stream from `sender_id`, whose endpoint is `name`, cannot attach now
  // ("" when it can). A repeated hello of the attached endpoint is `kRepeatedHello`.
  static constexpr std::string_view kRepeatedHello = "repeated hello";
  [[nodiscard]] std::string refuses(std::uint32_t sender_id,
                                    std::span<const std::byte> name) const;
  // A hello for this stream came from `peer`: says where to resume and grants the initial
  // credit (fabric-rma: sends the setup, and credit goes to the credit words `extension`
  // names). A sender that comes back (the same sender id) replaces the lost connection.
  void attach(fi_addr_t peer, std::string peer_text, const HelloExtension& extension,
              std::uint32_t sender_id, std::span<const std::byte> name);
  [[nodiscard]] bool attached() const noexcept { return peer_.has_value(); }
  // The end-of-stream ack is queued or in flight (the link will finish once it completed).
  [[nodiscard]] bool ack_pending() const noexcept {
    return state_ != LinkState::failed && (ack_to_send_.has_value() || ack_slot_.has_value());
  }
  // Sends what control is queued (credit, the ack) without delivering frames.
  int flush() { return flush_control(); }
  [[nodiscard]] FabricTransfer transfer() const noexcept { return transfer_; }
  // From the hub (fabric-msg): buffer `slot` holds a message of `length` bytes.
  void on_received(std::uint32_t slot, std::size_t length);
  // From the hub (fabric-rma): a remote write with this immediate (its link is this one).
  void on_written(const Imm& imm);
  // From the hub: an operation this link posted (setup send, credit write, ack) completed.
  void on_outbound_done(std::uint32_t slot);
  // From the hub: an operation of this link completed with `error`.
  void on_operation_failed(const OpContext& op, const Error& error);
  // From the hub: a heartbeat of this link's sender arrived.
  void on_heartbeat() noexcept;
  // From the hub, at most once per progress(): sends a heartbeat or notices a silent peer
  // when due. Returns when it must run next (time_point::max(): not while unattached or done).
  std::chrono::steady_clock::time_point tick(std::chrono::steady_clock::time_point now);
  void fail_link(const Error& error);

  int poll(FrameSink& sink) override;
  void acknowledge(std::uint64_t through) override;
  [[nodiscard]] std::uint64_t delivered() const override { return next_sequence_ - 1; }
  int keep_alive() override { return hub_.progress(); }
  bool arm() override;
  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t stream_id() const override { return options_.stream_id; }
  double free_capacity() const override;
  [[nodiscard]] const LinkOptions& options() const noexcept { return options_; }
  // Whether `op` is the context of an operation this link posted (fabric_medium::holds()).
  [[nodiscard]] bool owns(const void* op) const noexcept {
    return holds(ops_, op) || holds(source_ops_, op);
  }

 private:
  struct Arrived {
    std::uint32_t slot = 0;
    std::size_t length = 0;
  };

  // Setup, credit and ack messages in flight at once (fabric-rma; fabric-msg uses one, for
  // the ack).
  static constexpr std::uint32_t kSources = 4;

  [[nodiscard]] Result<void> post(std::uint32_t slot);
  // The sender is gone (silent, or an operation failed): wait for it to come back, or fail
  // when it never reconnects.
  void lose_sender(const Error& why);
  // Nothing of a lost connection is left to deliver: a returning sender may attach.
  [[nodiscard]] bool drained() const noexcept;
  // Sends an ack of everything acknowledged so far (fabric-msg: a frame; fabric-rma: the ack
  // word). false: not now, or failed.
  bool send_progress_ack();
  // A tagged 32-byte control frame to the sender (fi_tinject). false: not now, or failed.
  bool inject_control(const FrameHeader& header);
  // After a receive the lost connection broke: releases the receives behind it.
  void on_received_failed();
  // An operation failed: the connection is lost (a sender that reconnects) or the link fails.
  void link_error(const Error& error);
  bool deliver(FrameSink& sink, const Arrived& arrived);
  // fabric-rma with ring words: releases the frames whose ring words say they were written,
  // in ring order from the head. Returns how many.
  int find_unannounced();
  // The ring word of `slot`, which the sender writes remotely (an acquire load).
  [[nodiscard]] std::uint64_t read_ring_word(std::uint32_t slot) const noexcept;
  // Validates a frame of `length` bytes written to `slot` (either way) and records it; false
  // when the link failed.
  bool on_slot_written(std::uint32_t slot, std::uint32_t length);
  int flush_control();
  // fabric-rma: sends the setup / writes one control word. false: not now (-FI_EAGAIN: tried
  // again after a pause; no free source buffer: on the next poll) or the link failed.
  bool send_setup();
  bool write_word(std::uint64_t offset, std::uint32_t kind, std::uint64_t value);
  // Sends the end-of-stream ack as an operation with a completion. false: not now, or failed.
  bool send_ack(std::uint64_t sequence);
  // A control send was refused for now (-FI_EAGAIN): flush_control() tries again after a
  // pause (RefusalPause), and the hub ticks by then.
  void on_refused();
  // A control send was taken.
  void on_sent();
  // tick() without the refused control's retry.
  std::chrono::steady_clock::time_point next_tick(std::chrono::steady_clock::time_point now);
  [[nodiscard]] std::string describe() const;

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  Hub& hub_;
  LinkOptions options_;
  FrameLimits limits_;
  std::uint32_t owner_;
  FabricTransfer transfer_;
  std::uint32_t link_index_;
  std::uint32_t frame_bytes_;  // the largest frame: header + max payload
  bool ring_words_;            // fabric-rma and never_blocks: the setup offers ring words
  // This connection's sender may be writing ring words: from attach() until a frame comes
  // with immediate data (a sender that declined the offer; one that took it sends none).
  bool watch_words_ = false;
  BufferPool pool_;
  Registration registration_;
  std::optional<BufferPool> sources_;
  Registration sources_registration_;
  std::vector<OpContext> source_ops_;
  // The ack's operation: its source slot while in flight; the completion flags tried so far.
  std::optional<std::uint32_t> ack_slot_;
  std::size_t ack_flags_choice_ = 0;
  // fabric-rma only.
  std::uint64_t peer_credit_address_ = 0;
  std::uint64_t peer_credit_key_ = 0;
  std::uint64_t setup_credit_ = 0;  // initial credit to send in the setup (0: sent)
  std::vector<OpContext> ops_;
  // Frames released for delivery, in sequence order: a ring of window entries (at most window
  // receives are posted / window frames credited). arrived_tail_ counts every frame released.
  std::vector<Arrived> arrived_;
  std::uint64_t arrived_head_ = 0;
  std::uint64_t arrived_tail_ = 0;
  // Completions that wait for an earlier one, per slot: the length, or kPending.
  // fabric-msg: the provider matches messages to receives in the order they were posted
  // (send-after-send order), but completes them in any order: rxm completes a large
  // (rendezvous) message after a small (eager) one sent later. So completions wait here and
  // move to `arrived_` in posting order (`posted_`), which is the sender's frame order.
  // fabric-rma: a write to a slot of the window waits here until the slots before it in ring
  // order (frames arrived_tail_ + 1, ...) were written.
  static constexpr std::size_t kPending = ~std::size_t{0};
  static constexpr std::size_t kFailedReceive = kPending - 1;  // broken with its connection
  std::vector<std::size_t> completed_;
  std::vector<std::uint32_t> posted_;  // fabric-msg: ring of window entries, slots in posting order
  std::uint64_t posted_head_ = 0;
  std::uint64_t posted_tail_ = 0;
  std::optional<fi_addr_t> peer_;
  std::string peer_text_;
  ReceiverCredits credits_;
  std::uint64_t credit_to_send_ = 0;  // cumulative total not yet injected (0: none)
  std::uint64_t credit_sent_ = 0;     // the highest total handed to the provider for the peer
  std::optional<std::uint64_t> ack_to_send_;
  std::array<std::byte, kFrameHeaderBytes> heartbeat_{};
  std::chrono::steady_clock::time_point last_sent_{};
  RefusalPause refused_;  // control sends the provider refuses for now
  std::chrono::steady_clock::time_point last_heard_{};
  std::uint64_t next_sequence_ = 1;
  // Credit of the current connection is checked against the frames released since it
  // attached: arrived_tail_ - connection_base_.
  std::uint64_t connection_base_ = 0;
  std::uint64_t frames_received_ = 0;
  // Upstream backup: acknowledged (delivered, or with manual_ack as the owner said) and told
  // the sender; the resume point still to send first to a new connection; the end of stream.
  std::uint64_t acked_ = 0;
  std::uint64_t ack_sent_ = 0;
  bool resume_to_send_ = false;
  std::uint64_t eos_sequence_ = 0;  // 0: not delivered yet
  std::uint32_t sender_id_ = 0;
  std::vector<std::byte> peer_name_;
  bool ever_attached_ = false;
  // The sender was lost at this time (and why); nullopt while attached.
  std::optional<std::chrono::steady_clock::time_point> lost_at_;
  std::string lost_because_;
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
};

}  // namespace boreal::transport::fabric_medium
