// Replaces the global operator new of the test program that includes it, so a test can show
// that a path allocates nothing: read g_allocations before and after. Include it in exactly
// one file of a test executable (each tests/*/*_test.cpp is its own executable).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

// GCC cannot see that the replaced operator delete below pairs with the replaced operator new.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<std::size_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
