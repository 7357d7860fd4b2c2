// CsvReader: a byte-at-a-time RFC 4180 record splitter with line and column tracking, and
// the per-type value parsers.
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <limits>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>
#include <system_error>

#include <boreal/ops/source.hpp>

namespace boreal::ops {
namespace {

constexpr int kEof = std::char_traits<char>::eof();

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string field_names(const Schema& schema) {
  std::string out;
  for (const Field& field : schema.fields()) {
    if (!out.empty()) out.push_back(',');
    out.append(field.name);
  }
  return out;
}

// An integer filling all of `text`, or the reason it is not one.
template <class T>
std::optional<std::string> parse_integer(std::string_view text, T& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) return std::string("out of range");
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
    return std::string("expected an integer");
  }
  return std::nullopt;
}

}  // namespace

CsvReader::CsvReader(const CsvReaderParams& params, const Schema& schema)
    : schema_(schema),
      name_(params.path),
      in_(params.stream),
      delimiter_(params.delimiter),
      scratch_(schema.tuple_bytes()) {}

Result<std::unique_ptr<CsvReader>> CsvReader::make(const CsvReaderParams& params,
                                                   const Schema& schema) {
  if (params.delimiter == '"' || params.delimiter == '\n' || params.delimiter == '\r') {
    return fail("the delimiter cannot be a quote or a line break", "params.delimiter");
  }
  std::unique_ptr<CsvReader> reader(new CsvReader(params, schema));
  if (reader->in_ == nullptr) {
    reader->file_.open(params.path, std::ios::binary);
    if (!reader->file_) {
      return fail("cannot open " + in_quotes(params.path) + ": " + std::strerror(errno),
                  "params.path");
    }
    reader->in_ = &reader->file_;
  }
  if (params.header) {
    if (auto ok = reader->check_header(); !ok) return ok.error();
  }
  return reader;
}

int CsvReader::get() noexcept {
  const int c = in_->rdbuf()->sbumpc();
  if (c == kEof) return c;
  if (c == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  return c;
}

Error CsvReader::error_at(std::uint64_t line, std::uint64_t column, std::string message) const {
  return Error{std::move(message),
               name_ + ":" + std::to_string(line) + ":" + std::to_string(column)};
}

Result<bool> CsvReader::next_record() {
  text_.clear();
  cells_.clear();
  std::uint64_t at_line = line_;
  std::uint64_t at_column = column_;
  int c = get();
  if (c == kEof) return false;
  while (true) {
    Cell cell{text_.size(), 0, at_line, at_column};
    if (c == '"') {
      while (true) {
        c = get();
        if (c == kEof) return error_at(cell.line, cell.column, "unterminated quoted field");
        if (c == '"') {
          at_line = line_;
          at_column = column_;
          c = get();
          if (c != '"') break;  // closing quote; c follows it
        }
        text_.push_back(static_cast<char>(c));
      }
      const bool ends = c == kEof || c == '\n' || c == delimiter_ ||
                        (c == '\r' && in_->rdbuf()->sgetc() == '\n');
      if (!ends) {
        return error_at(at_line, at_column,
                        "unexpected " + in_quotes(std::string(1, static_cast<char>(c))) +
                            " after a closing quote");
      }
    } else {
      while (c != kEof && c != '\n' && c != delimiter_ &&
             !(c == '\r' && in_->rdbuf()->sgetc() == '\n')) {
        text_.push_back(static_cast<char>(c));
        at_line = line_;
        at_column = column_;
        c = get();
      }
    }
    cell.size = text_.size() - cell.begin;
    cells_.push_back(cell);
    if (c == delimiter_) {
      at_line = line_;
      at_column = column_;
      c = get();
      continue;
    }
    // The record ends at c (a line break or the end of input); at_* is where c stood.
    record_line_ = at_line;
    record_end_column_ = at_column;
    if (c == '\r') get();  // its '\n'
    return true;
  }
}

Result<void> CsvReader::check_count() const {
  const std::size_t expected = schema_.field_count();
  if (cells_.size() == expected) return success();
  const std::string counts = "expected " + std::to_string(expected) + " (" +
                             field_names(schema_) + "), got " + std::to_string(cells_.size());
  if (cells_.size() < expected) {
    return error_at(record_line_, record_end_column_, "too few columns: " + counts);
  }
  const Cell& extra = cells_[expected];
  return error_at(extra.line, extra.column, "too many columns: " + counts);
}

Result<void> CsvReader::check_header() {
  auto record = next_record();
  if (!record) return record.error();
  if (!record.value()) {
    return error_at(1, 1, "expected a header line naming the fields (" +
                              field_names(schema_) + "), got an empty input");
  }
  if (auto ok = check_count(); !ok) return ok;
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    const std::string_view name(text_.data() + cells_[i].begin, cells_[i].size);
    if (name != schema_.field(i).name) {
      return error_at(cells_[i].line, cells_[i].column,
                      "header names " + in_quotes(name) + " where the schema has field " +
                          in_quotes(schema_.field(i).name));
    }
  }
  return success();
}

