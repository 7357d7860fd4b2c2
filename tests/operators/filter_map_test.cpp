#include <boreal/ops/filter.hpp>
#include <boreal/ops/map.hpp>

#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace boreal::ops {
namespace {

constexpr std::string_view kSchema = "seq:i64,price:f64,qty:i32,sym:str4,ok:bool";

// Keeps every batch it is given, row bytes and all.
class Collect final : public BatchConsumer {
 public:
  void consume(const BatchView& batch) override {
    const auto bytes = batch.bytes();
    data.insert(data.end(), bytes.begin(), bytes.end());
    ++batches;
  }
  void end() override { ended = true; }
  std::vector<std::byte> data;
  int batches = 0;
  bool ended = false;
};

struct Input {
  Schema schema = Schema::parse(kSchema).value();
  OwnedBatch rows;
  explicit Input(std::size_t n) : rows(schema, n) {}
  void add(std::int64_t seq, double price, std::int32_t qty, std::string_view sym, bool ok) {
    MutRow r = rows.append();
    FieldRef<std::int64_t>::bind(schema, "seq").value().set(r, seq);
    FieldRef<double>::bind(schema, "price").value().set(r, price);
    FieldRef<std::int32_t>::bind(schema, "qty").value().set(r, qty);
    FieldRef<std::string_view>::bind(schema, "sym").value().set(r, sym);
    FieldRef<bool>::bind(schema, "ok").value().set(r, ok);
  }
};

Input random_input(std::uint32_t seed, std::size_t n) {
  Input in(n);
  std::mt19937 rng(seed);
  const char* syms[] = {"IBM", "MSFT", "A", ""};
  for (std::size_t k = 0; k < n; ++k) {
    in.add(static_cast<std::int64_t>(k), static_cast<double>(rng() % 2000) / 10.0,
           static_cast<std::int32_t>(rng() % 200) - 100, syms[rng() % 4], rng() % 2 == 0);
  }
  return in;
}

// Feeds `rows` to `box` in batches of `batch_rows`, then finishes.
void feed(Box& box, const BatchView& rows, std::size_t batch_rows) {
  const std::size_t tb = rows.tuple_bytes();
  for (std::size_t first = 0; first < rows.size(); first += batch_rows) {
    const std::size_t n = std::min(batch_rows, rows.size() - first);
    box.process(0, BatchView::wrap(rows.bytes().subspan(first * tb, n * tb), box.input_schema(0))
                       .value());
  }
  box.finish(0);
}

std::vector<std::int64_t> seqs(const std::vector<std::byte>& data, const Schema& schema) {
  std::vector<std::int64_t> out;
  auto seq = FieldRef<std::int64_t>::bind(schema, "seq").value();
  BatchView view = BatchView::wrap(data, schema).value();
  for (Row r : view) out.push_back(seq.get(r));
  return out;
}

TEST(Filter, PassesMatchingRowsAndRejectsTheRest) {
  Input in(8);
  in.add(0, 150.0, 10, "IBM", true);
  in.add(1, 50.0, 10, "IBM", true);
  in.add(2, 200.0, 10, "MSFT", true);
  in.add(3, 101.0, 10, "IBM", false);
  in.add(4, 100.0, 10, "IBM", true);
  auto filter = Filter::make({.predicate = "price > 100 and sym == \"IBM\"", .emit_rejected = true},
                             in.schema)
                    .value();
  ASSERT_EQ(filter->output_count(), 2u);
  EXPECT_EQ(filter->output(0).schema(), in.schema);
  Collect pass, rest;
  filter->output(0).connect(&pass);
  filter->output(1).connect(&rest);
  feed(*filter, in.rows, 1024);
  EXPECT_EQ(seqs(pass.data, in.schema), (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(seqs(rest.data, in.schema), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_TRUE(pass.ended && rest.ended);
  // Rows are copied whole.
  BatchView first = BatchView::wrap(pass.data, in.schema).value();
  EXPECT_EQ(std::memcmp(first.row(0).data(), in.rows.row(0).data(), in.schema.tuple_bytes()), 0);
}

TEST(Filter, OneOutputUnlessRejectedAreAsked) {
  Input in(1);
  auto filter = Filter::make({.predicate = "ok"}, in.schema).value();
  EXPECT_EQ(filter->output_count(), 1u);
  EXPECT_EQ(filter->type(), "filter");
}

// Brute force: evaluate the predicate by hand per row; any batch size gives the same rows.
TEST(Filter, MatchesReferenceForAnyBatchSize) {
  const std::uint32_t seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  Input in = random_input(seed, 5000);
  auto price = FieldRef<double>::bind(in.schema, "price").value();
  auto qty = FieldRef<std::int32_t>::bind(in.schema, "qty").value();
  auto sym = FieldRef<std::string_view>::bind(in.schema, "sym").value();
  auto ok = FieldRef<bool>::bind(in.schema, "ok").value();
  std::vector<std::int64_t> want_pass, want_rest;
  for (std::size_t k = 0; k < in.rows.size(); ++k) {
    Row r = in.rows.row(k);
    const bool keep = (price.get(r) * 2 > 150 && sym.get(r) != "MSFT") ||
                      (qty.get(r) % 7 == 3 && !ok.get(r)) || -qty.get(r) / 3 > 30;
    (keep ? want_pass : want_rest).push_back(static_cast<std::int64_t>(k));
  }
  for (std::size_t batch : {1, 7, 64, 255, 256, 257, 1024, 5000}) {
    auto filter =
        Filter::make({.predicate = "price * 2 > 150 and sym != \"MSFT\" or qty % 7 == 3 and not ok "
                                   "or -qty / 3 > 30",
                      .emit_rejected = true},
                     in.schema)
            .value();
    Collect pass, rest;
    filter->output(0).connect(&pass);
    filter->output(1).connect(&rest);
    feed(*filter, in.rows, batch);
    EXPECT_EQ(seqs(pass.data, in.schema), want_pass) << "batch " << batch;
    EXPECT_EQ(seqs(rest.data, in.schema), want_rest) << "batch " << batch;
  }
}

TEST(Filter, BadParamsAreReported) {
  const Schema schema = Schema::parse(kSchema).value();
  EXPECT_EQ(describe(FilterParams{.predicate = "price > "}.validate(schema)),
            "params.predicate col 9: expected a value after '>', got end of expression");
  EXPECT_EQ(describe(FilterParams{.predicate = "price + 1"}.validate(schema)),
            "params.predicate: predicate must be a boolean expression, got float");
  auto made = Filter::make({.predicate = "prize > 1"}, schema);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().describe(),
            "params.predicate col 1: unknown field 'prize' (fields: seq, price, qty, sym, ok)");
}

TEST(Map, ComputesFieldsWithDefaultAndExplicitTypes) {
  Input in(4);
  in.add(1, 2.5, 4, "IBM", true);
  in.add(2, -1.75, -3, "MSFT", false);
  auto map = Map::make({.fields = {{.name = "seq", .expression = "seq"},
                                   {.name = "cost", .expression = "price * qty"},
                                   {.name = "big", .expression = "qty > 0"},
                                   {.name = "s", .expression = "sym"},
                                   {.name = "half", .expression = "qty / 2", .type = "f64"},
                                   {.name = "trunc", .expression = "price", .type = "i32"},
                                   {.name = "tag", .expression = "\"x\""},
                                   {.name = "short", .expression = "sym", .type = "str2"}}},
                       in.schema)
                 .value();
  const Schema& out = map->output(0).schema();
  EXPECT_EQ(out.to_string(),
            "seq:i64,cost:f64,big:bool,s:str4,half:f64,trunc:i32,tag:str1,short:str2");
  Collect got;
  map->output(0).connect(&got);
  feed(*map, in.rows, 1);
  BatchView rows = BatchView::wrap(got.data, out).value();
  ASSERT_EQ(rows.size(), 2u);
  auto cost = FieldRef<double>::bind(out, "cost").value();
  auto big = FieldRef<bool>::bind(out, "big").value();
  auto s = FieldRef<std::string_view>::bind(out, "s").value();
  auto half = FieldRef<double>::bind(out, "half").value();
  auto trunc = FieldRef<std::int32_t>::bind(out, "trunc").value();
  auto tag = FieldRef<std::string_view>::bind(out, "tag").value();
  auto shrt = FieldRef<std::string_view>::bind(out, "short").value();
  EXPECT_EQ(seqs(got.data, out), (std::vector<std::int64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(cost.get(rows.row(0)), 10.0);
  EXPECT_DOUBLE_EQ(cost.get(rows.row(1)), 5.25);
  EXPECT_TRUE(big.get(rows.row(0)));
  EXPECT_FALSE(big.get(rows.row(1)));
  EXPECT_EQ(s.get(rows.row(1)), "MSFT");
  EXPECT_DOUBLE_EQ(half.get(rows.row(0)), 2.0);
  EXPECT_DOUBLE_EQ(half.get(rows.row(1)), -1.0);  // integer division first, then converted
  EXPECT_EQ(trunc.get(rows.row(0)), 2);
  EXPECT_EQ(trunc.get(rows.row(1)), -1);  // toward zero
  EXPECT_EQ(tag.get(rows.row(0)), "x");
  EXPECT_EQ(shrt.get(rows.row(1)), "MS");
}

TEST(Map, MatchesReferenceForAnyBatchSize) {
  const std::uint32_t seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  SCOPED_TRACE("seed " + std::to_string(seed));
  Input in = random_input(seed, 3000);
  const MapParams params{.fields = {{.name = "seq", .expression = "seq"},
                                    {.name = "v", .expression = "price * 1.5 - qty"},
                                    {.name = "q", .expression = "qty * qty % 13"},
                                    {.name = "hit", .expression = "sym == \"A\" or ok"}}};
  auto price = FieldRef<double>::bind(in.schema, "price").value();
  auto qty = FieldRef<std::int32_t>::bind(in.schema, "qty").value();
  auto sym = FieldRef<std::string_view>::bind(in.schema, "sym").value();
  auto ok = FieldRef<bool>::bind(in.schema, "ok").value();
  const Schema out = params.output_schema(in.schema).value();
  ASSERT_EQ(out.to_string(), "seq:i64,v:f64,q:i64,hit:bool");
  OwnedBatch want(out, in.rows.size());
  for (Row r : in.rows) {
    MutRow w = want.append();
    FieldRef<std::int64_t>{0}.set(w, FieldRef<std::int64_t>{0}.get(r));
    FieldRef<double>{8}.set(w, price.get(r) * 1.5 - qty.get(r));
    const std::int64_t q = qty.get(r);
    FieldRef<std::int64_t>{16}.set(w, q * q % 13);
    FieldRef<bool>{24}.set(w, sym.get(r) == "A" || ok.get(r));
  }
  for (std::size_t batch : {1, 7, 64, 256, 1024, 3000}) {
    auto map = Map::make(params, in.schema).value();
    Collect got;
    map->output(0).connect(&got);
    feed(*map, in.rows, batch);
    ASSERT_EQ(got.data.size(), want.bytes().size()) << "batch " << batch;
    EXPECT_TRUE(std::equal(got.data.begin(), got.data.end(), want.bytes().begin()))
        << "batch " << batch;
    EXPECT_TRUE(got.ended);
  }
}

TEST(Map, ReportsEveryBadFieldAtOnce) {
  const Schema schema = Schema::parse(kSchema).value();
  const MapParams params{.fields = {{.name = "a", .expression = "seq +"},
                                    {.name = "a", .expression = "seq"},
                                    {.name = "1x", .expression = "qty"},
                                    {.name = "b", .expression = "price", .type = "f32"},
                                    {.name = "c", .expression = "ok", .type = "i64"},
                                    {.name = "", .expression = "nope"}}};
  EXPECT_EQ(describe(params.validate(schema)),
            "params.fields[0].expression col 6: expected a value after '+', got end of expression\n"
            "params.fields[1].name: duplicate output name 'a' (also params.fields[0])\n"
            "params.fields[2].name: output name '1x' is not an identifier (letters, digits, '_')\n"
            "params.fields[3].type: unknown type 'f32' (types: i32, i64, f64, bool, timestamp, "
            "strN with 1 <= N <= 65496)\n"
            "params.fields[4].type: cannot store a bool expression in a i64 field\n"
            "params.fields[5].name: output name is empty\n"
            "params.fields[5].expression col 1: unknown field 'nope' (fields: seq, price, qty, "
            "sym, ok)");
  EXPECT_EQ(describe(MapParams{}.validate(schema)), "params.fields: map needs at least one field");
  auto made = Map::make(MapParams{}, schema);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().describe(), "params.fields: map needs at least one field");
}

}  // namespace
}  // namespace boreal::ops
