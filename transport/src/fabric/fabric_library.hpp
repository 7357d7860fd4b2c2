// libfabric, opened at the first use of a fabric medium instead of at program start.
//
// boreal::transport does not link libfabric: a program that embeds the transport and never
// uses `fabric-msg` or `fabric-rma` neither needs libfabric installed nor loads it. Loading it
// is not free: Debian's libfabric links its psm provider's libpsm_infinipath, whose
// libinfinipath runs a constructor that calibrates a clock for ~0.2 s (pinned to CPU 0) and
// installs handlers for SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGILL and SIGABRT that end the
// process with status 1 and no word. Linked, every boreal process paid that before main().
//
// Only five of libfabric's functions are called through the symbol table; everything else
// (fi_domain, fi_endpoint, fi_tsend, fi_cq_read, ...) is an inline call through the tables of
// the objects these return, so the headers still come from the libfabric that boreal was
// built against. load_libfabric() opens the library (dlopen of the file named by the
// environment variable BOREAL_LIBFABRIC, else of the soname found when boreal was configured,
// BOREAL_LIBFABRIC_SONAME), looks the five up by name and version (libfabric versions its
// symbols; the loader asks for the version a link against the configured library would have
// bound, whose structures match the headers), and lets libfabric initialise its providers once
// (a fi_getinfo that matches nothing). Every signal's disposition is taken before and put
// back after, so whatever handlers the process had (boreal's own SIGINT and SIGTERM, the
// default action of the rest, a sanitizer's) are the ones it keeps.
//
// Threading: any thread may call load_libfabric(); the first successful load is kept for the
// life of the process (libfabric is never closed), a failed one is tried again at the next
// call. Signal handlers that another thread installs while a load runs may be undone.
#pragma once

#include <cstdint>

#include <rdma/fabric.h>

#include <boreal/transport/error.hpp>

namespace boreal::transport::fabric_medium {

struct LibFabric {
  int (*getinfo)(std::uint32_t version, const char* node, const char* service,
                 std::uint64_t flags, const fi_info* hints, fi_info** info);
  void (*freeinfo)(fi_info* info);
  fi_info* (*dupinfo)(const fi_info* info);
  int (*fabric)(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
  const char* (*strerror)(int errnum);
};

// The library, loaded now if it was not yet. Errors: ErrorCategory::fabric, naming the file
// and dlopen's or dlvsym's reason ("the fabric media need libfabric, and libfabric.so.1
// cannot be opened: ...", "... is not a libfabric they can use: it has no
// fi_getinfo@FABRIC_1.3 (...)").
[[nodiscard]] Result<const LibFabric*> load_libfabric();

// The library once load_libfabric() has succeeded in this process (asserted in debug builds).
[[nodiscard]] const LibFabric& loaded_libfabric() noexcept;

}  // namespace boreal::transport::fabric_medium
