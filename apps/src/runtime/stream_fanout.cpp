#include "runtime/stream_fanout.hpp"

#include <time.h>

#include "runtime/link_ports.hpp"

namespace boreal::runtime {
namespace {

std::chrono::nanoseconds steady_now() noexcept {
  return std::chrono::steady_clock::now().time_since_epoch();
}

// The box whose code runs on this thread now: a box's process() calls the boxes downstream
// on the same thread directly, and their time is theirs, not the caller's.
thread_local BoxRunner* running = nullptr;

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

template <class F>
void BoxRunner::timed(F&& work) {
  BoxRunner* caller = running;
  running = this;
  const auto nested_before = nested_;
  nested_ = std::chrono::nanoseconds{0};
  const auto start = steady_now();
  work();
  const auto elapsed = steady_now() - start;
  busy_ += elapsed - nested_;  // what the boxes it called spent is theirs
  nested_ = nested_before;
  running = caller;
  if (caller != nullptr) caller->nested_ += elapsed;
}

void BoxRunner::process(std::size_t port, const ops::BatchView& batch) {
  owner_.check();
  tuples_in_ += batch.size();
  ++batches_in_;
  timed([&] { box_->process(port, batch); });
}

void BoxRunner::finish(std::size_t port) {
  owner_.check();
  if (port_finished_.empty()) port_finished_.assign(box_->input_count(), false);
  if (port >= port_finished_.size() || port_finished_[port]) return;  // ends once per port
  port_finished_[port] = true;
  ++finished_;
  timed([&] { box_->finish(port); });
}

void BoxRunner::restore_finished() {
  owner_.check();
  port_finished_.assign(box_->input_count(), true);
  finished_ = box_->input_count();
  box_->finish_restored();
}

void BoxRunner::flush() {
  owner_.check();
  if (finished()) return;  // its outputs have ended
  timed([&] {
    for (std::size_t i = 0; i < box_->output_count(); ++i) box_->output(i).flush();
  });
}

void BoxRunner::tick(std::int64_t now_ns) {
  owner_.check();
  if (!ticks_on_clock_ || finished()) return;
  timed([&] { box_->tick(now_ns); });
}

std::uint64_t BoxRunner::tuples_out() const noexcept {
  std::uint64_t rows = 0;
  for (std::size_t i = 0; i < box_->output_count(); ++i) rows += box_->output(i).rows_emitted();
  return rows;
}

}  // namespace boreal::runtime
