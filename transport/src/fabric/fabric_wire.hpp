// What both ends of a fabric link agree on beyond the frame format. Private.
//
// Handshake (both transfers), on tagged messages:
//   sender -> receiver, tag kHelloTag:
//     [hello frame: 32-byte header + HelloPayload, checksummed]
//     [HelloExtension, kHelloExtensionBytes, own CRC-32C]
//     [the sender's fi_getname bytes, at most kMaxNameBytes, unchecked]
//   fabric-msg: the receiver answers with a credit frame (below).
//   fabric-rma: the receiver answers with one setup message, tagged with the stream id:
//     [credit frame: 32-byte header, sequence = initial credit, checksummed]
//     [RmaSetup, kRmaSetupBytes, own CRC-32C]
//
// fabric-msg data: each frame is one tagged message (tag = stream id) into a posted receive.
// Credit: 32-byte frames, fi_tinject, tag = stream id. The end-of-stream ack: the same, sent
// with fi_tsendmsg and a completion.
// Heartbeats (both transfers): a 32-byte kFlagHeartbeat frame, fi_tinject; sender -> receiver
// on kHelloTag (the listener tells it from a hello by its length), receiver -> sender on the
// stream id, like credit.
//
// fabric-rma data: the sender fi_writedata's [header + payload] of frame `sequence` to ring
// slot (sequence - 1) % slots at ring_address + slot * slot_bytes, with the 32-bit immediate
//     bits 31..24 link index (1..255, assigned by the listener) |
//     bits 23..16 slot (0..255)                                 |
//     bits 15..0  frame length in bytes (header + payload, <= 65535).
// Ring words (the receiver's setup sets kSetupRingWords: its thread never blocks, so it polls
// the ring anyway, and the sender's provider orders write after write for a whole slot): the
// sender fi_write's the frame without immediate data, then fi_write's the slot's ring word,
// the little-endian u64 (sequence << 16) | length, into the slot's last 8 bytes; the
// receiver finds frame n when slot (n - 1) % slots's word names n. Write-after-write order
// makes the frame's bytes land first (docs/transport-notes.md §1.5). The receiver clears the
// words when a connection attaches, so no word of an earlier connection is taken for a frame.
// Credit and the ack go back the same way: the receiver fi_writedata's 8 bytes (little-endian
// u64) into the sender's credit words, credit_address + 0 (cumulative credit total) or + 8
// (sequence of the acknowledged end-of-stream frame; fi_writemsg with a completion), with the
// immediate
//     bits 31..24 link index | bits 23..16 kImmCredit or kImmAck | bits 15..0 the length, 8.
// Only 32 bits of immediate data are used because verbs and EFA carry no more
// (docs/transport-notes.md §1.3.9). Addresses are virtual addresses under FI_MR_VIRT_ADDR, else
// offsets, so each side sends the base its own provider wants (0 without FI_MR_VIRT_ADDR) and
// the peer adds offsets.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include <boost/endian/conversion.hpp>

#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/fabric_medium.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/link.hpp>

