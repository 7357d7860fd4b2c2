// A check sink's content checksum (runtime/sink_task.hpp): taken by its own pass over each
// batch, or folded in from the CRC its link reader took for the frame check
// (SinkTask::expect_payload), with the same result; and its latency breakdown.
#include <time.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/frame.hpp>

#include "runtime/sink_task.hpp"

namespace boreal::runtime {
namespace {

// Rows (seq, value) numbered from 0, as a source sends them.
std::vector<std::byte> rows(std::int64_t first, std::int64_t count) {
  std::vector<std::byte> out(static_cast<std::size_t>(count) * 16);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t seq = first + i;
    const std::int64_t value = seq * 7919 + 3;
    std::memcpy(out.data() + i * 16, &seq, 8);
    std::memcpy(out.data() + i * 16 + 8, &value, 8);
  }
  return out;
}

class CheckSink : public ::testing::Test {
 protected:
  CheckSink() : schema_(ops::Schema::make({{"seq", "i64"}, {"value", "i64"}}).value()) {
    for (int b = 0; b < 3; ++b) batches_.push_back(rows(b * 5, 5));
  }
  std::unique_ptr<SinkTask> sink() {
    auto made = SinkTask::make("check", "s", schema_, SinkParams{}, nullptr);
    EXPECT_TRUE(made) << (made ? "" : made.error().message);
    return std::move(made).value();
  }
  ops::BatchView view(const std::vector<std::byte>& bytes) {
    return ops::BatchView::wrap(bytes, schema_).value();
  }
  std::uint32_t crc_of_all() const {
    std::uint32_t crc = 0;
    for (const auto& b : batches_) crc = transport::crc32c(b, crc);
    return crc;
  }

  ops::Schema schema_;
  std::vector<std::vector<std::byte>> batches_;
};

TEST_F(CheckSink, FoldsInTheReadersCrcAndGetsTheChecksumOfItsOwnPass) {
  auto own = sink();
  auto folded = sink();
  for (const auto& b : batches_) {
    own->consume(view(b));
    folded->expect_payload(b, transport::crc32c(b));
    folded->consume(view(b));
  }
  EXPECT_EQ(own->crc_, crc_of_all());
  EXPECT_EQ(folded->crc_, crc_of_all());
  EXPECT_EQ(folded->tuples_, 15u);
  EXPECT_EQ(folded->lost_ + folded->duplicated_ + folded->out_of_order_, 0u);
}

// A CRC handed over for other bytes, or for a frame that never reached the sink (a replayed
// duplicate the link dropped), is not used: the sink reads what it consumes itself.
TEST_F(CheckSink, ACrcForOtherBytesOrAnEarlierFrameIsNotUsed) {
  auto s = sink();
  const std::vector<std::byte> copy = batches_[0];  // same bytes, elsewhere in memory
  s->expect_payload(copy, 0xDEADBEEFu);
  s->consume(view(batches_[0]));
  s->expect_payload(batches_[2], 0xDEADBEEFu);  // dropped before delivery
  s->consume(view(batches_[1]));
  s->consume(view(batches_[2]));  // the hint was for the batch before only
  EXPECT_EQ(s->crc_, crc_of_all());
  EXPECT_EQ(s->tuples_, 15u);
}

// A batch that reaches the sink another way than straight from a checked frame (over an
// inproc ring from the thread whose link checked it, or re-sent by a node in between) is read
// by the sink itself, so a byte corrupted after that check shows in the content checksum.
TEST_F(CheckSink, AByteCorruptedAfterAnEarlierCheckChangesTheContentChecksum) {
  auto s = sink();
  std::vector<std::byte> corrupted = batches_[1];
  corrupted[29] ^= std::byte{0x04};  // row 1's value field: the sequence check cannot see it
  s->expect_payload(batches_[1], transport::crc32c(batches_[1]));  // the intact frame's CRC
  s->consume(view(batches_[0]));
  s->consume(view(corrupted));
  s->consume(view(batches_[2]));
  EXPECT_NE(s->crc_, crc_of_all());
  EXPECT_EQ(s->lost_ + s->duplicated_ + s->out_of_order_, 0u);
  EXPECT_EQ(s->tuples_, 15u);
}

// The latency breakdown (SinkTask::Stages): a batch the link reader said arrived at A and was
// read at R splits its first tuple's latency into due -> A, A -> R and R -> the sink's clock,
// which add up to that latency exactly; a batch without stamps adds nothing to the stages.
TEST(SinkStages, SplitTheFirstTuplesLatencyAtTheStampsTheReaderHandedOver) {
  const auto schema = ops::Schema::make({{"seq", "i64"}, {"ts", "timestamp"}}).value();
  auto made = SinkTask::make("check", "s", schema, SinkParams{}, nullptr);
  ASSERT_TRUE(made) << made.error().message;
  SinkTask& sink = *made.value();
  ASSERT_NE(sink.stages(), nullptr);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const std::int64_t due = transport::realtime_ns_of(now) - 10'000'000;  // 10 ms ago
  auto stamped = [&](std::int64_t first, std::int64_t first_due) {
    std::vector<std::byte> out(4 * 16);
    for (std::int64_t i = 0; i < 4; ++i) {
      const std::int64_t seq = first + i;
      const std::int64_t ts = first_due + i * 1000;
      std::memcpy(out.data() + i * 16, &seq, 8);
      std::memcpy(out.data() + i * 16 + 8, &ts, 8);
    }
    return out;
  };
  const auto first = stamped(0, due);
  sink.expect_arrival(due + 3'000'000, due + 5'000'000);
  sink.consume(ops::BatchView::wrap(first, schema).value());
  const SinkTask::Stages& stages = *sink.stages();
  ASSERT_EQ(stages.due_to_arrived.count(), 1u);
  ASSERT_EQ(stages.arrived_to_read.count(), 1u);
  ASSERT_EQ(stages.read_to_sink.count(), 1u);
  EXPECT_EQ(stages.due_to_arrived.max(), 3'000'000);
  EXPECT_EQ(stages.arrived_to_read.max(), 2'000'000);
  EXPECT_GE(stages.read_to_sink.max(), 5'000'000);  // the sink's clock read after "now" above
  EXPECT_EQ(stages.due_to_arrived.max() + stages.arrived_to_read.max() + stages.read_to_sink.max(),
            sink.latency().max());  // the first tuple's, the batch's oldest
  EXPECT_EQ(sink.latency().count(), 4u);

  const auto second = stamped(4, due + 4000);
  sink.consume(ops::BatchView::wrap(second, schema).value());
  EXPECT_EQ(stages.due_to_arrived.count(), 1u);
  EXPECT_EQ(sink.latency().count(), 8u);

  // A sink that records no latency (no timestamp field to take it from) has no stages.
  auto untimed = SinkTask::make("check", "s", ops::Schema::make({{"seq", "i64"}}).value(),
                                SinkParams{}, nullptr);
  ASSERT_TRUE(untimed);
  EXPECT_EQ(untimed.value()->stages(), nullptr);
}

}  // namespace
}  // namespace boreal::runtime
