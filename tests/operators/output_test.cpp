// Output: rows packed into batches and handed to the connected consumer.
#include <boreal/ops/box.hpp>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace boreal::ops {
namespace {

struct Recorder final : BatchConsumer {
  std::vector<std::vector<std::int64_t>> batches;
  int ends = 0;
  void consume(const BatchView& batch) override {
    auto& rows = batches.emplace_back();
    for (Row row : batch) rows.push_back(FieldRef<std::int64_t>{0}.get(row));
  }
  void end() override { ++ends; }
};

const FieldRef<std::int64_t> kSeq{0};

TEST(Output, HandsOnAFullBatchAtTheNextAppendAndTheRestOnEnd) {
  Output out(Schema::parse("seq:i64").value(), 3);
  Recorder rec;
  out.connect(&rec);
  for (std::int64_t i = 0; i < 7; ++i) kSeq.set(out.append(), i);
  EXPECT_EQ(rec.batches.size(), 2u);  // the third batch holds row 6, not yet handed on
  out.end();
  EXPECT_EQ(rec.batches, (std::vector<std::vector<std::int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(rec.ends, 1);
  EXPECT_EQ(out.rows_emitted(), 7u);
}

TEST(Output, AppendBlockGivesAtMostTheRoomLeftInTheBatch) {
  Output out(Schema::parse("seq:i64").value(), 4);
  Recorder rec;
  out.connect(&rec);
  kSeq.set(out.append(), 100);
  auto block = out.append_block(10);  // room for 3
  ASSERT_EQ(block.rows, 3u);
  for (std::size_t r = 0; r < block.rows; ++r) {
    kSeq.set(MutRow(block.data + r * 8), static_cast<std::int64_t>(r));
  }
  block = out.append_block(10);  // the full batch goes first, then 4 fresh rows
  ASSERT_EQ(block.rows, 4u);
  kSeq.set(MutRow(block.data), 7);
  out.flush();
  EXPECT_EQ(rec.batches,
            (std::vector<std::vector<std::int64_t>>{{100, 0, 1, 2}, {7, 0, 0, 0}}));
  EXPECT_EQ(out.rows_emitted(), 8u);
  EXPECT_EQ(rec.ends, 0);
}

TEST(Output, WithoutAConsumerRowsAreDiscarded) {
  Output out(Schema::parse("seq:i64").value(), 2);
  for (int i = 0; i < 5; ++i) (void)out.append();
  out.end();
  EXPECT_EQ(out.rows_emitted(), 5u);
}

}  // namespace
}  // namespace boreal::ops
