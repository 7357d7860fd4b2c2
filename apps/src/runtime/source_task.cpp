#include "runtime/source_task.hpp"

#include <time.h>

#include <algorithm>
#include <limits>

#include <boreal/transport/crc32c.hpp>

namespace boreal::runtime {

std::int64_t realtime_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The offset between the clocks is read between two steady readings; a pair further apart
// than 2 µs was split by a preemption and is read again (at most 100 times, then the closest
// pair is used), so the offset is off by at most about a microsecond.
std::int64_t realtime_ns_at(SteadyTime at) noexcept {
  using std::chrono::duration_cast;
  using std::chrono::nanoseconds;
  std::int64_t best_gap = std::numeric_limits<std::int64_t>::max();
  std::int64_t best_offset = 0;  // realtime - steady, in ns
  for (int i = 0; i < 100 && best_gap > 2000; ++i) {
    const auto before = std::chrono::steady_clock::now();
    const std::int64_t real = realtime_ns();
    const auto after = std::chrono::steady_clock::now();
    const std::int64_t gap = duration_cast<nanoseconds>(after - before).count();
    if (gap < best_gap) {
      best_gap = gap;
      const auto middle = before + (after - before) / 2;
      best_offset = real - duration_cast<nanoseconds>(middle.time_since_epoch()).count();
    }
  }
  return duration_cast<nanoseconds>(at.time_since_epoch()).count() + best_offset;
}

SourceTask::SourceTask(std::string name, std::string stream, RowTarget& target,
                       const ops::Schema& schema, const SourceParams& params,
                       std::size_t port)
    : name_(std::move(name)),
      stream_(std::move(stream)),
      target_(target),
      schema_(schema),
      params_(params),
      hold_(target.flush_hold()),
      port_(port) {
  if (params.rate && *params.rate > 0) period_ns_ = 1e9 / *params.rate;
  idle_ = params.rate && *params.rate == 0;
}

void SourceTask::start(SteadyTime now) {
  started_ = true;
  if (on_start) on_start(now);
  t0_ = now;
  // The wall-clock time of `now`, not of this moment: the thread may have been preempted
  // since `now` was read, and stamping from a later origin would date tuples in the future.
  t0_real_ = realtime_ns_at(now);
  if (params_.kind == SourceKind::csv) {
    auto reader = ops::CsvReader::make({.path = params_.path}, schema_);
    if (!reader) {
      error_ = "source '" + name_ + "': " + reader.error().message;
    } else {
      csv_ = std::move(reader).value();
    }
    return;
  }
  if (params_.kind == SourceKind::nexmark) {
    auto generator = ops::NexmarkGenerator::make(
        {.stream = params_.streams.at(port_),
         .first_event = params_.first_event,
         .events = params_.events > 0 ? params_.events : ops::NexmarkParams::kEndless,
         .gap_us = params_.gap_us,
         .max_delay_ms = params_.max_delay_ms,
         // Paced, event i is due at t0 + i / rate; unpaced, fill() stamps rows as it makes them.
         .stamp = params_.stamp,
         .stamp_start_ns = t0_real_,
         .stamp_ns_per_event = period_ns_});
    if (!generator) {
      error_ = "source '" + name_ + "': " + generator.error().describe();
    } else {
      nexmark_.emplace(std::move(generator).value());
      if (params_.stamp && period_ns_ == 0) {
        stamp_ = ops::FieldRef<ops::Timestamp>::bind(schema_, "ts").value();
      }
    }
    return;
  }
  ops::GeneratorParams params = generator_params(params_, schema_);
  params.start_ns = params_.start_ns.value_or(t0_real_);
  if (period_ns_ > 0) params.rate = *params_.rate;
  auto generator = ops::Generator::make(params);
  if (!generator) {
    error_ = "source '" + name_ + "': " + generator.error().message;
  } else {
    generator_.emplace(std::move(generator).value());
  }
}

SteadyTime SourceTask::due_at(std::uint64_t seq) const noexcept {
  return t0_ +
         std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(seq) * period_ns_));
}

