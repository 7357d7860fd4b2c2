// Shared by the tcp medium's tests: a producer of numbered tuples, a sink that checks them,
// and a bounded pump that drives every end of a test from the calling thread.
//
// Tuples are tuple_bytes long (at least 8): bytes [0, 8) hold the tuple's number (0, 1, 2...,
// little-endian), the rest a byte pattern derived from it. The sink can therefore tell a lost,
// duplicated, reordered or corrupted tuple apart, and both ends keep a CRC-32C of every
// payload byte so the totals can be compared exactly.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include <boost/endian/conversion.hpp>

#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/link.hpp>

namespace boreal::transport::testing {

using Clock = std::chrono::steady_clock;
// Every wait in these tests ends by this deadline; a healthy run needs far less.
inline constexpr std::chrono::seconds kDeadline{10};

inline void fill_tuple(std::byte* out, std::uint32_t tuple_bytes, std::uint64_t number) {
  const std::uint64_t wire = boost::endian::native_to_little(number);
  std::memcpy(out, &wire, sizeof wire);
  for (std::uint32_t i = 8; i < tuple_bytes; ++i) {
    out[i] = static_cast<std::byte>((number * 31 + i) & 0xFF);
  }
}

// Sends `frames` frames of 1..max_tuples tuples (count drawn from a xorshift seeded with
// `seed`), the last one with end-of-stream.
class CountingSource {
 public:
  CountingSource(SendLink& link, std::uint64_t frames, std::uint32_t tuple_bytes,
                 std::uint32_t max_tuples, std::uint64_t seed)
      : link_(link), frames_(frames), tuple_bytes_(tuple_bytes), max_tuples_(max_tuples),
        rng_(seed | 1) {}

  // Claims and commits frames until back-pressured or `until_frames` are sent.
  // Returns how many it committed.
  int offer(std::uint64_t until_frames = ~std::uint64_t{0}) {
    int committed = 0;
    while (frames_sent < frames_ && frames_sent < until_frames) {
      Claim claim;
      const SendStatus status = link_.try_claim(claim);
      if (status != SendStatus::ok) {
        last_status = status;
        if (status == SendStatus::back_pressured) ++back_pressured;
        break;
      }
      ++claims_held;
      if (claims_held > max_claims_held) max_claims_held = claims_held;
      rng_ ^= rng_ << 13;
      rng_ ^= rng_ >> 7;
      rng_ ^= rng_ << 17;
      const auto tuples = static_cast<std::uint32_t>(1 + rng_ % max_tuples_);
      const std::uint32_t bytes = tuples * tuple_bytes_;
      for (std::uint32_t t = 0; t < tuples; ++t) {
        fill_tuple(claim.payload.data() + std::size_t{t} * tuple_bytes_, tuple_bytes_,
                   tuples_sent + t);
      }
      crc = crc32c(claim.payload.first(bytes), crc);
      ++frames_sent;
      tuples_sent += tuples;
      const bool last = frames_sent == frames_;
      link_.commit(claim, tuples, bytes, last ? (kFlagData | kFlagEndOfStream) : kFlagData);
      --claims_held;
      ++committed;
    }
    return committed;
  }
  [[nodiscard]] bool done() const { return frames_sent == frames_; }

  std::uint64_t frames_sent = 0;
  std::uint64_t tuples_sent = 0;
  std::uint32_t crc = 0;
  std::uint64_t back_pressured = 0;
  std::uint32_t claims_held = 0;
  std::uint32_t max_claims_held = 0;
  SendStatus last_status = SendStatus::ok;

 private:
  SendLink& link_;
  std::uint64_t frames_;
  std::uint32_t tuple_bytes_;
  std::uint32_t max_tuples_;
  std::uint64_t rng_;
};

// Checks that frames arrive with sequence 1, 2, 3... and tuples numbered 0, 1, 2... with
// intact contents. Allocates nothing (the allocation test runs through it).
class CheckingSink final : public FrameSink {
 public:
  explicit CheckingSink(std::uint32_t tuple_bytes) : tuple_bytes_(tuple_bytes) {}

  void on_frame(const FrameView& frame) override {
    if (frame.header.sequence != frames + 1 && bad_sequence_at == 0) {
      bad_sequence_at = frames + 1;
    }
    ++frames;
    if (frame.payload.size() != std::size_t{frame.header.tuple_count} * tuple_bytes_) {
      ++bad_frames;
      return;
    }
    for (std::uint32_t t = 0; t < frame.header.tuple_count; ++t) {
      fill_tuple(expected_, tuple_bytes_, tuples);
      if (std::memcmp(expected_, frame.payload.data() + std::size_t{t} * tuple_bytes_,
                      tuple_bytes_) != 0) {
        ++bad_tuples;
      }
      ++tuples;
    }
    crc = crc32c(frame.payload, crc);
    if ((frame.header.flags & kFlagEndOfStream) != 0) ++end_of_stream;
    if (frames == mark_frame) tuples_at_mark = tuples;
  }

  // With take_crc set, the sink makes the one pass over each payload (as a check sink does)
  // and the link checks the frame against it. corrupt_payload_call: on that call (counting
  // from 1), flip a payload byte first, as memory corrupted between arrival and the pass.
  std::optional<std::uint32_t> payload_crc(std::span<const std::byte> payload) override {
    if (!take_crc) return std::nullopt;
    ++payload_crc_calls;
    if (payload_crc_calls == corrupt_payload_call && !payload.empty()) {
      auto* byte = const_cast<std::byte*>(payload.data() + payload.size() / 2);
      *byte ^= std::byte{0x10};
    }
    const std::uint32_t taken = crc32c(payload);
    return payload_crc_calls == wrong_crc_call ? taken ^ 1u : taken;
  }

  bool take_crc = false;
  std::uint64_t payload_crc_calls = 0;
  std::uint64_t corrupt_payload_call = 0;  // 0 = never
  std::uint64_t wrong_crc_call = 0;        // on this call, answer a wrong CRC (bytes intact)

  std::uint64_t frames = 0;
  std::uint64_t tuples = 0;
  std::uint32_t crc = 0;
  std::uint64_t bad_sequence_at = 0;  // first frame number whose sequence was wrong, 0 = none
  std::uint64_t bad_frames = 0;
  std::uint64_t bad_tuples = 0;
  std::uint64_t end_of_stream = 0;
  std::uint64_t mark_frame = 0;      // set to a frame number to learn the tuples through it
  std::uint64_t tuples_at_mark = 0;

 private:
  std::uint32_t tuple_bytes_;
  std::byte expected_[256]{};
};

// A small link for tests: stream `id` ("s<id>"), tuples of `tuple_bytes`, eight tuples per
// frame, a window of 16 frames granted back four at a time.
inline LinkOptions small_link_options(std::uint32_t id, std::uint32_t tuple_bytes) {
  LinkOptions o;
  o.stream_id = id;
  o.tuple_bytes = tuple_bytes;
  o.schema_hash = 0xFEED;
  o.cluster_token = 77;
  o.max_payload_bytes = 8 * tuple_bytes;
  o.window = 16;
  o.credit_batch = 4;
  o.name = "s" + std::to_string(id);
  return o;
}

// Calls `step` until `done` holds or kDeadline passes; returns whether `done` held.
inline bool pump_until(const std::function<void()>& step, const std::function<bool()>& done) {
  const auto deadline = Clock::now() + kDeadline;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    step();
  }
  return true;
}

}  // namespace boreal::transport::testing
