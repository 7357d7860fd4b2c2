#include "runtime/link_ports.hpp"

#include <algorithm>
#include <cstring>

#include <boreal/transport/crc32c.hpp>

#include "runtime/sink_task.hpp"

namespace boreal::runtime {

LinkWriter::LinkWriter(LinkIdentity identity, std::unique_ptr<transport::SendLink> link,
                       const ops::Schema& schema, FlushHold hold)
    : identity_(std::move(identity)),
      link_(std::move(link)),
      schema_(schema),
      tuple_bytes_(schema.tuple_bytes()),
      capacity_(std::max<std::uint32_t>(1, link_->max_payload_bytes() / schema.tuple_bytes())),
      hold_(hold) {}

int LinkWriter::do_work() {
  const int work = link_->do_work();
  hold_.receiver_reports(link_->stats().pickup_p99_us);
  return work;
}

bool LinkWriter::ready() const { return link_->state() == transport::LinkState::established; }

bool LinkWriter::done() const {
  const auto state = link_->state();
  return state == transport::LinkState::finished || state == transport::LinkState::failed;
}

ops::Batch* LinkWriter::open() {
  owner_.check();
  if (open_) return &batch_;
  if (!ready() || link_->try_claim(claim_) != transport::SendStatus::ok) return nullptr;
  open_ = true;
  batch_ = ops::Batch(claim_.payload.first(std::size_t{capacity_} * tuple_bytes_), schema_);
  return &batch_;
}

void LinkWriter::commit(bool end, std::uint32_t payload_crc) {
  owner_.check();
  used_ = static_cast<std::uint32_t>(batch_.size());
  commit_open(end ? transport::kFlagData | transport::kFlagEndOfStream : transport::kFlagData,
              payload_crc);
  if (end) ended_ = true;
}

void LinkWriter::consume(const ops::BatchView& batch) {
  owner_.check();
  if (link_->state() == transport::LinkState::failed || eos_sent_) {
    dropped_ += batch.size();
    return;
  }
  const std::byte* data = batch.bytes().data();
  std::size_t rows = batch.size();
  if (!backlogged()) {
    const std::size_t taken = write_rows(data, rows);
    data += taken * tuple_bytes_;
    rows -= taken;
  }
  if (rows == 0) return;
  if (backlog_head_ == backlog_.size()) {
    backlog_.clear();
    backlog_head_ = 0;
  }
  backlog_.insert(backlog_.end(), data, data + rows * tuple_bytes_);
  backlog_peak_ = std::max(backlog_peak_, backlog_.size() - backlog_head_);
}

void LinkWriter::end() {
  owner_.check();
  ended_ = true;
}

bool LinkWriter::open_claim() {
  if (!ready() || link_->try_claim(claim_) != transport::SendStatus::ok) return false;
  open_ = true;
  used_ = 0;
  opened_at_ = now_;
  return true;
}

std::size_t LinkWriter::write_rows(const std::byte* data, std::size_t rows) {
  std::size_t taken = 0;
  while (taken < rows) {
    if (!open_ && !open_claim()) break;
    const std::size_t n = std::min<std::size_t>(capacity_ - used_, rows - taken);
    std::memcpy(claim_.payload.data() + std::size_t{used_} * tuple_bytes_,
                data + taken * tuple_bytes_, n * tuple_bytes_);
    used_ += static_cast<std::uint32_t>(n);
    taken += n;
    if (used_ == capacity_) commit_open(transport::kFlagData);
  }
  return taken;
}

void LinkWriter::commit_open(std::uint16_t flags, std::optional<std::uint32_t> payload_crc) {
  const std::uint32_t bytes = used_ * tuple_bytes_;
  claim_.payload_crc = payload_crc;
  link_->commit(claim_, used_, bytes, flags);
  tuples_ += used_;
  ++frames_;
  open_ = false;
  used_ = 0;
  if ((flags & transport::kFlagEndOfStream) != 0) eos_sent_ = true;
}

std::span<const std::byte> LinkWriter::prepare_checkpoint() {
  owner_.check();
  if (open_ && used_ > 0) commit_open(transport::kFlagData);
  return {backlog_.data() + backlog_head_, backlog_.size() - backlog_head_};
}

void LinkWriter::restore_backlog(std::span<const std::byte> rows) {
  owner_.check();
  backlog_.assign(rows.begin(), rows.end());
  backlog_head_ = 0;
  backlog_peak_ = backlog_.size();
}

int LinkWriter::pump(SteadyTime now) {
  owner_.check();
  if (backlogged() && last_pump_.time_since_epoch().count() != 0) blocked_ += now - last_pump_;
  last_pump_ = now;
  now_ = now;
  int work = do_work();
  if (link_->state() == transport::LinkState::failed) {
    // Nothing more can leave: forget the backlog so the producers upstream are not held.
    dropped_ += (backlog_.size() - backlog_head_) / tuple_bytes_;
    backlog_.clear();
    backlog_head_ = 0;
    return work;
  }
  int sent = 0;
  if (backlogged()) {
    const std::size_t rows = (backlog_.size() - backlog_head_) / tuple_bytes_;
    const std::size_t taken = write_rows(backlog_.data() + backlog_head_, rows);
    backlog_head_ += taken * tuple_bytes_;
    if (backlog_head_ == backlog_.size()) {
      backlog_.clear();
      backlog_head_ = 0;
    }
    sent += taken > 0 ? 1 : 0;
  }
  if (!backlogged() && ended_ && !eos_sent_) {
    if (open_ || open_claim()) {
      commit_open(transport::kFlagData | transport::kFlagEndOfStream);
      ++sent;
    }
  } else if (open_ && used_ > 0 && hold_.leaves(now - opened_at_, wave_)) {
    commit_open(transport::kFlagData);
    ++sent;
  }
  if (sent > 0) work += sent + link_->do_work();
  return work;
}

SteadyTime LinkWriter::deadline() const noexcept {
  if (open_ && used_ > 0)
    return opened_at_ + std::chrono::duration_cast<SteadyTime::duration>(hold_.get());
  return SteadyTime::max();
}

LinkReader::LinkReader(LinkIdentity identity, transport::RecvLink& link, const ops::Schema& schema,
                       StreamFanout& out)
    : identity_(std::move(identity)), link_(link), schema_(schema), out_(out) {}

void LinkReader::start(SteadyTime now) {
  started_ = true;
  if (on_start) on_start(now);
}

int LinkReader::poll(SteadyTime now) {
  owner_.check();
  // The receiver's window opens with the link, as the sender's opens with its first credit,
  // so an idle link (rate "idle") is measured too.
  if (!started_ && link_.state() == transport::LinkState::established) start(now);
  const bool blocked = out_.blocked();
  if (blocked) {
    if (link_.paused()) blocked_ += now - last_poll_;
    link_.set_paused(true);
    last_poll_ = now;
    // Heartbeats and the like still go out; nothing is delivered, and nothing counts as work
    // (the thread may wait for credit).
    (void)link_.keep_alive();
    return 0;
  }
  link_.set_paused(false);
  last_poll_ = now;
  now_ = now;
  if (ended_by_checkpoint_ && !out_.ended()) out_.end();
  const int work = link_.poll(*this);
  // A shared connection may have read in another link's poll or the listener's: counted here.
  const std::uint64_t arrivals = link_.arrivals();
  if (arrivals > arrivals_seen_) rate_.add(arrivals - arrivals_seen_, now);
  arrivals_seen_ = arrivals;
  const auto state = link_.state();
  if (!out_.ended() &&
      (state == transport::LinkState::finished || state == transport::LinkState::failed)) {
    out_.end();
  }
  return work;
}

void LinkReader::on_frame(const transport::FrameView& frame) {
  // A link that came up inside this poll delivers before poll() could see it established.
  if (!started_) start(now_);
  ++frames_;
  const std::uint32_t count = frame.header.tuple_count;
  tuples_ += count;
  bytes_ += frame.payload.size();
  if (count > 0) {
    auto view = ops::BatchView::wrap(frame.payload, schema_, count);
    if (view) {
      const bool timed = frame.arrived_ns != 0 && !timed_sinks_.empty();
      if (timed) {
        for (SinkTask* sink : timed_sinks_) sink->expect_arrival(frame.arrived_ns, frame.read_ns);
      }
      out_.consume(view.value());
      // A sink the fan-out did not reach with this batch must not take the stamps for another.
      if (timed) {
        for (SinkTask* sink : timed_sinks_) sink->expect_arrival(0, 0);
      }
    } else if (payload_error_.empty()) {
      payload_error_ = "stream '" + identity_.stream + "': " + view.error().message;
    }
  }
  if ((frame.header.flags & transport::kFlagEndOfStream) != 0) out_.end();
}

std::optional<std::uint32_t> LinkReader::payload_crc(std::span<const std::byte> payload) {
  if (check_sinks_.empty()) return std::nullopt;
  const std::uint32_t crc = transport::crc32c(payload);
  for (SinkTask* sink : check_sinks_) sink->expect_payload(payload, crc);
  return crc;
}

bool LinkReader::done() const noexcept {
  if (ended_by_checkpoint_) return true;
  const auto state = link_.state();
  return state == transport::LinkState::finished || state == transport::LinkState::failed;
}

}  // namespace boreal::runtime
