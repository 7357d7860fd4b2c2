// The value rules a query network shares between its YAML file and the command line
// (network_spec.hpp): ranges of the transport numbers, media, rates, sink kinds, and resizing a
// schema to a tuple size. Each check returns the message without a location; the caller puts
// the YAML path or the flag name in front, so the file and the CLI say the same thing.
//
// Private to boreal::runtime. Pure functions, callable from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boreal/ops/schema.hpp>
#include <boreal/transport/error.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/wait_mode.hpp>

#include "spec/network_spec.hpp"

namespace boreal::runtime {

// Largest latency_budget_us, spin_us and flush_us (60 s). Nothing sane comes near it, and it
// keeps every conversion of these durations to nanoseconds far from overflow.
inline constexpr std::int64_t kMaxMicros = 60'000'000;
// Largest batch_bytes and window: they are 32-bit on the wire.
inline constexpr std::int64_t kMaxU32 = 0xFFFF'FFFF;

// ops::kMaxTupleBytes is the one limit of a tuple's size (ops/schema.hpp says why): the schema
// parser, the batch_bytes checks of a network file and of the flags, and --tuple-bytes all
// use it. Here, where both libraries are seen, it is held to what it stands for: the largest
// multiple of 8 that one frame's payload holds on every medium. So whatever batch_bytes an
// error asks for to fit a tuple, every medium accepts.
static_assert(ops::kMaxTupleBytes <= transport::kMaxPayloadBytesEveryMedium &&
                  ops::kMaxTupleBytes + 8 > transport::kMaxPayloadBytesEveryMedium,
              "ops::kMaxTupleBytes must be the largest tuple one frame holds on every medium");

// "must be positive, got 0", "must not be negative, got -3", "must be at most 4294967295, got
// 5000000000"; nullopt when min <= value <= max. min is 0 or 1 in practice.
[[nodiscard]] std::optional<std::string> check_range(std::int64_t value, std::int64_t min,
                                                     std::int64_t max);

// One of kMedia, else "unknown medium 'x' (valid: tcp, inproc, fabric-msg, fabric-rma)".
// "1 output", "3 outputs": a count and a noun, plural when it is not one.
[[nodiscard]] std::string count_text(std::size_t n, std::string_view what);

[[nodiscard]] transport::Result<std::string> parse_medium(std::string_view name);

// A libfabric provider name as `fi_info -l` prints it ("tcp;ofi_rxm", "verbs", "efa"): not
// empty, no '/' and no white space. Whether it is present is known only when a node opens it.
[[nodiscard]] transport::Result<std::string> parse_provider(std::string_view name);
// One of kConnections, else "unknown connection 'x' (valid: per-link, per-thread-pair)".
[[nodiscard]] transport::Result<std::string> parse_connection(std::string_view name);

// "max" -> nullopt (as fast as credit allows); a positive finite number of tuples/s -> it.
// Anything else: "expected a positive number of tuples/s or 'max', got 'x'".
[[nodiscard]] transport::Result<std::optional<double>> parse_rate(std::string_view text);

// A span written with a unit suffix ("10s", "500ms"), in nanoseconds: the time spans in a box's
// `params` and `boreal launch --link-delay`.
struct Duration {
  bool matched = false;   // digits then ns, us, ms or s
  bool too_large = false;  // matched, but more than int64 nanoseconds
  std::int64_t ns = 0;
};
[[nodiscard]] Duration parse_duration(std::string_view text);

// "check", "count" or "discard", else an error listing them.
[[nodiscard]] transport::Result<SinkKind> parse_sink_kind(std::string_view name);

// The transport keys one place sets (a `transport` block, a `links` entry, the CLI flags); what
// it leaves unset keeps the value underneath.
struct TransportPatch {
  std::optional<std::string> medium;
  std::optional<std::string> provider;
  std::optional<transport::WaitMode> wait;
  std::optional<std::chrono::microseconds> latency_budget;
  std::optional<std::chrono::microseconds> spin;
  std::optional<std::chrono::microseconds> flush;
  std::optional<std::uint32_t> batch_bytes;
  std::optional<std::uint32_t> window;
  std::optional<std::string> connection;

  void apply_to(TransportSpec& spec) const;
};

// `schema` with its last str field resized so that tuple_bytes() == tuple_bytes exactly (the
// widest such field, so the tuple has no tail padding). Errors: the schema has no str field;
// tuple_bytes is not a multiple of 8 (tuples are 8-aligned); it is below the size with a str1
// field or above ops::kMaxTupleBytes (both limits are named).
[[nodiscard]] transport::Result<ops::Schema> resize_last_str(const ops::Schema& schema,
                                                             std::int64_t tuple_bytes);

}  // namespace boreal::runtime
