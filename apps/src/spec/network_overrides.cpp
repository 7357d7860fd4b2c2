// apply_overrides(): the command line over a parsed network. Every flag is checked with the
// same rules as its YAML key (spec_values.hpp); the changes are made on a copy, which replaces
// the spec only when every flag was valid.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "spec/network_spec.hpp"
#include "spec/schema_plan.hpp"
#include "spec/spec_values.hpp"

namespace boreal::runtime {
namespace {

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// Shortest text that reads back as `value` ("-1", "2.5").
std::string number_text(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc{} ? std::string(buffer, end) : std::to_string(value);
}

class FlagErrors {
 public:
  void add(std::string_view flag, std::string_view what) {
    errors_.messages.push_back(std::string(flag) + ": " + std::string(what));
  }
  // check_range() of a flag's value; the value when it passes.
  template <class T>
  std::optional<T> in_range(std::string_view flag, const std::optional<std::int64_t>& value,
                            std::int64_t min, std::int64_t max) {
    if (!value) return std::nullopt;
    if (auto bad = check_range(*value, min, max)) {
      add(flag, *bad);
      return std::nullopt;
    }
    return T(*value);
  }
  [[nodiscard]] bool empty() const noexcept { return errors_.messages.empty(); }
  SpecErrors take() { return std::move(errors_); }

