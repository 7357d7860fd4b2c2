// The steps of sending a data frame that every pooled medium (tcp, fabric) shares: claiming
// a credit and a buffer, and sealing the committed frame with its header. What differs per
// medium — how the sealed frame leaves — stays in the medium.
#pragma once

#include <cstdint>
#include <span>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/frame.hpp>
#include <boreal/transport/link.hpp>

namespace boreal::transport::detail {

// SendLink::try_claim for a sender whose frames live in `pool` with the header in front:
// closed after a failure or the end of stream, not_connected before the handshake,
// back_pressured without credit (counted as a credit stall) or without a free buffer.
inline SendStatus claim_frame(LinkState state, bool eos_committed, SenderCredits& credits,
                              BufferPool& pool, std::uint32_t max_payload_bytes,
                              LinkStats& stats, Claim& out) noexcept {
  if (state == LinkState::failed || eos_committed) return SendStatus::closed;
  if (state != LinkState::established) return SendStatus::not_connected;
  if (credits.available() == 0) {
    ++stats.credit_stalls;
    return SendStatus::back_pressured;
  }
  auto buffer = pool.acquire();
  if (!buffer) return SendStatus::back_pressured;
  const bool spent = credits.try_consume();
  (void)spent;  // available() > 0 was checked above on this thread
  out.payload = {buffer->data + kFrameHeaderBytes, max_payload_bytes};
  out.slot = buffer->index;
  return SendStatus::ok;
}

// Writes the header of a committed data frame in front of its payload in `buffer` and counts
// the frame. Returns the header (its sequence identifies the frame's acknowledgement).
inline FrameHeader seal_frame(BufferPool::Buffer buffer, std::uint32_t stream_id,
                              std::uint64_t sequence, std::uint32_t tuple_count,
                              std::uint32_t payload_bytes, std::uint16_t flags,
                              LinkStats& stats) noexcept {
  FrameHeader header;
  header.flags = flags;
  header.stream_id = stream_id;
  header.tuple_count = tuple_count;
  header.sequence = sequence;
  header.payload_bytes = payload_bytes;
  encode_header(header, {buffer.data + kFrameHeaderBytes, payload_bytes},
                std::span<std::byte, kFrameHeaderBytes>(buffer.data, kFrameHeaderBytes));
  ++stats.frames;
  stats.tuples += tuple_count;
  stats.payload_bytes += payload_bytes;
  return header;
}

}  // namespace boreal::transport::detail
