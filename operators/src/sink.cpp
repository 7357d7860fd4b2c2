// CsvWriter's formatting and LatencySink's binding.
#include <boreal/ops/sink.hpp>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <string_view>

namespace boreal::ops {
namespace {

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

template <class T>
void append_number(std::string& out, T value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  (void)ec;  // 32 bytes hold any int64 or shortest double
  out.append(buffer, end);
}

}  // namespace

CsvWriter::CsvWriter(const CsvWriterParams& params, const Schema& schema)
    : schema_(schema), name_(params.path), out_(params.stream), delimiter_(params.delimiter) {}

Result<std::unique_ptr<CsvWriter>> CsvWriter::make(const CsvWriterParams& params,
                                                   const Schema& schema) {
  if (params.delimiter == '"' || params.delimiter == '\n' || params.delimiter == '\r') {
    return fail("the delimiter cannot be a quote or a line break", "params.delimiter");
  }
  std::unique_ptr<CsvWriter> writer(new CsvWriter(params, schema));
  if (params.resume_at) {
    if (writer->out_ != nullptr)
      return fail("resume_at needs a file, not a stream", "params.resume_at");
    std::error_code ec;
    const auto size = std::filesystem::file_size(params.path, ec);
    if (ec || size < *params.resume_at) {
      return fail("cannot continue " + in_quotes(params.path) + " after byte " +
                      std::to_string(*params.resume_at) + ": " +
                      (ec ? ec.message() : "it holds only " + std::to_string(size) + " bytes"),
                  "params.resume_at");
    }
    std::filesystem::resize_file(params.path, *params.resume_at, ec);
    if (!ec) writer->file_.open(params.path, std::ios::binary | std::ios::app);
    if (ec || !writer->file_) {
      return fail("cannot continue " + in_quotes(params.path) + ": " +
                      (ec ? ec.message() : std::string(std::strerror(errno))),
                  "params.resume_at");
    }
    writer->out_ = &writer->file_;
    writer->bytes_written_ = *params.resume_at;
    return writer;
  }
  if (writer->out_ == nullptr) {
    writer->file_.open(params.path, std::ios::binary | std::ios::trunc);
    if (!writer->file_) {
      return fail("cannot create " + in_quotes(params.path) + ": " + std::strerror(errno),
                  "params.path");
    }
    writer->out_ = &writer->file_;
  }
  if (params.header) {
    std::string header;
    for (const Field& field : schema.fields()) {
      if (!header.empty()) header.push_back(params.delimiter);
      header.append(field.name);
    }
    header.push_back('\n');
    writer->write(header);
    if (auto ok = writer->status(); !ok) return ok.error();
  }
  return writer;
}

void CsvWriter::write(const std::string& text) {
  if (failed_) return;
  out_->write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!*out_) failed_ = Error{"writing " + in_quotes(name_) + " failed", {}};
  bytes_written_ += text.size();
}

void CsvWriter::consume(const BatchView& batch) {
  line_.clear();
  const auto fields = schema_.fields();
  for (Row row : batch) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line_.push_back(delimiter_);
      const Field& field = fields[i];
      const std::byte* at = row.data() + field.offset;
      switch (field.type) {
        case FieldType::i32: {
          std::int32_t v;
          std::memcpy(&v, at, sizeof v);
          append_number(line_, v);
          break;
        }
        case FieldType::i64:
        case FieldType::timestamp: {
          std::int64_t v;
          std::memcpy(&v, at, sizeof v);
          append_number(line_, v);
          break;
        }
        case FieldType::f64: {
          double v;
          std::memcpy(&v, at, sizeof v);
          append_number(line_, v);
          break;
        }
        case FieldType::boolean:
          line_.append(static_cast<unsigned char>(*at) != 0 ? "true" : "false");
          break;
        case FieldType::str: {
          const std::string_view text =
              FieldRef<std::string_view>{field.offset, field.width}.get(row);
          const bool quote = text.find_first_of(std::string{delimiter_, '"', '\n', '\r'}) !=
                             std::string_view::npos;
          if (!quote) {
            line_.append(text);
            break;
          }
          line_.push_back('"');
          for (char c : text) {
            if (c == '"') line_.push_back('"');
            line_.push_back(c);
          }
          line_.push_back('"');
          break;
        }
      }
    }
    line_.push_back('\n');
  }
  write(line_);
  if (!failed_) rows_ += batch.size();
}

void CsvWriter::end() {
  if (failed_) return;
  out_->flush();
  if (!*out_) failed_ = Error{"writing " + in_quotes(name_) + " failed", {}};
}

Result<std::uint64_t> CsvWriter::checkpoint() {
  end();
  if (failed_) return boost::outcome_v2::failure(*failed_);
  return bytes_written_;
}

Result<void> CsvWriter::status() const {
  if (failed_) return boost::outcome_v2::failure(*failed_);
  return success();
}

std::vector<Error> LatencySinkParams::validate(const Schema& input) const {
  std::vector<Error> errors;
  auto index = input.index_of(field);
  if (!index) {
    errors.push_back({"no field " + in_quotes(field) + " in schema '" + input.to_string() + "'",
                      "params.field"});
  } else if (const Field& f = input.field(*index);
             f.type != FieldType::timestamp && f.type != FieldType::i64) {
    errors.push_back({"field " + in_quotes(field) + " has type " + f.type_name() +
                          "; expected timestamp or i64 (ns)",
                      "params.field"});
  }
  return errors;
}

Result<std::unique_ptr<LatencySink>> LatencySink::make(const LatencySinkParams& params,
                                                       const Schema& input) {
  if (auto errors = params.validate(input); !errors.empty()) return fail(describe(errors));
  auto clock = params.clock;
  if (!clock) clock = [] { return timestamp_now().time_since_epoch().count(); };
  const std::uint32_t offset = input.field(*input.index_of(params.field)).offset;
  return std::unique_ptr<LatencySink>(new LatencySink(offset, std::move(clock)));
}

void LatencySink::consume(const BatchView& batch) {
  if (batch.empty()) return;
  const std::int64_t now = clock_();
  const FieldRef<std::int64_t> ts{offset_};  // a timestamp is stored as int64 ns too
  for (Row row : batch) histogram_.record(now - ts.get(row));
  last_now_ = now;
  last_first_time_ = ts.get(batch.row(0));
}

}  // namespace boreal::ops
