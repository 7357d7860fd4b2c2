// Boxes: the operators of a query network, and how batches flow between them in-process.
//
// A Box consumes batches on its input ports (process()) and writes rows to its Outputs. An
// Output packs rows into a batch it owns and hands each full batch (and, on flush(), a
// partial one) to the BatchConsumer connected to it: the next box's input port (see
// graph.hpp), a user callback, or nothing. Everything runs on the caller's thread, with no
// thread, lock or socket of ours; after construction the only allocation on the data path
// is a box's own state growing (new groups, window contents), never per tuple.
//
//   auto filter = Filter::make({.predicate = "price > 100"}, schema).value();
//   CollectingConsumer out;               // test helper in graph.hpp
//   filter->output(0).connect(&out);
//   filter->process(0, batch);            // rows that pass are appended to output 0
//   filter->finish(0);                    // input ended: flush and end the outputs
//
// Each box type has a parameter struct with `std::vector<Error> validate(...) const` that
// reports every problem at once, and a `static Result<std::unique_ptr<Box>> make(...)` (or a
// concrete type) that validates first; its Error joins the problems, one per line.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

// Receives the batches of one output. The view is valid only during the call.
class BatchConsumer {
 public:
  virtual ~BatchConsumer() = default;
  virtual void consume(const BatchView& batch) = 0;
  // The producer ended: no more batches.
  virtual void end() {}
};

// One output port: rows of `schema` packed into batches of `batch_rows`.
class Output {
 public:
  static constexpr std::size_t kDefaultBatchRows = 1024;

  explicit Output(Schema schema, std::size_t batch_rows = kDefaultBatchRows)
      : schema_(std::move(schema)), batch_(schema_, batch_rows) {}

  // Where full batches go; nullptr discards them. May be changed between batches.
  void connect(BatchConsumer* consumer) noexcept { consumer_ = consumer; }

  // A zeroed row to fill. A batch is handed on when full, at the next append or flush, so
  // the row returned here may be written until then.
  MutRow append() {
    if (batch_.full()) deliver();
    ++rows_;
    return batch_.append();
  }
  // A copy of `row` (same schema).
  MutRow append_copy(Row row) {
    if (batch_.full()) deliver();
    ++rows_;
    return batch_.append_copy(row);
  }
  // Up to `n` (≥ 1) zeroed rows at once, back to back in the current batch (handed on first
  // if full), for boxes that fill a column at a time. Returns how many rows it gave (≥ 1,
  // fewer than `n` when the batch has less room); row i is at data + i * tuple_bytes.
  struct RowBlock {
    std::byte* data = nullptr;
    std::size_t rows = 0;
  };
  RowBlock append_block(std::size_t n) {
    if (batch_.full()) deliver();
    const std::size_t rows = std::min(n, batch_.capacity_rows() - batch_.size());
    rows_ += rows;
    return {batch_.append_n(rows).data(), rows};
  }

  // Hands on the rows appended so far, if any.
  void flush() {
    if (!batch_.empty()) deliver();
  }
  // flush() and tell the consumer no more batches come.
  void end() {
    flush();
    if (consumer_ != nullptr) consumer_->end();
  }

  [[nodiscard]] const Schema& schema() const noexcept { return schema_; }
  [[nodiscard]] std::uint64_t rows_emitted() const noexcept { return rows_; }
  [[nodiscard]] std::size_t batch_rows() const noexcept { return batch_.capacity_rows(); }

 private:
  void deliver() {
    if (consumer_ != nullptr) consumer_->consume(batch_);
    batch_.clear();
  }

  Schema schema_;
  OwnedBatch batch_;
  BatchConsumer* consumer_ = nullptr;
  std::uint64_t rows_ = 0;
};

class Box {
 public:
  virtual ~Box() = default;
  Box(const Box&) = delete;
  Box& operator=(const Box&) = delete;

  // "filter", "map", ... as in a network file.
  [[nodiscard]] virtual std::string_view type() const noexcept = 0;
  [[nodiscard]] virtual std::size_t input_count() const noexcept = 0;
  [[nodiscard]] virtual const Schema& input_schema(std::size_t port) const noexcept = 0;

  [[nodiscard]] std::size_t output_count() const noexcept { return outputs_.size(); }
  [[nodiscard]] Output& output(std::size_t port) noexcept { return outputs_[port]; }
  [[nodiscard]] const Output& output(std::size_t port) const noexcept { return outputs_[port]; }

  // One batch on input `port`. Checked in every build type, a few compares per batch: the
  // port exists, it has not finished, and a batch with rows was made with the port's schema
  // (BatchView::schema_hash() against input_schema(port).hash()). A violation is a
  // programmer error that would otherwise emit garbage rows or lose them: it prints what is
  // wrong, naming the box type, the port and both schemas' sizes, and aborts.
  void process(std::size_t port, const BatchView& batch) {
    if (port >= input_count() || finished(port) ||
        (batch.schema_hash() != input_schema(port).hash() && !batch.empty())) [[unlikely]] {
      misuse("process", port, &batch);
    }
    on_batch(port, batch);
  }

  // Input `port` ended. When every input has ended the box emits what it still holds
  // (on_end()) and ends its outputs. Checked in every build type like process(): finishing
  // a port that does not exist or has already finished aborts with a message.
  void finish(std::size_t port);

  // Whether input `port` has finished.
  [[nodiscard]] bool finished(std::size_t port) const noexcept {
    return port < finished_.size() && finished_[port];
  }

  // Time passes with no input: boxes with timeouts (aggregate, resample) close what is due
  // by `now`, in the unit of their time field (nanoseconds for a timestamp field). Default:
  // nothing.
  virtual void tick(std::int64_t now) { (void)now; }

  // Checkpoints (the runtime's, docs/faults.md): save_state() appends what the box holds
  // between batches to `out`, so that restore_state() on a fresh box made with the same
  // parameters and schemas carries on exactly as this one would. The bytes are for this
  // build on this machine (native layout). false: the box cannot save its state (the
  // default; boxes without state need none).
  [[nodiscard]] virtual bool save_state(std::vector<std::byte>& out) const {
    (void)out;
    return false;
  }
  [[nodiscard]] virtual Result<void> restore_state(std::span<const std::byte> in) {
    (void)in;
    return fail(std::string(type()) + " boxes cannot restore a saved state");
  }
  // Restoring a box whose inputs had all finished before the checkpoint: marks them
  // finished and ends the outputs, without emitting what on_end() would (it was emitted).
  void finish_restored();

 protected:
  Box() = default;
  // One batch on input `port`, checked by process(): the port is valid and open and the
  // batch has its schema.
  virtual void on_batch(std::size_t port, const BatchView& batch) = 0;
  // Called once when all inputs have ended, before the outputs end: emit pending state
  // (open windows, buffered rows).
  virtual void on_end() {}

  std::vector<Output> outputs_;

 private:
  [[noreturn]] void misuse(const char* call, std::size_t port,
                           const BatchView* batch) const noexcept;

  // finished_[port]: that input has ended; sized on the first finish() (one allocation per
  // box, never per batch).
  std::vector<bool> finished_;
  std::size_t finished_inputs_ = 0;
};

}  // namespace boreal::ops