std::uint64_t SourceTask::units_done() const noexcept {
  return nexmark_ ? nexmark_->next_event() - params_.first_event : generated_;
}

std::uint64_t SourceTask::units_for_rows(std::uint64_t rows) const noexcept {
  return nexmark_ ? nexmark_->event_after_rows(rows) - params_.first_event : generated_ + rows;
}

std::uint64_t SourceTask::events_due(SteadyTime now) const noexcept {
  const std::uint64_t done = events();
  if (!started_ || eos_committed_ || period_ns_ <= 0 || idle_ || exhausted()) return done;
  SteadyTime until = now;
  if (params_.duration.count() > 0) {
    until = std::min(until, t0_ + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      params_.duration));
  }
  if (until < t0_) return done;
  std::uint64_t due =
      static_cast<std::uint64_t>(static_cast<double>((until - t0_).count()) / period_ns_) + 1;
  if (params_.tuples > 0 && !nexmark_) due = std::min(due, params_.tuples);
  if (params_.events > 0 && nexmark_) due = std::min(due, params_.events);
  return std::max(due, done);
}

bool SourceTask::exhausted() const noexcept {
  if (error_) return true;
  if (nexmark_) return nexmark_->done();
  return (params_.tuples > 0 && generated_ >= params_.tuples) || (csv_ && csv_->done());
}

bool SourceTask::open_batch(SteadyTime now) {
  batch_ = target_.open();
  if (batch_ == nullptr) {
    if (!blocked_now_) {
      blocked_now_ = true;
      blocked_since_ = now;
    }
    return false;
  }
  if (blocked_now_) {
    blocked_ += now - blocked_since_;
    blocked_now_ = false;
  }
  // The flush clock starts when the batch's first tuple was due, not when this thread got
  // round to it, so no tuple waits in the sender longer than its hold.
  opened_at_ = period_ns_ > 0 ? std::min(now, due_at(units_for_rows(1) - 1)) : now;
  return true;
}

void SourceTask::commit(bool end, SteadyTime now) {
  if (period_ns_ > 0) due_to_committed_.record(now - opened_at_);
  // The one pass over the rows: its CRC joins the stream's content checksum and seals the
  // frame (RowTarget::commit), which need not read them again.
  const auto bytes = batch_->bytes();
  const std::uint32_t payload_crc = transport::crc32c(bytes);
  crc_ = transport::crc32c_combine(crc_, payload_crc, bytes.size());
  target_.commit(end, payload_crc);
  batch_ = nullptr;
  ++frames_;
  if (end) eos_committed_ = true;
}

std::size_t SourceTask::fill(std::size_t rows, std::int64_t& now_real) {
  if (csv_) {
    auto read = csv_->read(*batch_, rows);
    if (!read) {
      error_ = "source '" + name_ + "': " + read.error().message;
      return 0;
    }
    return read.value().rows;  // the end of the file shows in csv_->done()
  }
  if (nexmark_) {
    const std::size_t before = batch_->size();
    const std::size_t got = nexmark_->fill(*batch_, rows, params_.first_event + due_units_);
    if (stamp_ && got > 0) {  // unpaced: the time they are made
      if (now_real == 0) now_real = realtime_ns();
      for (std::size_t i = before; i < before + got; ++i) {
        stamp_->set(batch_->mut_row(i), ops::Timestamp(std::chrono::nanoseconds(now_real)));
      }
    }
    return got;
  }
  if (!generator_) return 0;
  if (period_ns_ > 0) return generator_->fill(*batch_, rows);
  // A fixed start: unpaced rows all get it (fill() with no rate), the same in every run.
  if (params_.start_ns) return generator_->fill(*batch_, rows);
  if (now_real == 0) now_real = realtime_ns();
  // Unpaced: every row is due now and stamped now; fill_due() is bounded by the room left.
  const std::size_t room = batch_->capacity_rows() - batch_->size();
  if (rows >= room) return generator_->fill_due(*batch_, now_real);
  return generator_->fill(*batch_, rows);
}

