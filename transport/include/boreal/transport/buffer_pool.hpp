// Fixed-size buffers allocated once and recycled.
//
// All buffers live in one aligned region so that a medium can register the whole pool with
// libfabric at once (region()). acquire() and release() are O(1) and never allocate. A pool
// belongs to one thread; debug builds assert it.
//
// The region is not zeroed or otherwise touched when the pool is made, and the free buffers
// are a stack: the buffer released last is handed out first. A link that never has more than
// a few frames in flight (a low rate) therefore keeps using the same few buffers, and only
// their pages become resident. A node with many such links holds what they use rather than
// every link's whole window (64 links of 64 × 32 KiB frames each are 128 MiB per end). A page
// faults in on its first use, once for the pool's life; a provider that pins registered
// memory (verbs) makes it resident when the medium registers the region. Contents of a buffer
// not yet written are unspecified.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

namespace boreal::transport {

class BufferPool {
 public:
  struct Buffer {
    std::byte* data = nullptr;
    std::uint32_t index = 0;  // position in the pool, stable for the pool's lifetime
  };

  // count buffers of buffer_bytes each (rounded up to 64 bytes); allocates here and only here.
  BufferPool(std::uint32_t count, std::size_t buffer_bytes);
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool();

  // A free buffer, or nullopt when all are in use.
  [[nodiscard]] std::optional<Buffer> acquire() noexcept;
  // Returns a buffer obtained from acquire() of this pool. Releasing twice is a programmer error.
  void release(Buffer buffer) noexcept;

  [[nodiscard]] Buffer at(std::uint32_t index) const noexcept;
  [[nodiscard]] std::uint32_t capacity() const noexcept { return count_; }
  [[nodiscard]] std::uint32_t available() const noexcept { return free_top_; }
  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }
  // The whole backing memory, for registration with a NIC.
  [[nodiscard]] std::span<std::byte> region() const noexcept { return {base_, total_bytes_}; }

 private:
  void assert_owner() const noexcept;

  std::uint32_t count_;
  std::size_t buffer_bytes_;
  std::size_t total_bytes_;
  std::byte* base_;
  std::vector<std::uint32_t> free_;  // stack of free indices, sized once
  std::vector<bool> in_use_;         // double-release detection
  std::uint32_t free_top_;
#ifndef NDEBUG
  mutable std::thread::id owner_{};
#endif
};

}  // namespace boreal::transport
