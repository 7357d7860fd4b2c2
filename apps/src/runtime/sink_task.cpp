#include "runtime/sink_task.hpp"

#include <cstring>
#include <thread>

#include <boreal/transport/crc32c.hpp>

#include "runtime/source_task.hpp"

namespace boreal::runtime {
namespace {

std::int64_t load_i64(const std::byte* at) noexcept {
  std::int64_t value;
  std::memcpy(&value, at, 8);
  return value;
}

}  // namespace

SinkTask::SinkTask(std::string name, std::string stream, const ops::Schema& schema,
                   const SinkParams& params)
    : name_(std::move(name)), stream_(std::move(stream)), schema_(schema), params_(params) {
  for (const auto& field : schema.fields()) {
    const int offset = static_cast<int>(field.offset);
    if (field.name == "seq" && field.type == ops::FieldType::i64) seq_ = offset;
    const bool time = params.kind == SinkKind::latency
                          ? field.name == params.field
                          : field.type == ops::FieldType::timestamp && time_ < 0;
    if (time) time_ = offset;
  }
}

ops::Result<std::unique_ptr<SinkTask>> SinkTask::make(std::string name, std::string stream,
                                                      const ops::Schema& schema,
                                                      const SinkParams& params) {
  std::unique_ptr<SinkTask> sink(new SinkTask(name, std::move(stream), schema, params));
  if (!params.output.empty()) {
    auto writer = ops::CsvWriter::make({.path = params.output}, schema);
    if (!writer) {
      return ops::fail("sink '" + name + "' cannot write its output: " + writer.error().message);
    }
    sink->output_ = std::move(writer).value();
  }
  return sink;
}

void SinkTask::consume(const ops::BatchView& batch) {
  owner_.check();
  tuples_ += batch.size();
  bytes_ += batch.bytes().size();
  ++batches_;
  switch (params_.kind) {
    case SinkKind::check: check(batch); break;
    case SinkKind::latency: record_latency(batch); break;
    case SinkKind::count:
    case SinkKind::discard:
    case SinkKind::csv: break;
  }
  if (output_) output_->consume(batch);
  if (params_.slow_per_frame.count() > 0) std::this_thread::sleep_for(params_.slow_per_frame);
}

void SinkTask::end() {
  owner_.check();
  if (ended_) return;
  ended_ = true;
  if (output_) output_->end();
}

void SinkTask::check(const ops::BatchView& batch) {
  crc_ = transport::crc32c(batch.bytes(), crc_);
  const std::uint32_t tuple_bytes = schema_.tuple_bytes();
  const std::byte* row = batch.bytes().data();
  const std::int64_t now = time_ >= 0 ? realtime_ns() : 0;
  for (std::size_t i = 0; i < batch.size(); ++i, row += tuple_bytes) {
    if (seq_ >= 0) {
      const auto seq = static_cast<std::uint64_t>(load_i64(row + seq_));
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
    if (time_ >= 0) latency_.record(now - load_i64(row + time_));
  }
}

void SinkTask::record_latency(const ops::BatchView& batch) {
  if (time_ < 0) return;
  const std::uint32_t tuple_bytes = schema_.tuple_bytes();
  const std::byte* row = batch.bytes().data();
  const std::int64_t now = realtime_ns();
  for (std::size_t i = 0; i < batch.size(); ++i, row += tuple_bytes) {
    latency_.record(now - load_i64(row + time_));
  }
}

std::optional<std::string> SinkTask::output_error() const {
  if (output_) {
    if (auto status = output_->status(); !status) return status.error().message;
  }
  return std::nullopt;
}

}  // namespace boreal::runtime
