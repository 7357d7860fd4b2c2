// A `sink` box on a node: consumes one stream and, by kind,
//   check    verifies the generator's sequence numbers (loss, duplicates, order), takes the
//            CRC-32C of every tuple's bytes in order (compared with the source's) and records
//            each tuple's latency from its first timestamp field (an ops::LatencySink);
//   count    counts;  discard  drops;  latency  records latency from `field` only (the
//            same ops::LatencySink);
//   csv      writes every tuple to `output` (ops::CsvWriter) and counts;
// and, with `output`, any kind also writes every tuple to that CSV file.
//
// Threading: belongs to the I/O thread that runs its box (debug builds check it).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <boreal/ops/box.hpp>
#include <boreal/ops/latency_histogram.hpp>
#include <boreal/ops/sink.hpp>

#include "runtime/checkpoint.hpp"
#include "runtime/owner_thread.hpp"
#include "spec/network_spec.hpp"

namespace boreal::runtime {

class SinkTask final : public ops::BatchConsumer {
 public:
  // Opens the output file, if any; an Error names the sink and the file. `resume`: carry on
  // from a checkpoint (runtime/checkpoint.hpp): the counts continue, the file is cut back to
  // the checkpointed length and appended to.
  static ops::Result<std::unique_ptr<SinkTask>> make(std::string name, std::string stream,
                                                     const ops::Schema& schema,
                                                     const SinkParams& params,
                                                     const SinkState* resume = nullptr);
  // Flushes the output and returns the state a restart carries on from.
  [[nodiscard]] ops::Result<SinkState> checkpoint();

  void consume(const ops::BatchView& batch) override;
  void end() override;
  // A check sink's one pass per payload at the receiving end: the CRC-32C of `payload`,
  // taken by the link reader for its frame check (LinkReader::payload_crc). When the next
  // batch consumed is exactly those bytes, the content checksum folds this in
  // (crc32c_combine) instead of reading them again; any other batch is read as before.
  void expect_payload(std::span<const std::byte> payload, std::uint32_t crc) noexcept {
    owner_.check();
    expected_ = payload;
    expected_crc_ = crc;
  }

  // Where the latency went, per frame, from its first tuple's time field (docs/design.md,
  // "Where the latency goes"): recorded for the frames a link reader hands this sink
  // straight from a medium that stamps arrivals (tcp). The three add up to that tuple's
  // latency as the sink recorded it.
  struct Stages {
    ops::LatencyHistogram due_to_arrived;   // time field -> the kernel took the frame in
    ops::LatencyHistogram arrived_to_read;  // -> the link's read returned (its pickup)
    ops::LatencyHistogram read_to_sink;     // -> this sink took the tuple's latency
    void reset() noexcept {
      due_to_arrived.reset();
      arrived_to_read.reset();
      read_to_sink.reset();
    }
  };
  // The next batch is the frame that arrived at `arrived_ns` and was read at `read_ns`
  // (FrameView; CLOCK_REALTIME ns): set by the link reader that feeds this sink directly.
  void expect_arrival(std::int64_t arrived_ns, std::int64_t read_ns) noexcept {
    owner_.check();
    arrived_ns_ = arrived_ns;
    read_ns_ = read_ns;
  }
  // Null when the sink records no latency.
  [[nodiscard]] Stages* stages() noexcept { return stages_.get(); }
  [[nodiscard]] const Stages* stages() const noexcept { return stages_.get(); }

  [[nodiscard]] bool ended() const noexcept { return ended_; }
  [[nodiscard]] bool active() const noexcept { return tuples_ > 0 || ended_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& stream() const noexcept { return stream_; }
  [[nodiscard]] SinkKind kind() const noexcept { return params_.kind; }
  // The first failure to write the output file, if any.
  [[nodiscard]] std::optional<std::string> output_error() const;

  std::uint64_t tuples_ = 0;
  std::uint64_t batches_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint32_t crc_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t duplicated_ = 0;
  std::uint64_t out_of_order_ = 0;
  // Latencies recorded (check: from the first timestamp field; latency: from `field`);
  // empty for the other kinds.
  [[nodiscard]] ops::LatencyHistogram& latency() noexcept {
    return latency_ ? latency_->histogram() : no_latency_;
  }
  [[nodiscard]] bool records_latency() const noexcept { return latency_ != nullptr; }

 private:
  SinkTask(std::string name, std::string stream, const ops::Schema& schema,
           const SinkParams& params);
  void check(const ops::BatchView& batch);

  std::string name_;
  std::string stream_;
  ops::Schema schema_;
  SinkParams params_;
  std::unique_ptr<ops::CsvWriter> output_;
  // Records latency from the time field (check: the first timestamp; latency: `field`);
  // null when the sink has none, and latency() is then the empty no_latency_.
  std::unique_ptr<ops::LatencySink> latency_;
  ops::LatencyHistogram no_latency_;
  std::unique_ptr<Stages> stages_;  // with latency_
  std::int64_t arrived_ns_ = 0;     // expect_arrival(): for the next batch only; 0 = unknown
  std::int64_t read_ns_ = 0;
  int seq_ = -1;  // offset of the i64 field "seq", or -1
  std::span<const std::byte> expected_;  // expect_payload(): valid for the next batch only
  std::uint32_t expected_crc_ = 0;
  std::uint64_t next_seq_ = 0;
  bool ended_ = false;
  OwnerThread owner_;
};

}  // namespace boreal::runtime
