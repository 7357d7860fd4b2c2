// A paced source's schedule against what it walked (SourceTask::events_due / events): the
// bench counts both inside its window, so a source that fell behind and caught up there is
// told apart from one that ran at its rate (network_summary.cpp, events_due_per_s).
#include "runtime/source_task.hpp"

#include <chrono>
#include <cstdint>

#include <gtest/gtest.h>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/nexmark.hpp>

#include "runtime/flush_hold.hpp"

namespace boreal::runtime {
namespace {

using std::chrono::milliseconds;

// Takes every batch the source commits, except while it is told to refuse (back-pressure).
class FakeTarget final : public RowTarget {
 public:
  explicit FakeTarget(const ops::Schema& schema) : batch_(schema, 64), hold_(milliseconds(1)) {}

  [[nodiscard]] bool ready() const override { return true; }
  [[nodiscard]] ops::Batch* open() override {
    if (refusing) return nullptr;
    batch_.clear();
    return &batch_;
  }
  void commit(bool end, std::uint32_t /*payload_crc*/) override {
    rows += batch_.size();
    ended = ended || end;
  }
  [[nodiscard]] std::uint32_t capacity_rows() const override {
    return static_cast<std::uint32_t>(batch_.capacity_rows());
  }
  [[nodiscard]] FlushHold& flush_hold() override { return hold_; }
  int do_work() override { return 0; }
  [[nodiscard]] bool done() const override { return ended; }

  bool refusing = false;
  std::uint64_t rows = 0;
  bool ended = false;

 private:
  ops::OwnedBatch batch_;
  FlushHold hold_;
};

const SteadyTime kStart{std::chrono::seconds(5)};

// A nexmark source of bids at 100 k events/s (an event every 10 µs); `events`: its limit.
SourceParams nexmark_bids(std::uint64_t events = 0) {
  SourceParams params;
  params.kind = SourceKind::nexmark;
  params.streams = {ops::NexmarkStream::bids};
  params.rate = 100'000.0;
  params.events = events;
  return params;
}

TEST(SourceTaskSchedule, ABackPressuredSourceFallsBehindItsScheduleAndCatchesUp) {
  const auto schema = ops::Schema::make({{"seq", "i64"}, {"ts", "timestamp"}}).value();
  FakeTarget target(schema);
  SourceParams params;
  params.rate = 1000.0;  // one tuple a millisecond
  params.duration = std::chrono::duration<double>(0.1);
  SourceTask task("src", "s", target, schema, params);
  EXPECT_EQ(task.events_due(kStart), 0u);  // not started

  target.refusing = true;
  (void)task.do_work(kStart);
  (void)task.do_work(kStart + milliseconds(50));
  EXPECT_EQ(task.events(), 0u);
  EXPECT_EQ(task.events_due(kStart + milliseconds(50)), 51u);  // tuples 0..50 are due

  target.refusing = false;
  (void)task.do_work(kStart + milliseconds(50));
  EXPECT_EQ(task.events(), 51u);
  EXPECT_EQ(target.rows, 51u);
  EXPECT_EQ(task.events_due(kStart + milliseconds(50)), 51u);
  EXPECT_EQ(task.events_due(kStart + milliseconds(70)), 71u);
  // The schedule ends with the duration: no more come due after it.
  EXPECT_EQ(task.events_due(kStart + milliseconds(400)), 101u);

  (void)task.do_work(kStart + milliseconds(100));
  (void)task.do_work(kStart + milliseconds(101));
  EXPECT_TRUE(target.ended);
  EXPECT_EQ(task.events_due(kStart + milliseconds(400)), task.events());
}

TEST(SourceTaskSchedule, AnUnpacedSourceHasDueWhatItWalked) {
  const auto schema = ops::Schema::make({{"seq", "i64"}, {"ts", "timestamp"}}).value();
  FakeTarget target(schema);
  SourceParams params;  // rate: max
  params.tuples = 100;
  SourceTask task("src", "s", target, schema, params);
  (void)task.do_work(kStart);
  EXPECT_EQ(task.events(), 100u);
  EXPECT_EQ(target.rows, 100u);
  EXPECT_EQ(task.events_due(kStart + std::chrono::seconds(10)), 100u);
}

// A nexmark source paces events of every kind; its bids stream holds 46 of every 50.
TEST(SourceTaskSchedule, ANexmarkSourceIsDueEventsNotRows) {
  const ops::Schema& schema = ops::nexmark_schema(ops::NexmarkStream::bids);
  FakeTarget target(schema);
  SourceTask task("src", "bids", target, schema, nexmark_bids());
  (void)task.do_work(kStart);
  (void)task.do_work(kStart + std::chrono::microseconds(499 * 10));
  EXPECT_EQ(task.events_due(kStart + std::chrono::microseconds(499 * 10)), 500u);
  EXPECT_EQ(task.events(), 500u);
  // Ids 0..499 hold 460 bids: seven full frames left, 12 bids wait out their hold.
  EXPECT_EQ(target.rows, 448u);
}

// A source of 300 events that fell behind does not have more than those due.
TEST(SourceTaskSchedule, ANexmarkSourceIsDueNoMoreThanItsEvents) {
  const ops::Schema& schema = ops::nexmark_schema(ops::NexmarkStream::bids);
  FakeTarget target(schema);
  SourceTask task("src", "bids", target, schema, nexmark_bids(300));
  target.refusing = true;
  (void)task.do_work(kStart);
  (void)task.do_work(kStart + std::chrono::microseconds(100));
  EXPECT_EQ(task.events(), 0u);
  EXPECT_EQ(task.events_due(kStart + std::chrono::microseconds(100)), 11u);
  EXPECT_EQ(task.events_due(kStart + std::chrono::milliseconds(50)), 300u);
}

}  // namespace
}  // namespace boreal::runtime
