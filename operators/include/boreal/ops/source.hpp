// Sources: where a query network's tuples come from when no upstream node sends them.
//
// Generator writes synthetic tuples of any schema: a sequence number, a scheduled time, a key
// drawn uniformly or Zipf-distributed, numeric values drawn uniformly from ranges. Its output
// is a function of its parameters alone: the same seed gives the same bytes, however the rows
// are split into batches (each row consumes the random stream in a fixed order).
//
//   auto gen = Generator::make({.schema = "seq:i64,ts:timestamp,key:i64,price:f64,pad:str32",
//                               .rate = 1e6,
//                               .keys = {.field = "key", .count = 1000,
//                                        .distribution = KeyDistribution::zipf, .zipf_s = 1.1},
//                               .values = {{.field = "price", .min = 1, .max = 500}},
//                               .seed = 42, .limit = 1'000'000}).value();
//   OwnedBatch batch(gen.schema(), 1024);
//   gen.fill(batch, 1024);                        // as fast as the caller asks
//   gen.fill_due(batch, clock_ns());              // only the rows due by now at the rate
//
// CsvReader reads rows of a schema from CSV text (a file or any std::istream) and reports the
// first malformed value as "file:line:column" with what was expected. Each read() says how
// many rows it appended and whether the input has ended (CsvRead below), so a loop stops at
// the end of the input and nowhere else:
//
//   auto reader = CsvReader::make({.path = "trades.csv"}, schema).value();
//   OwnedBatch batch(schema, 1024);
//   for (bool end = false; !end;) {
//     batch.clear();
//     auto got = reader->read(batch);             // up to the room in the batch
//     if (!got) return got.error();               // "trades.csv:17:5: bad f64 value ..."
//     end = got.value().end;
//     consume(batch);                             // may be empty on the last turn
//   }
//
// Neither is a Box: a source has no input. Drive one from the caller's thread and hand its
// batches to a box's process() or any BatchConsumer. Not thread-safe; one thread per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iosfwd>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

enum class KeyDistribution : std::uint8_t { uniform, zipf };

struct KeyParams {
  // The field that receives the key: i32, i64 (the key itself), or strN (its decimal text,
  // which must fit in N bytes). Empty: the generator writes no key.
  std::string field{};
  // Keys are 0 .. count-1. With zipf, key 0 is the most frequent (rank 1), key r-1 has
  // probability proportional to 1/r^s.
  std::uint64_t count = 1;
  KeyDistribution distribution = KeyDistribution::uniform;
  double zipf_s = 1.0;  // the Zipf exponent s > 0; used only with KeyDistribution::zipf
};

// A numeric field's values: uniform in [min, max] for i32/i64 (inclusive; min and max must be
// integers, exact up to 2^53) and in [min, max) for f64 (min == max gives min).
struct ValueRange {
  std::string field{};
  double min = 0;
  double max = 0;
};

struct GeneratorParams {
  // The tuples' schema, or its text ("seq:i64,ts:timestamp,..."); the tuple size follows
  // from it (pad with a strN field to reach a size).
  std::variant<std::string, Schema> schema{};
  // Tuples per second for fill_due() and for the scheduled times; nullopt: unlimited.
  std::optional<double> rate{};
  KeyParams keys{};
  std::vector<ValueRange> values{};
  // Written 0, 1, 2, ... if the schema has this field; it must then be i64. "" for none.
  std::string seq_field = "seq";
  // Written with each tuple's scheduled time (ns) if the schema has this field; it must then
  // be a timestamp or i64. "" for none.
  std::string time_field = "ts";
  // The scheduled time of tuple 0 (ns). nullopt: fixed by the first fill or fill_due call,
  // to fill_due()'s `now`, or to 0 when fill() comes first.
  std::optional<std::int64_t> start_ns{};
  std::uint64_t seed = 1;
  // Total tuples, after which the generator is done(); nullopt: endless.
  std::optional<std::uint64_t> limit{};

  // Every problem at once; each Error's `where` is "params.<member>[...]".
  [[nodiscard]] std::vector<Error> validate() const;
};

