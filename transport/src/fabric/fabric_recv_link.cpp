#include "fabric/fabric_recv_link.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstring>

#include <sys/uio.h>

#include "fabric/fabric_wire.hpp"

namespace boreal::transport::fabric_medium {

FabricRecvLink::FabricRecvLink(EventLoop& loop, Hub& hub, const LinkOptions& options,
                               std::uint32_t owner, FabricTransfer transfer,
                               std::uint32_t link_index)
    : loop_(loop),
      hub_(hub),
      options_(options),
      limits_{.stream_id = options.stream_id,
              .tuple_bytes = options.tuple_bytes,
              .max_payload_bytes = options.max_payload_bytes},
      owner_(owner),
      transfer_(transfer),
      link_index_(link_index),
      frame_bytes_(static_cast<std::uint32_t>(kFrameHeaderBytes + options.max_payload_bytes)),
      ring_words_(transfer == FabricTransfer::rma_writes && options.never_blocks),
      // fabric-rma: each ring slot ends with its ring word (fabric_wire.hpp).
      pool_(options.window,
            frame_bytes_ + (transfer == FabricTransfer::rma_writes ? kRingWordBytes : 0)),
      ops_(options.window),
      arrived_(options.window),
      arrived_head_(options.resume_after),
      arrived_tail_(options.resume_after),
      completed_(options.window, kPending),
      posted_(options.window),
      credits_(options.window, std::min(options.credit_batch, options.window)),
      next_sequence_(options.resume_after + 1),
      connection_base_(options.resume_after),
      acked_(options.resume_after),
      ack_sent_(options.resume_after) {
  loop_.add_source([this, alive = alive_] { return !*alive || arm(); });
}

FabricRecvLink::~FabricRecvLink() { *alive_ = false; }

Result<void> FabricRecvLink::start() {
  auto& context = hub_.context();
  const bool rma = transfer_ == FabricTransfer::rma_writes;
  sources_.emplace(kSources, kControlMessageBytes);
  auto sources = context.register_region(sources_->region(), FI_SEND | (rma ? FI_WRITE : 0));
  if (!sources) return sources.error();
  sources_registration_ = std::move(sources).value();
  source_ops_.resize(kSources);
  encode_header({.flags = kFlagHeartbeat, .stream_id = options_.stream_id}, {},
                std::span<std::byte, kFrameHeaderBytes>(heartbeat_));
  if (rma) {
    auto ring = context.register_region(pool_.region(), FI_REMOTE_WRITE);
    if (!ring) return ring.error();
    registration_ = std::move(ring).value();
    return success();
  }
  auto registration = context.register_region(pool_.region());
  if (!registration) return registration.error();
  registration_ = std::move(registration).value();
  for (std::uint32_t i = 0; i < pool_.capacity(); ++i) {
    ops_[i].owner = owner_;
    ops_[i].slot = i;
    if (auto ok = post(i); !ok) return ok;
  }
  return success();
}

Result<void> FabricRecvLink::post(std::uint32_t slot) {
  auto& context = hub_.context();
  const auto rc = fi_trecv(context.ep(), pool_.at(slot).data, pool_.buffer_bytes(),
                           registration_.desc(), FI_ADDR_UNSPEC, options_.stream_id, 0,
                           &ops_[slot].fi);
  if (rc != 0) return context.error("fi_trecv", static_cast<int>(rc));
  assert(posted_tail_ - posted_head_ < posted_.size());
  posted_[posted_tail_++ % posted_.size()] = slot;
  return success();
}

std::string FabricRecvLink::refuses(std::uint32_t sender_id,
                                    std::span<const std::byte> name) const {
  if (state_ == LinkState::failed) return "it failed: " + error_->message;
  if (!ever_attached_) return {};
  // sender id 0: a sender that never reconnects, so a second hello is a second sender.
  if (sender_id == 0 || sender_id != sender_id_) return "it already has a sender";
  if (peer_ && std::equal(name.begin(), name.end(), peer_name_.begin(), peer_name_.end())) {
    return std::string(kRepeatedHello);
  }
  if (!drained()) return "it still holds frames of the lost connection";
  return {};
}

bool FabricRecvLink::drained() const noexcept {
  if (arrived_head_ != arrived_tail_) return false;
  if (transfer_ == FabricTransfer::messages && posted_tail_ - posted_head_ != pool_.capacity()) {
    return false;
  }
  return std::all_of(completed_.begin(), completed_.end(),
                     [](std::size_t length) { return length == kPending; });
}

void FabricRecvLink::attach(fi_addr_t peer, std::string peer_text,
                            const HelloExtension& extension, std::uint32_t sender_id,
                            std::span<const std::byte> name) {
  if (ever_attached_) ++stats_.reconnects;
  ever_attached_ = true;
  peer_ = peer;
  peer_text_ = std::move(peer_text);
  sender_id_ = sender_id;
  peer_name_.assign(name.begin(), name.end());
  lost_at_.reset();
  if (state_ == LinkState::connecting) state_ = LinkState::established;
  last_sent_ = last_heard_ = hub_.now();
  refused_.clear();
  hub_.tick_by(hub_.now() + std::min(options_.heartbeat, options_.peer_timeout));
  // A new connection: its credit counts from here, and it resumes after the last frame
  // acknowledged. Nothing is left of the lost one (drained()), so the ring's head moves to
  // that frame: fabric-rma writes frame n to slot (n - 1) % slots.
  arrived_head_ = arrived_tail_ = connection_base_ = acked_;
  credits_ = ReceiverCredits(options_.window, std::min(options_.credit_batch, options_.window));
  frames_received_ = 0;
  credit_sent_ = 0;
  credit_to_send_ = 0;
  resume_to_send_ = true;
  ack_sent_ = acked_;
  if (eos_sequence_ != 0 && acked_ >= eos_sequence_ && !ack_slot_) ack_to_send_ = eos_sequence_;
  if (transfer_ == FabricTransfer::rma_writes) {
    // No ring word of an earlier connection may name a frame of this one: the new sender
    // writes none before it has the setup, sent below.
    for (std::uint32_t slot = 0; slot < pool_.capacity(); ++slot) {
      std::memset(pool_.region().data() +
                      ring_word_offset(slot, static_cast<std::uint32_t>(pool_.buffer_bytes())),
                  0, kRingWordBytes);
    }
    watch_words_ = ring_words_;
    peer_credit_address_ = extension.credit_address;
    peer_credit_key_ = extension.credit_key;
    setup_credit_ = credits_.initial_grant();
  } else {
    credit_to_send_ = credits_.initial_grant();
  }
  flush_control();
}

void FabricRecvLink::lose_sender(const Error& why) {
  if (sender_id_ == 0 || state_ != LinkState::established) {
    fail_link(why);
    return;
  }
  lost_at_ = hub_.now();
  lost_because_ = why.message;
  peer_.reset();
  setup_credit_ = 0;
  credit_to_send_ = 0;
  resume_to_send_ = false;
  hub_.tick_by(*lost_at_ + options_.reconnect_timeout);
}

void FabricRecvLink::acknowledge(std::uint64_t through) {
  if (!options_.manual_ack) return;
  acked_ = std::max(acked_, std::min(through, next_sequence_ - 1));
  if (eos_sequence_ != 0 && acked_ >= eos_sequence_ && !ack_to_send_ && !ack_slot_ &&
      state_ == LinkState::established) {
    ack_to_send_ = eos_sequence_;
  }
  // Out at once: the owner acknowledges once per checkpoint, and the sender's buffers wait.
  flush_control();
}

void FabricRecvLink::on_received(std::uint32_t slot, std::size_t length) {
  if (state_ == LinkState::failed) return;
  assert(slot < completed_.size() && completed_[slot] == kPending);
  completed_[slot] = length;
  last_heard_ = hub_.now();
  // Release completions in posting order (see completed_).
  while (posted_head_ != posted_tail_) {
    const std::uint32_t next = posted_[posted_head_ % posted_.size()];
    if (completed_[next] == kPending) break;
    if (!peer_ && !ever_attached_) {
      // A frame of a lost connection reaching a restarted node before its sender's hello (the
      // socket providers reconnect the old endpoint to the same address): the sender sends
      // it again after its hello.
      completed_[next] = kPending;
      ++posted_head_;
      ++stats_.duplicates_dropped;
      if (auto ok = post(next); !ok) {
        fail_link(ok.error());
        return;
      }
      continue;
    }
    if (completed_[next] == kFailedReceive) {
      // A receive the lost connection broke: it carries nothing; post it again.
      completed_[next] = kPending;
      ++posted_head_;
      if (auto ok = post(next); !ok) {
        fail_link(ok.error());
        return;
      }
      continue;
    }
    if (arrived_tail_ - connection_base_ + 1 > credit_sent_) {
      fail_link(Error{ErrorCategory::protocol, 0,
                      "sender exceeded its credit: message " +
                          std::to_string(arrived_tail_ - connection_base_ + 1) +
                          " arrived, " + std::to_string(credit_sent_) +
                          " frames granted"});
      return;
    }
    assert(arrived_tail_ - arrived_head_ < arrived_.size());
    arrived_[arrived_tail_++ % arrived_.size()] = {next, completed_[next]};
    completed_[next] = kPending;
    ++posted_head_;
  }
}

void FabricRecvLink::on_written(const Imm& imm) {
  if (state_ == LinkState::failed) return;
  if (!peer_) {
    // A write of a lost connection (before this node's restart, or of a sender being waited
    // for): its sender writes the frame again once it said hello.
    ++stats_.duplicates_dropped;
    return;
  }
  if (imm.slot >= pool_.capacity()) {
    fail_link(Error{ErrorCategory::protocol, 0,
                    "remote write to slot " + std::to_string(imm.slot) + " of a ring of " +
                        std::to_string(pool_.capacity()) + " slots"});
    return;
  }
  watch_words_ = false;  // the sender declined the ring words: no slot needs reading
  on_slot_written(imm.slot, imm.length);
}

bool FabricRecvLink::on_slot_written(std::uint32_t slot, std::uint32_t length) {
  const std::uint32_t slots = pool_.capacity();
  std::string problem;
  if (length > frame_bytes_) {
    problem = "remote write of " + std::to_string(length) + " bytes exceeds the slot's " +
              std::to_string(frame_bytes_);
  } else {
    // The window: frames arrived_tail_ + 1 .. credit_sent_, in slots from arrived_tail_ % slots
    // on. credit_sent_ <= frames delivered + slots, so each slot names at most one of them, and
    // never one whose frame is released but not delivered yet (that would be overwritten).
    const std::uint64_t head = arrived_tail_;
    const std::uint64_t frame = head + 1 + (slot + slots - head % slots) % slots;
    if (frame - connection_base_ > credit_sent_) {
      problem = "remote write to slot " + std::to_string(slot) + " is for frame " +
                std::to_string(frame) + ", beyond the " + std::to_string(credit_sent_) +
                " frames granted (the sender exceeded its credit or wrote the wrong slot)";
    } else if (completed_[slot] != kPending) {
      problem = "second remote write to slot " + std::to_string(slot) + " (frame " +
                std::to_string(frame) + ") while frame " + std::to_string(head + 1) +
                " has not arrived";
    }
  }
  if (!problem.empty()) {
    fail_link(Error{ErrorCategory::protocol, 0, problem});
    return false;
  }
  last_heard_ = hub_.now();
  completed_[slot] = length;
  // Release the frames whose slots are written, in ring order from the head.
  for (;;) {
    const auto next = static_cast<std::uint32_t>(arrived_tail_ % slots);
    if (completed_[next] == kPending) break;
    assert(arrived_tail_ - arrived_head_ < arrived_.size());
    arrived_[arrived_tail_++ % arrived_.size()] = {next, completed_[next]};
    completed_[next] = kPending;
  }
  return true;
}

std::uint64_t FabricRecvLink::read_ring_word(std::uint32_t slot) const noexcept {
  // The sender's provider stores the word after the frame's bytes (write-after-write order);
  // the acquire load keeps this thread's reads of the frame after it. On RDMA hardware the
  // store is the NIC's DMA; with the sockets provider a thread of libfabric's makes it, and
  // under ThreadSanitizer that provider keeps immediate data (FabricContext::setup()).
  // The setup names the pool's region as the ring and buffer_bytes() as the slot size.
  const auto slot_bytes = static_cast<std::uint32_t>(pool_.buffer_bytes());
  auto* word =
      reinterpret_cast<std::uint64_t*>(pool_.region().data() + ring_word_offset(slot, slot_bytes));
  const auto stored = std::atomic_ref<std::uint64_t>(*word).load(std::memory_order_acquire);
  return boost::endian::little_to_native(stored);
}

int FabricRecvLink::find_unannounced() {
  int found = 0;
  const std::uint32_t slots = pool_.capacity();
  while (state_ != LinkState::failed && peer_) {
    const auto slot = static_cast<std::uint32_t>(arrived_tail_ % slots);
    const auto due = arrived_tail_ + 1;
    const auto word = read_ring_word(slot);
    const auto length = ring_word_length(word, due);
    if (!length) {
      // Cleared at attach, or a frame of an earlier lap: the sender has not written this one
      // yet. A later frame here means the sender wrote beyond its credit, over frame `due`.
      const auto named = word >> 16;
      if (named > (due & kRingWordSequenceMask)) {
        fail_link(Error{ErrorCategory::protocol, 0,
                        "ring word of slot " + std::to_string(slot) + " names frame " +
                            std::to_string(named) + " while frame " + std::to_string(due) +
                            " is due, beyond the " + std::to_string(credit_sent_) +
                            " frames granted (the sender exceeded its credit or wrote the "
                            "wrong slot)"});
      }
      break;
    }
    if (completed_[slot] != kPending) break;
    if (!on_slot_written(slot, *length)) break;
    ++stats_.unannounced_frames;
    ++found;
  }
  return found;
}

void FabricRecvLink::on_outbound_done(std::uint32_t slot) {
  sources_->release(sources_->at(slot));
  if (ack_slot_ == slot) {
    // The ack has left (or arrived, with FI_DELIVERY_COMPLETE): now the link is done.
    ack_slot_.reset();
    if (state_ != LinkState::failed) state_ = LinkState::finished;
  }
}

void FabricRecvLink::on_operation_failed(const OpContext& op, const Error& error) {
  if (sender_id_ == 0) {
    if (op.outbound && ack_slot_ == op.slot) {
      ack_slot_.reset();
      fail_link(Error{error.category, error.code,
                      "the end-of-stream ack failed: " + error.message});
      return;
    }
    fail_link(error);
    return;
  }
  // A sender that reconnects: the operation went down with its connection.
  if (op.outbound) {
    sources_->release(sources_->at(op.slot));
    if (ack_slot_ == op.slot) {
      ack_slot_.reset();
      ack_to_send_ = eos_sequence_;  // again, to the sender that comes back
    }
  } else {
    completed_[op.slot] = kFailedReceive;
    on_received_failed();
  }
  if (!lost_at_) lose_sender(error);
}

void FabricRecvLink::on_received_failed() {
  // Moves the posting-order release past the broken receive (and any completed after it).
  while (posted_head_ != posted_tail_) {
    const std::uint32_t next = posted_[posted_head_ % posted_.size()];
    if (completed_[next] != kFailedReceive) break;
    completed_[next] = kPending;
    ++posted_head_;
    if (auto ok = post(next); !ok) {
      fail_link(ok.error());
      return;
    }
  }
}

void FabricRecvLink::on_heartbeat() noexcept { last_heard_ = hub_.now(); }

std::chrono::steady_clock::time_point FabricRecvLink::tick(
    std::chrono::steady_clock::time_point now) {
  constexpr auto kNever = std::chrono::steady_clock::time_point::max();
  if (state_ != LinkState::established) return kNever;
  const auto next = next_tick(now);
  // Control the provider refused for now is tried again on the poll after its pause, for
  // which a blocked thread must wake.
  if (next == kNever || !refused_.since() || refused_.retry_at() <= now) return next;
  return std::min(next, refused_.retry_at());
}

std::chrono::steady_clock::time_point FabricRecvLink::next_tick(
    std::chrono::steady_clock::time_point now) {
  constexpr auto kNever = std::chrono::steady_clock::time_point::max();
  if (lost_at_) {
    const auto give_up = *lost_at_ + options_.reconnect_timeout;
    if (now < give_up) return give_up;
    fail_link(Error{ErrorCategory::closed, 0,
                    lost_because_ + "; the sender did not come back within " +
                        std::to_string(options_.reconnect_timeout.count()) + " ms (after frame " +
                        std::to_string(next_sequence_ - 1) + ")"});
    return kNever;
  }
  if (now - last_heard_ >= options_.peer_timeout) {
    lose_sender(Error{ErrorCategory::closed, 0,
                      "peer silent for " + std::to_string(options_.peer_timeout.count()) +
                          " ms (gone, or the network is down)"});
    return lost_at_ ? *lost_at_ + options_.reconnect_timeout : kNever;
  }
  if (now - last_sent_ >= options_.heartbeat) {
    const auto rc = fi_tinject(hub_.context().ep(), heartbeat_.data(), heartbeat_.size(), *peer_,
                               options_.stream_id);
    ++stats_.write_calls;
    if (rc != 0) {
      // -FI_EAGAIN: again soon. Any other failure is not the link's end: a sender that is
      // really gone is noticed by its silence.
      ++stats_.would_block;
      return std::min(now + std::chrono::milliseconds(1), last_heard_ + options_.peer_timeout);
    }
    last_sent_ = now;
  }
  return std::min(last_sent_ + options_.heartbeat, last_heard_ + options_.peer_timeout);
}

void FabricRecvLink::link_error(const Error& error) {
  if (sender_id_ != 0 && state_ == LinkState::established) {
    lose_sender(error);
  } else {
    fail_link(error);
  }
}

void FabricRecvLink::fail_link(const Error& error) {
  if (state_ == LinkState::failed) return;
  state_ = LinkState::failed;
  error_ = Error{error.category, error.code, describe() + ": " + error.message};
}

int FabricRecvLink::poll(FrameSink& sink) {
  int work = hub_.progress();
  if (watch_words_) work += find_unannounced();
  while (state_ != LinkState::failed && arrived_head_ != arrived_tail_) {
    const auto arrived = arrived_[arrived_head_++ % arrived_.size()];
    if (!deliver(sink, arrived)) break;
    ++work;
  }
  if (state_ == LinkState::established || state_ == LinkState::finished) {
    if (auto total = credits_.take_grant(); total != 0) credit_to_send_ = total;
    work += flush_control();
  }
  return work;
}

bool FabricRecvLink::deliver(FrameSink& sink, const Arrived& arrived) {
  const std::byte* data = pool_.at(arrived.slot).data;
  const std::string what =
      transfer_ == FabricTransfer::rma_writes ? "remote write" : "message";
  if (arrived.length < kFrameHeaderBytes) {
    fail_link(Error{ErrorCategory::protocol, 0,
                    what + " of " + std::to_string(arrived.length) +
                        " bytes is shorter than a frame header"});
    return false;
  }
  const auto raw = std::span<const std::byte, kFrameHeaderBytes>(data, kFrameHeaderBytes);
  auto header = decode_header(raw, limits_);
  if (header && header.value().payload_bytes + kFrameHeaderBytes != arrived.length) {
    header = fail(ErrorCategory::protocol, 0,
                  what + " of " + std::to_string(arrived.length) + " bytes carries a frame of " +
                      std::to_string(header.value().payload_bytes + kFrameHeaderBytes));
  }
  const std::span<const std::byte> payload(data + kFrameHeaderBytes,
                                           arrived.length - kFrameHeaderBytes);
  if (header) {
    // The sink's pass over a data payload, when it makes one, is the frame check.
    const auto& h = header.value();
    const auto crc = (h.flags & kFlagData) != 0 ? sink.payload_crc(payload) : std::nullopt;
    auto ok = crc ? verify_checksum_from_crc(h, raw, *crc) : verify_checksum(h, raw, payload);
    if (!ok) header = ok.error();
  }
  if (header && !(header.value().flags & kFlagData)) {
    header = fail(ErrorCategory::protocol, 0,
                  "unexpected frame with flags " + std::to_string(header.value().flags) +
                      " on the data path");
  }
  if (!header) {
    fail_link(header.error());
    return false;
  }
  const auto& h = header.value();
  if (h.sequence > next_sequence_) {
    fail_link(Error{ErrorCategory::protocol, 0,
                    "sequence gap: expected frame " + std::to_string(next_sequence_) + ", got " +
                        std::to_string(h.sequence)});
    return false;
  }
  // (Credit was checked when the frame arrived.)
  ++frames_received_;
  credits_.on_frame();
  const bool duplicate = h.sequence < next_sequence_;  // replayed after a reconnect: had it
  if (duplicate) {
    ++stats_.duplicates_dropped;
  } else {
    ++next_sequence_;
    ++stats_.frames;
    stats_.tuples += h.tuple_count;
    stats_.payload_bytes += h.payload_bytes;
    sink.on_frame(FrameView{h, payload});
    if (!options_.manual_ack) acked_ = h.sequence;
  }
  if (transfer_ == FabricTransfer::messages) {
    if (auto ok = post(arrived.slot); !ok) {
      fail_link(ok.error());
      return false;
    }
  }
  credits_.on_consumed();
  // The link finishes when the end-of-stream ack has left (on_outbound_done), not here; with
  // manual_ack it goes once the owner acknowledged the end (acknowledge()).
  if (!duplicate && (h.flags & kFlagEndOfStream)) {
    eos_sequence_ = h.sequence;
    if (acked_ >= eos_sequence_) ack_to_send_ = h.sequence;
  }
  return true;
}

int FabricRecvLink::flush_control() {
  if (!peer_ || state_ == LinkState::failed || !refused_.may_try(hub_.now())) return 0;
  int work = 0;
  // The answer to a hello starts with where to resume (a tagged ack frame, both transfers).
  if (resume_to_send_) {
    if (!inject_control({.flags = kFlagAck, .stream_id = options_.stream_id, .sequence = acked_})) {
      return work;
    }
    resume_to_send_ = false;
    ack_sent_ = acked_;
    ++work;
  }
  const bool rma = transfer_ == FabricTransfer::rma_writes;
  if (rma && setup_credit_ != 0) {
    if (!send_setup()) return work;
    ++work;
  }
  // Acknowledgements go with credit (the sender's buffers come back with its window), or at
  // once when the owner acknowledges; the end-of-stream ack has its own operation below.
  if (acked_ > ack_sent_ && (credit_to_send_ != 0 || options_.manual_ack) &&
      !(ack_to_send_ && *ack_to_send_ <= acked_)) {
    if (!send_progress_ack()) return work;
    ++work;
  }
  if (credit_to_send_ != 0) {
    const bool sent =
        rma ? write_word(kCreditWordAt, kImmCredit, credit_to_send_)
            : inject_control({.flags = kFlagCredit, .stream_id = options_.stream_id,
                              .sequence = credit_to_send_});
    if (!sent) return work;
    credit_sent_ = credit_to_send_;
    credit_to_send_ = 0;
    ++stats_.credit_frames;
    ++work;
  }
  if (ack_to_send_ && !ack_slot_) {
    if (!send_ack(*ack_to_send_)) return work;
    ack_sent_ = std::max(ack_sent_, *ack_to_send_);
    ack_to_send_.reset();
    ++work;
  }
  return work;
}

bool FabricRecvLink::inject_control(const FrameHeader& header) {
  auto& context = hub_.context();
  std::array<std::byte, kFrameHeaderBytes> frame{};
  encode_header(header, {}, std::span<std::byte, kFrameHeaderBytes>(frame));
  const auto rc = fi_tinject(context.ep(), frame.data(), frame.size(), *peer_, options_.stream_id);
  ++stats_.write_calls;
  if (rc == -FI_EAGAIN) {
    on_refused();
    return false;
  }
  if (rc != 0) {
    link_error(context.error("fi_tinject", static_cast<int>(rc)));
    return false;
  }
  on_sent();
  return true;
}

bool FabricRecvLink::send_progress_ack() {
  const bool sent =
      transfer_ == FabricTransfer::rma_writes
          ? write_word(kAckWordAt, kImmAck, acked_)
          : inject_control(
                {.flags = kFlagAck, .stream_id = options_.stream_id, .sequence = acked_});
  if (sent) ack_sent_ = acked_;
  return sent;
}

bool FabricRecvLink::send_ack(std::uint64_t sequence) {
  // Completion semantics asked of the ack, strongest first; a provider that refuses one in
  // an operation's flags gets the next (0: its default, at least FI_TRANSMIT_COMPLETE for an
  // operation that is not injected).
  static constexpr std::array<std::uint64_t, 3> kAckFlags{FI_DELIVERY_COMPLETE,
                                                          FI_TRANSMIT_COMPLETE, 0};
  auto source = sources_->acquire();
  if (!source) {
    ++stats_.would_block;
    return false;
  }
  const bool rma = transfer_ == FabricTransfer::rma_writes;
  if (rma) {
    wire_detail::put(source->data, sequence);
  } else {
    encode_header({.flags = kFlagAck, .stream_id = options_.stream_id, .sequence = sequence}, {},
                  std::span<std::byte, kFrameHeaderBytes>(source->data, kFrameHeaderBytes));
  }
  auto& op = source_ops_[source->index];
  op = OpContext{.owner = owner_, .slot = source->index, .outbound = true};
  auto& context = hub_.context();
  void* desc = sources_registration_.desc();
  iovec iov{source->data, rma ? std::size_t{kControlWordBytes} : kFrameHeaderBytes};
  for (;;) {
    const std::uint64_t flags = kAckFlags[ack_flags_choice_] | FI_COMPLETION;
    ssize_t rc = 0;
    if (rma) {
      fi_rma_iov target{.addr = peer_credit_address_ + kAckWordAt,
                        .len = kControlWordBytes,
                        .key = peer_credit_key_};
      fi_msg_rma msg{.msg_iov = &iov,
                     .desc = &desc,
                     .iov_count = 1,
                     .addr = *peer_,
                     .rma_iov = &target,
                     .rma_iov_count = 1,
                     .context = &op.fi,
                     .data = encode_imm(link_index_, kImmAck, kControlWordBytes)};
      rc = fi_writemsg(context.ep(), &msg, flags | FI_REMOTE_CQ_DATA);
    } else {
      fi_msg_tagged msg{.msg_iov = &iov,
                        .desc = &desc,
                        .iov_count = 1,
                        .addr = *peer_,
                        .tag = options_.stream_id,
                        .ignore = 0,
                        .context = &op.fi,
                        .data = 0};
      rc = fi_tsendmsg(context.ep(), &msg, flags);
    }
    ++stats_.write_calls;
    if (rc == 0) {
      ack_slot_ = source->index;
      on_sent();
      return true;
    }
    if ((rc == -FI_EOPNOTSUPP || rc == -FI_EINVAL || rc == -FI_ENOSYS || rc == -FI_EBADFLAGS) &&
        ack_flags_choice_ + 1 < kAckFlags.size()) {
      ++ack_flags_choice_;
      continue;
    }
    sources_->release(*source);
    if (rc == -FI_EAGAIN) {
      on_refused();
      return false;
    }
    const auto e = context.error(rma ? "fi_writemsg" : "fi_tsendmsg", static_cast<int>(rc));
    link_error(Error{e.category, e.code, "the end-of-stream ack failed: " + e.message});
    return false;
  }
}

bool FabricRecvLink::send_setup() {
  auto source = sources_->acquire();
  if (!source) {
    ++stats_.would_block;
    return false;
  }
  const auto frame = std::span<std::byte, kFrameHeaderBytes>(source->data, kFrameHeaderBytes);
  encode_header({.flags = kFlagCredit, .stream_id = options_.stream_id, .sequence = setup_credit_},
                {}, frame);
  encode_setup({.ring_address = hub_.context().remote_address(pool_.region().data()),
                .ring_key = registration_.key(),
                .slots = pool_.capacity(),
                .slot_bytes = static_cast<std::uint32_t>(pool_.buffer_bytes()),
                .link = link_index_,
                .ring_words = ring_words_},
               std::span<std::byte, kRmaSetupBytes>(source->data + kFrameHeaderBytes,
                                                    kRmaSetupBytes));
  auto& op = source_ops_[source->index];
  op = OpContext{.owner = owner_, .slot = source->index, .outbound = true};
  auto& context = hub_.context();
  const auto rc = fi_tsend(context.ep(), source->data, kControlMessageBytes,
                           sources_registration_.desc(), *peer_, options_.stream_id, &op.fi);
  ++stats_.write_calls;
  if (rc != 0) sources_->release(*source);
  if (rc == -FI_EAGAIN) {
    on_refused();
    return false;
  }
  if (rc != 0) {
    link_error(context.error("fi_tsend", static_cast<int>(rc)));
    return false;
  }
  credit_sent_ = setup_credit_;
  setup_credit_ = 0;
  ++stats_.credit_frames;
  on_sent();
  return true;
}

bool FabricRecvLink::write_word(std::uint64_t offset, std::uint32_t kind, std::uint64_t value) {
  auto source = sources_->acquire();
  if (!source) {
    ++stats_.would_block;
    return false;
  }
  wire_detail::put(source->data, value);
  auto& op = source_ops_[source->index];
  op = OpContext{.owner = owner_, .slot = source->index, .outbound = true};
  auto& context = hub_.context();
  const auto rc = fi_writedata(context.ep(), source->data, kControlWordBytes,
                               sources_registration_.desc(),
                               encode_imm(link_index_, kind, kControlWordBytes), *peer_,
                               peer_credit_address_ + offset, peer_credit_key_, &op.fi);
  ++stats_.write_calls;
  if (rc != 0) sources_->release(*source);
  if (rc == -FI_EAGAIN) {
    on_refused();
    return false;
  }
  if (rc != 0) {
    link_error(context.error("fi_writedata", static_cast<int>(rc)));
    return false;
  }
  on_sent();
  return true;
}

void FabricRecvLink::on_refused() {
  ++stats_.would_block;
  hub_.tick_by(refused_.refused(hub_.now()));
}

void FabricRecvLink::on_sent() {
  last_sent_ = hub_.now();
  refused_.clear();
}

bool FabricRecvLink::arm() {
  if (state_ == LinkState::failed) return true;
  if (arrived_head_ != arrived_tail_) return false;
  const bool control_due =
      credit_to_send_ != 0 || ack_to_send_ || setup_credit_ != 0 ||
      (peer_ && (resume_to_send_ || (options_.manual_ack && acked_ > ack_sent_)));
  // Control refused for now waits for its pause, which the hub's tick wakes the thread for.
  if (control_due && refused_.may_try(hub_.now())) return false;
  // A frame written without immediate data wakes nobody: one already there is work now.
  if (watch_words_ && peer_) {
    const auto head = static_cast<std::uint32_t>(arrived_tail_ % pool_.capacity());
    if (completed_[head] == kPending && ring_word_length(read_ring_word(head), arrived_tail_ + 1)) {
      return false;
    }
  }
  return hub_.context().arm();
}

double FabricRecvLink::free_capacity() const {
  const auto held = credits_.granted() - frames_received_;
  return static_cast<double>(held + credits_.freed_not_granted());
}

std::string FabricRecvLink::describe() const {
  return "link '" + options_.name + "' (stream " + std::to_string(options_.stream_id) +
         ") from fabric://" + hub_.context().provider() + "/" +
         (peer_text_.empty() ? std::string("?") : peer_text_);
}

}  // namespace boreal::transport::fabric_medium
