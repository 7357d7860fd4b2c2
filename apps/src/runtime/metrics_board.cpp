#include "runtime/metrics_board.hpp"

#include <algorithm>
#include <cassert>

namespace boreal::runtime {
namespace {

// Copies `from` over `to` element by element: `to` keeps its storage, so nothing allocates.
template <class T>
void copy_over(std::vector<T>& to, const std::vector<T>& from) noexcept {
  assert(to.size() == from.size() && "figures not shaped by MetricsBoard::blank()");
  std::copy_n(from.begin(), std::min(to.size(), from.size()), to.begin());
}

}  // namespace

MetricsBoard::MetricsBoard(std::string node, std::vector<ThreadLabels> labels)
    : node_(std::move(node)), labels_(std::move(labels)) {
  for (std::size_t t = 0; t < labels_.size(); ++t) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->figures = blank(t);
  }
}

ThreadFigures MetricsBoard::blank(std::size_t thread) const {
  ThreadFigures figures;
  figures.links.resize(labels_.at(thread).links.size());
  figures.boxes.resize(labels_.at(thread).boxes.size());
  figures.sinks.resize(labels_.at(thread).sinks.size());
  return figures;
}

void MetricsBoard::publish(std::size_t thread, const ThreadFigures& figures) noexcept {
  Slot& slot = *slots_[thread];
  std::lock_guard lock(slot.mutex);
  slot.figures.cpu_s = figures.cpu_s;
  slot.figures.wait = figures.wait;
  slot.figures.tuples_sent = figures.tuples_sent;
  slot.figures.tuples_received = figures.tuples_received;
  copy_over(slot.figures.links, figures.links);
  copy_over(slot.figures.boxes, figures.boxes);
  copy_over(slot.figures.sinks, figures.sinks);
}

MetricsSample MetricsBoard::sample() const {
  MetricsSample sample;
  sample.node = node_;
  sample.labels = labels_;
  sample.threads.reserve(slots_.size());
  for (const auto& slot : slots_) {
    ThreadFigures copy = blank(sample.threads.size());  // allocate before taking the lock
    {
      std::lock_guard lock(slot->mutex);
      copy.cpu_s = slot->figures.cpu_s;
      copy.wait = slot->figures.wait;
      copy.tuples_sent = slot->figures.tuples_sent;
      copy.tuples_received = slot->figures.tuples_received;
      copy_over(copy.links, slot->figures.links);
      copy_over(copy.boxes, slot->figures.boxes);
      copy_over(copy.sinks, slot->figures.sinks);
    }
    sample.threads.push_back(std::move(copy));
  }
  sample.process = ProcessFigures::now();
  return sample;
}

}  // namespace boreal::runtime