class Generator {
 public:
  static constexpr std::uint64_t kEndless = std::numeric_limits<std::uint64_t>::max();

  // Validates (every problem, joined by describe()) and binds the fields once.
  static Result<Generator> make(const GeneratorParams& params);

  [[nodiscard]] const Schema& schema() const noexcept { return schema_; }

  // Appends up to max_rows rows (fewer when `out` fills up or the limit is reached) and
  // returns how many. Scheduled times follow the rate from start_ns (all rows get start_ns
  // with an unlimited rate). Never allocates. Precondition: `out` has schema().
  std::size_t fill(Batch& out, std::size_t max_rows);

  // Appends the rows due by `now_ns` at the rate that have not been generated yet (bounded
  // by the room in `out` and the limit) and returns how many: tuple i is due at
  // start + floor(i * 1e9 / rate) ns. With an unlimited rate every row is due, and gets
  // `now_ns` as its time. The first call fixes the start when params.start_ns was not set.
  std::size_t fill_due(Batch& out, std::int64_t now_ns);

  // Scheduled time of tuple `index` (ns); requires a finite rate or gives the start.
  [[nodiscard]] std::int64_t scheduled_ns(std::uint64_t index) const noexcept;
  // Rows generated so far / whether the limit has been reached.
  [[nodiscard]] std::uint64_t generated() const noexcept { return next_; }
  [[nodiscard]] bool done() const noexcept { return next_ >= limit_; }

 private:
  struct Rng {  // xoshiro256** seeded through splitmix64: specified bit for bit, fast
    std::uint64_t state[4];
    std::uint64_t next() noexcept;
    double unit() noexcept;  // [0, 1)
    std::uint64_t below(std::uint64_t bound) noexcept;  // [0, bound), unbiased
    // The same draw, bit for bit, with what depends on the bound alone computed once by
    // the caller (Bound::of): no division per draw.
    __extension__ typedef unsigned __int128 U128;
    struct Bound {
      std::uint64_t value = 1;
      std::uint64_t threshold = 0;  // 2^64 mod value: draws below it are rejected
      U128 inverse = 0;             // ceil(2^128 / value), for the remainder by multiplication
      static Bound of(std::uint64_t bound) noexcept;
    };
    std::uint64_t below(const Bound& bound) noexcept;
  };

  enum class ColumnKind : std::uint8_t { int32, int64, real };
  struct Column {  // one value field, bound at make()
    ColumnKind kind;
    std::uint32_t offset;
    std::int64_t low;     // integers: min
    std::uint64_t span;   // integers: max - min + 1 (0 means the full 2^64 range)
    Rng::Bound bound;     // integers with span > 0: Rng::Bound::of(span)
    double base;          // f64: min
    double width;         // f64: max - min
  };
  // Zipf sampling by rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-inversion to
  // generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996): O(1)
  // memory and time, about one uniform per sample.
  struct Zipf {
    double s = 1;
    double n = 1;
    double h_integral_x1 = 0;
    double h_integral_n = 0;
    double s_const = 0;
  };

  explicit Generator(Schema schema) : schema_(std::move(schema)) {}
  void write_row(MutRow row, std::int64_t time_ns) noexcept;
  std::uint64_t draw_key() noexcept;
  std::uint64_t draw_zipf() noexcept;

  Schema schema_;
  Rng rng_{};
  std::vector<Column> columns_;
  std::optional<double> rate_;
  std::int64_t start_ns_ = 0;
  bool started_ = false;
  std::uint64_t next_ = 0;
  std::uint64_t limit_ = kEndless;
  std::int64_t seq_offset_ = -1;   // -1: none
  std::int64_t time_offset_ = -1;  // -1: none
  // The key: kind 0 none, 1 i32, 2 i64, 3 strN.
  std::uint8_t key_kind_ = 0;
  std::uint32_t key_offset_ = 0;
  std::uint32_t key_width_ = 0;
  std::uint64_t key_count_ = 1;
  Rng::Bound key_bound_{};  // Rng::Bound::of(key_count_)
  bool key_zipf_ = false;
  Zipf zipf_{};
};

