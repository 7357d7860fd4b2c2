#include <boreal/transport/buffer_pool.hpp>

#include <cassert>
#include <limits>
#include <new>

namespace boreal::transport {
namespace {

// A cache line on every x86-64 and most AArch64 parts; also what libfabric's memory
// registration and O_DIRECT-style DMA engines are happy with.
constexpr std::size_t kAlignment = 64;

std::size_t round_up(std::size_t bytes) {
  if (bytes > std::numeric_limits<std::size_t>::max() - (kAlignment - 1)) throw std::bad_alloc{};
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

std::size_t region_bytes(std::uint32_t count, std::size_t buffer_bytes) {
  if (count != 0 && buffer_bytes > std::numeric_limits<std::size_t>::max() / count) {
    throw std::bad_alloc{};
  }
  return buffer_bytes * count;
}

}  // namespace

BufferPool::BufferPool(std::uint32_t count, std::size_t buffer_bytes)
    : count_(count),
      buffer_bytes_(round_up(buffer_bytes)),
      total_bytes_(region_bytes(count, buffer_bytes_)),
      base_(nullptr),
      free_(count),
      in_use_(count, false),
      free_top_(count) {
  assert(count > 0 && buffer_bytes > 0);
  // Allocated last so that a bad_alloc from the vectors above cannot leak it.
  base_ = static_cast<std::byte*>(::operator new(total_bytes_, std::align_val_t{kAlignment}));
  // Not touched here (buffer_pool.hpp): a buffer's pages fault in on its first use.
  // The top of the stack is the end of free_, so index 0 is handed out first and buffers are
  // used in address order while the pool is fresh.
  for (std::uint32_t i = 0; i < count; ++i) free_[i] = count - 1 - i;
}

BufferPool::~BufferPool() { ::operator delete(base_, std::align_val_t{kAlignment}); }

std::optional<BufferPool::Buffer> BufferPool::acquire() noexcept {
  assert_owner();
  if (free_top_ == 0) return std::nullopt;
  const std::uint32_t index = free_[--free_top_];
  in_use_[index] = true;
  return at(index);
}

void BufferPool::release(Buffer buffer) noexcept {
  assert_owner();
  assert(buffer.index < count_ && "buffer is not from this pool");
  assert(buffer.data == at(buffer.index).data && "buffer data does not match its index");
  assert(in_use_[buffer.index] && "buffer released twice");
  // Release builds drop a bad release rather than push an index twice: a duplicate on the
  // free stack would hand one buffer to two owners later, far from the bug.
  if (buffer.index >= count_ || !in_use_[buffer.index]) return;
  in_use_[buffer.index] = false;
  free_[free_top_++] = buffer.index;
}

BufferPool::Buffer BufferPool::at(std::uint32_t index) const noexcept {
  assert(index < count_);
  return Buffer{base_ + std::size_t{index} * buffer_bytes_, index};
}

void BufferPool::assert_owner() const noexcept {
#ifndef NDEBUG
  // The first thread to use the pool owns it; the constructor's thread need not be the one.
  const auto self = std::this_thread::get_id();
  if (owner_ == std::thread::id{}) owner_ = self;
  assert(owner_ == self && "BufferPool used from a second thread");
#endif
}

}  // namespace boreal::transport
