// The two ends of a link as seen by the boxes of a node.
//
// LinkWriter: a stream leaving the node for one consuming node. It is a BatchConsumer (a box
// output or a stream's fan-out hands it rows, which it copies into the link's claimed frames)
// and a RowTarget (a source that feeds only this link writes its rows straight into the
// frame, with no copy). A partly filled frame leaves once its first row has waited its
// FlushHold, which adapts to the receiver's pickup report (flush_hold.hpp).
// Rows that find no credit wait in a backlog; while it is not empty the writer is
// backlogged() and every producer upstream of it on this node stops (stream_fanout.hpp), so
// the backlog holds at most what the producers handed on before they saw it: one source
// batch, or what the boxes made of one poll of a receiving link (at most a window of frames),
// plus what they emit when flushed, ticked or ended. Its peak is reported.
//
// LinkReader: a stream entering the node. Polls its RecvLink, unless the stream is blocked
// downstream, and hands each frame's payload, unchanged and uncopied, to the stream's fan-out;
// the end-of-stream flag ends the fan-out. A link that fails ends the fan-out too, so the
// node drains and reports the failure instead of waiting for its timeout.
//
// Threading: both belong to the I/O thread that runs them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/box.hpp>
#include <boreal/ops/schema.hpp>
#include <boreal/transport/link.hpp>
#include <boreal/transport/rate_estimator.hpp>

#include "runtime/flush_hold.hpp"
#include "runtime/owner_thread.hpp"
#include "runtime/stream_fanout.hpp"

namespace boreal::runtime {

class SinkTask;

using SteadyTime = std::chrono::steady_clock::time_point;

// Where a source writes its rows: a batch to fill, then handed on whole.
class RowTarget {
 public:
  virtual ~RowTarget() = default;
  // Ready to take rows (a link: established).
  [[nodiscard]] virtual bool ready() const = 0;
  // An empty batch of capacity_rows() to append to, or nullptr when back-pressured.
  [[nodiscard]] virtual ops::Batch* open() = 0;
  // Hands on the rows appended to the open batch; `end`: the stream ends with them.
  // payload_crc: crc32c() of the batch's bytes, computed by the source as it passed over
  // them (a link seals its frame with it rather than reading the rows again).
  virtual void commit(bool end, std::uint32_t payload_crc) = 0;
  [[nodiscard]] virtual std::uint32_t capacity_rows() const = 0;
  // How long a partly filled batch may wait for more rows (flush_hold.hpp); the source tells
  // it how late past that its batches leave.
  [[nodiscard]] virtual FlushHold& flush_hold() = 0;
  // Progress of whatever is behind the target (a link's do_work()).
  virtual int do_work() = 0;
  // The stream's end was handed on, and (a link) acknowledged, or the target failed.
  [[nodiscard]] virtual bool done() const = 0;
};

struct LinkIdentity {
  std::string stream;
  std::string peer;    // the node at the other end
  std::string medium;  // tcp, fabric-msg, fabric-rma, inproc
  std::string provider = {};  // the fabric media's libfabric provider
};

class LinkWriter final : public ops::BatchConsumer, public RowTarget {
 public:
  LinkWriter(LinkIdentity identity, std::unique_ptr<transport::SendLink> link,
             const ops::Schema& schema, FlushHold hold);

  // BatchConsumer.
  void consume(const ops::BatchView& batch) override;
  void end() override;

  // RowTarget (a source feeding only this link).
  [[nodiscard]] bool ready() const override;
  [[nodiscard]] ops::Batch* open() override;
  void commit(bool end, std::uint32_t payload_crc) override;
  [[nodiscard]] std::uint32_t capacity_rows() const override { return capacity_; }
  [[nodiscard]] FlushHold& flush_hold() override { return hold_; }
  int do_work() override;
  [[nodiscard]] bool done() const override;

  // The time of this duty cycle, before any rows arrive in it (starts a new frame's flush clock).
  void set_now(SteadyTime now) noexcept { now_ = now; }
  // Sends what is due at `now`: the backlog, a frame whose flush time passed, the end.
  int pump(SteadyTime now);
  // The next moment pump() has something to do without any event (an open frame's flush).
  [[nodiscard]] SteadyTime deadline() const noexcept;
  [[nodiscard]] bool backlogged() const noexcept { return backlog_head_ < backlog_.size(); }
  // For a checkpoint (runtime/checkpoint.hpp): commits the open frame if it holds rows, and
  // returns the rows still waiting for a frame.
  [[nodiscard]] std::span<const std::byte> prepare_checkpoint();
  // On a restart, before any rows arrive: the rows a checkpoint found waiting.
  void restore_backlog(std::span<const std::byte> rows);

  // Its frames leave with the others' of its thread (flush_hold.hpp; its link shares a
  // connection).
  void join_wave(FlushWave* wave) noexcept { wave_ = wave; }
  [[nodiscard]] const LinkIdentity& identity() const noexcept { return identity_; }
  [[nodiscard]] const FlushHold& hold() const noexcept { return hold_; }
  [[nodiscard]] transport::SendLink& link() noexcept { return *link_; }
  [[nodiscard]] const transport::SendLink& link() const noexcept { return *link_; }
  [[nodiscard]] std::uint64_t tuples() const noexcept { return tuples_; }
  [[nodiscard]] std::uint64_t frames() const noexcept { return frames_; }
  [[nodiscard]] std::size_t backlog_peak_bytes() const noexcept { return backlog_peak_; }
  // Bytes of rows waiting for credit now.
  [[nodiscard]] std::size_t backlog_bytes() const noexcept {
    return backlog_.size() - backlog_head_;
  }
  // Rows that arrived after the link failed: not sent (the node reports the failure).
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }
  // Time the writer spent backlogged (its producers held back), as of the last pump().
  [[nodiscard]] std::chrono::nanoseconds backpressured() const noexcept { return blocked_; }

