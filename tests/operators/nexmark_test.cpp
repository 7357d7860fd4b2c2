// NexmarkGenerator: kinds and counts by id, splits of the id space giving the same events,
// pacing by event id, bounded out-of-orderness, and each kind's field rules
// (docs/nexmark.md). Byte-for-byte agreement with the independent Python generator is
// checked by the nexmark_generators_agree test (tests/CMakeLists.txt).
#include <boreal/ops/nexmark.hpp>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops_test_support.hpp"

namespace boreal::ops {
namespace {

using test_support::format_row;

NexmarkGenerator make_gen(NexmarkParams params) {
  auto gen = NexmarkGenerator::make(params);
  EXPECT_TRUE(gen) << gen.error().describe();
  return std::move(gen).value();
}

// Every row of a generator, as text, generated through batches of `batch_rows`.
std::vector<std::string> all_rows(NexmarkGenerator gen, std::size_t batch_rows = 100) {
  std::vector<std::string> rows;
  OwnedBatch batch(gen.schema(), batch_rows);
  while (!gen.done()) {
    batch.clear();
    gen.fill(batch, batch_rows);
    for (Row row : batch) rows.push_back(format_row(gen.schema(), row));
  }
  return rows;
}

std::int64_t get_i64(const Schema& s, Row row, std::string_view name) {
  return FieldRef<std::int64_t>{s.field(*s.index_of(name)).offset}.get(row);
}
std::int64_t get_time(const Schema& s, Row row, std::string_view name) {
  return FieldRef<Timestamp>{s.field(*s.index_of(name)).offset}.get(row).time_since_epoch().count();
}
std::string get_str(const Schema& s, Row row, std::string_view name) {
  const Field& f = s.field(*s.index_of(name));
  return std::string(FieldRef<std::string_view>{f.offset, f.width}.get(row));
}

TEST(NexmarkTest, SchemasAreTheDocumentedOnes) {
  EXPECT_EQ(nexmark_schema(NexmarkStream::bids).to_string(),
            "auction:i64,bidder:i64,price:i64,date_time:timestamp");
  EXPECT_EQ(nexmark_schema(NexmarkStream::bids).tuple_bytes(), 32u);
  EXPECT_EQ(nexmark_schema(NexmarkStream::persons).to_string(),
            "id:i64,name:str16,email:str16,credit_card:str19,city:str16,state:str2,"
            "date_time:timestamp");
  EXPECT_EQ(nexmark_schema(NexmarkStream::auctions).to_string(),
            "id:i64,item_name:str20,description:str100,initial_bid:i64,reserve:i64,"
            "date_time:timestamp,expires:timestamp,seller:i64,category:i64");
  EXPECT_EQ(nexmark_schema(NexmarkStream::events).field(0).name, "kind");
  EXPECT_EQ(nexmark_stream("bids"), NexmarkStream::bids);
  EXPECT_EQ(nexmark_stream("bid"), std::nullopt);
}

TEST(NexmarkTest, KindsFollowTheIdModuloFifty) {
  const std::uint64_t n = 100'000;
  EXPECT_EQ(all_rows(make_gen({.stream = NexmarkStream::persons, .events = n})).size(), 2'000u);
  EXPECT_EQ(all_rows(make_gen({.stream = NexmarkStream::auctions, .events = n})).size(), 6'000u);
  EXPECT_EQ(all_rows(make_gen({.stream = NexmarkStream::bids, .events = n})).size(), 92'000u);
  // The events stream: kind 0, 1, 1, 1, then 46 bids, per 50 ids.
  NexmarkGenerator events = make_gen({.stream = NexmarkStream::events, .events = 100});
  OwnedBatch batch(events.schema(), 100);
  EXPECT_EQ(events.fill(batch, 100), 100u);
  const auto kind = FieldRef<std::int32_t>{0};
  for (std::size_t i = 0; i < 100; ++i) {
    const std::int32_t want = i % 50 == 0 ? 0 : i % 50 < 4 ? 1 : 2;
    EXPECT_EQ(kind.get(batch.row(i)), want) << "event " << i;
  }
  EXPECT_TRUE(events.done());
}

TEST(NexmarkTest, TheReferenceStreamsCounts) {
  // docs/nexmark.md section 7: the first 2,000,000 events.
  const std::uint64_t n = 2'000'000;
  std::vector<std::size_t> counts;
  for (auto stream : {NexmarkStream::persons, NexmarkStream::auctions, NexmarkStream::bids}) {
    NexmarkGenerator gen = make_gen({.stream = stream, .events = n});
    OwnedBatch batch(gen.schema(), 4096);
    std::size_t rows = 0;
    while (!gen.done()) {
      batch.clear();
      rows += gen.fill(batch, 4096);
    }
    counts.push_back(rows);
  }
  EXPECT_EQ(counts, (std::vector<std::size_t>{40'000, 120'000, 1'840'000}));
}

TEST(NexmarkTest, IdsAndEventTimes) {
  NexmarkGenerator persons = make_gen({.stream = NexmarkStream::persons, .first_event = 12'300,
                                       .events = 100});
  const Schema& ps = persons.schema();
  OwnedBatch batch(ps, 10);
  ASSERT_EQ(persons.fill(batch, 10), 2u);  // ids 12300 and 12350
  EXPECT_EQ(get_i64(ps, batch.row(0), "id"), 1000 + 246);
  EXPECT_EQ(get_i64(ps, batch.row(1), "id"), 1000 + 247);
  EXPECT_EQ(get_time(ps, batch.row(0), "date_time"), 1'700'000'000'123'000'000);
  EXPECT_EQ(NexmarkGenerator::event_time_ms(12'345, 10), 1'700'000'000'123);
  EXPECT_EQ(NexmarkGenerator::event_time_ms(12'345, 250), 1'700'000'003'086);

  // Auction ids: lastAuction(id) + 1000, so ids 1, 2, 3 give auctions 1000, 1001, 1002 and
  // ids 51, 52, 53 give 1003, 1004, 1005.
  NexmarkGenerator auctions = make_gen({.stream = NexmarkStream::auctions, .events = 100});
  const Schema& as = auctions.schema();
  OwnedBatch abatch(as, 10);
  ASSERT_EQ(auctions.fill(abatch, 10), 6u);
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(get_i64(as, abatch.row(i), "id"), 1000 + std::int64_t(i));
}

TEST(NexmarkTest, AnySplitOfTheIdsGivesTheSameEvents) {
  const std::vector<std::string> whole =
      all_rows(make_gen({.stream = NexmarkStream::bids, .events = 20'000}), 97);
  std::vector<std::string> split =
      all_rows(make_gen({.stream = NexmarkStream::bids, .events = 7'777}), 1);
  const auto rest = all_rows(
      make_gen({.stream = NexmarkStream::bids, .first_event = 7'777, .events = 12'223}), 1000);
  split.insert(split.end(), rest.begin(), rest.end());
  EXPECT_EQ(split, whole);

  // The events stream's bids are the bids stream's, field for field.
  NexmarkGenerator events = make_gen({.stream = NexmarkStream::events, .events = 20'000});
  const Schema& es = events.schema();
  const Schema& bs = nexmark_schema(NexmarkStream::bids);
  OwnedBatch batch(es, 20'000);
  events.fill(batch, 20'000);
  std::vector<std::string> from_events;
  for (Row row : batch) {
    if (FieldRef<std::int32_t>{0}.get(row) != 2) continue;
    from_events.push_back(std::to_string(get_i64(es, row, "auction")) + "," +
                          std::to_string(get_i64(es, row, "bidder")) + "," +
                          std::to_string(get_i64(es, row, "price")) + "," +
                          std::to_string(get_time(es, row, "date_time")));
    EXPECT_EQ(get_i64(es, row, "id"), 0);  // other kinds' fields are zero
    EXPECT_EQ(get_str(es, row, "name"), "");
  }
  EXPECT_EQ(from_events, whole);
  (void)bs;
}

TEST(NexmarkTest, FillStopsAtEndEventMaxRowsAndARoomlessBatch) {
  NexmarkGenerator gen = make_gen({.stream = NexmarkStream::auctions, .events = 1000});
  OwnedBatch batch(gen.schema(), 4);
  EXPECT_EQ(gen.fill(batch, 10, 3), 2u);  // ids 1 and 2; id 3 is not before end_event 3
  EXPECT_EQ(gen.next_event(), 3u);
  EXPECT_EQ(gen.fill(batch, 1), 1u);  // id 3
  EXPECT_EQ(gen.next_event(), 51u);   // skipped to the next auction
  EXPECT_EQ(gen.fill(batch, 10), 1u);  // the batch had room for one more
  EXPECT_TRUE(batch.full());
  EXPECT_EQ(gen.fill(batch, 10), 0u);
  EXPECT_EQ(gen.next_event(), 52u);
}

TEST(NexmarkTest, EventAfterRowsIsWhereThatManyRowsEnd) {
  for (auto stream : {NexmarkStream::persons, NexmarkStream::auctions, NexmarkStream::bids,
                      NexmarkStream::events}) {
    for (std::uint64_t first : {0u, 1u, 3u, 4u, 49u, 50u, 77u}) {
      for (std::uint64_t rows : {1u, 2u, 3u, 45u, 46u, 47u, 100u, 500u}) {
        NexmarkGenerator gen =
            make_gen({.stream = stream, .first_event = first, .events = 100'000});
        const std::uint64_t end = gen.event_after_rows(rows);
        OwnedBatch batch(gen.schema(), 1000);
        EXPECT_EQ(gen.fill(batch, 1000, end), rows) << to_string(stream) << " from " << first;
        EXPECT_EQ(gen.fill(batch, 1000, end), 0u);
        // The last row came from the event just before `end`.
        EXPECT_EQ(gen.next_event(), end)
            << to_string(stream) << " from " << first << " rows " << rows;
      }
    }
  }
  NexmarkGenerator short_gen = make_gen({.stream = NexmarkStream::persons, .events = 120});
  EXPECT_EQ(short_gen.event_after_rows(10), 120u);  // capped at the end
}

TEST(NexmarkTest, DelaysMoveDateTimeEarlierByAtMostTheBound) {
  const std::uint64_t n = 5'000;
  NexmarkGenerator plain = make_gen({.stream = NexmarkStream::events, .events = n});
  NexmarkGenerator delayed =
      make_gen({.stream = NexmarkStream::events, .events = n, .max_delay_ms = 7});
  NexmarkGenerator zero =
      make_gen({.stream = NexmarkStream::events, .events = n, .max_delay_ms = 0});
  const Schema& s = plain.schema();
  OwnedBatch a(s, n), b(s, n), c(s, n);
  plain.fill(a, n);
  delayed.fill(b, n);
  zero.fill(c, n);
  std::set<std::int64_t> delays;
  bool out_of_order = false;
  std::int64_t newest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t t = get_time(s, a.row(i), "date_time");
    const std::int64_t late = get_time(s, b.row(i), "date_time");
    EXPECT_EQ(t, NexmarkGenerator::event_time_ms(i, 10) * 1'000'000);
    delays.insert((t - late) / 1'000'000);
    EXPECT_EQ((t - late) % 1'000'000, 0);
    out_of_order = out_of_order || late < newest;
    newest = std::max(newest, late);
    // Nothing else changes, expires included.
    EXPECT_EQ(get_i64(s, a.row(i), "price"), get_i64(s, b.row(i), "price"));
    EXPECT_EQ(get_time(s, a.row(i), "expires"), get_time(s, b.row(i), "expires"));
    EXPECT_EQ(format_row(s, a.row(i)), format_row(s, c.row(i)));
  }
  EXPECT_EQ(delays, (std::set<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(out_of_order);
}

TEST(NexmarkTest, FieldsFollowTheirRules) {
  const std::set<std::string> first = {"Peter", "Paul", "Luke", "John", "Saul", "Vicky",
                                       "Kate", "Julie", "Sarah", "Deiter", "Walter"};
  const std::set<std::string> states = {"AZ", "CA", "ID", "OR", "WA", "WY"};
  NexmarkGenerator events = make_gen({.stream = NexmarkStream::events, .events = 50'000});
  const Schema& s = events.schema();
  OwnedBatch batch(s, 50'000);
  events.fill(batch, 50'000);
  std::set<std::int64_t> categories;
  for (std::size_t id = 0; id < 50'000; ++id) {
    const Row row = batch.row(id);
    const std::int64_t last_person = static_cast<std::int64_t>(id / 50);
    if (id % 50 == 0) {
      const std::string name = get_str(s, row, "name");
      EXPECT_TRUE(first.count(name.substr(0, name.find(' ')))) << name;
      const std::string email = get_str(s, row, "email");
      EXPECT_TRUE(email.size() >= 5 && email.size() <= 15 && email.ends_with(".com") &&
                  email.find('@') != std::string::npos)
          << email;
      EXPECT_NE(email.front(), ' ');
      const std::string card = get_str(s, row, "credit_card");
      ASSERT_EQ(card.size(), 19u);
      for (std::size_t i = 0; i < 19; ++i) EXPECT_EQ(card[i] == ' ', i % 5 == 4) << card;
      EXPECT_TRUE(states.count(get_str(s, row, "state")));
    } else if (id % 50 < 4) {
      const std::int64_t dt = get_time(s, row, "date_time");
      const std::int64_t expires = get_time(s, row, "expires");
      // horizon = time(id + 1666) - time(id) = 16 or 17 ms at 10 µs per event
      EXPECT_GT(expires, dt);
      EXPECT_LE(expires - dt, (1 + 2 * 17) * 1'000'000);
      EXPECT_GE(get_i64(s, row, "reserve"), get_i64(s, row, "initial_bid"));
      EXPECT_GE(get_i64(s, row, "initial_bid"), 100);
      EXPECT_LE(get_i64(s, row, "seller"), 1000 + last_person + 10);
      categories.insert(get_i64(s, row, "category"));
      const std::string description = get_str(s, row, "description");
      EXPECT_LE(description.size(), 99u);
      if (!description.empty()) {
        EXPECT_NE(description.back(), ' ');
        EXPECT_NE(description.front(), ' ');
      }
    } else {
      EXPECT_GE(get_i64(s, row, "price"), 100);
      EXPECT_LE(get_i64(s, row, "price"), 100'000'000);
      EXPECT_LE(get_i64(s, row, "bidder"), 1000 + last_person + 10);
    }
  }
  EXPECT_EQ(categories, (std::set<std::int64_t>{10, 11, 12, 13, 14}));
}

TEST(NexmarkTest, ParamsAreValidated) {
  auto bad = NexmarkGenerator::make({.events = 0, .gap_us = 0, .max_delay_ms = 2'000'000});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().describe(),
            "params.gap_us: must be 1 .. 1000000 µs, got 0\n"
            "params.max_delay_ms: must be at most 1000000 ms, got 2000000\n"
            "params.events: must be at least 1");
}

}  // namespace
}  // namespace boreal::ops

namespace boreal::ops {
namespace {

TEST(NexmarkTest, StampedStreamsCarryEachEventsScheduledTime) {
  EXPECT_EQ(nexmark_schema(NexmarkStream::bids, true).to_string(),
            "auction:i64,bidder:i64,price:i64,date_time:timestamp,ts:timestamp");
  auto gen = NexmarkGenerator::make({.stream = NexmarkStream::bids, .first_event = 100,
                                     .events = 60, .stamp = true, .stamp_start_ns = 5'000,
                                     .stamp_ns_per_event = 2.5})
                 .value();
  OwnedBatch batch(gen.schema(), 100);
  ASSERT_EQ(gen.fill(batch, 100), 52u);  // ids 104..149 and 154..159
  const auto ts = FieldRef<Timestamp>::bind(gen.schema(), "ts").value();
  EXPECT_EQ(ts.get(batch.row(0)).time_since_epoch().count(), 5'000 + 10);     // id 104
  EXPECT_EQ(ts.get(batch.row(46)).time_since_epoch().count(), 5'000 + 135);   // id 154
  // The other fields are the unstamped stream's.
  auto plain =
      NexmarkGenerator::make({.stream = NexmarkStream::bids, .first_event = 100, .events = 60})
          .value();
  OwnedBatch plain_batch(plain.schema(), 100);
  plain.fill(plain_batch, 100);
  for (std::size_t i = 0; i < 52; ++i) {
    EXPECT_EQ(std::memcmp(batch.row(i).data(), plain_batch.row(i).data(), 32), 0) << i;
  }
}

}  // namespace
}  // namespace boreal::ops
