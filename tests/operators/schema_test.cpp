#include <boreal/ops/schema.hpp>

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

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
      "; valid types: i32, i64, f64, bool, timestamp, strN with 1 <= N <= 4096";
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
  EXPECT_EQ(error_of(Schema::make({{"s", "str0"}})),
            "fields[0]: string width of field 's' is 0; strN needs 1 <= N <= 4096");
  EXPECT_EQ(error_of(Schema::make({{"s", "str4097"}})),
            "fields[0]: string width of field 's' is 4097; strN needs 1 <= N <= 4096");
  EXPECT_EQ(error_of(Schema::make({{"s", "str99999999999"}})),
            "fields[0]: string width of field 's' is 99999999999; strN needs 1 <= N <= 4096");
}

TEST(SchemaErrors, TupleTooLarge) {
  Pairs fields;
  for (int i = 0; i < 256; ++i) fields.emplace_back("f" + std::to_string(i), "str4096");
  EXPECT_EQ(make_ok(fields).tuple_bytes(), kMaxTupleBytes);
  fields.emplace_back("f256", "bool");
  EXPECT_EQ(error_of(Schema::make(fields)),
            "fields[256]: tuple would exceed 1048576 bytes at field 'f256'");
}

TEST(SchemaErrors, ParseSyntax) {
  EXPECT_EQ(error_of(Schema::parse("seq:i64,ts")), "fields[1]: expected 'name:type', got 'ts'");
  EXPECT_EQ(error_of(Schema::parse("seq:i64,")), "fields[1]: expected 'name:type', got ''");
  EXPECT_EQ(error_of(Schema::parse("a:i64:i64")),
            "fields[0]: unknown type 'i64:i64' for field 'a'; valid types: i32, i64, f64, bool, "
            "timestamp, strN with 1 <= N <= 4096");
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
