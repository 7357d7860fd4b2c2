#include <boreal/ops/bsort.hpp>
#include <boreal/ops/join.hpp>
#include <boreal/ops/split.hpp>
#include <boreal/ops/union.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "operators/ops_test_support.hpp"

#include <boreal/ops/graph.hpp>

namespace boreal::ops {
namespace {

using test_support::schema_of;
using test_support::ok;

template <class T>
std::string error_of(const Result<T>& result) {
  EXPECT_FALSE(result) << "unexpectedly succeeded";
  return result ? std::string() : result.error().describe();
}

// Layout: seq@0 key@8 x@16 n@24 ts@32 sym@40; 48 bytes a tuple.
const Schema kRows = schema_of("seq:i64,key:i64,x:f64,n:i32,ts:timestamp,sym:str8");
const FieldRef<std::int64_t> kSeq{0};
const FieldRef<std::int64_t> kKey{8};
const FieldRef<double> kX{16};
const FieldRef<std::int32_t> kN{24};
const FieldRef<std::int64_t> kTs{32};  // raw nanoseconds of the timestamp field
const FieldRef<std::string_view> kSym{40, 8};

struct Spec {
  std::int64_t key = 0;
  double x = 0;
  std::int32_t n = 0;
  std::int64_t ts = 0;
  std::string sym = {};
};

// Rows numbered seq = 0, 1, ... in order.
OwnedBatch rows_of(const std::vector<Spec>& specs) {
  OwnedBatch batch(kRows, std::max<std::size_t>(specs.size(), 1));
  std::int64_t seq = 0;
  for (const Spec& s : specs) {
    MutRow row = batch.append();
    kSeq.set(row, seq++);
    kKey.set(row, s.key);
    kX.set(row, s.x);
    kN.set(row, s.n);
    kTs.set(row, s.ts);
    kSym.set(row, s.sym);
  }
  return batch;
}

// Rows with key = the given values.
OwnedBatch keyed(const std::vector<std::int64_t>& keys) {
  std::vector<Spec> specs;
  for (std::int64_t k : keys) specs.push_back({.key = k});
  return rows_of(specs);
}

template <class T>
std::vector<T> column(const CollectingConsumer& out, FieldRef<T> field) {
  std::vector<T> values;
  for (Row row : out.view(kRows)) values.push_back(field.get(row));
  return values;
}

// rows[from, from + count) as a view.
BatchView slice(const BatchView& all, std::size_t from, std::size_t count) {
  return BatchView::wrap(all.bytes().subspan(from * all.tuple_bytes(), count * all.tuple_bytes()),
                         kRows)
      .value();
}

// Feeds `all` to `port` of `box` in batches of `batch_rows` (the last one shorter).
void feed(Box& box, std::size_t port, const BatchView& all, std::size_t batch_rows) {
  for (std::size_t at = 0; at < all.size(); at += batch_rows) {
    box.process(port, slice(all, at, std::min(batch_rows, all.size() - at)));
  }
}

// Feeds `all` in batches of random sizes 0..max_rows (empty batches included).
void feed_randomly(Box& box, const BatchView& all, std::mt19937_64& rng, std::size_t max_rows) {
  std::uniform_int_distribution<std::size_t> size(0, max_rows);
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t n = std::min(size(rng), all.size() - at);
    box.process(0, slice(all, at, n));
    at += n;
  }
}

std::uint64_t seed_for_test() {
  const std::uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  return seed;
}

constexpr std::size_t kBatchSizes[] = {1, 7, 64, 1024};

// ---------------------------------------------------------------------------------- union

TEST(Union, EmitsRowsInArrivalOrderAndEndsWhenEveryInputEnded) {
  auto merge = ok(UnionBox::make({}, std::vector<Schema>(3, kRows)));
  EXPECT_EQ(merge->type(), "union");
  EXPECT_EQ(merge->input_count(), 3u);
  CollectingConsumer out;
  merge->output(0).connect(&out);
  merge->process(2, keyed({10, 11}));
  merge->process(0, keyed({20}));
  merge->process(2, keyed({12}));
  merge->process(1, keyed({30, 31, 32}));
  merge->finish(1);
  merge->finish(2);
  EXPECT_FALSE(out.ended());
  merge->process(0, keyed({21}));
  merge->finish(0);
  EXPECT_EQ(out.ends(), 1u);
  EXPECT_EQ(column(out, kKey), (std::vector<std::int64_t>{10, 11, 20, 12, 30, 31, 32, 21}));
  EXPECT_EQ(out.bytes().size(), 8u * kRows.tuple_bytes());
}

// A random sequence of (input, row) arrivals, delivered with each run of one input cut into
// batches of any size: the output is the arrival sequence, whatever the cut.
TEST(Union, OutputIsTheArrivalSequenceForAnyBatchSize) {
  const std::uint64_t seed = seed_for_test();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::size_t, std::int64_t>> arrivals;  // (input, key)
  for (int i = 0; i < 3000; ++i) {
    const std::size_t input = rng() % 3;
    const std::size_t run = 1 + rng() % 40;
    for (std::size_t r = 0; r < run; ++r)
      arrivals.push_back({input, static_cast<std::int64_t>(rng())});
  }
  std::vector<std::int64_t> expected;
  for (const auto& a : arrivals) expected.push_back(a.second);

  for (std::size_t batch_rows : kBatchSizes) {
    SCOPED_TRACE("batch rows " + std::to_string(batch_rows));
    auto merge = ok(UnionBox::make({}, std::vector<Schema>(3, kRows)));
    CollectingConsumer out;
    merge->output(0).connect(&out);
    for (std::size_t at = 0; at < arrivals.size();) {
      std::size_t end = at;
      while (end < arrivals.size() && arrivals[end].first == arrivals[at].first &&
             end - at < batch_rows) {
        ++end;
      }
      std::vector<std::int64_t> keys;
      for (std::size_t i = at; i < end; ++i) keys.push_back(arrivals[i].second);
      merge->process(arrivals[at].first, keyed(keys));
      at = end;
    }
    for (std::size_t port = 0; port < 3; ++port) merge->finish(port);
    EXPECT_EQ(column(out, kKey), expected);
    EXPECT_EQ(out.ends(), 1u);
  }
}

TEST(UnionParams, NeedsAtLeastTwoInputs) {
  EXPECT_EQ(error_of(UnionBox::make({}, std::vector<Schema>{kRows})),
            "inputs: union needs at least 2 inputs, got 1");
  EXPECT_EQ(error_of(UnionBox::make({}, std::vector<Schema>{})),
            "inputs: union needs at least 2 inputs, got 0");
}

TEST(UnionParams, NamesEveryInputWhoseSchemaDiffers) {
  const Schema a = schema_of("a:i64");
  const Schema b = schema_of("a:i64,b:f64");
  EXPECT_EQ(error_of(UnionBox::make({}, std::vector<Schema>{a, a, b, a, b})),
            "inputs[2]: schema a:i64,b:f64 differs from input 0's a:i64\n"
            "inputs[4]: schema a:i64,b:f64 differs from input 0's a:i64");
}

// ---------------------------------------------------------------------------------- split

// The FNV-1a values here were computed independently (Python) from the key bytes.
TEST(Split, RoutesByFnv1aOfTheKeyBytes) {
  auto split = ok(SplitBox::make({.key_fields = {"key"}, .outputs = 4}, kRows));
  EXPECT_EQ(split->type(), "split");
  ASSERT_EQ(split->output_count(), 4u);
  CollectingConsumer outs[4];
  for (std::size_t i = 0; i < 4; ++i) split->output(i).connect(&outs[i]);
  // fnv1a_64 of the 8 little-endian bytes of key k, mod 4: 0->1 1->0 2->3 3->2 4->1 5->0 ...
  split->process(0, keyed({0, 1, 2, 3, 4, 5, 6, 7, 1}));
  split->finish(0);
  EXPECT_EQ(column(outs[0], kKey), (std::vector<std::int64_t>{1, 5, 1}));
  EXPECT_EQ(column(outs[1], kKey), (std::vector<std::int64_t>{0, 4}));
  EXPECT_EQ(column(outs[2], kKey), (std::vector<std::int64_t>{3, 7}));
  EXPECT_EQ(column(outs[3], kKey), (std::vector<std::int64_t>{2, 6}));
  EXPECT_EQ(column(outs[0], kSeq), (std::vector<std::int64_t>{1, 5, 8}));  // order kept
  for (const auto& out : outs) EXPECT_EQ(out.ends(), 1u);
}

TEST(Split, HashesSeveralKeyFieldsInTheirListedOrder) {
  auto split = ok(SplitBox::make({.key_fields = {"sym", "key"}, .outputs = 4}, kRows));
  // fnv1a_64("IBM\0\0\0\0\0" + 8 bytes of 1) = 14202586772378641606, which is 2 mod 4.
  const OwnedBatch row = rows_of({{.key = 1, .sym = "IBM"}});
  EXPECT_EQ(split->route(row.row(0)), 2u);
  std::string bytes = "IBM";
  bytes.resize(8, '\0');
  bytes += std::string("\x01\0\0\0\0\0\0\0", 8);
  EXPECT_EQ(fnv1a_64(bytes), 14202586772378641606ull);
}

// Reference: each row goes where fnv1a_64 of its key bytes says, rows in input order; the
// same for any batch size or random cut; equal keys always share an output.
TEST(Split, MatchesAReferenceForAnyBatchSize) {
  const std::uint64_t seed = seed_for_test();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const char* syms[] = {"IBM", "MSFT", "AAPL", "GOOG", "X", ""};
  std::vector<Spec> specs;
  for (int i = 0; i < 5000; ++i) {
    specs.push_back({.key = static_cast<std::int64_t>(rng() % 50) - 25,
                     .x = static_cast<double>(rng() % 1000),
                     .sym = syms[rng() % 6]});
  }
  const OwnedBatch input = rows_of(specs);
  constexpr std::uint32_t kOutputs = 5;
  std::vector<std::vector<std::int64_t>> expected(kOutputs);  // seqs per output
  for (Row row : input) {
    std::string bytes(reinterpret_cast<const char*>(row.data()) + 40, 8);  // sym
    bytes.append(reinterpret_cast<const char*>(row.data()) + 8, 8);       // key
    expected[fnv1a_64(bytes) % kOutputs].push_back(kSeq.get(row));
  }

  auto run = [&](auto&& feeder) {
    auto split = ok(SplitBox::make({.key_fields = {"sym", "key"}, .outputs = kOutputs}, kRows));
    std::vector<CollectingConsumer> outs(kOutputs);
    for (std::size_t i = 0; i < kOutputs; ++i) split->output(i).connect(&outs[i]);
    feeder(*split);
    split->finish(0);
    std::map<std::pair<std::int64_t, std::string>, std::size_t> owner;  // key -> its output
    for (std::size_t i = 0; i < kOutputs; ++i) {
      EXPECT_EQ(column(outs[i], kSeq), expected[i]) << "output " << i;
      EXPECT_EQ(outs[i].ends(), 1u);
      for (Row row : outs[i].view(kRows)) {
        const auto key = std::pair(kKey.get(row), std::string(kSym.get(row)));
        EXPECT_EQ(owner.emplace(key, i).first->second, i) << "one key on two outputs";
      }
    }
  };
  for (std::size_t batch_rows : kBatchSizes) {
    SCOPED_TRACE("batch rows " + std::to_string(batch_rows));
    run([&](Box& box) { feed(box, 0, input, batch_rows); });
  }
  SCOPED_TRACE("random cuts");
  run([&](Box& box) { feed_randomly(box, input, rng, 300); });
}

TEST(Split, OneOutputTakesEveryRow) {
  auto split = ok(SplitBox::make({.key_fields = {"x"}, .outputs = 1}, kRows));
  CollectingConsumer out;
  split->output(0).connect(&out);
  split->process(0, keyed({5, 6, 7}));
  split->finish(0);
  EXPECT_EQ(column(out, kKey), (std::vector<std::int64_t>{5, 6, 7}));
}

TEST(SplitParams, NeedsAKeyField) {
  EXPECT_EQ(error_of(SplitBox::make({.key_fields = {}, .outputs = 2}, kRows)),
            "params.key_fields: at least one key field is needed");
}

TEST(SplitParams, RejectsAnUnknownKeyField) {
  EXPECT_EQ(error_of(SplitBox::make({.key_fields = {"key", "price"}, .outputs = 2}, kRows)),
            "params.key_fields[1]: no field 'price' in schema "
            "seq:i64,key:i64,x:f64,n:i32,ts:timestamp,sym:str8");
}

TEST(SplitParams, RejectsARepeatedKeyField) {
  EXPECT_EQ(error_of(SplitBox::make({.key_fields = {"key", "sym", "key"}, .outputs = 2}, kRows)),
            "params.key_fields[2]: field 'key' is already key_fields[0]");
}

TEST(SplitParams, RejectsOutputsOutOfRange) {
  EXPECT_EQ(error_of(SplitBox::make({.key_fields = {"key"}, .outputs = 0}, kRows)),
            "params.outputs: outputs must be between 1 and 1024, got 0");
  EXPECT_EQ(error_of(SplitBox::make({.key_fields = {"key"}, .outputs = 1025}, kRows)),
            "params.outputs: outputs must be between 1 and 1024, got 1025");
}

TEST(SplitParams, ReportsEveryProblemAtOnce) {
  const std::vector<Error> errors =
      SplitParams{.key_fields = {"nope", "key", "key"}, .outputs = 0}.validate(kRows);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].where, "params.key_fields[0]");
  EXPECT_EQ(errors[1].where, "params.key_fields[2]");
  EXPECT_EQ(errors[2].where, "params.outputs");
}

