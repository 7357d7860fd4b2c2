#include <boreal/transport/handler_memory.hpp>

#include <cstdint>

#include <gtest/gtest.h>

namespace boreal::transport {
namespace {

TEST(HandlerMemory, OneHandlerAtATimeIsServedFromTheBlockTheRestFromTheHeap) {
  const auto memory = make_handler_memory();
  HandlerAllocator<char> allocator(memory);
  // Addresses compared as numbers: a freed pointer is not read.
  auto at = [](const char* p) { return reinterpret_cast<std::uintptr_t>(p); };
  char* first = allocator.allocate(64);
  const auto block = at(first);
  char* second = allocator.allocate(64);  // the block is taken: the heap
  EXPECT_NE(at(second), block);
  allocator.deallocate(first, 64);
  char* again = allocator.allocate(64);  // the block is free again
  EXPECT_EQ(at(again), block);
  char* large = allocator.allocate(HandlerMemory::kBytes + 1);  // too large for the block
  EXPECT_NE(at(large), block);
  allocator.deallocate(large, HandlerMemory::kBytes + 1);
  allocator.deallocate(second, 64);
  allocator.deallocate(again, 64);
}

TEST(HandlerMemory, ABoundHandlerCarriesTheMemoryAndCallsThrough) {
  const auto memory = make_handler_memory();
  int calls = 0;
  auto handler = with_memory(memory, [&calls](int n) { calls += n; });
  handler(3);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(handler.get_allocator().memory(), memory);
  // Rebinding keeps the memory, so whatever asio rebinds the allocator to shares the block.
  const HandlerAllocator<double> rebound(handler.get_allocator());
  EXPECT_TRUE(rebound == handler.get_allocator());
  EXPECT_EQ(memory.use_count(), 3);  // here, in the handler, in `rebound`
}

}  // namespace
}  // namespace boreal::transport
