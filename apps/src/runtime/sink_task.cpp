#include "runtime/sink_task.hpp"

#include <cstring>
#include <thread>

#include <boreal/transport/crc32c.hpp>


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
    if (field.name == "seq" && field.type == ops::FieldType::i64)
      seq_ = static_cast<int>(field.offset);
  }
}

ops::Result<std::unique_ptr<SinkTask>> SinkTask::make(std::string name, std::string stream,
                                                      const ops::Schema& schema,
                                                      const SinkParams& params,
                                                      const SinkState* resume) {
  std::unique_ptr<SinkTask> sink(new SinkTask(name, std::move(stream), schema, params));
  if (resume != nullptr) {
    sink->tuples_ = resume->tuples;
    sink->batches_ = resume->batches;
    sink->bytes_ = resume->bytes;
    sink->crc_ = resume->crc;
    sink->lost_ = resume->lost;
    sink->duplicated_ = resume->duplicated;
    sink->out_of_order_ = resume->out_of_order;
    sink->next_seq_ = resume->next_seq;
  }
  // The latency field: `field` for a latency sink (spec validation checked it), the first
  // timestamp for a check sink.
  std::optional<std::string> field;
  if (params.kind == SinkKind::latency) {
    field = params.field;
  } else if (params.kind == SinkKind::check) {
    for (const auto& f : schema.fields()) {
      if (f.type == ops::FieldType::timestamp) {
        field = f.name;
        break;
      }
    }
  }
  if (field) {
    auto latency = ops::LatencySink::make({.field = *field}, schema);
    if (!latency) return ops::fail("sink '" + name + "': " + latency.error().message);
    sink->latency_ = std::move(latency).value();
    sink->stages_ = std::make_unique<Stages>();
  }
  if (!params.output.empty()) {
    ops::CsvWriterParams csv{.path = params.output};
    if (resume != nullptr) csv.resume_at = resume->file_bytes;
    auto writer = ops::CsvWriter::make(csv, schema);
    if (!writer) {
      return ops::fail("sink '" + name + "' cannot write its output: " + writer.error().message);
    }
    sink->output_ = std::move(writer).value();
  }
  return sink;
}

ops::Result<SinkState> SinkTask::checkpoint() {
  owner_.check();
  SinkState state{.tuples = tuples_, .batches = batches_, .bytes = bytes_, .crc = crc_,
                  .lost = lost_, .duplicated = duplicated_, .out_of_order = out_of_order_,
                  .next_seq = next_seq_};
  if (output_) {
    auto bytes = output_->checkpoint();
    if (!bytes) return ops::fail("sink '" + name_ + "': " + bytes.error().message);
    state.file_bytes = bytes.value();
  }
  return state;
}

void SinkTask::consume(const ops::BatchView& batch) {
  owner_.check();
  tuples_ += batch.size();
  bytes_ += batch.bytes().size();
  ++batches_;
  if (params_.kind == SinkKind::check) check(batch);
  if (latency_) {
    latency_->consume(batch);
    if (arrived_ns_ != 0 && !batch.empty()) {
      const std::int64_t due = latency_->last_first_time_ns();
      stages_->due_to_arrived.record(arrived_ns_ - due);
      stages_->arrived_to_read.record(read_ns_ - arrived_ns_);
      stages_->read_to_sink.record(latency_->last_now_ns() - read_ns_);
    }
  }
  arrived_ns_ = read_ns_ = 0;
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
  const auto bytes = batch.bytes();
  if (!expected_.empty() && bytes.data() == expected_.data() && bytes.size() == expected_.size()) {
    crc_ = transport::crc32c_combine(crc_, expected_crc_, bytes.size());
  } else {
    crc_ = transport::crc32c(bytes, crc_);
  }
  expected_ = {};
  if (seq_ < 0) return;
  const std::uint32_t tuple_bytes = schema_.tuple_bytes();
  const std::byte* row = batch.bytes().data();
  for (std::size_t i = 0; i < batch.size(); ++i, row += tuple_bytes) {
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
}

std::optional<std::string> SinkTask::output_error() const {
  if (output_) {
    if (auto status = output_->status(); !status) return status.error().message;
  }
  return std::nullopt;
}

}  // namespace boreal::runtime
