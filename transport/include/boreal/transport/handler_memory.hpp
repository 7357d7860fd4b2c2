// Room for one asynchronous wait's completion handler, so that arming a wait allocates
// nothing.
//
// Asio keeps a freed handler's memory for the next operation only when that operation starts
// inside io_context::run() or poll() on the same thread. A thread that blocks (wait modes
// block, backoff, adaptive, and sleep once idle) arms its waits from EventLoop::try_arm() and
// EventLoop::wait(), outside them, once per wake-up: without this every wake-up would cost a
// malloc and a free per wait. An owner that has at most one wait of a kind in flight (a
// socket's read wait, its write wait, the loop's timer) gives that wait a HandlerMemory and
// issues it through with_memory(); a handler larger than kBytes, or a second one while the
// first is in flight, falls back to the heap.
//
// The memory is shared with the handlers' allocators (make_handler_memory()): a wait may
// complete, cancelled, after its owner is gone (a closed socket's wait runs its handler later,
// or when the io_context is destroyed), and the memory must outlive that.
//
// Not thread-safe: the I/O thread that owns the waits owns their memory.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace boreal::transport {

class HandlerMemory {
 public:
  static constexpr std::size_t kBytes = 256;

  HandlerMemory() = default;
  HandlerMemory(const HandlerMemory&) = delete;
  HandlerMemory& operator=(const HandlerMemory&) = delete;

  [[nodiscard]] void* allocate(std::size_t bytes) {
    if (!in_use_ && bytes <= kBytes) {
      in_use_ = true;
      return storage_.data();
    }
    return ::operator new(bytes);
  }
  void deallocate(void* p) noexcept {
    if (p == storage_.data()) {
      in_use_ = false;
    } else {
      ::operator delete(p);
    }
  }

 private:
  alignas(std::max_align_t) std::array<std::byte, kBytes> storage_{};
  bool in_use_ = false;
};

using SharedHandlerMemory = std::shared_ptr<HandlerMemory>;
[[nodiscard]] inline SharedHandlerMemory make_handler_memory() {
  return std::make_shared<HandlerMemory>();
}

// The standard allocator interface over one HandlerMemory, as asio asks a handler for it.
template <class T>
class HandlerAllocator {
 public:
  using value_type = T;

  explicit HandlerAllocator(SharedHandlerMemory memory) noexcept : memory_(std::move(memory)) {}
  template <class U>
  HandlerAllocator(const HandlerAllocator<U>& other) noexcept : memory_(other.memory()) {}

  [[nodiscard]] T* allocate(std::size_t n) {
    return static_cast<T*>(memory_->allocate(sizeof(T) * n));
  }
  void deallocate(T* p, std::size_t /*n*/) noexcept { memory_->deallocate(p); }
  [[nodiscard]] const SharedHandlerMemory& memory() const noexcept { return memory_; }

  template <class U>
  bool operator==(const HandlerAllocator<U>& other) const noexcept {
    return memory_ == other.memory();
  }

 private:
  SharedHandlerMemory memory_;
};

// A completion handler that asio allocates from `memory` (its associated allocator).
template <class Handler>
class MemoryBoundHandler {
 public:
  using allocator_type = HandlerAllocator<Handler>;

  MemoryBoundHandler(SharedHandlerMemory memory, Handler handler)
      : memory_(std::move(memory)), handler_(std::move(handler)) {}

  [[nodiscard]] allocator_type get_allocator() const noexcept { return allocator_type(memory_); }

  template <class... Args>
  void operator()(Args&&... args) {
    handler_(std::forward<Args>(args)...);
  }

 private:
  SharedHandlerMemory memory_;
  Handler handler_;
};

template <class Handler>
[[nodiscard]] MemoryBoundHandler<std::decay_t<Handler>> with_memory(
    const SharedHandlerMemory& memory, Handler&& handler) {
  return MemoryBoundHandler<std::decay_t<Handler>>(memory, std::forward<Handler>(handler));
}

}  // namespace boreal::transport
