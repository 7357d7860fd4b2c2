#include <boreal/ops/batch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "operators/ops_test_support.hpp"

namespace boreal::ops {
namespace {

using test_support::schema_of;

using namespace std::string_view_literals;

// One field of every type; layout: id@0 n@8 x@16 ok@24 ts@32 sym@40, 48 bytes a tuple.
constexpr std::string_view kAllTypes = "id:i32,n:i64,x:f64,ok:bool,ts:timestamp,sym:str8";

template <class T>
FieldRef<T> bind_ok(const Schema& schema, std::string_view name) {
  Result<FieldRef<T>> ref = FieldRef<T>::bind(schema, name);
  EXPECT_TRUE(ref) << ref.error().describe();
  return ref.value();
}

// The describe() of a failed Result; fails the test on success.
template <class T>
std::string error_of(const Result<T>& result) {
  EXPECT_FALSE(result) << "unexpectedly succeeded";
  return result ? std::string() : result.error().describe();
}

std::vector<unsigned char> bytes_at(Row row, std::size_t offset, std::size_t count) {
  std::vector<unsigned char> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = static_cast<unsigned char>(row.data()[offset + i]);
  }
  return out;
}

static_assert(std::forward_iterator<BatchView::Iterator>);
static_assert(std::ranges::forward_range<BatchView>);
static_assert(std::ranges::forward_range<Batch>);

TEST(FieldRef, EveryTypeRoundTrips) {
  const Schema schema = schema_of(kAllTypes);
  ASSERT_EQ(schema.tuple_bytes(), 48u);
  const auto id = bind_ok<std::int32_t>(schema, "id");
  const auto n = bind_ok<std::int64_t>(schema, "n");
  const auto x = bind_ok<double>(schema, "x");
  const auto ok = bind_ok<bool>(schema, "ok");
  const auto ts = bind_ok<Timestamp>(schema, "ts");
  const auto sym = bind_ok<std::string_view>(schema, "sym");
  EXPECT_EQ(sym.width, 8u);

  const Timestamp late{std::chrono::nanoseconds(1'700'000'000'123'456'789)};
  const Timestamp before_epoch{std::chrono::nanoseconds(-1)};
  OwnedBatch batch(schema, 2);
  MutRow first = batch.append();
  id.set(first, std::numeric_limits<std::int32_t>::min());
  n.set(first, std::numeric_limits<std::int64_t>::max());
  x.set(first, -1.5e300);
  ok.set(first, true);
  ts.set(first, late);
  sym.set(first, "AAPL");
  MutRow second = batch.append();
  id.set(second, 7);
  n.set(second, -42);
  x.set(second, 0.1);
  ok.set(second, false);
  ts.set(second, before_epoch);
  sym.set(second, "ABCDEFGH");

  EXPECT_EQ(id.get(batch.row(0)), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(n.get(batch.row(0)), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(x.get(batch.row(0)), -1.5e300);
  EXPECT_TRUE(ok.get(batch.row(0)));
  EXPECT_EQ(ts.get(batch.row(0)), late);
  EXPECT_EQ(sym.get(batch.row(0)), "AAPL");
  EXPECT_EQ(id.get(batch.row(1)), 7);
  EXPECT_EQ(n.get(batch.row(1)), -42);
  EXPECT_EQ(x.get(batch.row(1)), 0.1);
  EXPECT_FALSE(ok.get(batch.row(1)));
  EXPECT_EQ(ts.get(batch.row(1)), before_epoch);
  EXPECT_EQ(sym.get(batch.row(1)), "ABCDEFGH");
}

TEST(FieldRef, ValuesAreLittleEndianAtTheSchemaOffsets) {
  const Schema schema = schema_of(kAllTypes);
  OwnedBatch batch(schema, 1);
  MutRow row = batch.append();
  bind_ok<std::int32_t>(schema, "id").set(row, 0x01020304);
  bind_ok<std::int64_t>(schema, "n").set(row, 0x1122334455667788);
  bind_ok<bool>(schema, "ok").set(row, true);
  bind_ok<Timestamp>(schema, "ts").set(row, Timestamp{std::chrono::nanoseconds(0x0102)});
  bind_ok<std::string_view>(schema, "sym").set(row, "hi");

  using Bytes = std::vector<unsigned char>;
  EXPECT_EQ(bytes_at(row, 0, 8), (Bytes{0x04, 0x03, 0x02, 0x01, 0, 0, 0, 0}));  // + padding
  EXPECT_EQ(bytes_at(row, 8, 8), (Bytes{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}));
  EXPECT_EQ(bytes_at(row, 24, 8), (Bytes{1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bytes_at(row, 32, 8), (Bytes{0x02, 0x01, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bytes_at(row, 40, 8), (Bytes{'h', 'i', 0, 0, 0, 0, 0, 0}));
}

TEST(FieldRef, StringsAreTruncatedToTheirWidthAndNulPadded) {
  const Schema schema = schema_of("s:str5,flag:bool");  // flag sits right after s, at 5
  const auto s = bind_ok<std::string_view>(schema, "s");
  const auto flag = bind_ok<bool>(schema, "flag");
  OwnedBatch batch(schema, 1);
  MutRow row = batch.append();
  flag.set(row, true);

  s.set(row, "abcdefgh");  // longer than 5: the first 5 bytes, the neighbour untouched
  EXPECT_EQ(s.get(row), "abcde");
  EXPECT_TRUE(flag.get(row));
  EXPECT_EQ(bytes_at(row, 5, 1), std::vector<unsigned char>{1});

  s.set(row, "xy");  // shorter: the rest of the old value is overwritten with NULs
  EXPECT_EQ(s.get(row), "xy");
  EXPECT_EQ(bytes_at(row, 0, 5), (std::vector<unsigned char>{'x', 'y', 0, 0, 0}));

  s.set(row, "12345");  // exactly the width: no terminator needed
  EXPECT_EQ(s.get(row), "12345");

  s.set(row, "");
  EXPECT_EQ(s.get(row), "");
  EXPECT_EQ(bytes_at(row, 0, 5), (std::vector<unsigned char>(5, 0)));

  s.set(row, "a\0b"sv);  // inner NULs are kept, trailing NULs are padding
  EXPECT_EQ(s.get(row), "a\0b"sv);
  s.set(row, "ab\0\0"sv);
  EXPECT_EQ(s.get(row), "ab");
  EXPECT_TRUE(flag.get(row));
}

TEST(FieldRef, StringMayBeSetFromItsOwnBytes) {
  const Schema schema = schema_of("s:str8");
  const auto s = bind_ok<std::string_view>(schema, "s");
  OwnedBatch batch(schema, 1);
  MutRow row = batch.append();
  s.set(row, "abcdefgh");
  s.set(row, s.get(row).substr(2));
  EXPECT_EQ(s.get(row), "cdefgh");
}

TEST(FieldRef, BindByIndexMatchesBindByName) {
  const Schema schema = schema_of(kAllTypes);
  Result<FieldRef<double>> x = FieldRef<double>::bind(schema, std::size_t{2});
  ASSERT_TRUE(x) << x.error().describe();
  EXPECT_EQ(x.value().offset, 16u);
  Result<FieldRef<std::string_view>> sym = FieldRef<std::string_view>::bind(schema, 5);
  ASSERT_TRUE(sym) << sym.error().describe();
  EXPECT_EQ(sym.value().offset, 40u);
  EXPECT_EQ(sym.value().width, 8u);
  EXPECT_EQ(bind_ok<double>(schema, "x").offset, x.value().offset);
}

TEST(FieldRefErrors, UnknownFieldNameQuotesTheSchema) {
  const Schema schema = schema_of(kAllTypes);
  EXPECT_EQ(error_of(FieldRef<std::int64_t>::bind(schema, "price")),
            "no field 'price' in schema id:i32,n:i64,x:f64,ok:bool,ts:timestamp,sym:str8");
  EXPECT_EQ(error_of(FieldRef<std::int64_t>::bind(schema, "N")),
            "no field 'N' in schema id:i32,n:i64,x:f64,ok:bool,ts:timestamp,sym:str8");
}

TEST(FieldRefErrors, WrongCppTypeNamesBothTypes) {
  const Schema schema = schema_of(kAllTypes);
  EXPECT_EQ(error_of(FieldRef<double>::bind(schema, "n")), "fields[1]: field 'n' is i64, not f64");
  EXPECT_EQ(error_of(FieldRef<std::int64_t>::bind(schema, "id")),
            "fields[0]: field 'id' is i32, not i64");
  EXPECT_EQ(error_of(FieldRef<std::int32_t>::bind(schema, "n")),
            "fields[1]: field 'n' is i64, not i32");
  EXPECT_EQ(error_of(FieldRef<std::int64_t>::bind(schema, "ts")),
            "fields[4]: field 'ts' is timestamp, not i64");
  EXPECT_EQ(error_of(FieldRef<Timestamp>::bind(schema, "n")),
            "fields[1]: field 'n' is i64, not timestamp");
  EXPECT_EQ(error_of(FieldRef<bool>::bind(schema, "id")), "fields[0]: field 'id' is i32, not bool");
  EXPECT_EQ(error_of(FieldRef<std::string_view>::bind(schema, "n")),
            "fields[1]: field 'n' is i64, not str");
  EXPECT_EQ(error_of(FieldRef<std::int32_t>::bind(schema, "sym")),
            "fields[5]: field 'sym' is str8, not i32");
}

TEST(FieldRefErrors, IndexOutOfRange) {
  const Schema schema = schema_of(kAllTypes);
  EXPECT_EQ(error_of(FieldRef<std::int32_t>::bind(schema, std::size_t{6})),
            "field index 6 is out of range; the schema has 6 fields");
}

TEST(Batch, AppendFillsUpToCapacityThenIsFull) {
  const Schema schema = schema_of("seq:i64,pad:str24");
  const auto seq = bind_ok<std::int64_t>(schema, "seq");
  OwnedBatch batch(schema, 5);
  EXPECT_EQ(batch.capacity_rows(), 5u);
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.tuple_bytes(), 32u);
  std::int64_t appended = 0;
  while (!batch.full()) seq.set(batch.append(), appended++);
  EXPECT_EQ(appended, 5);
  EXPECT_EQ(batch.size(), 5u);
  EXPECT_FALSE(batch.empty());
  EXPECT_EQ(batch.bytes().size(), 5u * 32u);
  EXPECT_EQ(batch.bytes().data(), batch.buffer().data());
  EXPECT_EQ(seq.get(batch.row(4)), 4);
}

TEST(Batch, AppendNAddsZeroedRowsBackToBack) {
  const Schema schema = schema_of("seq:i64,pad:str8");
  std::vector<std::byte> buffer(4 * schema.tuple_bytes(), std::byte{0xab});
  Batch batch(buffer, schema);
  (void)batch.append();
  MutRow first = batch.append_n(3);
  EXPECT_EQ(batch.size(), 4u);
  EXPECT_TRUE(batch.full());
  EXPECT_EQ(first.data(), buffer.data() + schema.tuple_bytes());
  EXPECT_EQ(bytes_at(first, 0, 3 * 16), (std::vector<unsigned char>(48, 0)));
}

TEST(BatchDeathTest, AppendNPastCapacityAborts) {
  const Schema schema = schema_of("seq:i64");
  OwnedBatch batch(schema, 2);
  (void)batch.append();
  EXPECT_DEATH((void)batch.append_n(2), "Batch::append on a full batch \\(capacity 2 rows\\)");
}

TEST(BatchDeathTest, AppendToAFullBatchAborts) {
  const Schema schema = schema_of("seq:i64");
  OwnedBatch batch(schema, 2);
  (void)batch.append();
  (void)batch.append();
  EXPECT_DEATH((void)batch.append(), "Batch::append on a full batch \\(capacity 2 rows\\)");
  EXPECT_DEATH((void)batch.append_copy(batch.row(0)),
               "Batch::append on a full batch \\(capacity 2 rows\\)");
}

TEST(Batch, AppendZeroesTheRowItReuses) {
  const Schema schema = schema_of("a:i32,b:i64");  // 4 padding bytes after a
  std::vector<std::byte> buffer(2 * schema.tuple_bytes(), std::byte{0xab});
  Batch batch(buffer, schema);
  MutRow row = batch.append();
  bind_ok<std::int32_t>(schema, "a").set(row, -1);
  EXPECT_EQ(bytes_at(row, 4, 12), (std::vector<unsigned char>(12, 0)));
  EXPECT_EQ(buffer[16], std::byte{0xab});  // the next row is not touched until appended

  batch.clear();
  EXPECT_EQ(batch.size(), 0u);
  EXPECT_EQ(batch.capacity_rows(), 2u);
  EXPECT_EQ(bytes_at(batch.append(), 0, 16), (std::vector<unsigned char>(16, 0)));
}

TEST(Batch, ExternalBufferCapacityIgnoresLeftoverBytes) {
  const Schema schema = schema_of("seq:i64,pad:str24");
  std::vector<std::byte> buffer(3 * 32 + 31);
  Batch batch(buffer, schema);
  EXPECT_EQ(batch.capacity_rows(), 3u);
  EXPECT_EQ(batch.buffer().size(), buffer.size());
  EXPECT_EQ(Batch().capacity_rows(), 0u);
  EXPECT_TRUE(Batch().full());
}

TEST(Batch, IteratesRowsInAppendOrder) {
  const Schema schema = schema_of("seq:i64,tag:str4");
  const auto seq = bind_ok<std::int64_t>(schema, "seq");
  const auto tag = bind_ok<std::string_view>(schema, "tag");
  OwnedBatch batch(schema, 4);
  EXPECT_EQ(batch.begin(), batch.end());
  const std::vector<std::string> tags = {"d", "c", "b", "a"};
  for (std::size_t i = 0; i < tags.size(); ++i) {
    MutRow row = batch.append();
    seq.set(row, static_cast<std::int64_t>(10 * i));
    tag.set(row, tags[i]);
  }

  std::vector<std::int64_t> seen;
  std::vector<std::string> seen_tags;
  for (Row row : batch) {
    seen.push_back(seq.get(row));
    seen_tags.emplace_back(tag.get(row));
  }
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 10, 20, 30}));
  EXPECT_EQ(seen_tags, tags);
  EXPECT_EQ(std::ranges::distance(batch), 4);
  std::size_t index = 0;
  for (Row row : batch) EXPECT_EQ(row.data(), batch.row(index++).data());
}

TEST(Batch, AppendCopyDuplicatesARow) {
  const Schema schema = schema_of("seq:i64,tag:str4");
  const auto seq = bind_ok<std::int64_t>(schema, "seq");
  const auto tag = bind_ok<std::string_view>(schema, "tag");
  OwnedBatch source(schema, 1);
  MutRow original = source.append();
  seq.set(original, 99);
  tag.set(original, "copy");
  OwnedBatch target(schema, 2);
  (void)target.append();
  MutRow copy = target.append_copy(source.row(0));
  EXPECT_EQ(seq.get(copy), 99);
  EXPECT_EQ(tag.get(copy), "copy");
  EXPECT_EQ(target.size(), 2u);
  EXPECT_NE(copy.data(), original.data());
}

TEST(Batch, MovingAnOwnedBatchKeepsItsRowsInPlace) {
  const Schema schema = schema_of("seq:i64");
  const auto seq = bind_ok<std::int64_t>(schema, "seq");
  OwnedBatch batch(schema, 3);
  seq.set(batch.append(), 5);
  const std::byte* rows = batch.bytes().data();
  OwnedBatch moved(std::move(batch));
  EXPECT_EQ(moved.bytes().data(), rows);
  EXPECT_EQ(seq.get(moved.row(0)), 5);
  EXPECT_EQ(moved.capacity_rows(), 3u);
  EXPECT_EQ(batch.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(batch.capacity_rows(), 0u);

  OwnedBatch other(schema, 1);
  other = std::move(moved);
  EXPECT_EQ(other.bytes().data(), rows);
  EXPECT_EQ(other.size(), 1u);
}

TEST(BatchWrap, ReadOnlyViewOfAPayloadCopiesNothing) {
  const Schema schema = schema_of("seq:i64,tag:str4");
  const auto seq = bind_ok<std::int64_t>(schema, "seq");
  // A "received frame": bytes written by one batch, read through a view of the same memory.
  std::vector<std::byte> frame(64 * 3);
  Batch writer(frame, schema);
  for (std::int64_t i = 0; i < 5; ++i) seq.set(writer.append(), i * i);
  const std::span<const std::byte> payload = writer.bytes();
  ASSERT_EQ(payload.size(), 5u * 16u);

  Result<BatchView> view = BatchView::wrap(payload, schema);
  ASSERT_TRUE(view) << view.error().describe();
  EXPECT_EQ(view.value().size(), 5u);
  EXPECT_EQ(view.value().bytes().data(), frame.data());
  EXPECT_EQ(view.value().bytes().size(), payload.size());
  std::vector<std::int64_t> seen;
  for (Row row : view.value()) seen.push_back(seq.get(row));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 4, 9, 16}));

  Result<BatchView> counted = BatchView::wrap(payload, schema, 5);
  ASSERT_TRUE(counted) << counted.error().describe();
  EXPECT_EQ(seq.get(counted.value().row(3)), 9);

  const BatchView of_batch = writer;  // every Batch is a view of its rows
  EXPECT_EQ(of_batch.size(), 5u);
  EXPECT_EQ(of_batch.bytes().data(), frame.data());
}

TEST(BatchWrap, WritableWrapEditsRowsInPlace) {
  const Schema schema = schema_of("seq:i64");
  const auto seq = bind_ok<std::int64_t>(schema, "seq");
  std::array<std::byte, 24> pooled{};
  pooled[8] = std::byte{7};  // row 1 holds 7
  Result<Batch> batch = Batch::wrap(pooled, schema);
  ASSERT_TRUE(batch) << batch.error().describe();
  EXPECT_EQ(batch.value().size(), 3u);
  EXPECT_TRUE(batch.value().full());
  EXPECT_EQ(seq.get(batch.value().row(1)), 7);
  seq.set(batch.value().mut_row(2), 0x0102);
  EXPECT_EQ(pooled[16], std::byte{0x02});
  EXPECT_EQ(pooled[17], std::byte{0x01});

  Result<Batch> counted = Batch::wrap(pooled, schema, 3);
  ASSERT_TRUE(counted) << counted.error().describe();
  EXPECT_EQ(counted.value().bytes().data(), pooled.data());
}

TEST(BatchWrap, UnalignedBufferWorks) {
  const Schema schema = schema_of("x:f64,n:i32");
  const auto x = bind_ok<double>(schema, "x");
  const auto n = bind_ok<std::int32_t>(schema, "n");
  std::vector<std::byte> storage(2 * 16 + 1);
  const std::span<std::byte> odd = std::span(storage).subspan(1);  // an odd address
  Batch batch(odd, schema);
  ASSERT_EQ(batch.capacity_rows(), 2u);
  MutRow row = batch.append();
  x.set(row, 2.5);
  n.set(row, -3);
  Result<BatchView> view = BatchView::wrap(batch.bytes(), schema, 1);
  ASSERT_TRUE(view) << view.error().describe();
  EXPECT_EQ(x.get(view.value().row(0)), 2.5);
  EXPECT_EQ(n.get(view.value().row(0)), -3);
}

TEST(BatchWrap, EmptyPayloadIsAnEmptyBatch) {
  const Schema schema = schema_of("seq:i64");
  Result<BatchView> view = BatchView::wrap(std::span<const std::byte>(), schema);
  ASSERT_TRUE(view);
  EXPECT_TRUE(view.value().empty());
  EXPECT_EQ(view.value().begin(), view.value().end());
  EXPECT_TRUE(BatchView::wrap(std::span<const std::byte>(), schema, 0));
}

TEST(BatchWrapErrors, PayloadThatIsNotWholeRows) {
  const Schema schema = schema_of("seq:i64,pad:str24");  // 32-byte rows
  std::vector<std::byte> payload(100);
  EXPECT_EQ(error_of(BatchView::wrap(std::span<const std::byte>(payload), schema)),
            "payload of 100 bytes is not a whole number of 32-byte rows (4 bytes left over)");
  EXPECT_EQ(error_of(Batch::wrap(payload, schema)),
            "payload of 100 bytes is not a whole number of 32-byte rows (4 bytes left over)");
  EXPECT_EQ(error_of(Batch::wrap(std::span(payload).first(31), schema)),
            "payload of 31 bytes is not a whole number of 32-byte rows (31 bytes left over)");
}

TEST(BatchWrapErrors, RowCountThatDoesNotMatchThePayload) {
  const Schema schema = schema_of("seq:i64,pad:str24");
  std::vector<std::byte> payload(96);
  EXPECT_EQ(error_of(BatchView::wrap(std::span<const std::byte>(payload), schema, 4)),
            "payload of 96 bytes does not hold 4 32-byte rows");
  EXPECT_EQ(error_of(Batch::wrap(payload, schema, 2)),
            "payload of 96 bytes does not hold 2 32-byte rows");
  EXPECT_EQ(error_of(Batch::wrap(std::span<std::byte>(), schema, 1)),
            "payload of 0 bytes does not hold 1 32-byte rows");
  // A row count whose byte size wraps around 2^64 is caught, not multiplied.
  const std::uint64_t wraps = (std::numeric_limits<std::uint64_t>::max() / 32) + 4;  // *32 = 96
  EXPECT_EQ(error_of(Batch::wrap(payload, schema, wraps)),
            "payload of 96 bytes does not hold " + std::to_string(wraps) + " 32-byte rows");
}

TEST(SchemaHash, PinnedValueOfAnAllTypesSchema) {
  // Link handshakes compare this value between machines and builds: if it has to change,
  // the wire version has to change with it.
  const Schema schema = schema_of("id:i32,ts:timestamp,price:f64,ok:bool,sym:str8");
  EXPECT_EQ(schema.hash(), 0x1f30560d4315e29eull);
  EXPECT_EQ(schema_of(" id : i32, ts:timestamp ,price:f64,ok:bool,sym:str8").hash(),
            0x1f30560d4315e29eull);
}

TEST(SchemaHash, EqualSchemasHashEqualAndDifferentOnesDiffer) {
  const Schema base = schema_of("id:i32,price:f64,sym:str8");
  Result<Schema> made = Schema::make({{"id", "i32"}, {"price", "f64"}, {"sym", "str8"}});
  ASSERT_TRUE(made);
  EXPECT_EQ(made.value(), base);
  EXPECT_EQ(made.value().hash(), base.hash());

  const std::vector<std::string_view> others = {
      "price:f64,id:i32,sym:str8",  // order
      "id:i32,sym:str8,price:f64",  // order
      "id:i64,price:f64,sym:str8",  // type
      "id:i32,price:f64,sym:str9",  // string width
      "id:i32,price:timestamp,sym:str8",
      "id:i32,price:f64",  // a field fewer
  };
  for (std::string_view text : others) {
    const Schema other = schema_of(text);
    EXPECT_NE(other.hash(), base.hash()) << text;
    EXPECT_FALSE(other == base) << text;
  }
}

}  // namespace
}  // namespace boreal::ops
