// Whether this build runs under a sanitizer (GCC defines __SANITIZE_*__, clang answers
// __has_feature). The code rarely needs it: the sockets provider keeps fabric-rma's immediate
// data under ThreadSanitizer (docs/transport-notes.md §1.5), and tests allow for a
// sanitizer's own memory.
#pragma once

namespace boreal::transport {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kUnderThreadSanitizer = true;
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

}  // namespace boreal::transport
