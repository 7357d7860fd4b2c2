// Graph: an in-process network of boxes for embedders and tests.
//
// Boxes are added (the graph owns them), wired output port -> input port with connect(), fed
// with push()/finish() on the ports no edge feeds, and read with collect() on the outputs
// no edge drains. An edge is a small BatchConsumer that calls the downstream box's process()
// and finish(), so a push runs the whole downstream chain to completion, depth first, on the
// caller's thread: no thread, queue or lock of ours. Rows reach a consumer when an Output's
// batch fills, on flush() and at the end.
//
//   Graph graph;
//   BoxId split = graph.add(SplitBox::make({.key_fields = {"sym"}, .outputs = 2}, s).value());
//   BoxId sort = graph.add(BSortBox::make({.field = "ts", .slack = 8}, s).value());
//   if (auto ok = graph.connect(split, 0, sort, 0); !ok) report(ok.error());
//   CollectingConsumer sorted;
//   graph.collect(sort, 0, sorted);
//   graph.push(split, 0, batch);  ...  graph.finish(split, 0);
//
// A Graph is used by one thread at a time. It is neither copyable nor movable: edges and
// consumers hold the addresses of its boxes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/box.hpp>
#include <boreal/ops/error.hpp>

namespace boreal::ops {

// A box of one Graph: its position in add() order.
struct BoxId {
  std::size_t index = 0;
  friend bool operator==(BoxId, BoxId) = default;
};

class Graph {
 public:
  Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  // Takes ownership of `box` (not null). Ids count up from 0 in add() order.
  BoxId add(std::unique_ptr<Box> box);

  // Rows of output `out_port` of `from` go to input `in_port` of `to`. Fails, changing
  // nothing, if either box is not in the graph, a port is out of range, the output's schema
  // differs from the input's, the output or the input is already connected, or the edge
  // would close a cycle. The messages, with where = "connect":
  //   "no box 7; the graph has 3 boxes"
  //   "box 0 (split) has 4 outputs; there is no output 4"
  //   "box 1 (union) has 2 inputs; there is no input 2"
  //   "output 0 of box 0 (split) has schema a:i64 but input 1 of box 1 (union) expects
  //    a:i64,b:f64"                                                        (one line)
  //   "output 0 of box 0 (split) is already connected"
  //   "input 1 of box 1 (union) is already connected"
  //   "an edge from box 2 (bsort) to box 0 (split) would close a cycle"
  Result<void> connect(BoxId from, std::size_t out_port, BoxId to, std::size_t in_port);

  // Feeds one batch to input `in_port` of `to` and runs everything downstream of it.
  // Preconditions (asserted in debug builds): `to` is in the graph, the port is in range and
  // no edge feeds it, and the batch has the port's schema.
  void push(BoxId to, std::size_t in_port, const BatchView& batch);
  // Input `in_port` of `to` ended (same preconditions as push; once per port).
  void finish(BoxId to, std::size_t in_port);

  // Batches of output `out_port` of `from` go to `consumer` (which must outlive the graph or
  // the next collect() on that output), and its end() when the box ends. Replaces an earlier
  // collect(); precondition (asserted in debug builds): no edge drains that output.
  void collect(BoxId from, std::size_t out_port, BatchConsumer& consumer);

  // Hands on the partial batch of every output, upstream boxes before downstream ones, so
  // every row pushed so far reaches its consumers.
  void flush();

  // tick(now) on every box, in add() order. Rows a tick emits flow downstream at once.
  void tick(std::int64_t now);

  // Precondition (asserted in debug builds): `id` is in the graph.
  [[nodiscard]] Box& box(BoxId id) noexcept;
  [[nodiscard]] const Box& box(BoxId id) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return boxes_.size(); }

 private:
  class Edge;
  struct Node {
    std::unique_ptr<Box> box;
    std::vector<bool> input_fed;       // per input port: an edge feeds it
    std::vector<bool> output_drained;  // per output port: an edge drains it
    std::vector<std::size_t> next;     // boxes this one's edges lead to (with repeats)
  };

  [[nodiscard]] bool reaches(std::size_t from, std::size_t to) const;

  std::vector<Node> boxes_;
  std::vector<std::unique_ptr<Edge>> edges_;
};

// Copies every row it receives, for tests and small embedders. rows() counts rows; the
// bytes are those of the rows back to back, as the producer wrote them.
class CollectingConsumer : public BatchConsumer {
 public:
  void consume(const BatchView& batch) override;
  void end() override { ++ends_; }

  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t batches() const noexcept { return batches_; }
  [[nodiscard]] bool ended() const noexcept { return ends_ > 0; }
  // How many times end() was called (a correct producer calls it once).
  [[nodiscard]] std::size_t ends() const noexcept { return ends_; }
  [[nodiscard]] const std::vector<std::byte>& bytes() const noexcept { return bytes_; }
  // Bytes per row (0 before the first non-empty batch).
  [[nodiscard]] std::uint32_t tuple_bytes() const noexcept { return tuple_bytes_; }
  // The collected rows as one view (valid until the next consume or clear).
  [[nodiscard]] BatchView view(const Schema& schema) const;
  // Forgets rows, batches and ends.
  void clear() noexcept;

 private:
  std::vector<std::byte> bytes_;
  std::size_t rows_ = 0;
  std::size_t batches_ = 0;
  std::size_t ends_ = 0;
  std::uint32_t tuple_bytes_ = 0;
};

// Counts rows and batches without copying anything.
class CountingConsumer : public BatchConsumer {
 public:
  void consume(const BatchView& batch) override {
    rows_ += batch.size();
    ++batches_;
  }
  void end() override { ++ends_; }

  [[nodiscard]] std::uint64_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::uint64_t batches() const noexcept { return batches_; }
  [[nodiscard]] bool ended() const noexcept { return ends_ > 0; }
  [[nodiscard]] std::uint64_t ends() const noexcept { return ends_; }

 private:
  std::uint64_t rows_ = 0;
  std::uint64_t batches_ = 0;
  std::uint64_t ends_ = 0;
};

}  // namespace boreal::ops
