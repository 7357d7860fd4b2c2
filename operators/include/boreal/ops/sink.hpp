// Sinks: where a query network's tuples end. Each is a BatchConsumer, so it connects to any
// box's Output (`box->output(0).connect(&sink)`) or takes batches from a source directly.
//
//   CountSink count;                        // rows, batches and bytes seen
//   DiscardSink nothing;                    // drops everything
//   auto csv = CsvWriter::make({.path = "out.csv"}, schema).value();
//   auto lat = LatencySink::make({.field = "ts"}, schema).value();
//   lat->histogram().percentile(99.9);      // ns between each tuple's time and its arrival
//
// Sinks run on the caller's thread, never block on anything but their own output stream, and
// allocate nothing per tuple. Not thread-safe; one thread per sink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/latency_histogram.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

// Counts what arrives.
class CountSink final : public BatchConsumer {
 public:
  void consume(const BatchView& batch) override {
    rows_ += batch.size();
    bytes_ += batch.bytes().size();
    ++batches_;
  }
  void end() override { ended_ = true; }

  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::uint64_t batches() const noexcept { return batches_; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }  // payload bytes
  [[nodiscard]] bool ended() const noexcept { return ended_; }

 private:
  std::uint64_t rows_ = 0;
  std::uint64_t batches_ = 0;
  std::uint64_t bytes_ = 0;
  bool ended_ = false;
};

// Drops every batch (an output must go somewhere to be measured).
class DiscardSink final : public BatchConsumer {
 public:
  void consume(const BatchView& batch) override { (void)batch; }
};

struct CsvWriterParams {
  // The file to create (truncated), or (when `stream` is set) the name used in errors.
  std::string path{};
  // Write to this stream instead; not owned, must outlive the writer.
  std::ostream* stream = nullptr;
  bool header = true;  // a first line with the field names
  char delimiter = ',';
  // Continue the file of an earlier run instead of creating it: keep its first `resume_at`
  // bytes (a position checkpoint() returned then), drop whatever follows, append after them
  // (no header). Not with `stream`.
  std::optional<std::uint64_t> resume_at{};
};

// Writes rows as CSV that CsvReader reads back to the same bytes: integers and timestamps
// (integer ns) in decimal, f64 in the shortest form that parses back to the same double
// (std::to_chars; NaNs come back as a NaN of the same sign, not necessarily the same
// payload), bool as true/false, strN as its bytes up to the last non-NUL one, in double
// quotes (with "" for a quote) when it holds the delimiter, a quote or a line break.
// Lines end in '\n'. Each batch is formatted into one buffer and written with one call.
class CsvWriter final : public BatchConsumer {
 public:
  static Result<std::unique_ptr<CsvWriter>> make(const CsvWriterParams& params,
                                                 const Schema& schema);

  void consume(const BatchView& batch) override;
  // Flushes the stream.
  void end() override;

  // The first write failure, if any (the writer stops writing after it).
  [[nodiscard]] Result<void> status() const;
  [[nodiscard]] std::uint64_t rows_written() const noexcept { return rows_; }
  // Flushes, and returns the bytes the file holds so far (for CsvWriterParams::resume_at).
  [[nodiscard]] Result<std::uint64_t> checkpoint();

 private:
  CsvWriter(const CsvWriterParams& params, const Schema& schema);
  void write(const std::string& text);

  Schema schema_;
  std::string name_;
  std::ofstream file_;
  std::ostream* out_;
  char delimiter_;
  std::string line_;  // reused formatting buffer
  std::uint64_t rows_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::optional<Error> failed_;
};

struct LatencySinkParams {
  // The field holding each tuple's time: a timestamp, or an i64 of nanoseconds on the same
  // clock as `clock`.
  std::string field = "ts";
  // Now, in ns. Empty: CLOCK_REALTIME (the clock of timestamp fields). Tests inject a fake.
  std::function<std::int64_t()> clock{};

  [[nodiscard]] std::vector<Error> validate(const Schema& input) const;
};

// Records now − time field of every row into a LatencyHistogram. The clock is read once per
// batch: every row of a batch arrived at the same moment.
class LatencySink final : public BatchConsumer {
 public:
  static Result<std::unique_ptr<LatencySink>> make(const LatencySinkParams& params,
                                                   const Schema& input);

  void consume(const BatchView& batch) override;

  [[nodiscard]] const LatencyHistogram& histogram() const noexcept { return histogram_; }
  LatencyHistogram& histogram() noexcept { return histogram_; }
  // The last non-empty batch's clock reading and its first row's time field (ns; 0 before
  // any): what a caller that knows more about the batch's way here splits into stages.
  [[nodiscard]] std::int64_t last_now_ns() const noexcept { return last_now_; }
  [[nodiscard]] std::int64_t last_first_time_ns() const noexcept { return last_first_time_; }

 private:
  LatencySink(std::uint32_t offset, std::function<std::int64_t()> clock)
      : offset_(offset), clock_(std::move(clock)) {}

  std::uint32_t offset_;
  std::function<std::int64_t()> clock_;
  LatencyHistogram histogram_;
  std::int64_t last_now_ = 0;
  std::int64_t last_first_time_ = 0;
};

}  // namespace boreal::ops
