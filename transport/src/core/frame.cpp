#include <boreal/transport/frame.hpp>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include <boost/endian/conversion.hpp>

#include <boreal/transport/crc32c.hpp>

namespace boreal::transport {
namespace {

// Byte offsets of the wire layout; frame.hpp documents the fields, this is the only place
// that knows where they sit.
constexpr std::size_t kMagicAt = 0;
constexpr std::size_t kVersionAt = 4;
constexpr std::size_t kFlagsAt = 6;
constexpr std::size_t kStreamIdAt = 8;
constexpr std::size_t kTupleCountAt = 12;
constexpr std::size_t kSequenceAt = 16;
constexpr std::size_t kPayloadBytesAt = 24;
constexpr std::size_t kChecksumAt = 28;
static_assert(kChecksumAt + sizeof(std::uint32_t) == kFrameHeaderBytes);

constexpr std::size_t kHelloSchemaHashAt = 0;
constexpr std::size_t kHelloClusterTokenAt = 8;
constexpr std::size_t kHelloStreamIdAt = 16;
constexpr std::size_t kHelloTupleBytesAt = 20;
constexpr std::size_t kHelloMaxPayloadAt = 24;
constexpr std::size_t kHelloSenderIdAt = 28;
static_assert(kHelloSenderIdAt + sizeof(std::uint32_t) == kHelloPayloadBytes);

// Frame kinds: exactly one per frame. Ack is one too although frame.hpp's summary omits it:
// its sequence field means "highest delivered", which no other kind could share.
constexpr std::uint16_t kKindFlags =
    kFlagData | kFlagCredit | kFlagAck | kFlagHeartbeat | kFlagHello;
static_assert((kKindFlags | kFlagEndOfStream) == kKnownFlags);

// memcpy keeps loads and stores free of alignment and aliasing assumptions; callers pass
// spans whose extent the static sizes above already proved large enough.
template <class T>
void store_le(std::byte* out, T value) noexcept {
  static_assert(std::is_unsigned_v<T>);
  const T wire = boost::endian::native_to_little(value);
  std::memcpy(out, &wire, sizeof wire);
}

template <class T>
T load_le(const std::byte* in) noexcept {
  static_assert(std::is_unsigned_v<T>);
  T wire;
  std::memcpy(&wire, in, sizeof wire);
  return boost::endian::little_to_native(wire);
}

std::string hex(std::uint32_t value, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*" PRIX32, digits, value);
  return text;
}

std::string dec(std::uint64_t value) { return std::to_string(value); }

auto protocol_error(std::string message) {
  return fail(ErrorCategory::protocol, 0, std::move(message));
}

std::uint32_t header_checksum(std::span<const std::byte, kFrameHeaderBytes> raw,
                              std::span<const std::byte> payload) noexcept {
  return crc32c(payload, crc32c(raw.first<kChecksumAt>()));
}

Result<void> checksum_matches(const FrameHeader& header, std::uint32_t actual) {
  if (actual != header.checksum) {
    return protocol_error("checksum mismatch: frame says " + hex(header.checksum, 8) +
                          ", payload gives " + hex(actual, 8));
  }
  return success();
}

const char* kind_name(std::uint16_t kind) noexcept {
  switch (kind) {
    case kFlagCredit:
      return "credit";
    case kFlagAck:
      return "ack";
    case kFlagHeartbeat:
      return "heartbeat";
    default:
      return "control";
  }
}

// Flag checks, split out because there are four of them; returns an empty string when the
// flags are well formed.
std::string flags_problem(std::uint16_t flags) {
  constexpr const char* kKinds = "(expected exactly one of data, credit, ack, heartbeat, hello)";
  if ((flags & ~kKnownFlags) != 0) {
    return "unknown flag bits " + hex(flags & ~kKnownFlags, 4) + " in flags " + hex(flags, 4) +
           " (known bits " + hex(kKnownFlags, 4) + ")";
  }
  const auto kinds = static_cast<std::uint16_t>(flags & kKindFlags);
  if (kinds == 0) return "flags " + hex(flags, 4) + " name no frame kind " + kKinds;
  if (!std::has_single_bit(kinds)) {
    return "flags " + hex(flags, 4) + " name more than one frame kind " + kKinds;
  }
  if ((flags & kFlagEndOfStream) != 0 && kinds != kFlagData) {
    return "flags " + hex(flags, 4) + " set end_of_stream without data";
  }
  return {};
}

}  // namespace

namespace {

void encode_fields(const FrameHeader& header,
                   std::span<std::byte, kFrameHeaderBytes> out) noexcept {
  std::byte* p = out.data();
  store_le(p + kMagicAt, header.magic);
  store_le(p + kVersionAt, header.version);
  store_le(p + kFlagsAt, header.flags);
  store_le(p + kStreamIdAt, header.stream_id);
  store_le(p + kTupleCountAt, header.tuple_count);
  store_le(p + kSequenceAt, header.sequence);
  store_le(p + kPayloadBytesAt, header.payload_bytes);
}

}  // namespace

std::uint32_t encode_pickup_report(std::chrono::nanoseconds pickup_p99) noexcept {
  const auto us = std::max<std::int64_t>(1, (pickup_p99.count() + 999) / 1000);
  return static_cast<std::uint32_t>(std::min<std::int64_t>(us, UINT32_MAX));
}

void encode_header(FrameHeader header, std::span<const std::byte> payload,
                   std::span<std::byte, kFrameHeaderBytes> out) noexcept {
  assert(header.payload_bytes == payload.size());
  encode_fields(header, out);
  store_le(out.data() + kChecksumAt, header_checksum(out, payload));
}

void encode_header_with_payload_crc(FrameHeader header, std::uint32_t payload_crc,
                                    std::span<std::byte, kFrameHeaderBytes> out) noexcept {
  encode_fields(header, out);
  const std::uint32_t checksum =
      crc32c_combine(crc32c(std::span<const std::byte>(out).first<kChecksumAt>()), payload_crc,
                     header.payload_bytes);
  store_le(out.data() + kChecksumAt, checksum);
}

Result<FrameHeader> decode_header(std::span<const std::byte, kFrameHeaderBytes> in,
                                  const FrameLimits& limits) {
  const std::byte* p = in.data();
  FrameHeader h;
  h.magic = load_le<std::uint32_t>(p + kMagicAt);
  h.version = load_le<std::uint16_t>(p + kVersionAt);
  h.flags = load_le<std::uint16_t>(p + kFlagsAt);
  h.stream_id = load_le<std::uint32_t>(p + kStreamIdAt);
  h.tuple_count = load_le<std::uint32_t>(p + kTupleCountAt);
  h.sequence = load_le<std::uint64_t>(p + kSequenceAt);
  h.payload_bytes = load_le<std::uint32_t>(p + kPayloadBytesAt);
  h.checksum = load_le<std::uint32_t>(p + kChecksumAt);

  // The order matters to tests and to whoever reads a log: the first field that is wrong
  // is the one reported, starting with the ones that say "this is not our protocol at all".
  if (h.magic != kFrameMagic) {
    return protocol_error("bad magic " + hex(h.magic, 8) + " (expected " + hex(kFrameMagic, 8) +
                          ")");
  }
  if (h.version != kFrameVersion) {
    return protocol_error("unsupported version " + dec(h.version) + " (this build speaks " +
                          dec(kFrameVersion) + ")");
  }
  if (auto problem = flags_problem(h.flags); !problem.empty()) {
    return protocol_error(std::move(problem));
  }
  const auto kind = static_cast<std::uint16_t>(h.flags & kKindFlags);
  // A hello announces its stream id in its payload and is matched by the handshake code,
  // which can say more than "unknown stream" (e.g. which streams this node does carry).
  if (kind != kFlagHello && h.stream_id != limits.stream_id) {
    return protocol_error("unknown stream id " + dec(h.stream_id) + " (this link carries " +
                          dec(limits.stream_id) + ")");
  }
  // Checked for every kind, hello included, so that after a successful decode
  // payload_bytes <= max_payload_bytes always holds and a caller can size buffers by it.
  if (h.payload_bytes > limits.max_payload_bytes) {
    return protocol_error("payload length " + dec(h.payload_bytes) + " exceeds the limit " +
                          dec(limits.max_payload_bytes));
  }
  switch (kind) {
    case kFlagData: {
      // 64-bit product: two 32-bit fields cannot overflow it, so a wrapped product can never
      // pass for a match.
      const std::uint64_t expected = std::uint64_t{h.tuple_count} * limits.tuple_bytes;
      if (limits.tuple_bytes != 0 && expected != h.payload_bytes) {
        return protocol_error("tuple count " + dec(h.tuple_count) + " \u00D7 " +
                              dec(limits.tuple_bytes) + " bytes != payload length " +
                              dec(h.payload_bytes));
      }
      break;
    }
    case kFlagHello:
      if (h.payload_bytes != kHelloPayloadBytes) {
        return protocol_error("hello payload length " + dec(h.payload_bytes) + " (expected " +
                              dec(kHelloPayloadBytes) + ")");
      }
      if (h.tuple_count != 0) {
        return protocol_error("hello frame has tuple count " + dec(h.tuple_count) +
                              " (expected 0)");
      }
      break;
    case kFlagCredit:  // tuple_count is the pickup report: any value
      if (h.payload_bytes != 0) {
        return protocol_error("credit frame has payload length " + dec(h.payload_bytes) +
                              " (expected 0)");
      }
      break;
    default:  // ack, heartbeat: everything they say is in the header
      if (h.payload_bytes != 0 || h.tuple_count != 0) {
        return protocol_error(std::string{kind_name(kind)} + " frame has payload length " +
                              dec(h.payload_bytes) + " and tuple count " + dec(h.tuple_count) +
                              " (expected 0 and 0)");
      }
      break;
  }
  return h;
}

Result<void> verify_checksum(const FrameHeader& header,
                             std::span<const std::byte, kFrameHeaderBytes> raw_header,
                             std::span<const std::byte> payload) {
  assert(header.payload_bytes == payload.size());
  return checksum_matches(header, header_checksum(raw_header, payload));
}

Result<void> verify_checksum_from_crc(const FrameHeader& header,
                                      std::span<const std::byte, kFrameHeaderBytes> raw_header,
                                      std::uint32_t payload_crc) {
  return checksum_matches(header, crc32c_combine(crc32c(raw_header.first<kChecksumAt>()),
                                                 payload_crc, header.payload_bytes));
}

void encode_hello(const HelloPayload& hello,
                  std::span<std::byte, kHelloPayloadBytes> out) noexcept {
  std::byte* p = out.data();
  store_le(p + kHelloSchemaHashAt, hello.schema_hash);
  store_le(p + kHelloClusterTokenAt, hello.cluster_token);
  store_le(p + kHelloStreamIdAt, hello.stream_id);
  store_le(p + kHelloTupleBytesAt, hello.tuple_bytes);
  store_le(p + kHelloMaxPayloadAt, hello.max_payload_bytes);
  store_le(p + kHelloSenderIdAt, hello.sender_id);
}

Result<HelloPayload> decode_hello(std::span<const std::byte> in) {
  if (in.size() != kHelloPayloadBytes) {
    return protocol_error("hello payload is " + dec(in.size()) + " bytes (expected " +
                          dec(kHelloPayloadBytes) + ")");
  }
  const std::byte* p = in.data();
  HelloPayload hello;
  hello.schema_hash = load_le<std::uint64_t>(p + kHelloSchemaHashAt);
  hello.cluster_token = load_le<std::uint64_t>(p + kHelloClusterTokenAt);
  hello.stream_id = load_le<std::uint32_t>(p + kHelloStreamIdAt);
  hello.tuple_bytes = load_le<std::uint32_t>(p + kHelloTupleBytesAt);
  hello.max_payload_bytes = load_le<std::uint32_t>(p + kHelloMaxPayloadAt);
  hello.sender_id = load_le<std::uint32_t>(p + kHelloSenderIdAt);
  if (hello.tuple_bytes == 0) {
    return protocol_error("hello tuple size is 0 bytes (expected more than 0)");
  }
  if (hello.max_payload_bytes == 0) {
    return protocol_error("hello max payload length is 0 bytes (expected more than 0)");
  }
  return hello;
}

}  // namespace boreal::transport
