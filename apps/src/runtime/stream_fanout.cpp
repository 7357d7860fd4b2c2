#include "runtime/stream_fanout.hpp"

#include <time.h>

#include "runtime/link_ports.hpp"

namespace boreal::runtime {
namespace {

std::chrono::nanoseconds steady_now() noexcept {
  return std::chrono::steady_clock::now().time_since_epoch();
}

}  // namespace

void StreamFanout::consume(const ops::BatchView& batch) {
  owner_.check();
  tuples_ += batch.size();
  ++batches_;
  for (ops::BatchConsumer* consumer : consumers_) consumer->consume(batch);
}

void StreamFanout::end() {
  owner_.check();
  if (ended_) return;
  ended_ = true;
  for (ops::BatchConsumer* consumer : consumers_) consumer->end();
}

bool StreamFanout::blocked() const noexcept {
  for (const LinkWriter* writer : downstream_writers_) {
    if (writer->backlogged()) return true;
  }
  return false;
}

void BoxRunner::process(std::size_t port, const ops::BatchView& batch) {
  owner_.check();
  const auto start = steady_now();
  tuples_in_ += batch.size();
  ++batches_in_;
  box_->process(port, batch);
  busy_ += steady_now() - start;
}

void BoxRunner::finish(std::size_t port) {
  owner_.check();
  if (port_finished_.empty()) port_finished_.assign(box_->input_count(), false);
  if (port >= port_finished_.size() || port_finished_[port]) return;  // ends once per port
  port_finished_[port] = true;
  ++finished_;
  const auto start = steady_now();
  box_->finish(port);
  busy_ += steady_now() - start;
}

void BoxRunner::flush() {
  owner_.check();
  if (finished()) return;  // its outputs have ended
  for (std::size_t i = 0; i < box_->output_count(); ++i) box_->output(i).flush();
}

void BoxRunner::tick(std::int64_t now_ns) {
  owner_.check();
  if (!ticks_on_clock_ || finished()) return;
  const auto start = steady_now();
  box_->tick(now_ns);
  busy_ += steady_now() - start;
}

std::uint64_t BoxRunner::tuples_out() const noexcept {
  std::uint64_t rows = 0;
  for (std::size_t i = 0; i < box_->output_count(); ++i) rows += box_->output(i).rows_emitted();
  return rows;
}

}  // namespace boreal::runtime