struct CsvReaderParams {
  // The file to read, or (when `stream` is set) the name used for it in error messages.
  std::string path{};
  // Read from this stream instead of opening `path`; not owned, must outlive the reader.
  std::istream* stream = nullptr;
  // The first line names the fields; it must list the schema's names in order.
  bool header = true;
  char delimiter = ',';
};

// What one CsvReader::read() did. A call stops for one of three reasons: it appended
// max_rows rows, the batch is full, or the input ended; only the last sets `end`, so "the
// batch is full" can never be mistaken for "the input is exhausted".
struct CsvRead {
  std::size_t rows = 0;  // appended to the batch by this call
  // The input is exhausted: no later call appends a row. The call that appends the last rows
  // says so only if it reached the end of the input itself; when the batch filled up (or
  // max_rows was reached) exactly at the last row, it cannot know without waiting for more
  // bytes, and the next call returns {0, true}. So rows == 0 only ever comes with end.
  bool end = false;

  friend bool operator==(const CsvRead&, const CsvRead&) = default;
};

// Reads CSV as CsvWriter writes it (RFC 4180 quoting: a field in double quotes may hold the
// delimiter, newlines and "" for a quote; \r\n line ends are accepted). Values: integers in
// decimal, f64 as std::from_chars reads them (including inf and nan), bool as true/false/1/0,
// timestamp as integer nanoseconds since the epoch, strN as raw bytes (at most N).
class CsvReader {
 public:
  // read()'s default max_rows: as many rows as the batch has room for.
  static constexpr std::size_t kRoom = std::numeric_limits<std::size_t>::max();

  // Opens the file (or takes the stream) and reads and checks the header line.
  static Result<std::unique_ptr<CsvReader>> make(const CsvReaderParams& params,
                                                 const Schema& schema);

  // Appends up to max_rows rows (by default, and always at most, the room left in `out`) and
  // says how many and whether the input has ended; see CsvRead and the loop at the top of
  // this file. An error names "file:line:column" (1-based; the column counts bytes) and what
  // was expected; rows of the bad record are not appended, the rows before it are (that call
  // succeeds, the next one returns the error), and the reader is then stuck at that error.
  // Preconditions: `out` has the schema, and the call can append a row: `out` is not full and
  // max_rows > 0. A call that could append nothing would return 0 rows without being at the
  // end, which is the confusion CsvRead exists to rule out, so it aborts with a message
  // (like Batch::append on a full batch): clear or hand over the batch before reading again.
  [[nodiscard]] Result<CsvRead> read(Batch& out, std::size_t max_rows = kRoom);

  [[nodiscard]] bool done() const noexcept { return eof_; }
  // Data rows read so far (the header not counted).
  [[nodiscard]] std::uint64_t rows_read() const noexcept { return rows_; }

 private:
  CsvReader(const CsvReaderParams& params, const Schema& schema);
  struct Cell {
    std::size_t begin;   // offset in text_
    std::size_t size;
    std::uint64_t line;  // where the cell starts
    std::uint64_t column;
  };
  // Reads one record into text_/cells_; false at end of input. Errors for bad quoting.
  Result<bool> next_record();
  int get() noexcept;  // next byte or EOF, counting lines and columns
  Error error_at(std::uint64_t line, std::uint64_t column, std::string message) const;
  Result<void> check_count() const;  // the record has one cell per field
  Result<void> check_header();
  Result<void> parse_into(MutRow row);
  [[noreturn]] void no_room(const Batch& out, std::size_t max_rows) const noexcept;

  Schema schema_;
  std::string name_;
  std::ifstream file_;
  std::istream* in_;
  char delimiter_;
  std::string text_;  // the current record's unquoted cell bytes, back to back
  std::vector<Cell> cells_;
  std::uint64_t line_ = 1;
  std::uint64_t column_ = 1;
  std::uint64_t record_line_ = 1;  // where the current record ends (for "too few")
  std::uint64_t record_end_column_ = 1;
  std::uint64_t rows_ = 0;
  bool eof_ = false;
  std::optional<Error> stuck_;
  std::vector<std::byte> scratch_;  // one tuple: a record is parsed here, then appended
};

}  // namespace boreal::ops
