// MetricsBoard: where a node's I/O threads leave their figures for the metrics server
// (metrics_server.hpp) to read.
//
// Each I/O thread has a slot: a mutex and the figures it last published. The thread publishes
// about once a tick (ThreadMeter::tick: every 10 ms, or 100 ms while idle), never per tuple;
// publish() copies numbers into vectors sized when the board was made, so it does not
// allocate, and holds the slot's mutex only for that copy. sample(), on the server's thread
// once per scrape, takes each slot's mutex in turn for the same short copy, then reads the
// process's own figures outside every lock. The only wait an I/O thread can meet is a
// scrape's copy of its slot (well under a microsecond, a few times a minute); a seqlock would
// remove that too, at the price of retries and torn-read care for the reader.
//
// Threading: publish(t, ...) from thread t only (one writer per slot); sample() from any
// thread. The labels never change after construction.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/metrics_sample.hpp"

namespace boreal::runtime {

class MetricsBoard {
 public:
  // One slot per entry of `labels` (a node's I/O threads, in order).
  MetricsBoard(std::string node, std::vector<ThreadLabels> labels);

  // Figures shaped for thread `thread`'s publish(): one entry per link and per box.
  [[nodiscard]] ThreadFigures blank(std::size_t thread) const;
  // Replaces thread `thread`'s figures. `figures` must be shaped as blank(thread) returns.
  void publish(std::size_t thread, const ThreadFigures& figures) noexcept;
  // Every thread's latest figures with their labels, and the process's figures now.
  [[nodiscard]] MetricsSample sample() const;

  [[nodiscard]] std::size_t threads() const noexcept { return slots_.size(); }

 private:
  struct Slot {
    mutable std::mutex mutex;
    ThreadFigures figures;
  };

  std::string node_;
  std::vector<ThreadLabels> labels_;
  std::vector<std::unique_ptr<Slot>> slots_;  // a mutex does not move
};

}  // namespace boreal::runtime
