// What both ends of a fabric-msg link agree on beyond the frame format. Private.
#pragma once

#include <cstdint>

#include <boreal/transport/frame.hpp>

namespace boreal::transport::fabric_medium {

// Tags on the receiver's endpoint: data frames carry their stream id; hellos carry
// kHelloTag, which no 32-bit stream id can equal. Credit and acks go to the sender's own
// endpoint, tagged with the stream id.
inline constexpr std::uint64_t kHelloTag = std::uint64_t{1} << 32;

// The hello message: a standard hello frame (header + HelloPayload, checksummed and checked
// by decode_header like any frame), then the sender's fi_getname bytes, at most
// kMaxNameBytes. The name is outside the checksum: the provider delivers messages intact,
// and a corrupted name can only make the receiver's answers go nowhere.
inline constexpr std::size_t kMaxNameBytes = 224;
inline constexpr std::size_t kHelloFrameBytes = kFrameHeaderBytes + kHelloPayloadBytes + kMaxNameBytes;

// Owners in OpContext::owner on the sending side.
inline constexpr std::uint32_t kOwnerData = 1;
inline constexpr std::uint32_t kOwnerControl = 2;

// Completions read per fi_cq_read.
inline constexpr std::size_t kCqBatch = 32;

}  // namespace boreal::transport::fabric_medium