namespace boreal::transport::fabric_medium {

// Tags on the receiver's endpoint: data frames carry their stream id; hellos carry
// kHelloTag, which no 32-bit stream id can equal. Credit, acks and the rma setup go to the
// sender's own endpoint, tagged with the stream id.
inline constexpr std::uint64_t kHelloTag = std::uint64_t{1} << 32;

inline constexpr std::size_t kMaxNameBytes = 224;
inline constexpr std::size_t kHelloExtensionBytes = 32;
inline constexpr std::size_t kHelloFrameBytes =
    kFrameHeaderBytes + kHelloPayloadBytes + kHelloExtensionBytes + kMaxNameBytes;
inline constexpr std::size_t kRmaSetupBytes = 32;
inline constexpr std::size_t kControlMessageBytes = kFrameHeaderBytes + kRmaSetupBytes;

// fabric-rma limits that follow from the 32-bit immediate.
inline constexpr std::uint32_t kMaxRmaSlots = 256;
inline constexpr std::uint32_t kMaxRmaLinks = 255;
// A 16-bit frame length: the limit that bounds every medium's frames (frame.hpp).
inline constexpr std::size_t kMaxRmaFrameBytes = kMaxFrameBytesEveryMedium;
// The sender's credit words: [credit total][acknowledged sequence], 8 bytes each.
inline constexpr std::uint64_t kCreditWordAt = 0;
inline constexpr std::uint64_t kAckWordAt = 8;
inline constexpr std::uint32_t kImmCredit = 1;
inline constexpr std::uint32_t kImmAck = 2;
inline constexpr std::uint32_t kControlWordBytes = 8;

struct Imm {
  std::uint32_t link = 0;
  std::uint32_t slot = 0;  // or kImmCredit / kImmAck towards a sender
  std::uint32_t length = 0;
};
[[nodiscard]] constexpr std::uint64_t encode_imm(std::uint32_t link, std::uint32_t slot,
                                                 std::uint32_t length) noexcept {
  return (std::uint64_t{link & 0xFF} << 24) | (std::uint64_t{slot & 0xFF} << 16) |
         (length & 0xFFFF);
}
[[nodiscard]] constexpr Imm decode_imm(std::uint64_t data) noexcept {
  return {static_cast<std::uint32_t>((data >> 24) & 0xFF),
          static_cast<std::uint32_t>((data >> 16) & 0xFF),
          static_cast<std::uint32_t>(data & 0xFFFF)};
}

// After the hello frame: byte 0 transfer (0 messages, 1 rma_writes), bytes 1..7 zero,
// 8..15 credit-word base address, 16..23 its key (fabric-rma; 0 for fabric-msg),
// 24..27 zero, 28..31 CRC-32C of bytes 0..27.
struct HelloExtension {
  FabricTransfer transfer = FabricTransfer::messages;
  std::uint64_t credit_address = 0;
  std::uint64_t credit_key = 0;
};

// After the setup's credit frame: 0..7 ring base address, 8..15 ring key, 16..19 slots,
// 20..23 slot bytes, 24 link index, 25 flags (kSetupRingWords), 26..27 zero, 28..31 CRC-32C of
// bytes 0..27.
inline constexpr std::uint8_t kSetupRingWords = 0x01;
struct RmaSetup {
  std::uint64_t ring_address = 0;
  std::uint64_t ring_key = 0;
  std::uint32_t slots = 0;
  std::uint32_t slot_bytes = 0;
  std::uint32_t link = 0;
  bool ring_words = false;  // the receiver polls: frames may come without immediate data
};

// Ring words: the last kRingWordBytes of each slot (slots are multiples of 64 bytes).
inline constexpr std::uint32_t kRingWordBytes = 8;
inline constexpr std::uint64_t kRingWordSequenceMask = (std::uint64_t{1} << 48) - 1;
[[nodiscard]] constexpr std::uint64_t encode_ring_word(std::uint64_t sequence,
                                                       std::uint32_t length) noexcept {
  return ((sequence & kRingWordSequenceMask) << 16) | (length & 0xFFFF);
}
// Where slot `slot`'s word lies, from the start of a ring of `slot_bytes`-byte slots: both
// ends place it with this.
[[nodiscard]] constexpr std::uint64_t ring_word_offset(std::uint64_t slot,
                                                       std::uint32_t slot_bytes) noexcept {
  return (slot + 1) * slot_bytes - kRingWordBytes;
}
// The frame length a ring word carries when it names frame `sequence`, else nullopt.
[[nodiscard]] constexpr std::optional<std::uint32_t> ring_word_length(
    std::uint64_t word, std::uint64_t sequence) noexcept {
  if ((word >> 16) != (sequence & kRingWordSequenceMask)) return std::nullopt;
  return static_cast<std::uint32_t>(word & 0xFFFF);
}

namespace wire_detail {
template <class T>
void put(std::byte* at, T value) noexcept {
  boost::endian::native_to_little_inplace(value);
  std::memcpy(at, &value, sizeof value);
}
template <class T>
[[nodiscard]] T get(const std::byte* at) noexcept {
  T value;
  std::memcpy(&value, at, sizeof value);
  return boost::endian::little_to_native(value);
}
inline void seal(std::span<std::byte, 32> out) noexcept {
  put(out.data() + 28, crc32c(out.first(28)));
}
[[nodiscard]] inline bool sealed(std::span<const std::byte> in) noexcept {
  return in.size() == 32 && get<std::uint32_t>(in.data() + 28) == crc32c(in.first(28));
}
}  // namespace wire_detail

inline void encode_extension(const HelloExtension& e,
                             std::span<std::byte, kHelloExtensionBytes> out) noexcept {
  std::memset(out.data(), 0, out.size());
  out[0] = static_cast<std::byte>(e.transfer);
  wire_detail::put(out.data() + 8, e.credit_address);
  wire_detail::put(out.data() + 16, e.credit_key);
  wire_detail::seal(out);
}

// nullopt: checksum mismatch, non-zero reserved bytes or an unknown transfer.
[[nodiscard]] inline std::optional<HelloExtension> decode_extension(
    std::span<const std::byte> in) noexcept {
  if (!wire_detail::sealed(in)) return std::nullopt;
  const auto kind = std::to_integer<std::uint8_t>(in[0]);
  if (kind > static_cast<std::uint8_t>(FabricTransfer::rma_writes)) return std::nullopt;
  for (std::size_t i : {1, 2, 3, 4, 5, 6, 7, 24, 25, 26, 27}) {
    if (in[i] != std::byte{0}) return std::nullopt;
  }
  return HelloExtension{.transfer = static_cast<FabricTransfer>(kind),
                        .credit_address = wire_detail::get<std::uint64_t>(in.data() + 8),
                        .credit_key = wire_detail::get<std::uint64_t>(in.data() + 16)};
}

inline void encode_setup(const RmaSetup& s, std::span<std::byte, kRmaSetupBytes> out) noexcept {
  std::memset(out.data(), 0, out.size());
  wire_detail::put(out.data() + 0, s.ring_address);
  wire_detail::put(out.data() + 8, s.ring_key);
  wire_detail::put(out.data() + 16, s.slots);
  wire_detail::put(out.data() + 20, s.slot_bytes);
  out[24] = static_cast<std::byte>(s.link);
  out[25] = static_cast<std::byte>(s.ring_words ? kSetupRingWords : 0);
  wire_detail::seal(out);
}

// nullopt: checksum mismatch, an unknown flag or non-zero reserved bytes. Field ranges are
// the caller's.
[[nodiscard]] inline std::optional<RmaSetup> decode_setup(std::span<const std::byte> in) noexcept {
  if (!wire_detail::sealed(in)) return std::nullopt;
  const auto flags = std::to_integer<std::uint8_t>(in[25]);
  if ((flags & ~kSetupRingWords) != 0 || in[26] != std::byte{0} || in[27] != std::byte{0}) {
    return std::nullopt;
  }
  return RmaSetup{.ring_address = wire_detail::get<std::uint64_t>(in.data() + 0),
                  .ring_key = wire_detail::get<std::uint64_t>(in.data() + 8),
                  .slots = wire_detail::get<std::uint32_t>(in.data() + 16),
                  .slot_bytes = wire_detail::get<std::uint32_t>(in.data() + 20),
                  .link = std::to_integer<std::uint32_t>(in[24]),
                  .ring_words = (flags & kSetupRingWords) != 0};
}

// What fabric-rma cannot carry in `options`, or "" (the immediate's field widths).
[[nodiscard]] inline std::string rma_options_problem(const LinkOptions& options) {
  if (options.window > kMaxRmaSlots) {
    return "fabric-rma allows a window of at most " + std::to_string(kMaxRmaSlots) +
           " frames (an 8-bit slot in the immediate data), not " + std::to_string(options.window);
  }
  if (kFrameHeaderBytes + options.max_payload_bytes > kMaxRmaFrameBytes) {
    return "fabric-rma allows frames of at most " + std::to_string(kMaxRmaFrameBytes) +
           " bytes (a 16-bit length in the immediate data), not " +
           std::to_string(kFrameHeaderBytes) + " + " + std::to_string(options.max_payload_bytes);
  }
  return {};
}

// Owners in OpContext::owner on the sending side.
inline constexpr std::uint32_t kOwnerData = 1;
inline constexpr std::uint32_t kOwnerControl = 2;

// Completions read per fi_cq_read.
inline constexpr std::size_t kCqBatch = 32;

}  // namespace boreal::transport::fabric_medium