// ---------------------------------------------------------------------------------- bsort

std::vector<std::int64_t> bsorted_keys(std::uint64_t slack, const std::vector<std::int64_t>& keys) {
  auto sort = ok(BSortBox::make({.field = "key", .slack = slack}, kRows));
  CollectingConsumer out;
  sort->output(0).connect(&out);
  sort->process(0, keyed(keys));
  sort->finish(0);
  EXPECT_EQ(out.ends(), 1u);
  return column(out, kKey);
}

TEST(BSort, EmitsTheSmallestWhenTheBufferHoldsSlackPlusOne) {
  // Buffer of 3: {5,3,4} -> 3; +1 -> 1; +2 -> 2; +6 -> 4; end -> 5, 6.
  EXPECT_EQ(bsorted_keys(2, {5, 3, 4, 1, 2, 6}), (std::vector<std::int64_t>{3, 1, 2, 4, 5, 6}));
}

TEST(BSort, SlackZeroPassesRowsThrough) {
  EXPECT_EQ(bsorted_keys(0, {5, 3, 4, 1}), (std::vector<std::int64_t>{5, 3, 4, 1}));
}

TEST(BSort, HoldsAtMostSlackRowsBetweenBatches) {
  auto sort = ok(BSortBox::make({.field = "key", .slack = 4}, kRows));
  CollectingConsumer out;
  sort->output(0).connect(&out);
  sort->process(0, keyed({9, 8, 7}));
  EXPECT_EQ(sort->buffered(), 3u);
  sort->process(0, keyed({6, 5, 4}));
  EXPECT_EQ(sort->buffered(), 4u);
  EXPECT_EQ(sort->output(0).rows_emitted(), 2u);
  sort->finish(0);
  EXPECT_EQ(sort->buffered(), 0u);
  EXPECT_EQ(column(out, kKey), (std::vector<std::int64_t>{5, 4, 6, 7, 8, 9}));
}

