#include <boreal/ops/graph.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "operators/ops_test_support.hpp"

#include <boreal/ops/bsort.hpp>
#include <boreal/ops/split.hpp>
#include <boreal/ops/union.hpp>

namespace boreal::ops {
namespace {

using test_support::schema_of;
using test_support::ok;

std::string error_of(const Result<void>& result) {
  EXPECT_FALSE(result) << "unexpectedly succeeded";
  return result ? std::string() : result.error().describe();
}

// One i64 field "seq" (8-byte rows).
const Schema kSeq = schema_of("seq:i64");
const FieldRef<std::int64_t> kSeqRef{0};

OwnedBatch rows_of(const std::vector<std::int64_t>& values) {
  OwnedBatch batch(kSeq, values.empty() ? 1 : values.size());
  for (std::int64_t v : values) kSeqRef.set(batch.append(), v);
  return batch;
}

std::vector<std::int64_t> seqs_of(const CollectingConsumer& out) {
  std::vector<std::int64_t> seqs;
  for (Row row : out.view(kSeq)) seqs.push_back(kSeqRef.get(row));
  return seqs;
}

// A test box: passes rows through, records every tick and emits a row carrying `now` on
// each, flushed at once.
class TickBox final : public Box {
 public:
  TickBox() { outputs_.emplace_back(kSeq); }
  [[nodiscard]] std::string_view type() const noexcept override { return "tick"; }
  [[nodiscard]] std::size_t input_count() const noexcept override { return 1; }
  [[nodiscard]] const Schema& input_schema(std::size_t) const noexcept override {
    return kSeq;
  }
  void on_batch(std::size_t, const BatchView& batch) override {
    for (Row row : batch) outputs_[0].append_copy(row);
  }
  void tick(std::int64_t now) override {
    ticks.push_back(now);
    kSeqRef.set(outputs_[0].append(), now);
    outputs_[0].flush();
  }
  std::vector<std::int64_t> ticks;
};

std::unique_ptr<UnionBox> union_of(std::size_t inputs, const Schema& schema = kSeq) {
  return ok(UnionBox::make({}, std::vector<Schema>(inputs, schema)));
}

TEST(Graph, ConnectRejectsAnUnknownBox) {
  Graph graph;
  const BoxId a = graph.add(std::make_unique<TickBox>());
  graph.add(std::make_unique<TickBox>());
  EXPECT_EQ(error_of(graph.connect(a, 0, BoxId{7}, 0)), "connect: no box 7; the graph has 2 boxes");
  EXPECT_EQ(error_of(graph.connect(BoxId{2}, 0, a, 0)), "connect: no box 2; the graph has 2 boxes");
  Graph one;
  one.add(std::make_unique<TickBox>());
  EXPECT_EQ(error_of(one.connect(BoxId{0}, 0, BoxId{1}, 0)),
            "connect: no box 1; the graph has 1 box");
}

TEST(Graph, ConnectRejectsAnOutputPortOutOfRange) {
  Graph graph;
  const BoxId split = graph.add(ok(SplitBox::make({.key_fields = {"seq"}, .outputs = 4}, kSeq)));
  const BoxId tick = graph.add(std::make_unique<TickBox>());
  EXPECT_EQ(error_of(graph.connect(split, 4, tick, 0)),
            "connect: box 0 (split) has 4 outputs; there is no output 4");
  const BoxId tick2 = graph.add(std::make_unique<TickBox>());
  EXPECT_EQ(error_of(graph.connect(tick, 1, tick2, 0)),
            "connect: box 1 (tick) has 1 output; there is no output 1");
}

TEST(Graph, ConnectRejectsAnInputPortOutOfRange) {
  Graph graph;
  const BoxId tick = graph.add(std::make_unique<TickBox>());
  const BoxId merge = graph.add(union_of(2));
  EXPECT_EQ(error_of(graph.connect(tick, 0, merge, 2)),
            "connect: box 1 (union) has 2 inputs; there is no input 2");
}

TEST(Graph, ConnectRejectsDifferentSchemas) {
  const Schema wide = schema_of("seq:i64,x:f64");
  Graph graph;
  const BoxId tick = graph.add(std::make_unique<TickBox>());
  const BoxId merge = graph.add(union_of(2, wide));
  EXPECT_EQ(error_of(graph.connect(tick, 0, merge, 1)),
            "connect: output 0 of box 0 (tick) has schema seq:i64 but input 1 of box 1 (union) "
            "expects seq:i64,x:f64");
}

TEST(Graph, ConnectRejectsAnOutputOrInputAlreadyConnected) {
  Graph graph;
  const BoxId a = graph.add(std::make_unique<TickBox>());
  const BoxId b = graph.add(std::make_unique<TickBox>());
  const BoxId merge = graph.add(union_of(2));
  ASSERT_TRUE(graph.connect(a, 0, merge, 0));
  EXPECT_EQ(error_of(graph.connect(a, 0, merge, 1)),
            "connect: output 0 of box 0 (tick) is already connected");
  EXPECT_EQ(error_of(graph.connect(b, 0, merge, 0)),
            "connect: input 0 of box 2 (union) is already connected");
  // The failures changed nothing: b can still feed the free input.
  EXPECT_TRUE(graph.connect(b, 0, merge, 1));
}

TEST(Graph, ConnectRejectsACycle) {
  Graph graph;
  const BoxId merge = graph.add(union_of(2));
  const BoxId sort = graph.add(ok(BSortBox::make({.field = "seq", .slack = 1}, kSeq)));
  const BoxId tick = graph.add(std::make_unique<TickBox>());
  ASSERT_TRUE(graph.connect(merge, 0, sort, 0));
  ASSERT_TRUE(graph.connect(sort, 0, tick, 0));
  EXPECT_EQ(error_of(graph.connect(tick, 0, merge, 1)),
            "connect: an edge from box 2 (tick) to box 0 (union) would close a cycle");
  Graph self;
  const BoxId lone = self.add(std::make_unique<TickBox>());
  EXPECT_EQ(error_of(self.connect(lone, 0, lone, 0)),
            "connect: an edge from box 0 (tick) to box 0 (tick) would close a cycle");
}

// split(2) -> both outputs into union(2) -> bsort -> collected: every row arrives, sorted,
// and the end reaches the consumer once, only after the source's input ended.
TEST(Graph, PushAndFinishRunThroughAChain) {
  Graph graph;
  const BoxId split = graph.add(ok(SplitBox::make({.key_fields = {"seq"}, .outputs = 2}, kSeq)));
  const BoxId merge = graph.add(union_of(2));
  const BoxId sort = graph.add(ok(BSortBox::make({.field = "seq", .slack = 100}, kSeq)));
  ASSERT_TRUE(graph.connect(split, 0, merge, 0));
  ASSERT_TRUE(graph.connect(split, 1, merge, 1));
  ASSERT_TRUE(graph.connect(merge, 0, sort, 0));
  CollectingConsumer out;
  graph.collect(sort, 0, out);

  const OwnedBatch first = rows_of({9, 3, 7, 1, 5});
  const OwnedBatch second = rows_of({8, 2, 6, 0, 4});
  graph.push(split, 0, first);
  graph.push(split, 0, second);
  EXPECT_EQ(out.rows(), 0u);  // still in the boxes' output batches and bsort's buffer
  EXPECT_FALSE(out.ended());
  graph.finish(split, 0);
  EXPECT_EQ(seqs_of(out), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(out.batches(), 1u);
  EXPECT_EQ(out.ends(), 1u);
  EXPECT_EQ(graph.box(split).output(0).rows_emitted() + graph.box(split).output(1).rows_emitted(),
            10u);
}

TEST(Graph, UnionEndsOnlyWhenEveryInputEnded) {
  Graph graph;
  const BoxId merge = graph.add(union_of(2));
  CollectingConsumer out;
  graph.collect(merge, 0, out);
  graph.push(merge, 1, rows_of({1, 2}));
  graph.push(merge, 0, rows_of({3}));
  graph.finish(merge, 0);
  EXPECT_FALSE(out.ended());
  EXPECT_EQ(out.rows(), 0u);
  graph.finish(merge, 1);
  EXPECT_EQ(out.ends(), 1u);
  EXPECT_EQ(seqs_of(out), (std::vector<std::int64_t>{1, 2, 3}));
}

TEST(Graph, FlushHandsOnPartialBatchesUpstreamFirst) {
  Graph graph;
  // Added downstream first, so add() order is not the flow order.
  const BoxId last = graph.add(std::make_unique<TickBox>());
  const BoxId middle = graph.add(std::make_unique<TickBox>());
  const BoxId first = graph.add(std::make_unique<TickBox>());
  ASSERT_TRUE(graph.connect(first, 0, middle, 0));
  ASSERT_TRUE(graph.connect(middle, 0, last, 0));
  CollectingConsumer out;
  graph.collect(last, 0, out);
  graph.push(first, 0, rows_of({4, 5, 6}));
  EXPECT_EQ(out.rows(), 0u);
  graph.flush();
  EXPECT_EQ(seqs_of(out), (std::vector<std::int64_t>{4, 5, 6}));
  EXPECT_EQ(out.batches(), 1u);
  graph.flush();  // nothing left: no empty batch
  EXPECT_EQ(out.batches(), 1u);
}

TEST(Graph, TickReachesEveryBoxAndItsRowsFlowDownstream) {
  Graph graph;
  const BoxId first = graph.add(std::make_unique<TickBox>());
  const BoxId second = graph.add(std::make_unique<TickBox>());
  ASSERT_TRUE(graph.connect(first, 0, second, 0));
  CollectingConsumer out;
  graph.collect(second, 0, out);
  graph.tick(100);
  graph.tick(250);
  EXPECT_EQ(static_cast<TickBox&>(graph.box(first)).ticks, (std::vector<std::int64_t>{100, 250}));
  EXPECT_EQ(static_cast<TickBox&>(graph.box(second)).ticks, (std::vector<std::int64_t>{100, 250}));
  // Each tick: the first box's row passes through the second before the second's own row.
  // The second box flushes only on its own tick, after the first's row arrived.
  EXPECT_EQ(seqs_of(out), (std::vector<std::int64_t>{100, 100, 250, 250}));
  EXPECT_EQ(out.batches(), 2u);
}

TEST(CollectingConsumer, CopiesRowsAndCountsBatchesAndEnds) {
  CollectingConsumer out;
  EXPECT_EQ(out.tuple_bytes(), 0u);
  {
    const OwnedBatch batch = rows_of({1, 2});
    out.consume(batch);
  }  // the batch is gone; the copy stays
  out.consume(BatchView());
  out.consume(rows_of({3}));
  out.end();
  EXPECT_EQ(out.rows(), 3u);
  EXPECT_EQ(out.batches(), 3u);
  EXPECT_EQ(out.tuple_bytes(), 8u);
  EXPECT_EQ(out.bytes().size(), 24u);
  EXPECT_EQ(seqs_of(out), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_TRUE(out.ended());
  out.clear();
  EXPECT_EQ(out.rows(), 0u);
  EXPECT_EQ(out.batches(), 0u);
  EXPECT_FALSE(out.ended());
}

TEST(CountingConsumer, CountsRowsBatchesAndEnds) {
  CountingConsumer out;
  out.consume(rows_of({1, 2, 3}));
  out.consume(rows_of({4}));
  EXPECT_FALSE(out.ended());
  out.end();
  EXPECT_EQ(out.rows(), 4u);
  EXPECT_EQ(out.batches(), 2u);
  EXPECT_EQ(out.ends(), 1u);
}

}  // namespace
}  // namespace boreal::ops
