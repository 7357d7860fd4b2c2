// Sealing a committed data frame with its header, as every pooled medium (tcp, fabric) does
// (core/backup_queue.hpp keeps the frames). How the sealed frame leaves stays in the medium.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/link.hpp>

namespace boreal::transport::detail {

// Writes the header of a committed data frame in front of its payload in `buffer` and counts
// the frame. Returns the header (its sequence identifies the frame's acknowledgement).
// payload_crc: the producer's crc32c() of the payload (Claim::payload_crc), which spares
// reading the payload again; nullopt: computed here.
inline FrameHeader seal_frame(BufferPool::Buffer buffer, std::uint32_t stream_id,
                              std::uint64_t sequence, std::uint32_t tuple_count,
                              std::uint32_t payload_bytes, std::uint16_t flags,
                              std::optional<std::uint32_t> payload_crc, LinkStats& stats) noexcept {
  FrameHeader header;
  header.flags = flags;
  header.stream_id = stream_id;
  header.tuple_count = tuple_count;
  header.sequence = sequence;
  header.payload_bytes = payload_bytes;
  const std::span<std::byte, kFrameHeaderBytes> out(buffer.data, kFrameHeaderBytes);
  if (payload_crc) {
    encode_header_with_payload_crc(header, *payload_crc, out);
  } else {
    encode_header(header, {buffer.data + kFrameHeaderBytes, payload_bytes}, out);
  }
  ++stats.frames;
  stats.tuples += tuple_count;
  stats.payload_bytes += payload_bytes;
  return header;
}

}  // namespace boreal::transport::detail
