#include <boreal/ops/schema.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <new>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/filter.hpp>
#include <boreal/ops/map.hpp>
#include <boreal/ops/sink.hpp>
#include <boreal/ops/source.hpp>

// Counts every allocation of this test program, to show that big tuples go through batches,
// boxes, CSV and the generator without an allocation per tuple.
#include "allocation_counter.hpp"

namespace boreal::ops {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Schema make_ok(Pairs fields) {
  Result<Schema> schema = Schema::make(std::move(fields));
  EXPECT_TRUE(schema) << schema.error().describe();
  return std::move(schema).value();
}

// The describe() of the error make() or parse() returned; fails the test on success.
std::string error_of(const Result<Schema>& schema) {
  EXPECT_FALSE(schema) << "unexpectedly valid: " << schema.value().to_string();
  return schema ? std::string() : schema.error().describe();
}

TEST(Schema, BenchRowIsSixtyFourBytesWithFieldsBackToBack) {
  Schema s = make_ok({{"seq", "i64"}, {"ts", "timestamp"}, {"key", "i64"}, {"pad", "str40"}});
  EXPECT_EQ(s.tuple_bytes(), 64u);
  ASSERT_EQ(s.field_count(), 4u);
  EXPECT_EQ(s.field(0), (Field{"seq", FieldType::i64, 8, 0}));
  EXPECT_EQ(s.field(1), (Field{"ts", FieldType::timestamp, 8, 8}));
  EXPECT_EQ(s.field(2), (Field{"key", FieldType::i64, 8, 16}));
  EXPECT_EQ(s.field(3), (Field{"pad", FieldType::str, 40, 24}));
}

TEST(Schema, FieldsAreNaturallyAlignedAndTupleRoundedToEight) {
  Schema s = make_ok({{"a", "bool"},
                      {"b", "i32"},
                      {"c", "i64"},
                      {"d", "str3"},
                      {"e", "f64"},
                      {"f", "i32"}});
  const std::vector<std::uint32_t> offsets = {0, 4, 8, 16, 24, 32};
  const std::vector<std::uint32_t> widths = {1, 4, 8, 3, 8, 4};
  for (std::size_t i = 0; i < s.field_count(); ++i) {
    EXPECT_EQ(s.field(i).offset, offsets[i]) << s.field(i).name;
    EXPECT_EQ(s.field(i).width, widths[i]) << s.field(i).name;
  }
  EXPECT_EQ(s.tuple_bytes(), 40u);  // last field ends at 36
}

TEST(Schema, OneByteFieldsPackAndTupleIsAtLeastEight) {
  Schema s = make_ok({{"a", "bool"}, {"b", "str1"}, {"c", "bool"}});
  EXPECT_EQ(s.field(1).offset, 1u);
  EXPECT_EQ(s.field(2).offset, 2u);
  EXPECT_EQ(s.tuple_bytes(), 8u);
  EXPECT_EQ(make_ok({{"s", "str4096"}}).tuple_bytes(), 4096u);
  EXPECT_EQ(make_ok({{"x", "i32"}, {"y", "i32"}}).tuple_bytes(), 8u);
}

TEST(Schema, HashIsFnv1aOfCanonicalTextAndStable) {
  // Published FNV-1a 64 test vectors.
  static_assert(fnv1a_64("") == 0xcbf29ce484222325ull);
  static_assert(fnv1a_64("a") == 0xaf63dc4c8601ec8cull);
  static_assert(fnv1a_64("foobar") == 0x85944171f73967e8ull);

  Schema s = make_ok({{"seq", "i64"}, {"ts", "timestamp"}, {"key", "i64"}, {"pad", "str40"}});
  EXPECT_EQ(s.to_string(), "seq:i64,ts:timestamp,key:i64,pad:str40");
  // Link handshakes compare this value across machines and builds: if this line has to
  // change, the wire version has to change with it.
  EXPECT_EQ(s.hash(), 0x17426c0b81f133a2ull);
}

TEST(Schema, HashChangesWithNamesTypesWidthsAndOrder) {
  const std::uint64_t base = make_ok({{"a", "i64"}, {"b", "str8"}}).hash();
  EXPECT_NE(make_ok({{"b", "str8"}, {"a", "i64"}}).hash(), base);
  EXPECT_NE(make_ok({{"a", "i64"}, {"b", "str9"}}).hash(), base);
  EXPECT_NE(make_ok({{"a", "timestamp"}, {"b", "str8"}}).hash(), base);
  EXPECT_NE(make_ok({{"x", "i64"}, {"b", "str8"}}).hash(), base);
  EXPECT_EQ(make_ok({{"a", "i64"}, {"b", "str8"}}).hash(), base);
}

TEST(Schema, ParseAndToStringRoundTrip) {
  const std::string text = "a:i32,b:i64,c:f64,d:bool,e:timestamp,f:str16";
  Result<Schema> s = Schema::parse(text);
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_EQ(s.value().to_string(), text);
  EXPECT_EQ(s.value().field(3).type, FieldType::boolean);
  EXPECT_EQ(s.value().field(5).type_name(), "str16");

  Result<Schema> again = Schema::parse(s.value().to_string());
  ASSERT_TRUE(again);
  EXPECT_EQ(again.value(), s.value());
  EXPECT_EQ(again.value().hash(), s.value().hash());
}

TEST(Schema, ParseAcceptsBlanksAroundNamesAndTypes) {
  Result<Schema> s = Schema::parse(" seq : i64 ,\tpad:str8 ");
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_EQ(s.value().to_string(), "seq:i64,pad:str8");
}

TEST(Schema, IndexOfFindsFieldsByName) {
  Schema s = make_ok({{"seq", "i64"}, {"pad", "str8"}});
  EXPECT_EQ(s.index_of("seq"), 0u);
  EXPECT_EQ(s.index_of("pad"), 1u);
  EXPECT_EQ(s.index_of("nope"), std::nullopt);
  EXPECT_EQ(s.fields().size(), 2u);
}

TEST(Schema, TypeNamesMatchTheTextSpelling) {
  EXPECT_EQ(type_name(FieldType::i32), "i32");
  EXPECT_EQ(type_name(FieldType::i64), "i64");
  EXPECT_EQ(type_name(FieldType::f64), "f64");
  EXPECT_EQ(type_name(FieldType::boolean), "bool");
  EXPECT_EQ(type_name(FieldType::timestamp), "timestamp");
  EXPECT_EQ(type_name(FieldType::str, 40), "str40");
}

TEST(SchemaErrors, EmptyFieldList) {
  EXPECT_EQ(error_of(Schema::make({})), "fields: a schema needs at least one field");
  EXPECT_EQ(error_of(Schema::parse("  ")), "fields: a schema needs at least one field");
}

TEST(SchemaErrors, EmptyName) {
  EXPECT_EQ(error_of(Schema::make({{"a", "i64"}, {"", "i64"}})), "fields[1]: field name is empty");
  EXPECT_EQ(error_of(Schema::parse("a:i64, :f64")), "fields[1]: field name is empty");
}

TEST(SchemaErrors, NameThatIsNotAnIdentifier) {
  EXPECT_EQ(error_of(Schema::make({{"1st", "i64"}})),
            "fields[0]: field name '1st' is not an identifier (letters, digits and '_', not "
            "starting with a digit)");
  EXPECT_FALSE(Schema::make({{"a b", "i64"}}));
  EXPECT_FALSE(Schema::make({{"a,b", "i64"}}));
  EXPECT_TRUE(Schema::make({{"_a1", "i64"}}));
}

TEST(SchemaErrors, DuplicateName) {
  EXPECT_EQ(error_of(Schema::make({{"a", "i64"}, {"b", "i64"}, {"a", "f64"}})),
            "fields[2]: duplicate field name 'a' (first declared as fields[0])");
}

TEST(SchemaErrors, UnknownTypeListsTheValidOnes) {
  const std::string valid =
      "; valid types: i32, i64, f64, bool, timestamp, strN with 1 <= N <= 65496";
  EXPECT_EQ(error_of(Schema::make({{"a", "i64"}, {"b", "int"}})),
            "fields[1]: unknown type 'int' for field 'b'" + valid);
  EXPECT_EQ(error_of(Schema::make({{"a", "str"}})),
            "fields[0]: unknown type 'str' for field 'a'" + valid);
  EXPECT_EQ(error_of(Schema::make({{"a", "str8x"}})),
            "fields[0]: unknown type 'str8x' for field 'a'" + valid);
  EXPECT_EQ(error_of(Schema::make({{"a", "I64"}})),
            "fields[0]: unknown type 'I64' for field 'a'" + valid);
}

TEST(SchemaErrors, StringWidthOutOfRange) {
  const std::string limit =
      "; strN needs 1 <= N <= 65496 (the largest tuple, one frame's payload on every medium)";
  EXPECT_EQ(error_of(Schema::make({{"s", "str0"}})),
            "fields[0]: string width of field 's' is 0" + limit);
  EXPECT_EQ(error_of(Schema::make({{"s", "str65497"}})),
            "fields[0]: string width of field 's' is 65497" + limit);
  EXPECT_EQ(error_of(Schema::make({{"s", "str99999999999"}})),
            "fields[0]: string width of field 's' is 99999999999" + limit);
}

// The limit is one frame's payload on every medium: fabric-rma's 65535-byte frames less the
// 32-byte header, rounded down to the tuples' multiple of 8.
TEST(SchemaErrors, TupleTooLarge) {
  EXPECT_EQ(kMaxTupleBytes, 65496u);
  EXPECT_EQ(kMaxStrWidth, kMaxTupleBytes);
  EXPECT_EQ(make_ok({{"s", "str65496"}}).tuple_bytes(), 65496u);
  EXPECT_EQ(make_ok({{"seq", "i64"}, {"s", "str65488"}}).tuple_bytes(), 65496u);
  // Within the limit but for the tail padding: str65489 ends at byte 65497.
  EXPECT_EQ(error_of(Schema::make({{"seq", "i64"}, {"s", "str65489"}})),
            "fields[1]: with field 's' the tuple needs 65504 bytes; a tuple holds at most 65496 "
            "(one frame's payload on every medium)");
  Pairs fields;
  for (int i = 0; i < 15; ++i) fields.emplace_back("f" + std::to_string(i), "str4096");
  fields.emplace_back("f15", "str4056");
  EXPECT_EQ(make_ok(fields).tuple_bytes(), kMaxTupleBytes);
  fields.emplace_back("f16", "bool");
  EXPECT_EQ(error_of(Schema::make(fields)),
            "fields[16]: with field 'f16' the tuple needs 65504 bytes; a tuple holds at most "
            "65496 (one frame's payload on every medium)");
  EXPECT_EQ(make_ok({{"seq", "i64"}, {"ts", "timestamp"}, {"blob", "str65480"}}).tuple_bytes(),
            kMaxTupleBytes);
  EXPECT_EQ(error_of(Schema::parse("seq:i64, ts:timestamp, blob:str65481")),
            "fields[2]: with field 'blob' the tuple needs 65504 bytes; a tuple holds at most "
            "65496 (one frame's payload on every medium)");
}

TEST(SchemaErrors, ParseSyntax) {
  EXPECT_EQ(error_of(Schema::parse("seq:i64,ts")), "fields[1]: expected 'name:type', got 'ts'");
  EXPECT_EQ(error_of(Schema::parse("seq:i64,")), "fields[1]: expected 'name:type', got ''");
  EXPECT_EQ(error_of(Schema::parse("a:i64:i64")),
            "fields[0]: unknown type 'i64:i64' for field 'a'; valid types: i32, i64, f64, bool, "
            "timestamp, strN with 1 <= N <= 65496");
}

// ---- Big tuples: 32 KiB rows through a batch, a filter, a map, CSV and the generator ----

// 32 KiB tuples: seq@0 ts@8 key@16 blob@24 (32744 bytes).
constexpr std::string_view kBigSchema = "seq:i64, ts:timestamp, key:i64, blob:str32744";
constexpr std::size_t kBlobBytes = 32744;
constexpr std::size_t kBigRows = 8;

// Row r's blob: letters from 'a' + r, one byte shorter per row (so the NUL padding differs);
// row 3 holds a delimiter, a quote and a line break, which CSV must quote.
std::string blob_of(std::size_t r) {
  std::string text(kBlobBytes - r, ' ');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + (r + i) % 26);
  if (r == 3) {
    text[100] = ',';
    text[20000] = '"';
    text[30000] = '\n';
  }
  return text;
}

