// Frame codec cost per frame for payload sizes a link sees (64 B tuples up to 32 KiB
// batches): the checksum dominates from about 1 KiB up, so the crc32c pair below tells
// whether the SSE4.2 path is being taken.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/frame.hpp>

#include "../transport/src/core/crc32c_impl.hpp"

namespace boreal::transport {
namespace {

constexpr std::uint32_t kTupleBytes = 16;

std::vector<std::byte> payload_of(std::int64_t bytes) {
  std::vector<std::byte> out(static_cast<std::size_t>(bytes));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>(i * 131 + 7);
  return out;
}

FrameHeader data_header(std::size_t payload_bytes) {
  return {.flags = kFlagData,
          .stream_id = 1,
          .tuple_count = static_cast<std::uint32_t>(payload_bytes / kTupleBytes),
          .payload_bytes = static_cast<std::uint32_t>(payload_bytes)};
}

void BM_EncodeHeader(benchmark::State& state) {
  const auto payload = payload_of(state.range(0));
  std::array<std::byte, kFrameHeaderBytes> out{};
  FrameHeader header = data_header(payload.size());
  for (auto _ : state) {
    ++header.sequence;
    encode_header(header, payload, out);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<std::int64_t>(payload.size() + kFrameHeaderBytes));
}

void BM_DecodeHeaderAndVerify(benchmark::State& state) {
  const auto payload = payload_of(state.range(0));
  std::array<std::byte, kFrameHeaderBytes> raw{};
  encode_header(data_header(payload.size()), payload, raw);
  const FrameLimits limits{.stream_id = 1,
                           .tuple_bytes = kTupleBytes,
                           .max_payload_bytes = static_cast<std::uint32_t>(payload.size())};
  for (auto _ : state) {
    benchmark::DoNotOptimize(raw);
    auto header = decode_header(raw, limits);
    if (!header || !verify_checksum(header.value(), raw, payload)) {
      state.SkipWithError("a valid frame failed to decode");
      break;
    }
    benchmark::DoNotOptimize(header);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<std::int64_t>(payload.size() + kFrameHeaderBytes));
}

template <std::uint32_t (*Crc)(std::span<const std::byte>, std::uint32_t) noexcept>
void BM_Crc32c(benchmark::State& state) {
  if (Crc == &detail::crc32c_hw && !detail::crc32c_hw_available()) {
    state.SkipWithError("this CPU has no SSE4.2");
    return;
  }
  const auto data = payload_of(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(data.data());
    benchmark::DoNotOptimize(Crc(data, 0));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(data.size()));
}

void payload_sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t bytes : {64, 1024, 4096, 32768}) b->Arg(bytes);
}

BENCHMARK(BM_EncodeHeader)->Apply(payload_sizes);
BENCHMARK(BM_DecodeHeaderAndVerify)->Apply(payload_sizes);
BENCHMARK(BM_Crc32c<detail::crc32c_hw>)->Name("BM_Crc32c/hw")->Apply(payload_sizes);
BENCHMARK(BM_Crc32c<detail::crc32c_portable>)->Name("BM_Crc32c/portable")->Apply(payload_sizes);

}  // namespace
}  // namespace boreal::transport
