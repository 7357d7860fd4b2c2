// NexmarkGenerator: the NEXMark benchmark's event stream (persons, auctions, bids), made
// deterministic by event id, exactly as docs/nexmark.md specifies it.
//
// Event number `id` (0, 1, 2, ...) alone decides the event: its kind (id % 50: 0 a person,
// 1-3 an auction, 4-49 a bid), every field, and its event time (1.7e12 ms + id * gap_us /
// 1000). So any split of the ids over several generators — one per kind, one per node, a
// range each — gives the same events, and a query's answer can be checked row for row
// against an oracle fed the same stream (scripts/nexmark/oracle.py).
//
//   auto gen = NexmarkGenerator::make({.stream = NexmarkStream::bids, .events = 2'000'000})
//                  .value();
//   OwnedBatch batch(gen.schema(), 1024);
//   while (!gen.done()) { batch.clear(); gen.fill(batch, 1024); consume(batch); }
//
// Streams. `persons`, `auctions` and `bids` carry one kind each, with the fields of
// nexmark_schema() below; a generator of one kind walks the same ids and skips the others
// without drawing for them. `events` carries every event in id order, in one schema that
// holds every kind's fields and a `kind` column (0 person, 1 auction, 2 bid); the fields of
// the other kinds are zero (strings empty).
//
// Times. date_time and expires are `timestamp` fields (nanoseconds): the specification's
// milliseconds × 1,000,000, so windows of the operator library apply to them unchanged.
// With max_delay_ms = D > 0 each event's date_time is moved earlier by a number of ms drawn in
// [0, D] from a stream of its own (the event's other fields do not change, expires included):
// the events stay in id order but their times are out of order by at most D ms.
//
// Threads: one thread per generator; make() allocates, fill() does not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include <boreal/ops/batch.hpp>
#include <boreal/ops/error.hpp>
#include <boreal/ops/schema.hpp>

namespace boreal::ops {

enum class NexmarkStream : std::uint8_t { persons, auctions, bids, events };

// "persons", "auctions", "bids", "events".
[[nodiscard]] std::string_view to_string(NexmarkStream stream) noexcept;
[[nodiscard]] std::optional<NexmarkStream> nexmark_stream(std::string_view name) noexcept;

// The schema of each stream:
//   persons   id:i64,name:str16,email:str16,credit_card:str19,city:str16,state:str2,
//             date_time:timestamp
//   auctions  id:i64,item_name:str20,description:str100,initial_bid:i64,reserve:i64,
//             date_time:timestamp,expires:timestamp,seller:i64,category:i64
//   bids      auction:i64,bidder:i64,price:i64,date_time:timestamp
//   events    kind:i32, then id, the person's strings, the auction's fields, the bid's
//             auction, bidder and price, and one date_time (see nexmark.cpp)
// and, stamped, each of them followed by ts:timestamp.
// With `stamped`, one more field at the end: ts:timestamp (NexmarkParams::stamp).
[[nodiscard]] const Schema& nexmark_schema(NexmarkStream stream, bool stamped = false);

struct NexmarkParams {
  static constexpr std::uint64_t kEndless = std::numeric_limits<std::uint64_t>::max();

  NexmarkStream stream = NexmarkStream::events;
  std::uint64_t first_event = 0;  // the first event id
  std::uint64_t events = kEndless;  // event ids to walk (of every kind): first_event + events
  std::uint32_t gap_us = 10;        // event time between consecutive ids, µs; 1 .. 10^6
  std::uint32_t max_delay_ms = 0;   // bounded out-of-orderness of date_time, ms; <= 10^6
  // Adds a last field ts:timestamp holding each event's scheduled send time on the realtime
  // clock: stamp_start_ns + (id - first_event) * stamp_ns_per_event. Not part of NEXMark:
  // it lets a latency sink measure how long results take (the event times are synthetic).
  bool stamp = false;
  std::int64_t stamp_start_ns = 0;
  double stamp_ns_per_event = 0;

  // Every problem at once; `where` is "params.gap_us", ...
  [[nodiscard]] std::vector<Error> validate() const;
};

class NexmarkGenerator {
 public:
  static Result<NexmarkGenerator> make(const NexmarkParams& params);

  [[nodiscard]] const Schema& schema() const noexcept { return *schema_; }
  [[nodiscard]] NexmarkStream stream() const noexcept { return stream_; }

  // Appends the rows of the next events, in id order, until `max_rows` rows were appended,
  // `out` is full, the events run out, or the next event's id is `end_event` (exclusive;
  // for pacing by event count). Returns the rows appended. Never allocates. Precondition:
  // `out` has schema().
  std::size_t fill(Batch& out, std::size_t max_rows,
                   std::uint64_t end_event = NexmarkParams::kEndless);

  // The next event id to be walked, and whether every event has been walked.
  [[nodiscard]] std::uint64_t next_event() const noexcept { return next_; }
  [[nodiscard]] bool done() const noexcept { return next_ >= end_; }
  // The id one past the event that gives the `rows`-th next row of this stream (rows >= 1),
  // capped at the end: fill(out, rows, event_after_rows(rows)) appends exactly `rows` rows
  // when the events last. For pacing: when that many rows will be due.
  [[nodiscard]] std::uint64_t event_after_rows(std::uint64_t rows) const noexcept;

  // Event time of `id` in ms since the epoch before any delay: 1.7e12 + id * gap_us / 1000.
  [[nodiscard]] static std::int64_t event_time_ms(std::uint64_t id, std::uint32_t gap_us) noexcept;

 private:
  NexmarkGenerator() = default;
  void write_person(std::byte* row, std::uint64_t id) const noexcept;
  void write_auction(std::byte* row, std::uint64_t id) const noexcept;
  void write_bid(std::byte* row, std::uint64_t id) const noexcept;
  [[nodiscard]] std::int64_t date_time_ns(std::uint64_t id) const noexcept;

  const Schema* schema_ = nullptr;
  NexmarkStream stream_ = NexmarkStream::events;
  std::uint64_t next_ = 0;
  std::uint64_t end_ = 0;
  std::uint32_t gap_us_ = 10;
  std::uint32_t max_delay_ms_ = 0;
  // Offsets of each kind's fields in schema(), bound at make() (see nexmark.cpp).
  struct PersonAt {
    std::uint32_t id, name, email, credit_card, city, state, date_time;
  };
  struct AuctionAt {
    std::uint32_t id, item_name, description, initial_bid, reserve, date_time, expires, seller,
        category;
  };
  struct BidAt {
    std::uint32_t auction, bidder, price, date_time;
  };
  PersonAt person_{};
  AuctionAt auction_{};
  BidAt bid_{};
  std::int64_t kind_at_ = -1;  // the events stream's kind column, else -1
  std::int64_t stamp_at_ = -1;  // the ts column when stamped, else -1
  std::uint64_t first_event_ = 0;
  std::int64_t stamp_start_ns_ = 0;
  double stamp_ns_per_event_ = 0;
};

}  // namespace boreal::ops