 private:
  bool open_claim();
  // Copies up to `rows` rows into frames while credit lasts; returns how many it took.
  std::size_t write_rows(const std::byte* data, std::size_t rows);
  // payload_crc: the source path's crc32c() of the rows; nullopt on the consume path.
  void commit_open(std::uint16_t flags, std::optional<std::uint32_t> payload_crc = std::nullopt);

  LinkIdentity identity_;
  std::unique_ptr<transport::SendLink> link_;
  ops::Schema schema_;
  std::uint32_t tuple_bytes_;
  std::uint32_t capacity_ = 1;
  FlushHold hold_;
  FlushWave* wave_ = nullptr;
  transport::Claim claim_;
  ops::Batch batch_;        // the source path's view of the open claim
  bool open_ = false;
  std::uint32_t used_ = 0;  // rows in the open claim (consume path)
  SteadyTime now_{};        // of this duty cycle (set_now, pump)
  SteadyTime last_pump_{};
  SteadyTime opened_at_{};
  std::vector<std::byte> backlog_;  // rows waiting for credit; capacity kept once grown
  std::size_t backlog_head_ = 0;    // first byte not yet written
  std::size_t backlog_peak_ = 0;
  bool ended_ = false;     // the producer ended
  bool eos_sent_ = false;  // the end-of-stream frame is committed
  std::uint64_t tuples_ = 0;
  std::uint64_t frames_ = 0;
  std::uint64_t dropped_ = 0;
  std::chrono::nanoseconds blocked_{0};
  OwnerThread owner_;
};

class LinkReader final : public transport::FrameSink {
 public:
  LinkReader(LinkIdentity identity, transport::RecvLink& link, const ops::Schema& schema,
             StreamFanout& out);

  // Polls the link unless the stream is blocked downstream.
  int poll(SteadyTime now);
  void on_frame(const transport::FrameView& frame) override;
  // With a check sink on the stream: the payload's CRC-32C, taken once for the link's frame
  // check and handed to the sinks for their content checksum (one pass per payload).
  std::optional<std::uint32_t> payload_crc(std::span<const std::byte> payload) override;
  // A check sink this link's stream feeds on this node.
  void add_check_sink(SinkTask* sink) { check_sinks_.push_back(sink); }
  // A sink this link's stream feeds on this node that records latency: it learns when each
  // frame arrived and was read (SinkTask::expect_arrival), for the latency breakdown.
  void add_timed_sink(SinkTask* sink) { timed_sinks_.push_back(sink); }

  [[nodiscard]] bool done() const noexcept;
  // On a restart: the checkpoint holds this stream's end. The reader ends its fan-out at the
  // first poll and is done, but still polls the link, so a sender that missed the final
  // acknowledgement gets it when it reconnects.
  void end_from_checkpoint() noexcept { ended_by_checkpoint_ = true; }
  [[nodiscard]] bool active() const noexcept { return started_; }
  [[nodiscard]] const LinkIdentity& identity() const noexcept { return identity_; }
  [[nodiscard]] transport::RecvLink& link() noexcept { return link_; }
  // Arrivals per second, as the thread's wait weighs them (node.cpp's hints): the link's
  // arrivals() (transport/link.hpp) — frames, but on a shared tcp connection the reads that
  // brought data, since 64 streams' one-tuple frames arriving in one send wake a blocked
  // thread once, not 64 times (docs/design.md, "One tcp connection per pair of threads").
  [[nodiscard]] double rate_hz() const noexcept { return rate_.rate_hz(); }
  [[nodiscard]] std::uint64_t tuples() const noexcept { return tuples_; }
  [[nodiscard]] std::uint64_t frames() const noexcept { return frames_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::chrono::nanoseconds backpressured() const noexcept { return blocked_; }
  // A payload that is not a whole number of tuples of the schema (the transport checks this
  // at the handshake, so it means a bug): the first such message.
  [[nodiscard]] const std::string& payload_error() const noexcept { return payload_error_; }
  // Called once, when the link comes up, before its first tuple.
  std::function<void(SteadyTime)> on_start;

 private:
  void start(SteadyTime now);

  bool ended_by_checkpoint_ = false;
  LinkIdentity identity_;
  transport::RecvLink& link_;
  ops::Schema schema_;
  StreamFanout& out_;
  transport::RateEstimator rate_;
  std::uint64_t arrivals_seen_ = 0;  // the link's arrivals(), as of the last poll
  SteadyTime now_{};
  SteadyTime last_poll_{};
  bool started_ = false;
  std::uint64_t tuples_ = 0;
  std::uint64_t frames_ = 0;
  std::uint64_t bytes_ = 0;
  std::chrono::nanoseconds blocked_{0};
  std::string payload_error_;
  std::vector<SinkTask*> check_sinks_;
  std::vector<SinkTask*> timed_sinks_;
  OwnerThread owner_;
};

}  // namespace boreal::runtime
