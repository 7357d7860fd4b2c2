// The wire frame: a fixed 32-byte header, then the payload (rows back to back).
//
// Every field read from the wire is checked by decode_header() before anything uses it; the
// payload checksum is checked by verify_checksum() once the payload has arrived. All
// multi-byte fields are little-endian on the wire.
#pragma once

#include <time.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include <boreal/transport/error.hpp>

namespace boreal::transport {

inline constexpr std::uint32_t kFrameMagic = 0x46'4C'52'42;  // "BRLF" read as little-endian bytes
inline constexpr std::uint16_t kFrameVersion = 1;
inline constexpr std::size_t kFrameHeaderBytes = 32;
// The largest frame, header included, that every medium carries: fabric-rma writes a frame's
// length into 16 bits of the RDMA write's immediate data. (tcp, fabric-msg and inproc take any
// 32-bit payload length.) A link's max_payload_bytes must hold one tuple, and a tuple must
// travel on every medium, so ops::kMaxTupleBytes fits kMaxPayloadBytesEveryMedium.
inline constexpr std::size_t kMaxFrameBytesEveryMedium = 65535;
inline constexpr std::size_t kMaxPayloadBytesEveryMedium =
    kMaxFrameBytesEveryMedium - kFrameHeaderBytes;

// What a frame carries. A frame has exactly one of data, credit, heartbeat, hello;
// end_of_stream may accompany data (possibly with zero tuples).
enum FrameFlag : std::uint16_t {
  kFlagData = 1u << 0,
  kFlagEndOfStream = 1u << 1,
  kFlagCredit = 1u << 2,  // sequence = credits granted so far in total (cumulative);
                          // tuple_count = the receiver's pickup report (below)
  kFlagAck = 1u << 3,     // sequence = highest data sequence delivered
  kFlagHeartbeat = 1u << 4,
  kFlagHello = 1u << 5,  // link handshake; payload is a HelloPayload
};
inline constexpr std::uint16_t kKnownFlags = 0x3F;

// A hello's sequence says how its tcp connection is used: 0, by its link alone; this, by
// several links of one sending thread, each saying hello on it (tcp_medium.hpp).
inline constexpr std::uint64_t kHelloOnSharedConnection = 1;
// On such a shared connection the receiver refuses one link's hello, without closing what the
// others use, with a heartbeat of the link's stream id and this sequence.
inline constexpr std::uint64_t kHelloRefused = ~std::uint64_t{0};

// A credit frame's tuple_count is the receiver's pickup report: the p99, over its recent
// frames, of the time from a frame's arrival at the receiving host to the receiving thread
// reading it, in microseconds rounded up (at least 1); 0 when it has none (too few frames
// yet, or a medium that cannot tell when a frame arrived). The sender holds partly filled
// frames for the latency budget less this (docs/design.md, "Flush: the sender's share of
// the budget").
[[nodiscard]] std::uint32_t encode_pickup_report(std::chrono::nanoseconds pickup_p99) noexcept;

struct FrameHeader {
  std::uint32_t magic = kFrameMagic;
  std::uint16_t version = kFrameVersion;
  std::uint16_t flags = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t tuple_count = 0;
  std::uint64_t sequence = 0;
  std::uint32_t payload_bytes = 0;
  std::uint32_t checksum = 0;  // CRC-32C of header bytes [0, 28) followed by the payload
};

// What the receiving end of one link accepts: anything else is a protocol error.
struct FrameLimits {
  std::uint32_t stream_id = 0;           // the only stream id this link carries
  std::uint32_t tuple_bytes = 0;         // data payload = tuple_count * tuple_bytes exactly
  std::uint32_t max_payload_bytes = 0;   // largest payload the receiver has room for
};

// Handshake sent by the sending end as the first frame of a link (kFlagHello).
struct HelloPayload {
  std::uint64_t schema_hash = 0;
  std::uint64_t cluster_token = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t tuple_bytes = 0;
  std::uint32_t max_payload_bytes = 0;
  // Identifies the sending end across its reconnects (0: a sender that never reconnects), so
  // the receiver tells a reconnect of its sender from a second sender of the same stream.
  std::uint32_t sender_id = 0;
};
inline constexpr std::size_t kHelloPayloadBytes = 32;

// Writes `header` into out[0, 32), computing the checksum over the header and `payload`.
// out must have room for kFrameHeaderBytes; header.payload_bytes must equal payload.size().
void encode_header(FrameHeader header, std::span<const std::byte> payload,
                   std::span<std::byte, kFrameHeaderBytes> out) noexcept;
// The same bytes, from crc32c(payload) instead of the payload: for a producer that already
// passed over the payload (crc32c_combine() joins the two without reading it again).
void encode_header_with_payload_crc(FrameHeader header, std::uint32_t payload_crc,
                                    std::span<std::byte, kFrameHeaderBytes> out) noexcept;

// Reads and checks a header: magic, version, flags, stream id, payload length, tuple count
// against the limits. Errors are ErrorCategory::protocol and name the field and its value.
// The checksum cannot be checked until the payload is there: see verify_checksum().
[[nodiscard]] Result<FrameHeader> decode_header(std::span<const std::byte, kFrameHeaderBytes> in,
                                                const FrameLimits& limits);

// Checks header.checksum against the raw header bytes and the payload.
[[nodiscard]] Result<void> verify_checksum(const FrameHeader& header,
                                           std::span<const std::byte, kFrameHeaderBytes> raw_header,
                                           std::span<const std::byte> payload);
// The same, from crc32c() of the payload (header.payload_bytes long) taken by whoever read
// it, without reading the payload again.
[[nodiscard]] Result<void> verify_checksum_from_crc(
    const FrameHeader& header, std::span<const std::byte, kFrameHeaderBytes> raw_header,
    std::uint32_t payload_crc);

void encode_hello(const HelloPayload& hello, std::span<std::byte, kHelloPayloadBytes> out) noexcept;
[[nodiscard]] Result<HelloPayload> decode_hello(std::span<const std::byte> in);

// A received frame, valid only during the handler call that receives it.
struct FrameView {
  FrameHeader header;
  std::span<const std::byte> payload;
  // When the read that completed this frame's bytes took them in (the kernel's arrival stamp
  // of its last bytes) and when that read returned, in CLOCK_REALTIME nanoseconds, for the
  // latency breakdown (docs/design.md, "Where the latency goes"); 0: the medium cannot tell
  // (only tcp stamps arrivals).
  std::int64_t arrived_ns = 0;
  std::int64_t read_ns = 0;
};

// A timespec of CLOCK_REALTIME (or a kernel stamp of it) in nanoseconds since the epoch.
[[nodiscard]] constexpr std::int64_t realtime_ns_of(const timespec& t) noexcept {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace boreal::transport
