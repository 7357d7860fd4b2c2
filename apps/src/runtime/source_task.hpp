// A `source` box on a node: the operator library's Generator (or a CsvReader) driven at the
// offered rate, writing each frame's worth of rows into a RowTarget (link_ports.hpp): straight
// into a link's frame when the stream goes only to one other node, else into a batch handed
// to the stream's fan-out (local boxes, several links).
//
// A nexmark source (ops/nexmark.hpp) paces and counts events of every kind: its rate is
// events/s, and the task of its bids stream sends the bids of the events due.
//
// Pacing (one wake-up per frame): a paced source fills its batch when the batch must leave,
// because it would be full or because its first tuple has waited its target's FlushHold
// (flush_hold.hpp), not as each tuple
// comes due; tuples carry their scheduled times (start + i / rate) either way, so a late
// sender shows up as latency. Unpaced ("max"), rows are stamped with the time they are made.
// The stream ends with the frame that holds the last tuple (count limit) or with an empty one
// (time limit, the end of a CSV file).
//
// Threading: belongs to the I/O thread that runs its box (debug builds check it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boreal/ops/latency_histogram.hpp>
#include <boreal/ops/nexmark.hpp>
#include <boreal/ops/source.hpp>

#include "runtime/link_ports.hpp"
#include "spec/network_spec.hpp"

namespace boreal::runtime {

class SourceTask {
 public:
  // `port`: which of the box's outputs this task fills (a nexmark source has one task per
  // output, each walking the same event ids and keeping its own kind; the others have one).
  SourceTask(std::string name, std::string stream, RowTarget& target, const ops::Schema& schema,
             const SourceParams& params, std::size_t port = 0);

  // Generates what is due at `now` and hands it on. Returns work done.
  int do_work(SteadyTime now);
  // The next moment this source has something to do without any event.
  [[nodiscard]] SteadyTime deadline() const noexcept;

