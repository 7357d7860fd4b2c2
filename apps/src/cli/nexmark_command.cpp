#include "nexmark_command.hpp"

#include <array>
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include <boreal/ops/nexmark.hpp>
#include <boreal/ops/sink.hpp>

namespace boreal::cli {

int nexmark_command(const NexmarkDumpFlags& flags) {
  const ops::NexmarkParams base{.first_event = flags.first_event,
                                .events = flags.events,
                                .gap_us = flags.gap_us,
                                .max_delay_ms = flags.max_delay_ms};
  if (auto errors = base.validate(); !errors.empty()) {
    std::cerr << "boreal nexmark: " << ops::describe(errors) << "\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(flags.out, ec);
  if (ec) {
    std::cerr << "boreal nexmark: cannot create directory '" << flags.out << "': " << ec.message()
              << "\n";
    return 2;
  }
  constexpr std::size_t kRows = 4096;
  const std::array<ops::NexmarkStream, 3> streams = {
      ops::NexmarkStream::persons, ops::NexmarkStream::auctions, ops::NexmarkStream::bids};
  std::array<std::uint64_t, 3> rows{};
  for (std::size_t i = 0; i < streams.size(); ++i) {
    ops::NexmarkParams params = base;
    params.stream = streams[i];
    auto gen = ops::NexmarkGenerator::make(params).value();  // validated above
    const std::string path =
        (std::filesystem::path(flags.out) / (std::string(ops::to_string(streams[i])) + ".csv"))
            .string();
    auto writer = ops::CsvWriter::make({.path = path}, gen.schema());
    if (!writer) {
      std::cerr << "boreal nexmark: " << writer.error().describe() << "\n";
      return 2;
    }
    ops::OwnedBatch batch(gen.schema(), kRows);
    while (!gen.done()) {
      batch.clear();
      gen.fill(batch, kRows);
      writer.value()->consume(batch);
    }
    writer.value()->end();
    if (auto status = writer.value()->status(); !status) {
      std::cerr << "boreal nexmark: " << status.error().describe() << "\n";
      return 2;
    }
    rows[i] = writer.value()->rows_written();
  }
  // The last event's time before any delay (Q4 and Q6 close auctions by it).
  const std::uint64_t last = flags.first_event + flags.events - 1;
  std::cout << "wrote " << rows[0] << " persons, " << rows[1] << " auctions and " << rows[2]
            << " bids (events " << flags.first_event << " to " << last << ") to " << flags.out
            << "; last event time "
            << ops::NexmarkGenerator::event_time_ms(last, flags.gap_us) * 1'000'000 << " ns\n";
  return 0;
}

}  // namespace boreal::cli
