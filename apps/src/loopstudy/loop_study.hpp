// The event-loop study: one raw-syscall TCP stream of boreal frames (frame.hpp: header,
// payload, CRC-32C), sent and received inside this process over loopback with TCP_NODELAY,
// with the way each end waits for readiness chosen by name. `boreal bench` runs it to put
// CPU and syscalls per tuple of each strategy side by side. The production TCP medium
// (transport/src/tcp, Boost.Asio) is not involved.
//
// One run: `links` loopback connections, each with its own listener. A paced sender stamps
// every tuple with its scheduled send time (CLOCK_MONOTONIC ns), packs tuples into frames
// of at most batch_bytes of payload and seals a frame when it is full or its oldest tuple is
// `flush` old; it sleeps (clock_nanosleep, 1 ns timer slack) until the next such deadline.
// The receiver checks every frame (header, CRC, frame sequence) and every tuple (its
// per-link sequence), records the latency from scheduled time to receipt, and counts. The
// last frame of each link carries end_of_stream; the sender then shuts its write side down.
// With reconnect_every = N each connection is closed after N frames and the link continues
// on a new one (the sender waits for the receiver's close before connecting again, so a
// link never has two connections at once).
//
// Every syscall the harness makes on either end goes through a counter (syscalls.hpp), so
// the counts are exact; io_uring_enter is counted per liburing submit-and-wait call, which
// makes exactly one on kernels with IORING_FEAT_EXT_ARG (5.11+) when no completion is
// already waiting (uring_loops.cpp skips the call otherwise). Not counted: io_uring_setup,
// epoll/thread creation, and the /proc/stat and getrusage reads of the measurement.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boreal/transport/error.hpp>

namespace boreal::runtime::loopstudy {

struct StudyConfig {
  std::string strategy;               // one of strategies()[i].name
  double rate = 100000;               // offered tuples/s over all links; 0 = as fast as possible
  std::uint32_t tuple_bytes = 64;     // ≥ 16 (sequence + timestamp)
  std::uint32_t batch_bytes = 32768;  // frame payload limit, ≥ tuple_bytes
  std::chrono::microseconds flush{100};      // a frame is sealed when its oldest tuple is this old
  std::chrono::milliseconds duration{2000};  // > 0
  int links = 4;                      // concurrent TCP connections, 1..64; rate split evenly
  std::uint32_t reconnect_every = 0;  // frames per connection; 0 = one connection per link
};

struct StudyResult {
  std::string strategy;
  double offered_rate = 0;
  double tuples_per_s = 0;  // tuples / wall_s
  double wall_s = 0;        // from the threads' start to the last one's end
  // Received and verified. With rate > 0 the sender sends exactly round(rate × duration)
  // tuples, tuple g going to link g mod links, so this is deterministic; with rate 0 it
  // sends for `duration`.
  std::uint64_t tuples = 0;
  std::uint64_t frames = 0;                  // data frames received (end_of_stream included)
  double machine_cpu_us_per_tuple = 0;       // (wall × CPUs − idle) / tuples, from /proc/stat
  double process_cpu_us_per_tuple = 0;       // getrusage(RUSAGE_SELF): both ends are here
  double syscalls_per_tuple = 0;             // sum of `syscalls` / tuples
  double p50_us = 0;                         // scheduled send time → receipt
  double p99_us = 0;
  // By kind ("send", "recv", "epoll_ctl", "epoll_wait", "io_uring_enter", "poll",
  // "sigwaitinfo", "fcntl", "accept", "connect", "socket", "setsockopt", "shutdown",
  // "close", "clock_nanosleep", ...), kinds never called omitted; set-up and teardown
  // included. sender_/receiver_syscalls split the same counts by end.
  std::map<std::string, std::uint64_t> syscalls;
  std::map<std::string, std::uint64_t> sender_syscalls;
  std::map<std::string, std::uint64_t> receiver_syscalls;
  // Per-connection structures (buffers, frame state) allocated after the first connection
  // of each link, both ends: 0 for `recycled`, 2 per reconnection for the others.
  std::uint64_t allocations_after_warmup = 0;
  // epoll-lazy only: epoll_ctl calls that epoll-rearm would have made (two per write) minus
  // the ones made; 0 for the other strategies.
  std::uint64_t epoll_ctl_saved = 0;
};

struct StrategyInfo {
  std::string name;
  std::string description;  // one README-ready sentence
};

// The strategies in a fixed order: epoll-rearm, epoll-lazy, epoll-et, uring-batched,
// recycled, thread-per-link, sigio.
[[nodiscard]] const std::vector<StrategyInfo>& strategies();

// Runs one study on the calling thread's behalf (it starts and joins the sender's and the
// receiver's threads; blocks for about `duration`). Errors: config for a bad field or an
// unknown strategy (the text lists the valid names); io when a socket call fails or
// io_uring is unavailable; protocol when a frame or tuple arrives damaged, out of order or
// missing, naming the link; closed when the stream stalls for 10 s.
[[nodiscard]] transport::Result<StudyResult> run_study(const StudyConfig& config);

}  // namespace boreal::runtime::loopstudy