int SourceTask::do_work(SteadyTime now) {
  owner_.check();
  // Rows that are due go out before the target makes its own progress (a link reads credit
  // and acknowledgements, a system call), which would otherwise sit between a frame's
  // deadline and its send (docs/design.md, "Where the latency goes").
  const int work = eos_committed_ || !target_.ready() ? 0 : produce(now);
  return work + target_.do_work();
}

int SourceTask::produce(SteadyTime now) {
  int work = 0;
  if (!started_) start(now);

  const bool time_up =
      params_.duration.count() > 0 &&
      now - t0_ >= std::chrono::duration_cast<std::chrono::nanoseconds>(params_.duration);
  // A paced source fills its batch when the batch must leave, not as each tuple comes due
  // (or, in a wave of its thread's frames, once it could: FlushWave).
  const auto lead = wave_ != nullptr ? wave_->lead(hold_.get()) : std::chrono::nanoseconds{0};
  if (period_ns_ > 0 && !time_up && now + lead < deadline()) return work;
  // Units (tuples, or nexmark events) due by now.
  std::uint64_t due = params_.tuples > 0 && !nexmark_ ? params_.tuples : UINT64_MAX;
  if (period_ns_ > 0) {
    const double elapsed = static_cast<double>((now - t0_).count());
    due = std::min<std::uint64_t>(due, static_cast<std::uint64_t>(elapsed / period_ns_) + 1);
  }
  if (idle_ || error_) due = 0;
  if (time_up) due = std::min(due, units_done());
  due_units_ = due;
  bool exhausted = time_up || this->exhausted();

  std::int64_t now_real = 0;
  int frames = 0;
  while (!exhausted && units_done() < due && frames < kFramesPerCall) {
    if (batch_ == nullptr && !open_batch(now)) return work;
    const std::size_t room = batch_->capacity_rows() - batch_->size();
    // A nexmark fill stops at the due event by itself; the others count tuples.
    const std::size_t want =
        nexmark_ ? room : static_cast<std::size_t>(std::min<std::uint64_t>(room, due - generated_));
    const std::size_t got = fill(want, now_real);
    generated_ += got;
    ++work;
    exhausted = this->exhausted();
    if (batch_->full()) {
      // The batch that completes a count-limited stream carries its end.
      commit(exhausted, now);
      ++frames;
      if (exhausted) return work;
    } else if (got < want && !exhausted) {
      break;  // the generator's own limit or the CSV reader paused: try again next call
    }
  }
  if (exhausted) {
    if (batch_ == nullptr && !open_batch(now)) return work;
    commit(true, now);
    ++work;
  } else if (batch_ != nullptr && batch_->size() > 0 && hold_.leaves(now - opened_at_, wave_)) {
    commit(false, now);
    ++work;
  }
  return work;
}

SteadyTime SourceTask::deadline() const noexcept {
  if (!started_ || eos_committed_) return SteadyTime::max();
  SteadyTime at = SteadyTime::max();
  const bool open = batch_ != nullptr && batch_->size() > 0;
  const auto hold = hold_.get();
  if (open) at = opened_at_ + hold;
  if (period_ns_ > 0) {
    const std::uint64_t capacity = target_.capacity_rows();
    const std::uint64_t room = open ? capacity - batch_->size() : capacity;
    at = std::min(at, due_at(units_for_rows(room) - 1));  // the batch would be full
    if (!open) at = std::min(at, due_at(units_for_rows(1) - 1) + hold);  // its first tuple's flush
  }
  if (params_.duration.count() > 0) {
    at = std::min(at, t0_ + std::chrono::duration_cast<std::chrono::nanoseconds>(params_.duration));
  }
  return at;
}

ops::Batch* FanoutTarget::open() {
  if (out_.blocked()) return nullptr;
  batch_.clear();
  return &batch_;
}

void FanoutTarget::commit(bool end,
                          std::uint32_t /*payload_crc: each consumer reads the rows anyway*/) {
  if (batch_.size() > 0) out_.consume(batch_);
  batch_.clear();
  if (end) out_.end();
}

}  // namespace boreal::runtime
