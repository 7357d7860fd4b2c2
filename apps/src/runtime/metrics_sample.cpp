#include "runtime/metrics_sample.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>

#include <boreal/transport/cpu_meter.hpp>

namespace boreal::runtime {
namespace {

// Resident pages now: the second field of /proc/self/statm (proc(5)). getrusage's ru_maxrss
// is the peak, which never falls, so it cannot show memory being given back. Plain read(2)
// into a stack buffer: no stream, no allocation.
std::uint64_t resident_bytes_now() noexcept {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::array<char, 128> text{};
  const ssize_t n = ::read(fd, text.data(), text.size() - 1);
  ::close(fd);
  if (n <= 0) return 0;
  const char* at = text.data();
  const char* end = text.data() + n;
  while (at < end && *at != ' ') ++at;  // skip the total size
  while (at < end && *at == ' ') ++at;
  std::uint64_t pages = 0;
  if (std::from_chars(at, end, pages).ec != std::errc()) return 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? pages * static_cast<std::uint64_t>(page) : 0;
}

// The coarse bucket of each fine bucket, computed once. The fine buckets' highest values only
// grow with their index, so the coarse index does too.
using CoarseIndex = std::array<std::uint8_t, ops::LatencyHistogram::kBucketCount>;
static_assert(kLatencyBuckets <= 256);

CoarseIndex make_coarse_index() noexcept {
  CoarseIndex coarse{};
  std::size_t c = 0;
  for (std::uint32_t i = 0; i < ops::LatencyHistogram::kBucketCount; ++i) {
    const std::int64_t highest = ops::LatencyHistogram::bucket_highest(i);
    while (c + 1 < kLatencyBuckets && highest > latency_bucket_le_ns(c)) ++c;
    coarse[i] = static_cast<std::uint8_t>(c);
  }
  return coarse;
}

}  // namespace

std::int64_t latency_bucket_le_ns(std::size_t i) noexcept {
  if (i == 0) return (std::int64_t{1} << kLatencyFirstExponent) - 1;
  // Bucket i ≥ 1 ends at 2^k × (1 + j/4) for k = 10 + (i − 1) / 4 and j = (i − 1) % 4 + 1.
  const std::size_t step = i - 1;
  const int k = kLatencyFirstExponent + static_cast<int>(step / kLatencyBucketsPerOctave);
  const auto j = static_cast<std::int64_t>(step % kLatencyBucketsPerOctave + 1);
  const std::int64_t octave = std::int64_t{1} << k;
  return octave + octave / static_cast<std::int64_t>(kLatencyBucketsPerOctave) * j - 1;
}

void fold_latency(const ops::LatencyHistogram& histogram, LatencyBuckets& buckets) noexcept {
  static const CoarseIndex coarse = make_coarse_index();
  for (std::uint32_t i = 0; i < ops::LatencyHistogram::kBucketCount; ++i) {
    buckets[coarse[i]] += histogram.count_at(i);
  }
}

ProcessFigures ProcessFigures::now() noexcept {
  ProcessFigures figures;
  figures.cpu_s = std::chrono::duration<double>(transport::ProcessUsage::sample().total()).count();
  figures.resident_bytes = resident_bytes_now();
  return figures;
}

}  // namespace boreal::runtime
