#include <boreal/ops/sink.hpp>
#include <boreal/ops/source.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

namespace boreal::ops {
namespace {

constexpr const char* kSchema = "seq:i64,ts:timestamp,key:i64,price:f64,qty:i32,pad:str16";

GeneratorParams params_for(std::uint64_t seed, KeyDistribution distribution) {
  return {.schema = kSchema,
          .rate = 1000.0,
          .keys = {.field = "key", .count = 50, .distribution = distribution, .zipf_s = 1.2},
          .values = {{.field = "price", .min = 1.5, .max = 2.5},
                     {.field = "qty", .min = -5, .max = 5}},
          .start_ns = 5,
          .seed = seed,
          .limit = 3000};
}

// Every byte the generator makes, asked for `batch_rows` rows at a time.
std::vector<std::byte> generate_all(const GeneratorParams& params, std::size_t batch_rows) {
  Generator gen = Generator::make(params).value();
  OwnedBatch batch(gen.schema(), batch_rows);
  std::vector<std::byte> out;
  while (!gen.done()) {
    batch.clear();
    EXPECT_GT(gen.fill(batch, batch_rows), 0u);
    out.insert(out.end(), batch.bytes().begin(), batch.bytes().end());
  }
  return out;
}

std::string error_of(const GeneratorParams& params) {
  auto gen = Generator::make(params);
  return gen ? std::string("(no error)") : gen.error().describe();
}

TEST(Generator, SameSeedSameBytesWhateverTheBatchSize) {
  for (auto distribution : {KeyDistribution::uniform, KeyDistribution::zipf}) {
    const auto params = params_for(42, distribution);
    const auto reference = generate_all(params, 1024);
    ASSERT_EQ(reference.size(), 3000u * 56);  // 52 bytes of fields, rounded up to 8
    for (std::size_t rows : {1, 7, 64, 3000}) {
      EXPECT_EQ(generate_all(params, rows), reference) << "batch rows " << rows;
    }
    EXPECT_NE(generate_all(params_for(43, distribution), 1024), reference);
  }
}

TEST(Generator, WritesSequenceScheduledTimeAndRanges) {
  Generator gen = Generator::make(params_for(7, KeyDistribution::uniform)).value();
  const Schema& schema = gen.schema();
  OwnedBatch batch(schema, 3000);
  ASSERT_EQ(gen.fill(batch, 5000), 3000u);  // the limit
  EXPECT_TRUE(gen.done());
  EXPECT_EQ(gen.fill(batch, 1), 0u);
  auto seq = FieldRef<std::int64_t>::bind(schema, "seq").value();
  auto ts = FieldRef<Timestamp>::bind(schema, "ts").value();
  auto key = FieldRef<std::int64_t>::bind(schema, "key").value();
  auto price = FieldRef<double>::bind(schema, "price").value();
  auto qty = FieldRef<std::int32_t>::bind(schema, "qty").value();
  auto pad = FieldRef<std::string_view>::bind(schema, "pad").value();
  std::vector<int> qty_seen(11, 0);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Row row = batch.row(i);
    ASSERT_EQ(seq.get(row), static_cast<std::int64_t>(i));
    ASSERT_EQ(ts.get(row).time_since_epoch().count(), 5 + static_cast<std::int64_t>(i) * 1'000'000);
    ASSERT_GE(key.get(row), 0);
    ASSERT_LT(key.get(row), 50);
    ASSERT_GE(price.get(row), 1.5);
    ASSERT_LT(price.get(row), 2.5);
    ASSERT_GE(qty.get(row), -5);
    ASSERT_LE(qty.get(row), 5);
    ++qty_seen[static_cast<std::size_t>(qty.get(row) + 5)];
    ASSERT_EQ(pad.get(row), "");  // fields without a rule stay zero
  }
  for (int count : qty_seen) EXPECT_GT(count, 0);  // both ends of the range are reached
}

TEST(Generator, UniformKeysAreEvenlySpread) {
  const std::uint64_t seed = 2024;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Generator gen = Generator::make({.schema = "key:i32",
                                   .keys = {.field = "key", .count = 10},
                                   .seed = seed})
                      .value();
  OwnedBatch batch(gen.schema(), 100'000);
  ASSERT_EQ(gen.fill(batch, 100'000), 100'000u);
  std::vector<int> counts(10, 0);
  auto key = FieldRef<std::int32_t>::bind(gen.schema(), "key").value();
  for (Row row : batch) ++counts.at(static_cast<std::size_t>(key.get(row)));
  // Expected 10,000 each, standard deviation 95: ±1,000 is over 10 sigma.
  for (int count : counts) {
    EXPECT_GT(count, 9'000);
    EXPECT_LT(count, 11'000);
  }
}

TEST(Generator, ZipfRankFrequenciesMatchTheory) {
  for (double s : {0.8, 1.0, 1.5}) {
    const std::uint64_t seed = 99;
    SCOPED_TRACE("seed " + std::to_string(seed) + " s " + std::to_string(s));
    constexpr std::uint64_t kKeys = 100;
    constexpr std::size_t kSamples = 200'000;
    Generator gen = Generator::make({.schema = "key:i64",
                                     .keys = {.field = "key",
                                              .count = kKeys,
                                              .distribution = KeyDistribution::zipf,
                                              .zipf_s = s},
                                     .seed = seed})
                        .value();
    OwnedBatch batch(gen.schema(), kSamples);
    ASSERT_EQ(gen.fill(batch, kSamples), kSamples);
    std::vector<double> counts(kKeys, 0);
    auto key = FieldRef<std::int64_t>::bind(gen.schema(), "key").value();
    for (Row row : batch) ++counts.at(static_cast<std::size_t>(key.get(row)));
    double harmonic = 0;
    for (std::uint64_t r = 1; r <= kKeys; ++r) harmonic += std::pow(static_cast<double>(r), -s);
    for (std::uint64_t rank : {1, 2, 10}) {
      const double expected = std::pow(static_cast<double>(rank), -s) / harmonic;
      const double got = counts[rank - 1] / static_cast<double>(kSamples);
      // Binomial standard deviation is below 0.0011 here; 0.006 is over 5 sigma.
      EXPECT_NEAR(got, expected, 0.006) << "rank " << rank;
    }
  }
}

// The generator's keys are its specification, bit for bit: splitmix64 seeds xoshiro256**, and
// a key below n rejects draws under 2^64 mod n, then takes the remainder. This reference
// computes both with plain division, so the generator's division-free remainder must agree
// with it for every bound (powers of two, primes, up to 2^63, the most an i64 key takes) and
// every draw.
TEST(Generator, KeysFollowTheSpecifiedStreamBitForBit) {
  struct Reference {
    std::uint64_t s[4];
    explicit Reference(std::uint64_t seed) {
      std::uint64_t x = seed;
      for (auto& word : s) {
        std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        word = z ^ (z >> 31);
      }
    }
    std::uint64_t next() {
      const std::uint64_t result = std::rotl(s[1] * 5, 7) * 9;
      const std::uint64_t t = s[1] << 17;
      s[2] ^= s[0];
      s[3] ^= s[1];
      s[1] ^= s[2];
      s[0] ^= s[3];
      s[2] ^= t;
      s[3] = std::rotl(s[3], 45);
      return result;
    }
    std::uint64_t below(std::uint64_t n) {
      const std::uint64_t threshold = (0 - n) % n;
      for (;;) {
        const std::uint64_t r = next();
        if (r >= threshold) return r % n;
      }
    }
  };
  for (const std::uint64_t count :
       {std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{7}, std::uint64_t{1000},
        std::uint64_t{1} << 32, (std::uint64_t{1} << 32) + 15, std::uint64_t{1000000007},
        (std::uint64_t{1} << 62) + 3, std::uint64_t{1} << 63}) {
    for (const std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{42}}) {
      Generator gen = Generator::make({.schema = "key:i64",
                                       .keys = {.field = "key", .count = count},
                                       .seq_field = "",
                                       .time_field = "",
                                       .seed = seed})
                          .value();
      OwnedBatch batch(gen.schema(), 20000);
      ASSERT_EQ(gen.fill(batch, 20000), 20000u);
      auto key = FieldRef<std::int64_t>::bind(gen.schema(), "key").value();
      Reference reference(seed);
      std::size_t row_index = 0;
      for (Row row : batch) {
        ASSERT_EQ(static_cast<std::uint64_t>(key.get(row)), reference.below(count))
            << "count " << count << ", seed " << seed << ", row " << row_index;
        ++row_index;
      }
    }
  }
}

TEST(Generator, FillDueFollowsTheRateExactly) {
  Generator gen = Generator::make({.schema = "seq:i64,ts:timestamp", .rate = 3.0, .limit = 5})
                      .value();
  OwnedBatch batch(gen.schema(), 16);
  const std::int64_t t0 = 1'000'000'000;
  EXPECT_EQ(gen.fill_due(batch, t0), 1u);  // tuple 0 is due at the start
  EXPECT_EQ(gen.fill_due(batch, t0 + 333'333'332), 0u);
  EXPECT_EQ(gen.fill_due(batch, t0 + 333'333'333), 1u);
  EXPECT_EQ(gen.fill_due(batch, t0 + 1'000'000'000), 2u);  // at 666,666,666 and 1 s
  EXPECT_EQ(gen.fill_due(batch, t0 + 100'000'000'000), 1u);  // the limit of 5
  EXPECT_TRUE(gen.done());
  auto ts = FieldRef<std::int64_t>{8};
  const std::vector<std::int64_t> want = {t0, t0 + 333'333'333, t0 + 666'666'666,
                                          t0 + 1'000'000'000, t0 + 1'333'333'333};
  ASSERT_EQ(batch.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ts.get(batch.row(i)), want[i]);
}

TEST(Generator, FillDueIsBoundedByTheBatchAndCatchesUpLater) {
  Generator gen = Generator::make({.schema = "seq:i64", .rate = 1e6, .start_ns = 0}).value();
  OwnedBatch batch(gen.schema(), 100);
  EXPECT_EQ(gen.fill_due(batch, 999'999), 100u);  // 1,000 due, room for 100
  batch.clear();
  EXPECT_EQ(gen.fill_due(batch, 999'999), 100u);
  EXPECT_EQ(gen.generated(), 200u);
  EXPECT_EQ(gen.fill_due(batch, -5), 0u);  // before the start
}

TEST(Generator, UnlimitedRateStampsNow) {
  Generator gen = Generator::make({.schema = "seq:i64,ts:timestamp", .limit = 10}).value();
  OwnedBatch batch(gen.schema(), 4);
  EXPECT_EQ(gen.fill_due(batch, 77), 4u);
  batch.clear();
  EXPECT_EQ(gen.fill_due(batch, 88), 4u);
  auto ts = FieldRef<std::int64_t>{8};
  EXPECT_EQ(ts.get(batch.row(0)), 88);
  EXPECT_EQ(ts.get(batch.row(3)), 88);
}

TEST(Generator, StringKeysAreDecimalText) {
  Generator gen =
      Generator::make({.schema = "key:str3", .keys = {.field = "key", .count = 1000}}).value();
  OwnedBatch batch(gen.schema(), 500);
  gen.fill(batch, 500);
  auto key = FieldRef<std::string_view>::bind(gen.schema(), "key").value();
  for (Row row : batch) {
    const std::string text(key.get(row));
    ASSERT_FALSE(text.empty());
    ASSERT_EQ(std::to_string(std::stoi(text)), text);
  }
}

TEST(GeneratorParams, ReportsEveryProblemAtOnce) {
  EXPECT_EQ(error_of({.schema = "a:i64,b:str4",
                      .rate = -1.0,
                      .keys = {.field = "b", .count = 100'000},
                      .values = {{.field = "zz", .min = 0, .max = 1},
                                 {.field = "b", .min = 0, .max = 1}}}),
            "params.rate: rate must be a positive, finite number of tuples per second, got -1\n"
            "params.keys.field: key 99999 needs 5 bytes; field 'b' is str4\n"
            "params.values[0].field: no field 'zz' in schema 'a:i64,b:str4'\n"
            "params.values[1].field: field 'b' has type str4; a value range needs i32, i64 or "
            "f64");
}

TEST(GeneratorParams, BadSchemaText) {
  EXPECT_EQ(error_of({.schema = "a:i33"}),
            "params.schema.fields[0]: unknown type 'i33' for field 'a'; valid types: i32, i64, "
            "f64, bool, timestamp, strN with 1 <= N <= 65496");
}

TEST(GeneratorParams, KeyProblems) {
  EXPECT_EQ(error_of({.schema = "k:f64", .keys = {.field = "k", .count = 0}}),
            "params.keys.count: key count must be at least 1\n"
            "params.keys.field: key field 'k' has type f64; expected i32, i64 or strN");
  EXPECT_EQ(error_of({.schema = "k:i32", .keys = {.field = "x"}}),
            "params.keys.field: no field 'x' in schema 'k:i32'");
  EXPECT_EQ(error_of({.schema = "k:i32",
                      .keys = {.field = "k", .count = 3'000'000'000}}),
            "params.keys.count: key count 3000000000 does not fit the i32 field 'k'");
  EXPECT_EQ(error_of({.schema = "k:i32",
                      .keys = {.field = "k", .distribution = KeyDistribution::zipf, .zipf_s = 0}}),
            "params.keys.zipf_s: Zipf exponent must be positive and finite, got 0");
  EXPECT_EQ(error_of({.schema = "seq:i64", .keys = {.field = "seq"}}),
            "params.keys.field: field 'seq' is already the sequence field");
}

TEST(GeneratorParams, SeqAndTimeFieldTypes) {
  EXPECT_EQ(error_of({.schema = "seq:i32,ts:f64"}),
            "params.seq_field: field 'seq' has type i32; expected i64 (set it to \"\" to leave "
            "the field alone)\n"
            "params.time_field: field 'ts' has type f64; expected timestamp or i64 (set it to "
            "\"\" to leave the field alone)");
  EXPECT_EQ(error_of({.schema = "seq:i32,ts:f64", .seq_field = "", .time_field = ""}),
            "(no error)");
}

TEST(GeneratorParams, RangeProblems) {
  EXPECT_EQ(error_of({.schema = "a:i32,b:i64,c:f64,seq:i64",
                      .values = {{.field = "a", .min = 0, .max = 3e9},
                                 {.field = "b", .min = 0.5, .max = 1},
                                 {.field = "c", .min = 2, .max = 1},
                                 {.field = "c", .min = 0, .max = 1},
                                 {.field = "seq", .min = 0, .max = 1}}}),
            "params.values[0]: range [0, 3e+09] of i32 field 'a' needs integer bounds "
            "within the type\n"
            "params.values[1]: range [0.5, 1] of i64 field 'b' needs integer bounds within the "
            "type\n"
            "params.values[2]: range [2, 1] is empty or not finite\n"
            "params.values[3].field: field 'c' already has a range (values[2])\n"
            "params.values[4].field: field 'seq' is already written as the sequence number");
}

// ---- CSV --------------------------------------------------------------------------------

}  // namespace

// gtest finds it by argument-dependent lookup, so it lives in CsvRead's namespace.
void PrintTo(const CsvRead& got, std::ostream* out) {
  *out << "{rows " << got.rows << ", end " << (got.end ? "true" : "false") << "}";
}

namespace {

constexpr const char* kCsvSchema = "id:i64,n:i32,x:f64,ok:bool,t:timestamp,s:str8";

std::string read_error(const std::string& text, bool header = true) {
  const Schema schema = Schema::parse(kCsvSchema).value();
  std::istringstream in(text);
  auto reader = CsvReader::make({.path = "in.csv", .stream = &in, .header = header}, schema);
  if (!reader) return reader.error().describe();
  OwnedBatch batch(schema, 16);
  for (bool end = false; !end;) {  // rows before a bad record come in one call, its error next
    auto got = reader.value()->read(batch, 16);
    if (!got) return got.error().describe();
    end = got.value().end;
  }
  if (!reader.value()->done()) return "(not done)";
  return "(read " + std::to_string(batch.size()) + " rows)";
}

TEST(CsvReader, ReadsValuesAndQuotes) {
  EXPECT_EQ(read_error("id,n,x,ok,t,s\n1,2,0.5,true,9,abc\n-3,-4,1e10,0,-1,\"a,\"\"b\"\"\"\r\n"),
            "(read 2 rows)");
  const Schema schema = Schema::parse(kCsvSchema).value();
  std::istringstream in("7,8,-0.25,1,123,\"x\ny\"");
  auto reader = CsvReader::make({.path = "in.csv", .stream = &in, .header = false}, schema).value();
  OwnedBatch batch(schema, 4);
  // The call that reaches the end of the input says so; a later one returns no rows and the end.
  ASSERT_EQ(reader->read(batch, 4).value(), (CsvRead{.rows = 1, .end = true}));
  EXPECT_TRUE(reader->done());
  EXPECT_EQ(reader->read(batch, 4).value(), (CsvRead{.rows = 0, .end = true}));
  const Row row = batch.row(0);
  EXPECT_EQ(FieldRef<std::int64_t>::bind(schema, "id").value().get(row), 7);
  EXPECT_EQ(FieldRef<std::int32_t>::bind(schema, "n").value().get(row), 8);
  EXPECT_EQ(FieldRef<double>::bind(schema, "x").value().get(row), -0.25);
  EXPECT_TRUE(FieldRef<bool>::bind(schema, "ok").value().get(row));
  EXPECT_EQ(FieldRef<Timestamp>::bind(schema, "t").value().get(row).time_since_epoch().count(),
            123);
  EXPECT_EQ(FieldRef<std::string_view>::bind(schema, "s").value().get(row), "x\ny");
}

TEST(CsvReader, BadNumbersNameLineColumnAndExpectation) {
  EXPECT_EQ(read_error("id,n,x,ok,t,s\n1,2,3,true,4,a\n1,2,x1,true,4,a\n"),
            "in.csv:3:5: bad f64 value 'x1' for field 'x': expected a number");
  EXPECT_EQ(read_error("1,2x,3,true,4,a\n", false),
            "in.csv:1:3: bad i32 value '2x' for field 'n': expected an integer");
  EXPECT_EQ(read_error("1,3000000000,3,true,4,a\n", false),
            "in.csv:1:3: bad i32 value '3000000000' for field 'n': out of range");
  EXPECT_EQ(read_error("1,2,3,yes,4,a\n", false),
            "in.csv:1:7: bad bool value 'yes' for field 'ok': expected true, false, 1 or 0");
  EXPECT_EQ(read_error("1,2,3,1,4.5,a\n", false),
            "in.csv:1:9: bad timestamp value '4.5' for field 't': expected integer "
            "nanoseconds since the epoch");
  EXPECT_EQ(read_error("1,2,1e999,1,4,a\n", false),
            "in.csv:1:5: bad f64 value '1e999' for field 'x': out of range");
}

TEST(CsvReader, ColumnCountErrors) {
  EXPECT_EQ(read_error("1,2,3\n", false),
            "in.csv:1:6: too few columns: expected 6 (id,n,x,ok,t,s), got 3");
  EXPECT_EQ(read_error("1,2,3,1,4,a,zz,w\n", false),
            "in.csv:1:13: too many columns: expected 6 (id,n,x,ok,t,s), got 8");
  EXPECT_EQ(read_error("1,2,3,1,4,a\n\n", false),
            "in.csv:2:1: too few columns: expected 6 (id,n,x,ok,t,s), got 1");
}

TEST(CsvReader, StringLongerThanItsField) {
  EXPECT_EQ(read_error("1,2,3,1,4,\"123456789\"\n", false),
            "in.csv:1:11: value of 9 bytes for field 's' is longer than str8");
}

TEST(CsvReader, QuotingErrors) {
  EXPECT_EQ(read_error("1,2,3,1,4,\"abc\n\n", false), "in.csv:1:11: unterminated quoted field");
  EXPECT_EQ(read_error("1,2,3,1,4,\"ab\"c\n", false),
            "in.csv:1:15: unexpected 'c' after a closing quote");
}

TEST(CsvReader, HeaderMustNameTheFields) {
  EXPECT_EQ(read_error("id,n,y,ok,t,s\n"),
            "in.csv:1:6: header names 'y' where the schema has field 'x'");
  EXPECT_EQ(read_error(""),
            "in.csv:1:1: expected a header line naming the fields (id,n,x,ok,t,s), got an "
            "empty input");
  EXPECT_EQ(read_error("id,n\n"),
            "in.csv:1:5: too few columns: expected 6 (id,n,x,ok,t,s), got 2");
}

TEST(CsvReader, RowsBeforeAnErrorArriveFirst) {
  const Schema schema = Schema::parse("a:i64").value();
  std::istringstream in("1\n2\nzz\n4\n");
  auto reader = CsvReader::make({.path = "p", .stream = &in, .header = false}, schema).value();
  OwnedBatch batch(schema, 8);
  EXPECT_EQ(reader->read(batch, 8).value(), (CsvRead{.rows = 2, .end = false}));
  auto next = reader->read(batch, 8);
  ASSERT_FALSE(next);
  EXPECT_EQ(next.error().describe(),
            "p:3:1: bad i64 value 'zz' for field 'a': expected an integer");
  EXPECT_FALSE(reader->read(batch, 8));  // stuck
  EXPECT_EQ(reader->rows_read(), 2u);
}

TEST(CsvReader, MissingFile) {
  const Schema schema = Schema::parse("a:i64").value();
  auto reader = CsvReader::make({.path = "/nonexistent/boreal.csv"}, schema);
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().describe(),
            "params.path: cannot open '/nonexistent/boreal.csv': No such file or directory");
}

// A file of `rows` rows (a = 0, 1, 2, ...) under a header, read through a 16-row batch by the
// loop source.hpp documents. Returns "rows=<n> sum=<sum of a> calls=<reads> last=<rows of the
// last read>".
std::string read_in_batches(int rows, bool stop_at_zero_rows) {
  const Schema schema = Schema::parse("a:i64").value();
  const std::string path = ::testing::TempDir() + "boreal_csv_loop_" +
                           std::to_string(::getpid()) + "_" + std::to_string(rows) + ".csv";
  {
    std::ofstream file(path, std::ios::binary);
    file << "a\n";
    for (int i = 0; i < rows; ++i) file << i << "\n";
  }
  auto reader = CsvReader::make({.path = path}, schema).value();
  auto a = FieldRef<std::int64_t>::bind(schema, "a").value();
  OwnedBatch batch(schema, 16);
  std::size_t total = 0;
  std::int64_t sum = 0;
  int calls = 0;
  std::size_t last = 0;
  for (bool end = false; !end;) {
    batch.clear();
    auto got = reader->read(batch);
    ++calls;
    if (!got) return got.error().describe();
    last = got.value().rows;
    // The other natural loop, on the count: 0 rows only ever comes with the end.
    end = stop_at_zero_rows ? got.value().rows == 0 : got.value().end;
    if (got.value().rows != batch.size()) return "rows " + std::to_string(last) + " != batch";
    for (Row row : batch) sum += a.get(row);
    total += batch.size();
  }
  std::remove(path.c_str());
  return "rows=" + std::to_string(total) + " sum=" + std::to_string(sum) +
         " calls=" + std::to_string(calls) + " last=" + std::to_string(last) +
         " done=" + (reader->done() ? "yes" : "no");
}

TEST(CsvReader, NaturalLoopReadsEveryRowOfAFileLargerThanABatch) {
  // 100 rows: six full batches, then the last 4 rows with the end.
  EXPECT_EQ(read_in_batches(100, false), "rows=100 sum=4950 calls=7 last=4 done=yes");
  // 96 rows fill six batches exactly; the seventh call finds the end with no rows.
  EXPECT_EQ(read_in_batches(96, false), "rows=96 sum=4560 calls=7 last=0 done=yes");
  // Stopping at the first read that returns no rows: one more call when the end came with
  // the last rows, and every row all the same.
  EXPECT_EQ(read_in_batches(100, true), "rows=100 sum=4950 calls=8 last=0 done=yes");
  EXPECT_EQ(read_in_batches(96, true), "rows=96 sum=4560 calls=7 last=0 done=yes");
}

// The loop that truncated silently before CsvRead: it never clears its batch, so the second
// call found the batch full and returned 0 rows, which looked like the end of the input.
TEST(CsvReaderDeathTest, ReadingIntoAFullBatchAbortsInsteadOfLookingLikeTheEnd) {
  const Schema schema = Schema::parse("a:i64").value();
  std::istringstream in("1\n2\n3\n4\n5\n6\n");
  auto reader = CsvReader::make({.path = "p", .stream = &in, .header = false}, schema).value();
  OwnedBatch batch(schema, 4);
  ASSERT_EQ(reader->read(batch).value(), (CsvRead{.rows = 4, .end = false}));
  EXPECT_DEATH((void)reader->read(batch),
               "boreal: CsvReader::read of 'p' into a full batch \\(4 rows\\): clear or hand "
               "over the batch before reading again \\(0 rows would look like the end of the "
               "input\\)");
  batch.clear();
  EXPECT_DEATH((void)reader->read(batch, 0), "boreal: CsvReader::read of 'p' with max_rows 0: ");
  // Neither aborted call consumed input (they ran in a child process; this is the parent's
  // reader, which the checks leave where it was).
  EXPECT_EQ(reader->read(batch).value(), (CsvRead{.rows = 2, .end = true}));
  EXPECT_EQ(reader->rows_read(), 6u);
}

TEST(CsvWriter, WritesHeaderRowsAndQuotesWhenNeeded) {
  const Schema schema = Schema::parse("id:i64,x:f64,ok:bool,s:str8").value();
  OwnedBatch batch(schema, 4);
  auto id = FieldRef<std::int64_t>::bind(schema, "id").value();
  auto x = FieldRef<double>::bind(schema, "x").value();
  auto ok = FieldRef<bool>::bind(schema, "ok").value();
  auto s = FieldRef<std::string_view>::bind(schema, "s").value();
  MutRow a = batch.append();
  id.set(a, -1);
  x.set(a, 0.1);
  ok.set(a, true);
  s.set(a, "plain");
  MutRow b = batch.append();
  id.set(b, 2);
  x.set(b, 1e300);
  s.set(b, "a,\"b\"");
  std::ostringstream out;
  auto writer = CsvWriter::make({.path = "out", .stream = &out}, schema).value();
  writer->consume(batch);
  writer->end();
  EXPECT_TRUE(writer->status());
  EXPECT_EQ(writer->rows_written(), 2u);
  EXPECT_EQ(out.str(), "id,x,ok,s\n-1,0.1,true,plain\n2,1e+300,false,\"a,\"\"b\"\"\"\n");
}

// A run that checkpointed its CSV at some byte and died continues the file from there: what
// it wrote after the checkpoint is dropped, and the rows after it follow without a header.
TEST(CsvWriter, ResumesAFileAtACheckpointedPosition) {
  const Schema schema = Schema::parse("id:i64").value();
  auto id = FieldRef<std::int64_t>::bind(schema, "id").value();
  auto rows = [&](std::int64_t from, std::int64_t to) {
    OwnedBatch batch(schema, 8);
    for (std::int64_t i = from; i < to; ++i) id.set(batch.append(), i);
    return batch;
  };
  const std::string path = ::testing::TempDir() + "resume_" + std::to_string(::getpid()) + ".csv";
  std::uint64_t at = 0;
  {
    auto writer = CsvWriter::make({.path = path}, schema).value();
    writer->consume(rows(0, 3));
    at = writer->checkpoint().value();
    EXPECT_EQ(at, 9u);  // "id\n0\n1\n2\n"
    writer->consume(rows(3, 5));  // lost with the run
    writer->end();
  }
  {
    auto writer = CsvWriter::make({.path = path, .resume_at = at}, schema).value();
    writer->consume(rows(3, 6));
    EXPECT_EQ(writer->checkpoint().value(), 15u);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "id\n0\n1\n2\n3\n4\n5\n");

  const auto beyond = CsvWriter::make({.path = path, .resume_at = 99}, schema);
  ASSERT_FALSE(beyond.has_value());
  EXPECT_EQ(beyond.error().message,
            "cannot continue '" + path + "' after byte 99: it holds only 15 bytes");
  std::remove(path.c_str());
}

TEST(CsvRoundTrip, ReaderReadsBackTheWrittenBytes) {
  const Schema schema = Schema::parse(kCsvSchema).value();
  OwnedBatch batch(schema, 64);
  // Generated rows plus awkward hand-made ones.
  Generator gen = Generator::make({.schema = schema,
                                   .values = {{.field = "id", .min = -1e15, .max = 1e15},
                                              {.field = "n", .min = -2147483648.0,
                                               .max = 2147483647.0},
                                              {.field = "x", .min = -1e6, .max = 1e6}},
                                   .seed = 5})
                      .value();
  gen.fill(batch, 40);
  auto x = FieldRef<double>::bind(schema, "x").value();
  auto s = FieldRef<std::string_view>::bind(schema, "s").value();
  auto ok = FieldRef<bool>::bind(schema, "ok").value();
  const double doubles[] = {0.1, -0.0, 5e-324, 1.7976931348623157e308,
                            std::numeric_limits<double>::infinity(), 1.0 / 3};
  const char* strings[] = {"", "a,b", "\"", "x\ny", "\r\n", "12345678"};
  for (int i = 0; i < 6; ++i) {
    MutRow row = batch.append();
    x.set(row, doubles[i]);
    s.set(row, strings[i]);
    ok.set(row, i % 2 == 0);
  }
  for (char delimiter : {',', ';', '\t'}) {
    std::stringstream text;
    auto writer = CsvWriter::make({.path = "t", .stream = &text, .delimiter = delimiter}, schema)
                      .value();
    writer->consume(batch);
    writer->end();
    auto reader =
        CsvReader::make({.path = "t", .stream = &text, .delimiter = delimiter}, schema).value();
    for (std::size_t rows : {1, 7, 64}) {
      text.clear();
      text.seekg(0);
      reader = CsvReader::make({.path = "t", .stream = &text, .delimiter = delimiter}, schema)
                   .value();
      OwnedBatch back(schema, 64);
      for (bool end = false; !end;) {
        auto got = reader->read(back, rows);
        ASSERT_TRUE(got) << got.error().describe();
        end = got.value().end;
      }
      ASSERT_EQ(back.size(), batch.size());
      EXPECT_TRUE(std::equal(back.bytes().begin(), back.bytes().end(), batch.bytes().begin()))
          << "delimiter " << int(delimiter) << " rows " << rows;
    }
  }
}

TEST(CsvRoundTrip, ThroughAFile) {
  const Schema schema = Schema::parse("a:i64,b:str4").value();
  const std::string path =
      ::testing::TempDir() + "boreal_csv_" + std::to_string(::getpid()) + ".csv";
  OwnedBatch batch(schema, 3);
  for (int i = 0; i < 3; ++i) {
    MutRow row = batch.append();
    FieldRef<std::int64_t>{0}.set(row, i * 11);
    FieldRef<std::string_view>{8, 4}.set(row, std::string(static_cast<std::size_t>(i), 'q'));
  }
  {
    auto writer = CsvWriter::make({.path = path}, schema).value();
    writer->consume(batch);
    writer->end();
    ASSERT_TRUE(writer->status());
  }
  auto reader = CsvReader::make({.path = path}, schema).value();
  OwnedBatch back(schema, 3);
  // The batch filled up at the last row, before the reader could see the end of the file.
  EXPECT_EQ(reader->read(back, 3).value(), (CsvRead{.rows = 3, .end = false}));
  EXPECT_TRUE(std::equal(back.bytes().begin(), back.bytes().end(), batch.bytes().begin()));
  std::remove(path.c_str());
}

// ---- sinks ------------------------------------------------------------------------------

TEST(CountSink, CountsRowsBatchesAndBytesFromAnOutput) {
  const Schema schema = Schema::parse("a:i64,b:str20").value();  // 32-byte rows
  Output out(schema, 10);
  CountSink count;
  out.connect(&count);
  for (int i = 0; i < 25; ++i) out.append();
  EXPECT_EQ(count.rows(), 20u);  // two full batches handed on
  EXPECT_FALSE(count.ended());
  out.end();
  EXPECT_EQ(count.rows(), 25u);
  EXPECT_EQ(count.batches(), 3u);
  EXPECT_EQ(count.bytes(), 25u * 32);
  EXPECT_TRUE(count.ended());
  DiscardSink nothing;
  out.connect(&nothing);
  out.append();
  out.end();
  EXPECT_EQ(count.rows(), 25u);
}

TEST(LatencySink, RecordsNowMinusTimestampWithAFakeClock) {
  const Schema schema = Schema::parse("seq:i64,ts:timestamp").value();
  std::int64_t now = 1000;
  auto sink = LatencySink::make({.field = "ts", .clock = [&] { return now; }}, schema).value();
  OwnedBatch batch(schema, 3);
  for (std::int64_t ts : {100, 200, 300}) FieldRef<std::int64_t>{8}.set(batch.append(), ts);
  sink->consume(batch);
  now = 250;  // 300 is then in the future: a negative latency, counted as 0
  sink->consume(batch);
  const LatencyHistogram& h = sink->histogram();
  EXPECT_EQ(h.count(), 6u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 900);
  EXPECT_EQ(h.negative_count(), 1u);
  EXPECT_EQ(h.percentile(50), 150);  // values 0, 50, 150, 700, 800, 900
  // What a caller splitting the latency into stages needs: the last batch's clock reading
  // and its first row's time.
  EXPECT_EQ(sink->last_now_ns(), 250);
  EXPECT_EQ(sink->last_first_time_ns(), 100);
}

TEST(LatencySink, AnEmptyBatchLeavesTheLastReadingAlone) {
  const Schema schema = Schema::parse("seq:i64,ts:timestamp").value();
  std::int64_t now = 0;
  auto sink = LatencySink::make({.field = "ts", .clock = [&] { return now; }}, schema).value();
  EXPECT_EQ(sink->last_now_ns(), 0);
  EXPECT_EQ(sink->last_first_time_ns(), 0);
  OwnedBatch batch(schema, 1);
  FieldRef<std::int64_t>{8}.set(batch.append(), 40);
  now = 70;
  sink->consume(batch);
  now = 90;
  sink->consume(OwnedBatch(schema, 1));
  EXPECT_EQ(sink->last_now_ns(), 70);
  EXPECT_EQ(sink->last_first_time_ns(), 40);
  EXPECT_EQ(sink->histogram().count(), 1u);
}

TEST(LatencySink, FieldMustBeATime) {
  const Schema schema = Schema::parse("a:f64").value();
  auto missing = LatencySink::make({.field = "ts"}, schema);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().describe(), "params.field: no field 'ts' in schema 'a:f64'");
  auto wrong = LatencySink::make({.field = "a"}, schema);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().describe(),
            "params.field: field 'a' has type f64; expected timestamp or i64 (ns)");
}

}  // namespace
}  // namespace boreal::ops
