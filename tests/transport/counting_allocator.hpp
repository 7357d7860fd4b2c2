// Replaces the global operator new of the test program that includes it (in exactly one of
// its files) so that a test can show a path allocates nothing after set-up: allocations are
// counted while `g_counting` is set. Replacing operator new is the only way to see allocations
// made inside the library and Asio.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc{};
}
void* operator new[](std::size_t size) { return operator new(size); }
// Out of line so that GCC does not pair an inlined std::free with `new` and warn.
[[gnu::noinline]] static void release_memory(void* p) noexcept { std::free(p); }
void operator delete(void* p) noexcept { release_memory(p); }
void operator delete[](void* p) noexcept { release_memory(p); }
void operator delete(void* p, std::size_t) noexcept { release_memory(p); }
void operator delete[](void* p, std::size_t) noexcept { release_memory(p); }