TEST(BSort, TiesLeaveInArrivalOrder) {
  auto sort = ok(BSortBox::make({.field = "key", .slack = 3}, kRows));
  CollectingConsumer out;
  sort->output(0).connect(&out);
  sort->process(0, keyed({2, 1, 2, 1, 1, 2}));
  sort->finish(0);
  EXPECT_EQ(column(out, kKey), (std::vector<std::int64_t>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(column(out, kSeq), (std::vector<std::int64_t>{1, 3, 4, 0, 2, 5}));
}

TEST(BSort, OrdersF64ByTheTotalOrder) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Spec> specs;
  for (double x : {2.5, -0.0, inf, -1.0, 0.0, -inf, 1e-300, -2.5}) specs.push_back({.x = x});
  auto sort = ok(BSortBox::make({.field = "x", .slack = 100}, kRows));
  CollectingConsumer out;
  sort->output(0).connect(&out);
  sort->process(0, rows_of(specs));
  sort->finish(0);
  const std::vector<double> xs = column(out, kX);
  EXPECT_EQ(xs, (std::vector<double>{-inf, -2.5, -1.0, -0.0, 0.0, 1e-300, 2.5, inf}));
  EXPECT_TRUE(std::signbit(xs[3]));  // -0.0 before +0.0
  EXPECT_FALSE(std::signbit(xs[4]));
}

TEST(BSort, OrdersI32AndTimestampFields) {
  std::vector<Spec> specs;
  for (std::int32_t n : {3, -7, 2147483647, -2147483647 - 1, 0}) {
    specs.push_back({.n = n, .ts = -static_cast<std::int64_t>(n) * 1000});
  }
  for (const char* field : {"n", "ts"}) {
    auto sort = ok(BSortBox::make({.field = field, .slack = 10}, kRows));
    CollectingConsumer out;
    sort->output(0).connect(&out);
    sort->process(0, rows_of(specs));
    sort->finish(0);
    if (std::string_view(field) == "n") {
      EXPECT_EQ(column(out, kN),
                (std::vector<std::int32_t>{-2147483647 - 1, -7, 0, 3, 2147483647}));
    } else {
      EXPECT_EQ(column(out, kN),
                (std::vector<std::int32_t>{2147483647, 3, 0, -7, -2147483647 - 1}));
    }
  }
}

// Reference: the same buffer simulated with a std::multiset of (key, seq).
std::vector<std::int64_t> reference_seqs(const BatchView& input, std::uint64_t slack) {
  std::multiset<std::pair<std::int64_t, std::int64_t>> buffer;
  std::vector<std::int64_t> seqs;
  for (Row row : input) {
    buffer.insert({kKey.get(row), kSeq.get(row)});
    if (buffer.size() == slack + 1) {
      seqs.push_back(buffer.begin()->second);
      buffer.erase(buffer.begin());
    }
  }
  for (const auto& entry : buffer) seqs.push_back(entry.second);
  return seqs;
}

TEST(BSort, MatchesAMultisetSimulationForAnyBatchSize) {
  const std::uint64_t seed = seed_for_test();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (std::uint64_t slack : {0ull, 1ull, 5ull, 64ull, 3000ull}) {
    SCOPED_TRACE("slack " + std::to_string(slack));
    std::vector<std::int64_t> keys;
    for (int i = 0; i < 2000; ++i) keys.push_back(static_cast<std::int64_t>(rng() % 100) - 50);
    const OwnedBatch input = keyed(keys);
    const std::vector<std::int64_t> expected = reference_seqs(input, slack);
    auto run = [&](auto&& feeder) {
      auto sort = ok(BSortBox::make({.field = "key", .slack = slack}, kRows));
      CollectingConsumer out;
      sort->output(0).connect(&out);
      feeder(*sort);
      sort->finish(0);
      EXPECT_EQ(column(out, kSeq), expected);
    };
    for (std::size_t batch_rows : kBatchSizes) {
      SCOPED_TRACE("batch rows " + std::to_string(batch_rows));
      run([&](Box& box) { feed(box, 0, input, batch_rows); });
    }
    run([&](Box& box) { feed_randomly(box, input, rng, 200); });
  }
}

// Shuffling a sorted sequence within blocks of slack + 1 leaves every row at most slack
// larger predecessors: bsort restores the full order.
TEST(BSort, SortsInputWhoseDisorderIsWithinTheSlack) {
  const std::uint64_t seed = seed_for_test();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (std::uint64_t slack : {1ull, 7ull, 64ull}) {
    std::vector<std::int64_t> keys(3000);
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::int64_t>(i / 3);
    for (std::size_t at = 0; at < keys.size(); at += slack + 1) {
      std::shuffle(
          keys.begin() + static_cast<std::ptrdiff_t>(at),
          keys.begin() + static_cast<std::ptrdiff_t>(std::min(at + slack + 1, keys.size())), rng);
    }
    std::vector<std::int64_t> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(bsorted_keys(slack, keys), sorted) << "slack " << slack;
  }
}

TEST(BSortParams, RejectsAnUnknownField) {
  EXPECT_EQ(error_of(BSortBox::make({.field = "time", .slack = 1}, kRows)),
            "params.field: no field 'time' in schema "
            "seq:i64,key:i64,x:f64,n:i32,ts:timestamp,sym:str8");
}

TEST(BSortParams, RejectsAFieldThatCannotBeOrdered) {
  EXPECT_EQ(error_of(BSortBox::make({.field = "sym", .slack = 1}, kRows)),
            "params.field: field 'sym' has type str8; bsort orders by an i32, i64, f64 or "
            "timestamp field");
  EXPECT_EQ(error_of(BSortBox::make({.field = "ok", .slack = 1}, schema_of("ok:bool"))),
            "params.field: field 'ok' has type bool; bsort orders by an i32, i64, f64 or "
            "timestamp field");
}

TEST(BSortParams, RejectsASlackOverTheLimit) {
  EXPECT_EQ(error_of(BSortBox::make({.field = "key", .slack = kMaxBSortSlack + 1}, kRows)),
            "params.slack: slack 1048577 is larger than the limit 1048576");
  EXPECT_TRUE(BSortBox::make({.field = "key", .slack = kMaxBSortSlack}, kRows));
}

TEST(BSortParams, ReportsEveryProblemAtOnce) {
  EXPECT_EQ(error_of(BSortBox::make({.field = "", .slack = 1ull << 40}, kRows)),
            "params.field: no field '' in schema "
            "seq:i64,key:i64,x:f64,n:i32,ts:timestamp,sym:str8\n"
            "params.slack: slack 1099511627776 is larger than the limit 1048576");
}

}  // namespace
}  // namespace boreal::ops