  [[nodiscard]] bool active() const noexcept { return started_; }
  [[nodiscard]] bool done() const noexcept { return eos_committed_ && target_.done(); }
  [[nodiscard]] std::uint64_t generated() const noexcept { return generated_; }
  // Events the task walked: a nexmark source's event ids (of every kind), else its tuples.
  // The tasks of one box walk the same ids, each at its own pace: the box has walked the
  // fewest of theirs (source_events() in node_meter.cpp).
  [[nodiscard]] std::uint64_t events() const noexcept {
    return nexmark_ ? units_done() : generated_;
  }
  // Events (as events()) the source's schedule has made due by `now`: a paced source's rate
  // times the time since its start, up to its duration and limit, or what it walked if that is
  // more; an unpaced one's are those it walked. The difference to events() is how far behind
  // its schedule the source is (a backlog a time limit drops is not counted as due).
  [[nodiscard]] std::uint64_t events_due(SteadyTime now) const noexcept;
  // Which output of its box the task fills; a box's tasks are made in port order.
  // Its frames leave with the others' of its thread (flush_hold.hpp; the stream's link shares
  // a connection).
  void join_wave(FlushWave* wave) noexcept { wave_ = wave; }
  [[nodiscard]] std::size_t port() const noexcept { return port_; }
  [[nodiscard]] std::uint64_t frames_sent() const noexcept { return frames_; }
  // CRC-32C of every tuple's bytes, in order.
  [[nodiscard]] std::uint32_t checksum() const noexcept { return crc_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& stream() const noexcept { return stream_; }
  // Reading the CSV file failed (the stream was ended where it failed), if it did.
  [[nodiscard]] const std::optional<std::string>& error() const noexcept { return error_; }
  // Time the source had rows due but its target refused them (back-pressure).
  [[nodiscard]] std::chrono::nanoseconds backpressured() const noexcept { return blocked_; }
  // A paced source's frames, each from its first tuple's due time to its commit: the
  // sender's share of the latency breakdown (docs/design.md, "Where the latency goes").
  [[nodiscard]] ops::LatencyHistogram& due_to_committed() noexcept { return due_to_committed_; }
  // Called once, when the source starts and before it generates its first tuple.
  std::function<void(SteadyTime)> on_start;

 private:
  static constexpr int kFramesPerCall = 16;

  void start(SteadyTime now);
  bool open_batch(SteadyTime now);
  // Fills and commits the frames due by `now`; returns the work done.
  int produce(SteadyTime now);
  void commit(bool end, SteadyTime now);
  // Appends up to `rows` rows to the open batch; returns how many it appended.
  std::size_t fill(std::size_t rows, std::int64_t& now_real);
  [[nodiscard]] SteadyTime due_at(std::uint64_t seq) const noexcept;
  // Pacing and limits count units: tuples, or events for a nexmark source (whose stream
  // holds only some of them). Units done so far, and units that must be due for `rows` more
  // rows (rows >= 1).
  [[nodiscard]] std::uint64_t units_done() const noexcept;
  [[nodiscard]] std::uint64_t units_for_rows(std::uint64_t rows) const noexcept;
  [[nodiscard]] bool exhausted() const noexcept;

  std::string name_;
  std::string stream_;
  RowTarget& target_;
  ops::Schema schema_;
  SourceParams params_;
  FlushHold& hold_;  // the target's
  FlushWave* wave_ = nullptr;
  std::size_t port_;
  std::optional<ops::Generator> generator_;
  std::optional<ops::NexmarkGenerator> nexmark_;
  std::optional<ops::FieldRef<ops::Timestamp>> stamp_;  // unpaced stamped nexmark: its ts
  std::unique_ptr<ops::CsvReader> csv_;
  std::optional<std::string> error_;
  double period_ns_ = 0;  // 0 = as fast as possible (unless idle)
  std::uint64_t due_units_ = 0;  // units due at the current do_work() call
  bool idle_ = false;     // rate "idle": nothing until the duration ends
  bool started_ = false;
  bool eos_committed_ = false;
  ops::Batch* batch_ = nullptr;  // the open batch, if any
  SteadyTime opened_at_{};
  ops::LatencyHistogram due_to_committed_;
  SteadyTime t0_{};
  std::int64_t t0_real_ = 0;
  std::uint64_t generated_ = 0;
  std::uint64_t frames_ = 0;
  std::uint32_t crc_ = 0;
  std::chrono::nanoseconds blocked_{0};
  SteadyTime blocked_since_{};
  bool blocked_now_ = false;
  OwnerThread owner_;
};

// A RowTarget that hands each batch to a stream's fan-out (local consumers and links).
class FanoutTarget final : public RowTarget {
 public:
  FanoutTarget(StreamFanout& out, const ops::Schema& schema, std::size_t rows,
               std::chrono::nanoseconds flush)
      : out_(out), batch_(schema, rows), hold_(flush) {}

  [[nodiscard]] bool ready() const override { return true; }
  [[nodiscard]] ops::Batch* open() override;
  void commit(bool end, std::uint32_t payload_crc) override;
  [[nodiscard]] std::uint32_t capacity_rows() const override {
    return static_cast<std::uint32_t>(batch_.capacity_rows());
  }
  [[nodiscard]] FlushHold& flush_hold() override { return hold_; }
  int do_work() override { return 0; }
  [[nodiscard]] bool done() const override { return out_.ended(); }

 private:
  StreamFanout& out_;
  ops::OwnedBatch batch_;
  FlushHold hold_;  // fixed: the link writers behind the fan-out hold the rows again
};

// CLOCK_REALTIME at the steady instant `at`, read so that a preemption between the two clock
// reads cannot date tuples in the future (see the definition).
[[nodiscard]] std::int64_t realtime_ns_at(SteadyTime at) noexcept;
[[nodiscard]] std::int64_t realtime_ns() noexcept;

}  // namespace boreal::runtime