class BigTuples : public ::testing::Test {
 protected:
  BigTuples() : schema_(Schema::parse(kBigSchema).value()), rows_(schema_, kBigRows) {
    for (std::size_t r = 0; r < kBigRows; ++r) {
      MutRow row = rows_.append();
      seq_.set(row, static_cast<std::int64_t>(r));
      ts_.set(row, Timestamp(std::chrono::nanoseconds(1'000 + static_cast<std::int64_t>(r))));
      key_.set(row, static_cast<std::int64_t>(r % 3));
      blob_.set(row, blob_of(r));
    }
  }

  Schema schema_;
  OwnedBatch rows_;
  FieldRef<std::int64_t> seq_ = FieldRef<std::int64_t>::bind(schema_, "seq").value();
  FieldRef<Timestamp> ts_ = FieldRef<Timestamp>::bind(schema_, "ts").value();
  FieldRef<std::int64_t> key_ = FieldRef<std::int64_t>::bind(schema_, "key").value();
  FieldRef<std::string_view> blob_ = FieldRef<std::string_view>::bind(schema_, "blob").value();
};

// Keeps every row it is given.
class Keep final : public BatchConsumer {
 public:
  void consume(const BatchView& batch) override {
    const auto bytes = batch.bytes();
    data.insert(data.end(), bytes.begin(), bytes.end());
  }
  std::vector<std::byte> data;
};

TEST_F(BigTuples, SchemaAndBatchHoldThirtyTwoKiBRows) {
  EXPECT_EQ(schema_.tuple_bytes(), 32768u);
  EXPECT_EQ(schema_.to_string(), "seq:i64,ts:timestamp,key:i64,blob:str32744");
  EXPECT_EQ(schema_.field(3), (Field{"blob", FieldType::str, 32744, 24}));
  ASSERT_EQ(rows_.size(), kBigRows);
  EXPECT_EQ(rows_.bytes().size(), kBigRows * 32768);
  for (std::size_t r = 0; r < kBigRows; ++r) {
    EXPECT_EQ(seq_.get(rows_.row(r)), static_cast<std::int64_t>(r));
    EXPECT_EQ(blob_.get(rows_.row(r)), blob_of(r)) << "row " << r;
  }
  // The wire's view of the same bytes: a whole number of 32 KiB rows.
  auto wrapped = BatchView::wrap(rows_.bytes(), schema_);
  ASSERT_TRUE(wrapped);
  EXPECT_EQ(wrapped.value().size(), kBigRows);
  EXPECT_EQ(blob_.get(wrapped.value().row(7)), blob_of(7));
}

TEST_F(BigTuples, AFilterPassesWholeRowsWithoutAllocating) {
  auto filter = Filter::make({.predicate = "seq % 2 == 0 and key != 2"}, schema_).value();
  Keep pass;
  filter->output(0).connect(&pass);
  filter->process(0, rows_);  // the first batch may size the evaluator's scratch
  const std::size_t before = g_allocations.load();
  filter->process(0, rows_);
  EXPECT_EQ(g_allocations.load(), before);
  filter->finish(0);
  // seq 0, 4 and 6 (2 has key 2), twice: the rows' bytes exactly as they went in.
  const BatchView out = BatchView::wrap(pass.data, schema_).value();
  ASSERT_EQ(out.size(), 6u);
  const std::size_t want[] = {0, 4, 6, 0, 4, 6};
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(std::memcmp(out.row(i).data(), rows_.row(want[i]).data(), 32768), 0) << "row " << i;
  }
}

TEST_F(BigTuples, AMapCopiesAndCutsBigStringsWithoutAllocating) {
  auto map = Map::make({.fields = {{.name = "seq", .expression = "seq"},
                                   {.name = "blob", .expression = "blob"},
                                   {.name = "head", .expression = "blob", .type = "str16"}}},
                       schema_)
                 .value();
  const Schema& out_schema = map->output(0).schema();
  EXPECT_EQ(out_schema.to_string(), "seq:i64,blob:str32744,head:str16");
  EXPECT_EQ(out_schema.tuple_bytes(), 32768u);
  Keep got;
  map->output(0).connect(&got);
  map->process(0, rows_);
  const std::size_t before = g_allocations.load();
  map->process(0, rows_);
  EXPECT_EQ(g_allocations.load(), before);
  map->finish(0);
  const BatchView out = BatchView::wrap(got.data, out_schema).value();
  ASSERT_EQ(out.size(), 2 * kBigRows);
  const auto seq = FieldRef<std::int64_t>::bind(out_schema, "seq").value();
  const auto blob = FieldRef<std::string_view>::bind(out_schema, "blob").value();
  const auto head = FieldRef<std::string_view>::bind(out_schema, "head").value();
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t r = i % kBigRows;
    EXPECT_EQ(seq.get(out.row(i)), static_cast<std::int64_t>(r));
    EXPECT_EQ(blob.get(out.row(i)), blob_of(r)) << "row " << i;
    EXPECT_EQ(head.get(out.row(i)), blob_of(r).substr(0, 16)) << "row " << i;
  }
}

// A fixed buffer written by an ostream and then read by an istream: neither grows, so the
// allocations counted are the writer's and the reader's own.
class FixedBuffer final : public std::streambuf {
 public:
  explicit FixedBuffer(std::size_t bytes) : bytes_(bytes) {
    setp(bytes_.data(), bytes_.data() + bytes_.size());
  }
  // Reads back what was written.
  void rewind() { setg(bytes_.data(), bytes_.data(), pptr()); }