namespace boreal::ops {
namespace {

using test_support::expect_restores_exactly;
using test_support::Feed;
using test_support::restore_error;
using test_support::saved;

// 600 rows in batches of 0 to 12: ts mostly rising with some rows up to 30 behind, x from
// 20 values (many ties, one NaN), n from -50 to 49.
struct SortInput {
  OwnedBatch all{kRows, 600};
  std::vector<Feed> feed;
};
SortInput sort_input() {
  std::mt19937_64 rng(17);
  std::vector<Spec> specs;
  std::int64_t ts = 0;
  for (int i = 0; i < 600; ++i) {
    ts += static_cast<std::int64_t>(rng() % 5);
    const auto x = static_cast<double>(rng() % 20) - 7.5;
    specs.push_back({.key = i % 7,
                     .x = i == 300 ? std::nan("") : x,
                     .n = static_cast<std::int32_t>(rng() % 100) - 50,
                     .ts = ts - (rng() % 4 == 0 ? static_cast<std::int64_t>(rng() % 31) : 0)});
  }
  SortInput in;
  in.all = rows_of(specs);
  for (std::size_t at = 0; at < in.all.size();) {
    const std::size_t n = std::min<std::size_t>(rng() % 13, in.all.size() - at);
    in.feed.push_back({0, slice(in.all, at, n)});
    at += n;
  }
  return in;
}

TEST(BSortState, ARestoredBSortCarriesOnExactlyLikeTheUninterruptedOne) {
  const SortInput in = sort_input();
  const std::size_t last = in.feed.size() - 1;
  for (const BSortParams& params : {BSortParams{.field = "ts", .slack = 20},
                                    BSortParams{.field = "x", .slack = 7},
                                    BSortParams{.field = "n", .slack = 1},
                                    BSortParams{.field = "n", .slack = 0},
                                    BSortParams{.field = "ts", .slack = 1000}}) {
    SCOPED_TRACE(params.field + " slack " + std::to_string(params.slack));
    expect_restores_exactly([&] { return ok(BSortBox::make(params, kRows)); }, in.feed,
                            {0, 1, 5, last / 2, last});
  }
}

TEST(BSortState, ABrokenStateIsRefusedNamingWhy) {
  const BSortParams params{.field = "ts", .slack = 10};
  auto box = ok(BSortBox::make(params, kRows));
  box->process(0, rows_of({{.ts = 5}, {.ts = 3}, {.ts = 9}, {.ts = 1}}));
  ASSERT_EQ(box->buffered(), 4u);
  const std::vector<std::byte> good = saved(*box);
  auto fresh = [&] { return ok(BSortBox::make(params, kRows)); };
  auto state = good;
  state.pop_back();
  EXPECT_EQ(restore_error(*fresh(), state), "bsort state: truncated or followed by other bytes");
  state = good;
  state.push_back(std::byte{1});
  EXPECT_EQ(restore_error(*fresh(), state), "bsort state: truncated or followed by other bytes");
  state = good;
  state[0] = std::byte{0};
  EXPECT_EQ(restore_error(*fresh(), state), "bsort state: not a bsort's saved state");
  auto join = ok(JoinBox::make({.left_time = "ts", .right_time = "ts", .window = Duration(1)},
                               kRows, kRows));
  EXPECT_EQ(restore_error(*fresh(), saved(*join)), "bsort state: not a bsort's saved state");
  EXPECT_EQ(restore_error(*ok(BSortBox::make({.field = "ts", .slack = 3}, kRows)), good),
            "bsort state: 4 rows buffered, more than this bsort's slack 3 holds");
  EXPECT_EQ(restore_error(*box, good), "restore_state on a bsort that has run");
  EXPECT_EQ(restore_error(*fresh(), good), "restored");
}

}  // namespace
}  // namespace boreal::ops
