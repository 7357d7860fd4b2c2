// One arrow between two nodes: a sending end and a receiving end, ordered and lossless, with
// credit-based flow control. Media (tcp, inproc, fabric) implement these two interfaces.
//
// Threading: each end belongs to one I/O thread, which calls every member. Nothing blocks;
// nothing allocates after start-up; nothing throws. A link that fails records its Error,
// moves to LinkState::failed and stays there; its thread keeps serving other links.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boreal/transport/error.hpp>
#include <boreal/transport/frame.hpp>

namespace boreal::transport {

enum class SendStatus : std::uint8_t { ok, back_pressured, not_connected, closed };
[[nodiscard]] std::string_view to_string(SendStatus status) noexcept;

enum class LinkState : std::uint8_t {
  connecting,   // no peer yet, or handshake in progress
  established,  // data may flow
  finished,     // end of stream sent and acknowledged (sender) / received (receiver)
  failed,       // error() says why
};
[[nodiscard]] std::string_view to_string(LinkState state) noexcept;

// Per-link counters (monotonic). Syscalls are those the link itself made.
struct LinkStats {
  std::uint64_t frames = 0;
  std::uint64_t tuples = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t credit_frames = 0;    // credit messages sent (receiver) or received (sender)
  std::uint64_t credit_stalls = 0;    // try_claim refused for lack of credit
  std::uint64_t duplicates_dropped = 0;  // receiver: replayed frames it had already delivered,
                                         // or frames of a lost connection (fabric)
  std::uint64_t frames_replayed = 0;     // sender: frames sent again after a reconnect
  std::uint64_t reconnects = 0;          // connections re-established after one was lost
  std::uint64_t fresh_endpoints = 0;     // fabric sender: endpoints replaced while connecting,
                                         // their hello unanswered (or refused by the provider)
                                         // for 1 s, then 2 s, 4 s...
  std::uint64_t read_calls = 0;       // read/recv syscalls (or CQ reads)
  std::uint64_t write_calls = 0;      // write/send syscalls (or posts)
  std::uint64_t would_block = 0;      // syscalls that found nothing to do
  // fabric-rma: frames written without immediate data (sender) or found by their ring word
  // (receiver): each one a completion the receiver did not read.
  std::uint64_t unannounced_frames = 0;
  // The pickup report (frame.hpp): the receiver's p99 time from a frame's arrival at its host
  // to its thread reading it, in µs, as last sent (receiver) or received (sender); 0: none.
  std::uint32_t pickup_p99_us = 0;
};

// How full a sending end is right now (docs/metrics.md, "Per link end"): read by its own
// thread about once a tick for the live metrics, never per frame.
struct SendOccupancy {
  // Frames committed and still held for the receiver: tcp and fabric keep each until the
  // receiver acknowledges it (it is replayed after a reconnect); inproc until the receiver
  // returns its ring slot as credit.
  std::uint64_t frames_unacknowledged = 0;
  std::uint32_t buffers_in_use = 0;  // of the end's frame buffers (inproc: ring slots)
  std::uint32_t buffers = 0;         // how many it has
};

// Room for one frame's payload, obtained from SendLink::try_claim().
struct Claim {
  std::span<std::byte> payload;
  std::uint32_t slot = 0;
  // Set by a producer that computed crc32c() of the payload it committed while writing it:
  // the pooled media then derive the frame's checksum from it (crc32c_combine) instead of
  // reading the payload a second time. A wrong value makes the receiver refuse the frame.
  std::optional<std::uint32_t> payload_crc;
};

// Receives each complete data frame during RecvLink::poll(). The view is valid only during
// the call; its slot is credited back to the sender once the call returns.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void on_frame(const FrameView& frame) = 0;
  // One pass over each payload at the receiving end. A sink that takes the CRC-32C of every
  // payload anyway (a check sink's content checksum) returns it here, and the link checks the
  // frame's checksum against it (crc32c_combine) instead of reading the payload itself. Called
  // for every complete data frame before on_frame(), also for a frame that then turns out to
  // be corrupt (it never reaches on_frame(): the link fails, naming it) or a replayed
  // duplicate (dropped). nullopt, the default: the link reads the payload itself.
  virtual std::optional<std::uint32_t> payload_crc(std::span<const std::byte> payload) {
    (void)payload;
    return std::nullopt;
  }
};