 private:
  std::vector<char> bytes_;
};

TEST_F(BigTuples, CsvRoundTripsBigStringsWithoutAllocatingPerRow) {
  FixedBuffer buffer(1 << 20);
  std::ostream out(&buffer);
  auto writer = CsvWriter::make({.path = "big.csv", .stream = &out}, schema_).value();
  writer->consume(rows_);  // the first batch sizes the line buffer
  const std::size_t before_write = g_allocations.load();
  writer->consume(rows_);
  EXPECT_EQ(g_allocations.load(), before_write);
  writer->end();
  ASSERT_TRUE(writer->status()) << writer->status().error().describe();
  EXPECT_EQ(writer->rows_written(), 2 * kBigRows);

  buffer.rewind();
  std::istream in(&buffer);
  auto reader = CsvReader::make({.path = "big.csv", .stream = &in}, schema_).value();
  OwnedBatch back(schema_, kBigRows);
  auto first = reader->read(back, kBigRows);  // the first rows size the reader's buffers
  ASSERT_TRUE(first) << first.error().describe();
  ASSERT_EQ(first.value().rows, kBigRows);
  EXPECT_FALSE(first.value().end);
  EXPECT_EQ(std::memcmp(back.bytes().data(), rows_.bytes().data(), rows_.bytes().size()), 0);
  back.clear();
  const std::size_t before_read = g_allocations.load();
  auto second = reader->read(back, kBigRows);
  EXPECT_EQ(g_allocations.load(), before_read);
  ASSERT_TRUE(second) << second.error().describe();
  ASSERT_EQ(second.value().rows, kBigRows);
  EXPECT_FALSE(second.value().end);
  // Every byte comes back: the quoted row 3 and the NUL padding included.
  EXPECT_EQ(std::memcmp(back.bytes().data(), rows_.bytes().data(), rows_.bytes().size()), 0);
  back.clear();
  auto rest = reader->read(back, kBigRows);
  ASSERT_TRUE(rest);
  EXPECT_EQ(rest.value().rows, 0u);
  EXPECT_TRUE(rest.value().end);
  EXPECT_TRUE(reader->done());
}

TEST_F(BigTuples, TheGeneratorFillsBigRowsWithoutAllocating) {
  auto made = Generator::make({.schema = schema_, .start_ns = 5, .limit = 16});
  ASSERT_TRUE(made) << made.error().describe();
  Generator gen = std::move(made).value();
  OwnedBatch out(schema_, kBigRows);
  const std::size_t before = g_allocations.load();
  EXPECT_EQ(gen.fill(out, kBigRows), kBigRows);
  EXPECT_EQ(g_allocations.load(), before);
  for (std::size_t r = 0; r < kBigRows; ++r) {
    EXPECT_EQ(seq_.get(out.row(r)), static_cast<std::int64_t>(r));
    EXPECT_EQ(ts_.get(out.row(r)).time_since_epoch().count(), 5);
    EXPECT_EQ(blob_.get(out.row(r)), "");  // left zeroed: all 32744 bytes NUL
  }
  out.clear();
  EXPECT_EQ(gen.fill(out, kBigRows), kBigRows);
  EXPECT_EQ(seq_.get(out.row(7)), 15);
  EXPECT_TRUE(gen.done());
}

TEST(ErrorLocation, WithinPrefixesOuterLocations) {
  Error error{"field name is empty", "fields[2]"};
  error.within("tick").within("schemas");
  EXPECT_EQ(error.where, "schemas.tick.fields[2]");
  EXPECT_EQ(error.describe(), "schemas.tick.fields[2]: field name is empty");

  Error indexed{"bad", "[3]"};
  EXPECT_EQ(indexed.within("boxes").where, "boxes[3]");
  Error nowhere{"bad", ""};
  EXPECT_EQ(nowhere.within("boxes").where, "boxes");
  EXPECT_EQ((Error{"just this", ""}).describe(), "just this");
}

TEST(ErrorLocation, DescribeListsEveryErrorOnItsOwnLine) {
  const std::vector<Error> errors = {{"one", "a"}, {"two", ""}, {"three", "b[1]"}};
  EXPECT_EQ(describe(errors), "a: one\ntwo\nb[1]: three");
  EXPECT_EQ(describe(std::vector<Error>{}), "");
}

}  // namespace
}  // namespace boreal::ops
