#include "runtime/node.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <boreal/ops/latency_histogram.hpp>
#include <boreal/ops/batch.hpp>
#include <boreal/ops/schema.hpp>
#include <boreal/ops/sink.hpp>
#include <boreal/transport/agent_runner.hpp>
#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/fabric_medium.hpp>
#include <boreal/transport/inproc_medium.hpp>
#include <boreal/transport/rate_estimator.hpp>
#include <boreal/transport/tcp_medium.hpp>

namespace boreal::runtime {
namespace {

using namespace std::chrono_literals;
using transport::ErrorCategory;
using transport::fail;
using SteadyTime = std::chrono::steady_clock::time_point;

std::int64_t realtime_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// CLOCK_REALTIME at the steady instant `at`. The offset between the clocks is read between
// two steady readings; a pair further apart than 2 µs was split by a preemption and is read
// again (at most 100 times, then the closest pair is used), so the offset is off by at most
// about a microsecond and tuples are never stamped noticeably in the future.
std::int64_t realtime_ns_at(std::chrono::steady_clock::time_point at) noexcept {
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

std::int64_t max_rss_kb() noexcept {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// Where the generator and the checker find their fields. -1 = the schema has no such field.
struct TupleLayout {
  std::uint32_t tuple_bytes = 0;
  int seq = -1;  // i64 field "seq"
  int ts = -1;   // first timestamp field
  int key = -1;  // i64 field "key"

  static TupleLayout of(const ops::Schema& schema) {
    TupleLayout layout;
    layout.tuple_bytes = schema.tuple_bytes();
    for (const auto& field : schema.fields()) {
      const int offset = static_cast<int>(field.offset);
      if (field.name == "seq" && field.type == ops::FieldType::i64) layout.seq = offset;
      if (field.name == "key" && field.type == ops::FieldType::i64) layout.key = offset;
      if (field.type == ops::FieldType::timestamp && layout.ts < 0) layout.ts = offset;
    }
    return layout;
  }
};

void store_i64(std::byte* at, std::int64_t value) noexcept { std::memcpy(at, &value, 8); }
std::int64_t load_i64(const std::byte* at) noexcept {
  std::int64_t value;
  std::memcpy(&value, at, 8);
  return value;
}

// splitmix64: a deterministic key stream for a seed.
std::uint64_t next_random(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A `source` box feeding one outgoing link: generates tuples at the offered rate (or as fast
// as credit allows), packs them into frames, sends a partly filled frame once it is `flush`
// old, and ends the stream with kFlagEndOfStream.
class SourceTask {
 public:
  SourceTask(std::string stream, transport::SendLink& link, const ops::Schema& schema,
             const SourceParams& params, std::chrono::microseconds flush)
      : stream_(std::move(stream)),
        link_(link),
        layout_(TupleLayout::of(schema)),
        params_(params),
        flush_(flush),
        random_(params.seed),
        template_(schema.tuple_bytes()) {
    // Every byte not set per tuple is a fixed, seed-dependent pattern (strings get letters).
    std::uint64_t pattern = params.seed;
    for (const auto& field : schema.fields()) {
      for (std::uint32_t i = 0; i < field.width; ++i) {
        const auto r = next_random(pattern);
        template_[field.offset + i] = static_cast<std::byte>(
            field.type == ops::FieldType::str ? 'a' + static_cast<int>(r % 26) : r & 0xFF);
      }
    }
    if (params.rate && *params.rate > 0) period_ns_ = 1e9 / *params.rate;
    idle_ = params.rate && *params.rate == 0;
  }

  [[nodiscard]] bool active() const noexcept { return started_; }
  [[nodiscard]] bool done() const noexcept {
    return link_.state() == transport::LinkState::finished ||
           link_.state() == transport::LinkState::failed;
  }
  [[nodiscard]] std::uint64_t generated() const noexcept { return generated_; }
  // Called once, when the source starts and before it generates its first tuple.
  std::function<void(SteadyTime)> on_start;
  [[nodiscard]] std::uint32_t checksum() const noexcept { return crc_; }
  [[nodiscard]] transport::SendLink& link() noexcept { return link_; }
  [[nodiscard]] const std::string& stream() const noexcept { return stream_; }

  // Generates what is due at `now` and sends it. Returns work done.
  int do_work(SteadyTime now) {
    int work = link_.do_work();
    if (eos_committed_ || link_.state() != transport::LinkState::established) return work;
    if (!started_) start(now);

    const bool time_up = params_.duration.count() > 0 &&
                         now - t0_ >= std::chrono::duration_cast<std::chrono::nanoseconds>(params_.duration);
    // A paced source fills its frame when the frame must leave, not as each tuple comes due:
    // the tuples carry their scheduled times either way, and the thread wakes once a frame.
    if (period_ns_ > 0 && !time_up && now < deadline()) return work;
    std::uint64_t due = params_.tuples > 0 ? params_.tuples : UINT64_MAX;
    if (period_ns_ > 0) {
      const double elapsed = static_cast<double>((now - t0_).count());
      due = std::min<std::uint64_t>(due, static_cast<std::uint64_t>(elapsed / period_ns_) + 1);
    }
    if (idle_) due = 0;
    if (time_up) due = std::min(due, generated_);
    const bool last = (params_.tuples > 0 && generated_ >= params_.tuples) || time_up;

    std::int64_t now_real = 0;
    int frames = 0;
    while (generated_ < due && frames < kFramesPerCall) {
      if (!open_ && !open_claim(now)) return work;
      if (now_real == 0 && period_ns_ <= 0) now_real = realtime_ns();
      std::byte* row = claim_.payload.data() + used_ * layout_.tuple_bytes;
      const std::uint32_t room = capacity_ - used_;
      const std::uint64_t count = std::min<std::uint64_t>(room, due - generated_);
      for (std::uint64_t i = 0; i < count; ++i, row += layout_.tuple_bytes) {
        std::memcpy(row, template_.data(), layout_.tuple_bytes);
        const auto seq = static_cast<std::int64_t>(generated_ + i);
        if (layout_.seq >= 0) store_i64(row + layout_.seq, seq);
        if (layout_.ts >= 0) {
          // Scheduled send time when paced, so a late sender shows up as latency.
          const std::int64_t stamp =
              period_ns_ > 0 ? t0_real_ + static_cast<std::int64_t>(static_cast<double>(seq) * period_ns_)
                             : now_real;
          store_i64(row + layout_.ts, stamp);
        }
        if (layout_.key >= 0) {
          store_i64(row + layout_.key, static_cast<std::int64_t>(next_random(random_) % params_.keys));
        }
      }
      used_ += static_cast<std::uint32_t>(count);
      generated_ += count;
      ++work;
      if (used_ == capacity_) {
        // The frame that completes a count-limited stream carries its end.
        const bool ends = params_.tuples > 0 && generated_ >= params_.tuples;
        commit(static_cast<std::uint16_t>(ends ? transport::kFlagData | transport::kFlagEndOfStream
                                               : transport::kFlagData));
        ++frames;
        if (ends) {
          eos_committed_ = true;
          return work + link_.do_work();
        }
      }
    }
    const bool finished = last || (params_.tuples > 0 && generated_ >= params_.tuples);
    if (finished) {
      if (!open_ && !open_claim(now)) return work;
      commit(static_cast<std::uint16_t>(transport::kFlagData | transport::kFlagEndOfStream));
      eos_committed_ = true;
      ++work;
    } else if (open_ && now - opened_at_ >= flush_) {
      commit(transport::kFlagData);
      ++work;
    }
    if (work > 0) work += link_.do_work();
    return work;
  }

  // The next moment this source has something to do without any event: when its frame must
  // leave, because it would be full or because its first tuple has waited `flush`. Tuples
  // are stamped with their scheduled times and the flush clock starts at the first one's, so
  // the source need not wake when each tuple is due: one wake-up per frame.
  [[nodiscard]] SteadyTime deadline() const noexcept {
    if (!started_ || eos_committed_) return SteadyTime::max();
    SteadyTime at = SteadyTime::max();
    if (open_) at = opened_at_ + flush_;
    if (period_ns_ > 0) {
      auto due_at = [&](std::uint64_t seq) {
        return t0_ + std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(seq) * period_ns_));
      };
      const std::uint32_t room = open_ ? capacity_ - used_ : capacity_;
      at = std::min(at, due_at(generated_ + room - 1));  // the frame would be full
      if (!open_) at = std::min(at, due_at(generated_) + flush_);  // its first tuple's flush
    }
    if (params_.duration.count() > 0) {
      at = std::min(at, t0_ + std::chrono::duration_cast<std::chrono::nanoseconds>(params_.duration));
    }
    return at;
  }

  std::uint64_t frames_sent = 0;

 private:
  static constexpr int kFramesPerCall = 16;

  void start(SteadyTime now) {
    started_ = true;
    if (on_start) on_start(now);
    t0_ = now;
    // The wall-clock time of `now`, not of this moment: the thread may have been preempted
    // since `now` was read, and stamping from a later origin would date tuples in the future.
    t0_real_ = realtime_ns_at(now);
    capacity_ = std::max<std::uint32_t>(1, link_.max_payload_bytes() / layout_.tuple_bytes);
  }

  bool open_claim(SteadyTime now) {
    if (link_.try_claim(claim_) != transport::SendStatus::ok) return false;
    open_ = true;
    used_ = 0;
    // The flush clock starts when the frame's first tuple was due, not when this thread got
    // round to it, so no tuple waits in the sender longer than `flush`.
    opened_at_ = period_ns_ > 0
                     ? std::min(now, t0_ + std::chrono::nanoseconds(static_cast<std::int64_t>(
                                          static_cast<double>(generated_) * period_ns_)))
                     : now;
    return true;
  }

  void commit(std::uint16_t flags) {
    const std::uint32_t bytes = used_ * layout_.tuple_bytes;
    crc_ = transport::crc32c(claim_.payload.first(bytes), crc_);
    link_.commit(claim_, used_, bytes, flags);
    open_ = false;
    used_ = 0;
    ++frames_sent;
  }

  std::string stream_;
  transport::SendLink& link_;
  TupleLayout layout_;
  SourceParams params_;
  std::chrono::nanoseconds flush_;
  std::uint64_t random_;
  std::vector<std::byte> template_;
  double period_ns_ = 0;  // 0 = as fast as possible (unless idle)
  bool idle_ = false;     // rate "idle": nothing until the duration ends
  bool started_ = false;
  bool eos_committed_ = false;
  bool open_ = false;
  transport::Claim claim_;
  std::uint32_t used_ = 0;
  std::uint32_t capacity_ = 1;
  SteadyTime opened_at_{};
  SteadyTime t0_{};
  std::int64_t t0_real_ = 0;
  std::uint64_t generated_ = 0;
  std::uint32_t crc_ = 0;
};

// A `sink` box at the end of one incoming link: counts, and for kind `check` verifies the
// sequence, the content checksum and records latency from the tuples' timestamps.
class SinkTask final : public transport::FrameSink {
 public:
  SinkTask(std::string stream, transport::RecvLink& link, const ops::Schema& schema,
           const SinkParams& params, std::unique_ptr<ops::CsvWriter> output = nullptr)
      : stream_(std::move(stream)),
        link_(link),
        schema_(schema),
        layout_(TupleLayout::of(schema)),
        params_(params),
        output_(std::move(output)) {}

  int poll(SteadyTime now) {
    // The receiver's window opens with the link, as the sender's opens with its first credit,
    // so an idle link (rate "idle") is measured too.
    if (!started_ && link_.state() == transport::LinkState::established) start(now);
    now_ = now;
    const auto before = frames_;
    const int work = link_.poll(*this);
    if (frames_ != before) rate_.add(frames_ - before, now);
    if (!ended_ && link_.state() == transport::LinkState::finished) ended_ = true;
    return work;
  }

  void on_frame(const transport::FrameView& frame) override {
    // A link that came up inside this poll delivers before poll() could see it established.
    if (!started_) start(now_);
    ++frames_;
    const std::uint32_t count = frame.header.tuple_count;
    tuples_ += count;
    bytes_ += frame.payload.size();
    if (params_.kind == SinkKind::check) check(frame, count);
    if (output_) write(frame, count);
    if ((frame.header.flags & transport::kFlagEndOfStream) != 0) {
      ended_ = true;
      if (output_) output_->end();
    }
    if (params_.slow_per_frame.count() > 0) std::this_thread::sleep_for(params_.slow_per_frame);
  }

  [[nodiscard]] bool active() const noexcept { return started_; }
  // Called once, when the sink starts and before it counts its first tuple.
  std::function<void(SteadyTime)> on_start;
  // Done when the link is: after the end of stream it still has to acknowledge it, and a
  // fabric link is finished only once that acknowledgement has left.
  [[nodiscard]] bool done() const noexcept {
    return link_.state() == transport::LinkState::finished ||
           link_.state() == transport::LinkState::failed;
  }
  [[nodiscard]] double rate_hz() const noexcept { return rate_.rate_hz(); }
  [[nodiscard]] transport::RecvLink& link() noexcept { return link_; }
  [[nodiscard]] const std::string& stream() const noexcept { return stream_; }
  // The first failure to write the output file, if any.
  [[nodiscard]] std::optional<std::string> output_error() const {
    if (output_error_) return output_error_;
    if (output_) {
      if (auto status = output_->status(); !status) return status.error().message;
    }
    return std::nullopt;
  }

  std::uint64_t frames_ = 0;
  std::uint64_t tuples_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint32_t crc_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t duplicated_ = 0;
  std::uint64_t out_of_order_ = 0;
  ops::LatencyHistogram latency_;

 private:
  void check(const transport::FrameView& frame, std::uint32_t count) {
    crc_ = transport::crc32c(frame.payload, crc_);
    const std::byte* row = frame.payload.data();
    const std::int64_t now = layout_.ts >= 0 ? realtime_ns() : 0;
    for (std::uint32_t i = 0; i < count; ++i, row += layout_.tuple_bytes) {
      if (layout_.seq >= 0) {
        const auto seq = static_cast<std::uint64_t>(load_i64(row + layout_.seq));
        if (seq == next_seq_) {
          ++next_seq_;
        } else if (seq > next_seq_) {
          lost_ += seq - next_seq_;
          next_seq_ = seq + 1;
        } else if (lost_ == 0) {
          // Nothing was skipped, so every lower number was delivered already. (Without a
          // per-sequence bitmap a lower number after a gap counts as late, not repeated.)
          ++duplicated_;
        } else {
          ++out_of_order_;
          --lost_;  // it arrived after all
        }
      }
      if (layout_.ts >= 0) latency_.record(now - load_i64(row + layout_.ts));
    }
  }


  void start(SteadyTime now) {
    started_ = true;
    if (on_start) on_start(now);
  }

  void write(const transport::FrameView& frame, std::uint32_t count) {
    auto batch = ops::BatchView::wrap(frame.payload, schema_, count);
    if (!batch) {
      if (!output_error_) output_error_ = batch.error().message;
      return;
    }
    output_->consume(batch.value());
  }

  std::string stream_;
  transport::RecvLink& link_;
  const ops::Schema& schema_;  // the spec's, which outlives the node's run
  TupleLayout layout_;
  SinkParams params_;
  std::unique_ptr<ops::CsvWriter> output_;
  std::optional<std::string> output_error_;
  bool started_ = false;
  bool ended_ = false;
  SteadyTime now_{};  // of the current poll, for a start inside it
  std::uint64_t next_seq_ = 0;
  transport::RateEstimator rate_;
};

std::string link_label(const StreamSpec& stream) { return "stream '" + stream.name + "'"; }

transport::LinkOptions link_options(const NetworkSpec& spec, const StreamSpec& stream,
                                    const ops::Schema& schema) {
  transport::LinkOptions options;
  options.stream_id = stream.id;
  options.tuple_bytes = schema.tuple_bytes();
  options.schema_hash = schema.hash();
  options.cluster_token = spec.cluster_token;
  options.max_payload_bytes = stream.transport.batch_bytes;
  options.window = stream.transport.window;
  options.credit_batch = std::max<std::uint32_t>(1, stream.transport.window / 4);
  options.name = stream.name;
  return options;
}

transport::FabricTransfer transfer_of(const std::string& medium) {
  return medium == "fabric-rma" ? transport::FabricTransfer::rma_writes
                                : transport::FabricTransfer::messages;
}

// Everything the node runs, as one agent on one thread.
class NodeAgent {
 public:
  NodeAgent(transport::EventLoop& loop, std::chrono::milliseconds timeout,
            std::chrono::nanoseconds warmup)
      : loop_(loop), started_at_(std::chrono::steady_clock::now()),
        give_up_at_(timeout.count() > 0 ? started_at_ + timeout : SteadyTime::max()),
        warmup_(warmup) {}

  std::vector<std::unique_ptr<transport::SendLink>> send_links;
  std::unique_ptr<transport::TcpListener> listener;
  std::unique_ptr<transport::FabricListener> fabric_listener;
  std::vector<std::unique_ptr<SourceTask>> sources;
  std::vector<std::unique_ptr<SinkTask>> sinks;

  int do_work() {
    const auto now = std::chrono::steady_clock::now();
    int work = loop_.do_work(now);
    if (listener) work += listener->do_work();
    if (fabric_listener) work += fabric_listener->do_work();
    for (auto& sink : sinks) work += sink->poll(now);
    for (auto& source : sources) work += source->do_work(now);
    update(now);
    return work;
  }

  // Has every task tell the agent when it starts, before its first tuple: with no warm-up the
  // window opens right then, so it holds every tuple of the run.
  void watch_starts() {
    auto mark = [this](SteadyTime now) { mark_active(now); };
    for (auto& sink : sinks) sink->on_start = mark;
    for (auto& source : sources) source->on_start = mark;
  }

  [[nodiscard]] bool done() const noexcept { return finished_; }
  [[nodiscard]] transport::Waitable& waitable() noexcept { return loop_; }
  [[nodiscard]] const transport::LoadHints& hints() const noexcept { return hints_; }

  // Window edges, set by update().
  std::optional<SteadyTime> window_start;
  std::optional<SteadyTime> window_end;
  std::function<void()> on_window_start;
  std::function<void()> on_window_end;
  std::function<void(SteadyTime)> on_tick;  // about every 10 ms
  bool timed_out = false;

 private:
  void mark_active(SteadyTime now) {
    if (!active_since_) active_since_ = now;
    if (!window_start && warmup_.count() == 0) open_window(now);
  }

  void open_window(SteadyTime now) {
    window_start = now;
    if (on_window_start) on_window_start();
  }

  void update(SteadyTime now) {
    bool all_done = true;
    bool any_active = false;
    double rate = 0.0;
    double capacity = std::numeric_limits<double>::infinity();
    SteadyTime deadline = SteadyTime::max();
    for (auto& sink : sinks) {
      all_done = all_done && sink->done();
      any_active = any_active || sink->active();
      rate += sink->rate_hz();
      capacity = std::min(capacity, sink->link().free_capacity());
    }
    std::uint64_t frames_sent = 0;
    for (auto& source : sources) {
      all_done = all_done && source->done();
      any_active = any_active || source->active();
      deadline = std::min(deadline, source->deadline());
      frames_sent += source->frames_sent;
      // A sending link sets no capacity: nothing of ours overflows while the thread sleeps,
      // and its own flush and pacing times are in the deadline.
    }
    if (!sources.empty()) {
      sent_rate_.add(frames_sent - frames_seen_, now);
      frames_seen_ = frames_sent;
      rate += sent_rate_.rate_hz();
    }
    if (!active_since_ && any_active) active_since_ = now;
    // The window opens once the warm-up has passed, or at the end if the run was shorter.
    if (!window_start && active_since_ && (now - *active_since_ >= warmup_ || all_done)) {
      open_window(now);
    }
    if (all_done && !finished_) {
      finished_ = true;
      window_end = now;
      if (on_window_end) on_window_end();
    }
    if (now >= give_up_at_ && !finished_) {
      finished_ = true;
      timed_out = true;
      window_end = now;
      if (on_window_end) on_window_end();
    }
    if (now - last_tick_ >= 10ms) {
      last_tick_ = now;
      if (on_tick) on_tick(now);
    }
    hints_.arrival_rate_hz = rate;
    hints_.free_capacity = std::max(capacity, 0.0);  // +inf: no receive ring to fill
    deadline = std::min(deadline, give_up_at_);
    if (active_since_ && !window_start) deadline = std::min(deadline, *active_since_ + warmup_);
    deadline = std::min(deadline, last_tick_ + 10ms);
    hints_.deadline = deadline;
  }

  transport::EventLoop& loop_;
  SteadyTime started_at_;
  SteadyTime give_up_at_;
  std::chrono::nanoseconds warmup_;
  std::optional<SteadyTime> active_since_;
  SteadyTime last_tick_{};
  transport::LoadHints hints_;
  transport::RateEstimator sent_rate_;
  std::uint64_t frames_seen_ = 0;
  bool finished_ = false;
};

double to_us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

std::chrono::milliseconds time_limit(const NetworkSpec& spec, std::chrono::milliseconds slack) {
  double longest_s = 0;
  for (const auto& box : spec.boxes) {
    if (!box.source) continue;
    if (box.source->duration.count() <= 0) return std::chrono::milliseconds(0);
    longest_s = std::max(longest_s, box.source->duration.count());
  }
  if (longest_s <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<std::int64_t>(longest_s * 1000)) + slack;
}

transport::Result<NodeReport> run_node(const NetworkSpec& spec, const NodeOptions& options,
                                       const std::atomic<bool>& stop, std::ostream& out) {
  const NodeSpec* self = spec.find_node(options.node);
  if (self == nullptr) {
    std::string names;
    for (const auto& node : spec.nodes) names += (names.empty() ? "" : ", ") + node.name;
    return fail(ErrorCategory::config, 0,
                spec.file_name + ": no node named '" + options.node + "' (nodes: " + names + ")");
  }

  // The node's I/O thread waits as its links say; the first link that touches the node
  // decides (links of one node normally share the defaults).
  transport::WaitConfig wait_config = spec.transport.wait;
  std::string fabric_provider_in;  // the provider of the fabric streams into this node
  std::string fabric_stream_in;    // the first of them
  for (const auto& stream : spec.streams) {
    const bool produces = stream.producer_node == self->name;
    const bool consumes = std::find(stream.consumer_nodes.begin(), stream.consumer_nodes.end(),
                                    self->name) != stream.consumer_nodes.end();
    if (!produces && !consumes) continue;
    if (!stream.crosses_nodes) {
      if (stream.consumers.size() != 1) {
        return fail(ErrorCategory::config, 0,
                    spec.file_name + ": " + link_label(stream) +
                        " has more than one consumer; only one runs yet");
      }
      continue;  // inside the node: always the inproc medium
    }
    if (stream.transport.medium == "inproc") {
      return fail(ErrorCategory::config, 0,
                  spec.file_name + ": " + link_label(stream) + " goes from node '" +
                      stream.producer_node + "' to node '" + stream.consumer_nodes.at(0) +
                      "', but an inproc link stays inside one process; use tcp, fabric-msg or "
                      "fabric-rma");
    }
    if (consumes && is_fabric(stream.transport.medium)) {
      // One libfabric endpoint receives every fabric stream of the node.
      const std::string provider = fabric_provider(spec, stream);
      if (!fabric_provider_in.empty() && provider != fabric_provider_in) {
        return fail(ErrorCategory::config, 0,
                    spec.file_name + ": node '" + self->name + "' receives " + fabric_stream_in +
                        " over provider '" + fabric_provider_in + "' and " + link_label(stream) +
                        " over provider '" + provider +
                        "'; one node receives over one provider (set `provider` on the links)");
      }
      fabric_provider_in = provider;
      fabric_stream_in = link_label(stream);
    }
    wait_config = stream.transport.wait;
    if (consumes) {
      // The budget is end to end: a tuple may already have waited up to `flush` in its
      // sender's open frame, so the receiver's waits get what is left (at least a quarter).
      const auto budget = stream.transport.wait.latency_budget;
      wait_config.latency_budget =
          std::max(budget - std::chrono::duration_cast<std::chrono::microseconds>(stream.transport.flush),
                   budget / 4);
    }
  }

  // Without an explicit timeout, a node whose sources all stop by time gives up 30 s after
  // the longest of them should have ended.
  std::chrono::milliseconds timeout = options.timeout;
  if (timeout.count() == 0) timeout = time_limit(spec, std::chrono::seconds(30));

  transport::EventLoop loop;
  NodeAgent agent(loop, timeout,
                  std::chrono::duration_cast<std::chrono::nanoseconds>(spec.warmup));
  std::vector<std::string> errors;

  // Streams inside the node: one inproc link each, both ends on this thread's loop.
  std::map<std::string, transport::InprocPair, std::less<>> inproc;
  for (const auto& stream : spec.streams) {
    if (stream.crosses_nodes || stream.producer_node != self->name) continue;
    const ops::Schema* schema = spec.find_schema(stream.schema);
    if (schema == nullptr) {
      return fail(ErrorCategory::config, 0, spec.file_name + ": " + link_label(stream) + " has no schema");
    }
    auto pair = transport::make_inproc_link(loop, loop, link_options(spec, stream, *schema));
    if (!pair) return std::move(pair).error();
    inproc.emplace(stream.name, std::move(pair).value());
  }

  // Receiving side first, so the port is open before any peer connects.
  for (const auto& box : spec.boxes) {
    if (box.node != self->name || box.type != "sink") continue;
    const StreamSpec* stream = spec.find_stream(box.inputs.at(0));
    const ops::Schema* schema = spec.find_schema(stream->schema);
    if (schema == nullptr) {
      return fail(ErrorCategory::config, 0, spec.file_name + ": " + link_label(*stream) + " has no schema");
    }
    std::unique_ptr<ops::CsvWriter> output;
    if (!box.sink->output.empty()) {
      auto writer = ops::CsvWriter::make({.path = box.sink->output}, *schema);
      if (!writer) {
        return fail(ErrorCategory::io, 0,
                    "sink '" + box.name + "' cannot write its output: " + writer.error().message);
      }
      output = std::move(writer).value();
    }
    if (auto local = inproc.find(stream->name); local != inproc.end()) {
      agent.sinks.push_back(std::make_unique<SinkTask>(stream->name, *local->second.recv, *schema,
                                                       *box.sink, std::move(output)));
      continue;
    }
    const TupleLayout layout = TupleLayout::of(*schema);
    if (box.sink->kind == SinkKind::check && layout.seq < 0) {
      return fail(ErrorCategory::config, 0,
                  spec.file_name + ": sink '" + box.name +
                      "' of kind check needs an i64 field named 'seq' in schema '" +
                      stream->schema + "'");
    }
    transport::RecvLink* link = nullptr;
    if (is_fabric(stream->transport.medium)) {
      if (!agent.fabric_listener) {
        const transport::FabricEndpoint local{fabric_provider_in, self->uri.host,
                                              fabric_listen_port(spec, *self)};
        auto listener = transport::FabricListener::open(loop, local);
        if (!listener) {
          return fail(listener.error().category, listener.error().code,
                      "node '" + self->name + "' cannot receive over " +
                          stream->transport.medium + ": " + listener.error().message);
        }
        agent.fabric_listener = std::move(listener).value();
      }
      auto expected = agent.fabric_listener->expect(link_options(spec, *stream, *schema),
                                                    transfer_of(stream->transport.medium));
      if (!expected) return std::move(expected).error();
      link = expected.value();
    } else {
      if (!agent.listener) {
        auto listener = transport::TcpListener::open(loop, {self->uri.host, self->uri.port});
        if (!listener) {
          return fail(listener.error().category, listener.error().code,
                      "node '" + self->name + "' cannot listen on " + self->address + ": " +
                          listener.error().message);
        }
        agent.listener = std::move(listener).value();
      }
      link = &agent.listener->expect(link_options(spec, *stream, *schema));
    }
    agent.sinks.push_back(
        std::make_unique<SinkTask>(stream->name, *link, *schema, *box.sink, std::move(output)));
  }
  for (const auto& box : spec.boxes) {
    if (box.node != self->name || box.type != "source") continue;
    const StreamSpec* stream = spec.find_stream(box.outputs.at(0));
    const ops::Schema* schema = spec.find_schema(stream->schema);
    if (auto local = inproc.find(stream->name); local != inproc.end()) {
      agent.sources.push_back(std::make_unique<SourceTask>(stream->name, *local->second.send, *schema,
                                                           *box.source, stream->transport.flush));
      continue;
    }
    const NodeSpec* peer = spec.find_node(stream->consumer_nodes.at(0));
    auto link =
        is_fabric(stream->transport.medium)
            ? transport::make_fabric_send_link(loop,
                                               {fabric_provider(spec, *stream), peer->uri.host,
                                                fabric_listen_port(spec, *peer)},
                                               link_options(spec, *stream, *schema),
                                               transfer_of(stream->transport.medium))
            : transport::make_tcp_send_link(loop, {peer->uri.host, peer->uri.port},
                                            link_options(spec, *stream, *schema));
    if (!link) return std::move(link).error();
    agent.sources.push_back(std::make_unique<SourceTask>(stream->name, *link.value(), *schema,
                                                         *box.source, stream->transport.flush));
    agent.send_links.push_back(std::move(link).value());
  }
  if (agent.sinks.empty() && agent.sources.empty()) {
    return fail(ErrorCategory::config, 0,
                spec.file_name + ": node '" + self->name + "' runs no source or sink box");
  }

  // Measurement window.
  NodeReport report;
  report.node = self->name;
  report.wait = std::string(transport::to_string(wait_config.mode));
  std::chrono::nanoseconds thread_start{0};
  transport::ProcessUsage usage_start;
  std::optional<transport::MachineWindow> machine;
  auto wait = transport::make_wait(wait_config);
  // System calls the I/O thread has made so far, by kind.
  auto syscalls_now = [&] {
    NodeReport::Syscalls calls;
    calls.epoll_wait = loop.stats().polls + loop.stats().runs;
    const auto& waits = transport::stats_of(wait);
    calls.nanosleep = waits.sleeps;
    calls.sched_yield = waits.yields;
    auto add = [&](const transport::LinkStats& stats) {
      calls.read += stats.read_calls;
      calls.write += stats.write_calls;
      calls.would_block += stats.would_block;
    };
    for (auto& source : agent.sources) add(source->link().stats());
    for (auto& sink : agent.sinks) add(sink->link().stats());
    return calls;
  };
  NodeReport::Syscalls syscalls_start;
  std::uint64_t sent_start = 0;
  std::uint64_t received_start = 0;
  std::uint64_t bytes_start = 0;
  agent.on_window_start = [&] {
    syscalls_start = syscalls_now();
    for (auto& source : agent.sources) sent_start += source->generated();
    for (auto& sink : agent.sinks) {
      received_start += sink->tuples_;
      bytes_start += sink->bytes_;
      sink->latency_.reset();  // the warm-up's latencies are not measured
    }
    thread_start = transport::ThreadCpu::now();
    usage_start = transport::ProcessUsage::sample();
    report.max_rss_kb_start = max_rss_kb();
    if (!agent.sinks.empty()) {
      if (auto window = transport::MachineWindow::start()) machine = window.value();
    }
  };
  agent.watch_starts();
  agent.on_window_end = [&] {
    report.thread_cpu_s = std::chrono::duration<double>(transport::ThreadCpu::now() - thread_start).count();
    const auto usage = transport::ProcessUsage::sample() - usage_start;
    report.process_cpu_s = std::chrono::duration<double>(usage.total()).count();
    report.voluntary_switches = usage.voluntary_switches;
    report.involuntary_switches = usage.involuntary_switches;
    report.max_rss_kb_end = max_rss_kb();
    const auto calls = syscalls_now();
    report.syscalls = {calls.read - syscalls_start.read,
                       calls.write - syscalls_start.write,
                       calls.would_block - syscalls_start.would_block,
                       calls.epoll_wait - syscalls_start.epoll_wait,
                       calls.nanosleep - syscalls_start.nanosleep,
                       calls.sched_yield - syscalls_start.sched_yield};
    for (auto& source : agent.sources) report.tuples_sent_measured += source->generated();
    report.tuples_sent_measured -= sent_start;
    for (auto& sink : agent.sinks) {
      report.tuples_received_measured += sink->tuples_;
      report.bytes_received_measured += sink->bytes_;
    }
    report.tuples_received_measured -= received_start;
    report.bytes_received_measured -= bytes_start;
    if (machine) {
      if (auto m = machine->stop()) report.machine = m.value();
    }
  };
  std::size_t rejected_seen = 0;
  std::size_t fabric_rejected_seen = 0;
  auto last_progress = std::chrono::steady_clock::now();
  const auto node_start = last_progress;
  agent.on_tick = [&](SteadyTime now) {
    auto note_rejected = [&](const std::vector<transport::Error>& rejected, std::size_t& seen) {
      for (; seen < rejected.size(); ++seen) {
        report.rejected.push_back(rejected[seen].message);
        std::cerr << "boreal run: node '" << self->name << "' refused a connection: "
                  << rejected[seen].message << '\n';
      }
    };
    if (agent.listener) note_rejected(agent.listener->rejected(), rejected_seen);
    if (agent.fabric_listener) note_rejected(agent.fabric_listener->rejected(), fabric_rejected_seen);
    if (options.progress_interval.count() > 0 && now - last_progress >= options.progress_interval) {
      last_progress = now;
      std::uint64_t sent = 0;
      std::uint64_t received = 0;
      for (auto& s : agent.sources) sent += s->generated();
      for (auto& s : agent.sinks) received += s->tuples_;
      out << nlohmann::json{{"kind", "progress"},
                            {"node", self->name},
                            {"elapsed_s", std::chrono::duration<double>(now - node_start).count()},
                            {"tuples_sent", sent},
                            {"tuples_received", received}}
                 .dump()
          << std::endl;
    }
  };

  transport::run_agent(agent, wait, stop);
  if (!agent.window_end) {  // stopped from outside
    agent.window_end = std::chrono::steady_clock::now();
    if (agent.window_start) agent.on_window_end();
  }
  // A last look at rejected connections.
  if (agent.on_tick) agent.on_tick(std::chrono::steady_clock::now());

  if (agent.window_start) {
    report.window_s = std::chrono::duration<double>(*agent.window_end - *agent.window_start).count();
  }
  report.wait_stats = transport::stats_of(wait);
  for (auto& source : agent.sources) {
    auto& link = source->link();
    report.tuples_sent += source->generated();
    report.bytes_sent += link.stats().payload_bytes;
    report.checksum_sent ^= source->checksum();
    LinkReport lr{source->stream(), "send", std::string(transport::to_string(link.state())), "", link.stats()};
    if (link.error() != nullptr) {
      lr.error = link.error()->message;
      errors.push_back(link.error()->message);
    }
    report.links.push_back(std::move(lr));
  }
  for (auto& sink : agent.sinks) {
    auto& link = sink->link();
    report.tuples_received += sink->tuples_;
    report.bytes_received += sink->bytes_;
    report.checksum_received ^= sink->crc_;
    report.lost += sink->lost_;
    report.duplicated += sink->duplicated_;
    report.out_of_order += sink->out_of_order_;
    const auto& h = sink->latency_;
    if (h.count() > 0) {
      report.latency = {to_us(h.percentile(50.0)), to_us(h.percentile(99.0)),
                        to_us(h.percentile(99.9)), to_us(h.max()), h.count(),
                        h.negative_count()};
    }
    if (auto bad = sink->output_error()) errors.push_back("stream '" + sink->stream() + "' output: " + *bad);
    LinkReport lr{sink->stream(), "recv", std::string(transport::to_string(link.state())), "", link.stats()};
    if (link.error() != nullptr) {
      lr.error = link.error()->message;
      errors.push_back(link.error()->message);
    }
    report.links.push_back(std::move(lr));
  }
  if (agent.fabric_listener && agent.fabric_listener->error() != nullptr) {
    errors.push_back(agent.fabric_listener->error()->message);
  }
  if (agent.timed_out) {
    errors.push_back("node '" + self->name + "' timed out after " +
                     std::to_string(timeout.count()) + " ms before its streams finished");
  } else if (stop.load() && !agent.done()) {
    errors.push_back("node '" + self->name + "' was stopped before its streams finished");
  }
  report.errors = std::move(errors);
  out << to_json(report).dump() << std::endl;
  return report;
}

}  // namespace boreal::runtime