class SendLink {
 public:
  virtual ~SendLink() = default;

  // Makes progress: connects, writes committed frames, reads credits and acks. Returns how
  // much work it did (0 = nothing happened). Never blocks.
  virtual int do_work() = 0;

  // Reserves one credit and one buffer. ok: `out` is a payload area of max_payload_bytes().
  // back_pressured: no credit or no free buffer (try again after do_work()).
  [[nodiscard]] virtual SendStatus try_claim(Claim& out) = 0;
  // Queues the claimed frame for sending, with `tuple_count` rows in the first
  // `payload_bytes` bytes. flags: kFlagData, optionally | kFlagEndOfStream (which ends the
  // stream: no claim after it).
  virtual void commit(const Claim& claim, std::uint32_t tuple_count, std::uint32_t payload_bytes,
                      std::uint16_t flags = kFlagData) = 0;

  // Arms notification for whatever this end is waiting on (credit, writability, connect).
  // false: it has work to do right now (do not block).
  [[nodiscard]] virtual bool arm() = 0;

  [[nodiscard]] virtual LinkState state() const = 0;
  [[nodiscard]] virtual const Error* error() const = 0;  // set in LinkState::failed
  [[nodiscard]] virtual const LinkStats& stats() const = 0;
  [[nodiscard]] virtual std::uint32_t max_payload_bytes() const = 0;
  [[nodiscard]] virtual std::uint64_t credits_available() const = 0;
  [[nodiscard]] virtual std::uint32_t window() const = 0;  // frames the receiver granted at most
  // Its buffers and unacknowledged frames now. O(1); the owning thread only.
  [[nodiscard]] virtual SendOccupancy occupancy() const { return {}; }

  // Output commit, for a node that checkpoints (docs/faults.md). With
  // LinkOptions::hold_until_released a committed frame is written only once release() covers
  // it, so a receiver never sees a frame that the sender's last checkpoint does not hold.
  // Media without upstream backup do not support it (restore() fails, the rest does nothing).
  virtual void release(std::uint64_t /*through*/) {}
  // The sequence of the last frame committed (0 before the first).
  [[nodiscard]] virtual std::uint64_t committed() const { return 0; }
  // Appends every committed frame not acknowledged yet, header and payload, in order.
  virtual void append_unacknowledged(std::vector<std::byte>& /*out*/) const {}
  // Before the link connects: carries on from a checkpoint of an earlier run of this end, with
  // frames up to `committed` committed then and `frames` (from append_unacknowledged()) those
  // its receiver may still need. Frames are checked like any arriving from a peer.
  [[nodiscard]] virtual Result<void> restore(std::span<const std::byte> /*frames*/,
                                             std::uint64_t /*committed*/) {
    return fail(ErrorCategory::config, 0, "this medium cannot resume a link from a checkpoint");
  }
};

class RecvLink {
 public:
  virtual ~RecvLink() = default;

  // Reads what has arrived, hands every complete data frame to `sink` in order, returns
  // credit to the sender. Returns how much work it did. Never blocks.
  virtual int poll(FrameSink& sink) = 0;
  // See SendLink::arm().
  [[nodiscard]] virtual bool arm() = 0;

  [[nodiscard]] virtual LinkState state() const = 0;
  [[nodiscard]] virtual const Error* error() const = 0;
  [[nodiscard]] virtual const LinkStats& stats() const = 0;
  [[nodiscard]] virtual std::uint32_t stream_id() const = 0;
  // Frame slots free for the sender (credit it holds + slots not yet granted): the C of the
  // sleep formula.
  [[nodiscard]] virtual double free_capacity() const = 0;
  // Arrivals so far, as a thread that waits for this end sees them: what woke it, or would
  // have. Frames by default. A tcp link on a connection shared by a pair of threads counts
  // the connection's reads that brought data instead (on the connection's first link; the
  // others count none): the frames of one send arrive together and wake a blocked thread
  // once, so 64 streams' one-tuple frames in one send are one arrival, not 64. The adaptive
  // wait sums these rates over a thread's links (README.md, "The adaptive wait mode";
  // docs/design.md, "One tcp connection per pair of threads").
  [[nodiscard]] virtual std::uint64_t arrivals() const { return stats().frames; }

