// `boreal nexmark`: writes the NEXMark events (ops/nexmark.hpp) of an id range as three CSV
// files, persons.csv, auctions.csv and bids.csv, in the format scripts/nexmark/oracle.py
// reads (docs/nexmark.md), so a query's output can be checked against the oracle's.
#pragma once

#include <cstdint>
#include <string>

namespace boreal::cli {

struct NexmarkDumpFlags {
  std::uint64_t events = 0;
  std::uint64_t first_event = 0;
  std::uint32_t gap_us = 10;
  std::uint32_t max_delay_ms = 0;
  std::string out;
};

// Writes the files into flags.out (created if missing) and one line saying what it wrote,
// with the last event's date_time. Returns the exit status: 0, or 2 with a message on stderr.
int nexmark_command(const NexmarkDumpFlags& flags);

}  // namespace boreal::cli
