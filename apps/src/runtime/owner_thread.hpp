// OwnerThread: remembers the thread that first uses an object and, in debug builds, asserts
// that no other thread uses it afterwards. Free in release builds (an empty struct).
//
//   class LinkWriter { ... void consume(...) { owner_.check(); ... } OwnerThread owner_; };
#pragma once

#include <cassert>
#include <thread>

namespace boreal::runtime {

#ifndef NDEBUG
class OwnerThread {
 public:
  // The first call binds the object to the calling thread; later calls assert it is the same.
  void check() noexcept {
    const auto self = std::this_thread::get_id();
    if (owner_ == std::thread::id()) owner_ = self;
    assert(owner_ == self && "used from a thread other than its owner");
  }

 private:
  std::thread::id owner_{};
};
#else
class OwnerThread {
 public:
  void check() const noexcept {}
};
#endif

}  // namespace boreal::runtime