  // Back-pressure: while paused, the owner does not poll this end, and arm() neither reports
  // nor waits for arriving data, so a thread held back by a full link downstream blocks until
  // credit returns instead of spinning on frames it will not read yet. The tcp and inproc
  // media honour it; the fabric media share one completion queue between links and ignore it.
  void set_paused(bool paused) noexcept { paused_ = paused; }
  // While paused, instead of poll(): the progress the end needs to stay alive, delivering
  // nothing (fabric: completions are queued, at most a window of them, and heartbeats go out,
  // so the sender does not give up on a receiver held back for longer than peer_timeout).
  // Default: nothing (tcp learns of a lost peer from its socket). Returns work done.
  virtual int keep_alive() { return 0; }
  [[nodiscard]] bool paused() const noexcept { return paused_; }

  // Upstream backup (docs/design.md, "Faults"): the sender keeps every frame until this end
  // acknowledges it, and replays the rest after a reconnect. With LinkOptions::manual_ack
  // the owner acknowledges (after making the frames' effects durable); otherwise a frame is
  // acknowledged once poll() delivered it. Sequences are cumulative: acknowledging N covers
  // every frame up to N. Media without backup ignore it.
  virtual void acknowledge(std::uint64_t /*through*/) {}
  // The sequence of the last frame delivered (0 before the first).
  [[nodiscard]] virtual std::uint64_t delivered() const { return 0; }

 protected:
  bool paused_ = false;
};

// How one link is set up. The same for every medium.
struct LinkOptions {
  std::uint32_t stream_id = 1;
  std::uint32_t tuple_bytes = 64;
  std::uint64_t schema_hash = 0;
  std::uint64_t cluster_token = 0;
  std::uint32_t max_payload_bytes = 32 * 1024;  // --batch-bytes
  std::uint32_t window = 64;                    // receive slots = initial credit
  std::uint32_t credit_batch = 16;              // grant after this many freed slots
  std::string name;                             // for error messages ("stream 'ticks'")
  // Liveness, used by the fabric media (tcp learns of a lost peer from its connection): an
  // established end sends a heartbeat frame after `heartbeat` without sending anything else,
  // and takes its peer for lost ("peer silent for ... ms") after `peer_timeout` without
  // hearing anything: then it reconnects (below), or fails when the peer never does.
  std::chrono::milliseconds heartbeat{1000};
  std::chrono::milliseconds peer_timeout{5000};
  // Upstream backup (every medium between nodes: tcp, fabric-msg, fabric-rma; docs/faults.md).
  // Sender: after losing an established connection it reconnects with
  // backoff and replays what was not acknowledged; it fails when no connection is back within
  // `reconnect_timeout` (the receiver waits as long for it to come back). `backup_frames`:
  // frames it may hold beyond the window, for a receiver that acknowledges later than it
  // returns credit (manual_ack). `sender_id` tells the receiver that a new connection comes
  // from the same sender (0: the link picks one).
  std::chrono::milliseconds reconnect_timeout{10000};
  std::uint32_t backup_frames = 0;
  std::uint32_t sender_id = 0;
  // Receiver: frames up to `resume_after` were delivered by an earlier run of this node (from
  // its checkpoint); the sender resumes after it. manual_ack: see RecvLink::acknowledge().
  std::uint64_t resume_after = 0;
  bool manual_ack = false;
  // Sender: see SendLink::release().
  bool hold_until_released = false;
  // Receiver: the thread that polls this link never blocks (wait mode busy). fabric-rma then
  // lets its sender write frames without immediate data, each found by a word in its ring
  // slot (docs/transport-notes.md §1.5); the other media ignore it.
  bool never_blocks = false;
  // Sender, fabric-rma to a receiver that never blocks: whether it takes that offer.
  //   automatic: where a completion costs the receiver more than the ring word's second write
  //     costs both ends: a NIC's RMA (verbs, efa), where each completion is a posted receive
  //     and a CQ entry. On the software providers the word is a second message, measured at
  //     two thirds of the maximum on tcp;ofi_rxm (docs/transport-notes.md §1.5).
  //   always: wherever the provider orders write after write (the tests, measurements).
  //   never: immediate data with every frame.
  enum class RingWords : std::uint8_t { automatic, always, never };
  RingWords ring_words = RingWords::automatic;
};

}  // namespace boreal::transport