Result<void> CsvReader::parse_into(MutRow row) {
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    const Cell& cell = cells_[i];
    const Field& field = schema_.field(i);
    const std::string_view text(text_.data() + cell.begin, cell.size);
    std::byte* at = row.data() + field.offset;
    std::optional<std::string> problem;
    switch (field.type) {
      case FieldType::i32: {
        std::int32_t v = 0;
        problem = parse_integer(text, v);
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case FieldType::i64: {
        std::int64_t v = 0;
        problem = parse_integer(text, v);
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case FieldType::timestamp: {
        std::int64_t v = 0;
        problem = parse_integer(text, v);
        if (problem && *problem != "out of range") {
          problem = "expected integer nanoseconds since the epoch";
        }
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case FieldType::f64: {
        double v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc::result_out_of_range) {
          problem = "out of range";
        } else if (ec != std::errc{} || end != text.data() + text.size()) {
          problem = "expected a number";
        }
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case FieldType::boolean: {
        const bool yes = text == "true" || text == "1";
        if (!yes && text != "false" && text != "0") problem = "expected true, false, 1 or 0";
        const unsigned char byte = yes ? 1 : 0;
        std::memcpy(at, &byte, 1);
        break;
      }
      case FieldType::str:
        if (text.size() > field.width) {
          return error_at(cell.line, cell.column,
                          "value of " + std::to_string(text.size()) + " bytes for field " +
                              in_quotes(field.name) + " is longer than " + field.type_name());
        }
        std::memcpy(at, text.data(), text.size());
        std::memset(at + text.size(), 0, field.width - text.size());
        break;
    }
    if (problem) {
      return error_at(cell.line, cell.column,
                      "bad " + field.type_name() + " value " + in_quotes(text) + " for field " +
                          in_quotes(field.name) + ": " + *problem);
    }
  }
  return success();
}

void CsvReader::no_room(const Batch& out, std::size_t max_rows) const noexcept {
  std::string why = "with max_rows " + std::to_string(max_rows);
  if (out.full()) why = "into a full batch (" + std::to_string(out.capacity_rows()) + " rows)";
  std::fprintf(stderr,
               "boreal: CsvReader::read of %s %s: clear or hand over the batch before reading "
               "again (0 rows would look like the end of the input)\n",
               in_quotes(name_).c_str(), why.c_str());
  std::abort();
}

Result<CsvRead> CsvReader::read(Batch& out, std::size_t max_rows) {
  assert(out.tuple_bytes() == schema_.tuple_bytes());
  if (stuck_) return boost::outcome_v2::failure(*stuck_);
  // Checked before the input is looked at, so a call with no room aborts whether or not
  // rows are left: the outcome does not depend on where the input happens to end.
  if (out.full() || max_rows == 0) no_room(out, max_rows);
  CsvRead got;
  while (got.rows < max_rows && !out.full() && !eof_) {
    Result<void> ok = success();
    auto record = next_record();
    if (!record) {
      ok = record.error();
    } else if (!record.value()) {
      eof_ = true;
      break;
    } else if (ok = check_count(); ok) {
      std::memset(scratch_.data(), 0, scratch_.size());
      ok = parse_into(MutRow(scratch_.data()));
    }
    if (!ok) {
      stuck_ = ok.error();
      if (got.rows > 0) return got;  // the error comes with the next call
      return boost::outcome_v2::failure(*stuck_);
    }
    out.append_copy(Row(scratch_.data()));
    ++got.rows;
    ++rows_;
  }
  got.end = eof_;
  return got;
}

}  // namespace boreal::ops