 private:
  SpecErrors errors_;
};

TransportPatch transport_patch(const Overrides& overrides, FlagErrors& errors) {
  using us = std::chrono::microseconds;
  TransportPatch patch;
  if (overrides.medium) {
    if (auto medium = parse_medium(*overrides.medium)) {
      patch.medium = medium.value();
    } else {
      errors.add("--medium", medium.error().message);
    }
  }
  if (overrides.provider) {
    if (auto provider = parse_provider(*overrides.provider)) {
      patch.provider = provider.value();
    } else {
      errors.add("--provider", provider.error().message);
    }
  }
  if (overrides.wait) {
    if (auto mode = transport::parse_wait_mode(*overrides.wait)) {
      patch.wait = mode.value();
    } else {
      errors.add("--wait", mode.error().message);
    }
  }
  patch.latency_budget =
      errors.in_range<us>("--latency-budget", overrides.latency_budget_us, 1, kMaxMicros);
  patch.spin = errors.in_range<us>("--spin-us", overrides.spin_us, 0, kMaxMicros);
  patch.batch_bytes =
      errors.in_range<std::uint32_t>("--batch-bytes", overrides.batch_bytes, 1, kMaxU32);
  patch.flush = errors.in_range<us>("--flush-us", overrides.flush_us, 0, kMaxMicros);
  patch.window = errors.in_range<std::uint32_t>("--window", overrides.window, 1, kMaxU32);
  if (overrides.connection) {
    if (auto connection = parse_connection(*overrides.connection)) {
      patch.connection = connection.value();
    } else {
      errors.add("--connection", connection.error().message);
    }
  }
  return patch;
}

// Applies --rate, --tuples and --duration to every source, and --warmup to the spec.
void apply_source_flags(NetworkSpec& spec, const Overrides& overrides, FlagErrors& errors) {
  std::optional<std::optional<double>> rate;
  if (overrides.rate) {
    if (auto parsed = parse_rate(*overrides.rate)) {
      rate = parsed.value();
    } else {
      errors.add("--rate", parsed.error().message);
    }
  }
  const auto tuples = errors.in_range<std::uint64_t>("--tuples", overrides.tuples, 0,
                                                     std::numeric_limits<std::int64_t>::max());
  auto seconds_flag = [&](const char* flag, const std::optional<double>& value) {
    std::optional<double> seconds;
    if (!value) return seconds;
    if (!std::isfinite(*value)) {
      errors.add(flag, "expected a number of seconds, got " + number_text(*value));
    } else if (*value < 0) {
      errors.add(flag, "must not be negative, got " + number_text(*value));
    } else {
      seconds = *value;
    }
    return seconds;
  };
  const std::optional<double> duration = seconds_flag("--duration", overrides.duration_s);
  if (const auto warmup = seconds_flag("--warmup", overrides.warmup_s)) {
    spec.warmup = std::chrono::duration<double>(*warmup);
  }
  for (BoxSpec& box : spec.boxes) {
    if (box.sink && overrides.no_output) {
      box.sink->output.clear();
      if (box.sink->kind == SinkKind::csv) box.sink->kind = SinkKind::count;
    }
    if (!box.source) continue;
    if (rate) box.source->rate = *rate;
    // A nexmark source counts events (of every kind), not the tuples of one of its streams.
    if (tuples)
      (box.source->kind == SourceKind::nexmark ? box.source->events : box.source->tuples) = *tuples;
    if (duration) box.source->duration = std::chrono::duration<double>(*duration);
  }
}

// --tuple-bytes: resizes each source's schema (once per schema name).
void apply_tuple_bytes(NetworkSpec& spec, std::int64_t tuple_bytes, FlagErrors& errors) {
  if (auto bad = check_range(tuple_bytes, 1, ops::kMaxTupleBytes)) {
    errors.add("--tuple-bytes", tuple_bytes > 0 ? "must be at most " +
                                                      std::to_string(ops::kMaxTupleBytes) + " (" +
                                                      std::string(ops::kMaxTupleBytesWhy) +
                                                      "), got " + std::to_string(tuple_bytes)
                                                : *bad);
    return;
  }
  if (tuple_bytes % 8 != 0) {
    errors.add("--tuple-bytes", "must be a multiple of 8 (tuples are 8-byte aligned), got " +
                                    std::to_string(tuple_bytes));
    return;
  }
  std::set<std::string, std::less<>> done;
  for (const BoxSpec& box : spec.boxes) {
    if (!box.source || !done.insert(box.schema).second) continue;
    const auto it = spec.schemas.find(box.schema);
    if (it == spec.schemas.end()) continue;  // parse_network() rejected this already
    transport::Result<ops::Schema> resized = resize_last_str(it->second, tuple_bytes);
    if (!resized) {
      errors.add("--tuple-bytes", "schema " + in_quotes(box.schema) + " of source " +
                                      in_quotes(box.name) + " " + resized.error().message);
      continue;
    }
    it->second = std::move(resized).value();
  }
}

}  // namespace

SpecResult<void> apply_overrides(NetworkSpec& spec, const Overrides& overrides) {
  FlagErrors errors;
  NetworkSpec next = spec;
  const TransportPatch patch = transport_patch(overrides, errors);
  patch.apply_to(next.transport);
  for (StreamSpec& stream : next.streams) patch.apply_to(stream.transport);
  apply_source_flags(next, overrides, errors);
  if (overrides.tuple_bytes) {
    apply_tuple_bytes(next, *overrides.tuple_bytes, errors);
    // The derived streams follow their sources' new size.
    Problems problems(next.file_name);
    derive_schemas(next, problems);
    if (!problems.empty()) {
      for (const std::string& message : problems.sorted().messages)
        errors.add("--tuple-bytes", message);
    }
  }

  // A frame holds at least one tuple. The file was checked by parse_network(), so only a
  // flag can break this; blame --batch-bytes when given, else --tuple-bytes.
  if (errors.empty() && (overrides.batch_bytes || overrides.tuple_bytes)) {
    const std::string_view flag = overrides.batch_bytes ? "--batch-bytes" : "--tuple-bytes";
    for (const StreamSpec& stream : next.streams) {
      const ops::Schema* schema = stream.tuple_schema ? &*stream.tuple_schema : nullptr;
      if (schema == nullptr || schema->tuple_bytes() <= stream.transport.batch_bytes) continue;
      errors.add(flag, "batch_bytes " + std::to_string(stream.transport.batch_bytes) +
                           " cannot hold one tuple of stream " + in_quotes(stream.name) + " (" +
                           std::to_string(schema->tuple_bytes()) + " bytes); give --batch-bytes " +
                           std::to_string(schema->tuple_bytes()) + " or more");
    }
  }
  // --provider without a fabric link would be silently ignored: say so instead.
  if (errors.empty() && overrides.provider &&
      std::none_of(next.streams.begin(), next.streams.end(), [](const StreamSpec& stream) {
        return stream.crosses_nodes && is_fabric(stream.transport.medium);
      })) {
    errors.add("--provider", "no stream between nodes uses a fabric medium (add --medium "
                             "fabric-msg or --medium fabric-rma)");
  }
  if (!errors.empty()) return boost::outcome_v2::failure(errors.take());
  spec = std::move(next);
  return boost::outcome_v2::success();
}

}  // namespace boreal::runtime
