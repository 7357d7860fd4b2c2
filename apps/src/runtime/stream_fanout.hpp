// How batches move between the boxes of one node (docs/design.md, "Threads, ports and
// back-pressure"):
//
//   producer (a box's Output, a source, a receiving link)
//     -> StreamFanout (one per stream the node produces or receives)
//          -> BoxInput (a box's input port: a direct call of process())
//          -> SinkTask (a sink box)
//          -> LinkWriter (one per other node that consumes the stream; link_ports.hpp)
//
// Every hand-on is a direct call on one I/O thread: a batch is never copied inside a
// node, only into a link's frame. Back-pressure: a stream is blocked() while any link writer
// its rows reach on this node (directly or through boxes) holds a backlog, and a producer
// that sees its stream blocked stops producing (a source stops generating; a receiving link
// is not polled, so its credit stops flowing back upstream).
//
// Threading: every object here belongs to the I/O thread that runs it (owner-thread checked in
// debug builds).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boreal/ops/box.hpp>

#include "runtime/owner_thread.hpp"

namespace boreal::runtime {

class LinkWriter;

// One stream on one node: delivers each batch to every local consumer and link writer.
class StreamFanout final : public ops::BatchConsumer {
 public:
  explicit StreamFanout(std::string stream) : stream_(std::move(stream)) {}

  void add(ops::BatchConsumer* consumer) { consumers_.push_back(consumer); }
  // A link writer this stream's rows reach on this node, directly or through boxes.
  void watch(const LinkWriter* writer) { downstream_writers_.push_back(writer); }

  void consume(const ops::BatchView& batch) override;
  void end() override;

  // A downstream link writer is holding rows for lack of credit: produce nothing more now.
  [[nodiscard]] bool blocked() const noexcept;
  [[nodiscard]] bool ended() const noexcept { return ended_; }
  [[nodiscard]] const std::string& stream() const noexcept { return stream_; }
  [[nodiscard]] std::uint64_t tuples() const noexcept { return tuples_; }
  [[nodiscard]] std::uint64_t batches() const noexcept { return batches_; }
  [[nodiscard]] const std::vector<const LinkWriter*>& downstream_writers() const noexcept {
    return downstream_writers_;
  }

 private:
  std::string stream_;
  std::vector<ops::BatchConsumer*> consumers_;
  std::vector<const LinkWriter*> downstream_writers_;
  std::uint64_t tuples_ = 0;
  std::uint64_t batches_ = 0;
  bool ended_ = false;
  OwnerThread owner_;
};

// One operator box of the node, with its figures.
class BoxRunner {
 public:
  BoxRunner(std::string name, std::unique_ptr<ops::Box> box, bool ticks_on_clock)
      : name_(std::move(name)), box_(std::move(box)), ticks_on_clock_(ticks_on_clock) {}

  void process(std::size_t port, const ops::BatchView& batch);
  void finish(std::size_t port);
  // On a restart: every input had finished before the checkpoint (ops::Box::finish_restored).
  void restore_finished();
  // Hands on every output's partial batch.
  void flush();
  // Realtime ns; only for boxes whose time field is a timestamp and that act on ticks.
  void tick(std::int64_t now_ns);

  [[nodiscard]] ops::Box& box() noexcept { return *box_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  // Whether tick() hands the box the clock (network_spec.hpp's ticks_on_clock()).
  [[nodiscard]] bool ticks_on_clock() const noexcept { return ticks_on_clock_; }
  [[nodiscard]] bool finished() const noexcept { return finished_ == box_->input_count(); }
  [[nodiscard]] std::uint64_t tuples_in() const noexcept { return tuples_in_; }
  [[nodiscard]] std::uint64_t batches_in() const noexcept { return batches_in_; }
  [[nodiscard]] std::uint64_t tuples_out() const noexcept;
  // Wall time inside the box's process(), flush, tick() and end, less what the boxes it
  // called on the same thread spent (theirs): the box's own work, with the sinks and link
  // writers it feeds directly (they are not boxes of their own here).
  [[nodiscard]] std::chrono::nanoseconds busy() const noexcept { return busy_; }

 private:
  template <class F>
  void timed(F&& work);

  std::string name_;
  std::unique_ptr<ops::Box> box_;
  bool ticks_on_clock_;
  std::vector<bool> port_finished_;
  std::size_t finished_ = 0;
  std::uint64_t tuples_in_ = 0;
  std::uint64_t batches_in_ = 0;
  std::chrono::nanoseconds busy_{0};
  std::chrono::nanoseconds nested_{0};  // of the current call: downstream boxes' time
  OwnerThread owner_;
};

// A box's input port as a consumer of a stream.
class BoxInput final : public ops::BatchConsumer {
 public:
  BoxInput(BoxRunner& box, std::size_t port) : box_(box), port_(port) {}
  void consume(const ops::BatchView& batch) override { box_.process(port_, batch); }
  void end() override { box_.finish(port_); }

 private:
  BoxRunner& box_;
  std::size_t port_;
};

}  // namespace boreal::runtime
