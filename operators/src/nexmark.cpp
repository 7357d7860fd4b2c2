// The NEXMark event stream, as docs/nexmark.md specifies it bit for bit: the draws, their
// order per field, the id arithmetic. Each comment names the rule it implements.
#include <boreal/ops/nexmark.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

namespace boreal::ops {
namespace {

constexpr std::uint64_t kSeed = 0x6e65786d61726bULL;       // "nexmark"
constexpr std::uint64_t kDelaySeed = 0x6f75746f666f7264ULL;  // "outoford"
constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
constexpr std::int64_t kBaseTimeMs = 1'700'000'000'000;
constexpr std::int64_t kIdOffset = 1000;  // person and auction ids are numbered from 1000
constexpr std::uint64_t kProportion = 50;  // 1 person, 3 auctions, 46 bids per 50 events

constexpr std::uint64_t mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One event's random numbers: splitmix64 seeded from the event id.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) noexcept : s_(mix(seed)) {}
  std::uint64_t draw() noexcept {
    s_ += kGolden;
    return mix(s_);
  }
  // [0, n), n < 2^32: the high 32 bits scaled (no division).
  std::uint64_t below32(std::uint64_t n) noexcept { return ((draw() >> 32) * n) >> 32; }
  // [0, n) by remainder, for 64-bit bounds.
  std::uint64_t below64(std::uint64_t n) noexcept { return (draw() >> 1) % n; }
  double unit() noexcept { return static_cast<double>(draw() >> 11) * 0x1p-53; }
  // 10^(6u) dollars in cents, rounded half up (Java's Math.round): 1 .. 10^8.
  std::int64_t price() noexcept {
    return static_cast<std::int64_t>(std::floor(std::pow(10.0, 6.0 * unit()) * 100.0 + 0.5));
  }
  // 3 + below32(max - 3) characters, each a space (26 in 338) or a lowercase letter, written
  // at `out` after stripping leading and trailing spaces; returns the length written.
  std::size_t text(std::size_t max, char* out) noexcept {
    const std::size_t length = 3 + below32(max - 3);
    std::size_t written = 0;
    std::size_t kept = 0;  // length without trailing spaces
    for (std::size_t i = 0; i < length; ++i) {
      const std::uint64_t v = below32(338);
      if (v < 26) {
        if (written > 0) out[written++] = ' ';  // leading spaces are dropped
      } else {
        out[written++] = static_cast<char>('a' + v % 26);
        kept = written;
      }
    }
    std::memset(out + kept, 0, written - kept);  // the trailing spaces
    return kept;
  }

 private:
  std::uint64_t s_;
};

// Id arithmetic (docs/nexmark.md "Ids and kinds"). Signed: lastAuction(0) is -1.
std::int64_t last_person(std::uint64_t id) noexcept {
  return static_cast<std::int64_t>(id / kProportion);
}
std::int64_t last_auction(std::uint64_t id) noexcept {
  const auto epoch = static_cast<std::int64_t>(id / kProportion);
  const auto offset = static_cast<std::int64_t>(id % kProportion);
  if (offset < 1) return 3 * epoch - 1;
  if (offset >= 4) return 3 * epoch + 2;
  return 3 * epoch + offset - 1;
}
std::int64_t random_person(std::uint64_t id, Draws& d) noexcept {
  const std::int64_t n = last_person(id) + 1;
  const std::int64_t active = std::min<std::int64_t>(n, 1000);
  return n - active + static_cast<std::int64_t>(d.below64(static_cast<std::uint64_t>(active + 10)));
}
std::int64_t random_auction(std::uint64_t id, Draws& d) noexcept {
  const std::int64_t last = last_auction(id);
  const std::int64_t first = std::max<std::int64_t>(last - 100, 0);
  return first +
         static_cast<std::int64_t>(d.below64(static_cast<std::uint64_t>(last - first + 1 + 10)));
}

enum class Kind : std::uint8_t { person, auction, bid };
Kind kind_of(std::uint64_t id) noexcept {
  const std::uint64_t offset = id % kProportion;
  return offset == 0 ? Kind::person : offset < 4 ? Kind::auction : Kind::bid;
}
bool carries(NexmarkStream stream, std::uint64_t offset) noexcept {
  switch (stream) {
    case NexmarkStream::persons: return offset == 0;
    case NexmarkStream::auctions: return offset >= 1 && offset < 4;
    case NexmarkStream::bids: return offset >= 4;
    case NexmarkStream::events: return true;
  }
  return false;
}
// The first id at or after `id` that `stream` carries.
std::uint64_t next_carried(NexmarkStream stream, std::uint64_t id) noexcept {
  const std::uint64_t base = id - id % kProportion;
  const std::uint64_t offset = id % kProportion;
  switch (stream) {
    case NexmarkStream::persons: return offset == 0 ? id : base + kProportion;
    case NexmarkStream::auctions:
      return offset == 0 ? id + 1 : offset < 4 ? id : base + kProportion + 1;
    case NexmarkStream::bids: return offset < 4 ? base + 4 : id;
    case NexmarkStream::events: return id;
  }
  return id;
}

std::uint64_t per_block(NexmarkStream stream) noexcept {
  switch (stream) {
    case NexmarkStream::persons: return 1;
    case NexmarkStream::auctions: return 3;
    case NexmarkStream::bids: return 46;
    case NexmarkStream::events: return kProportion;
  }
  return kProportion;
}

constexpr std::array<std::string_view, 11> kFirst = {"Peter", "Paul",  "Luke",   "John",
                                                     "Saul",  "Vicky", "Kate",   "Julie",
                                                     "Sarah", "Deiter", "Walter"};
constexpr std::array<std::string_view, 9> kLast = {
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"};
constexpr std::array<std::string_view, 10> kCities = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
    "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
constexpr std::array<std::string_view, 6> kStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};

void put_i64(std::byte* row, std::uint32_t at, std::int64_t v) noexcept {
  std::memcpy(row + at, &v, 8);
}
void put_text(std::byte* row, std::uint32_t at, std::string_view text) noexcept {
  std::memcpy(row + at, text.data(), text.size());
}
char* chars(std::byte* row, std::uint32_t at) noexcept { return reinterpret_cast<char*>(row + at); }

const char* const kPersonsText =
    "id:i64,name:str16,email:str16,credit_card:str19,city:str16,state:str2,date_time:timestamp";
const char* const kAuctionsText =
    "id:i64,item_name:str20,description:str100,initial_bid:i64,reserve:i64,date_time:timestamp,"
    "expires:timestamp,seller:i64,category:i64";
const char* const kBidsText = "auction:i64,bidder:i64,price:i64,date_time:timestamp";
// `id` is the person's or the auction's; the strings are the person's then the auction's.
const char* const kEventsText =
    "kind:i32,id:i64,name:str16,email:str16,credit_card:str19,city:str16,state:str2,"
    "item_name:str20,description:str100,initial_bid:i64,reserve:i64,expires:timestamp,"
    "seller:i64,category:i64,auction:i64,bidder:i64,price:i64,date_time:timestamp";

std::uint32_t offset_of(const Schema& schema, std::string_view name) {
  return schema.field(schema.index_of(name).value()).offset;
}

}  // namespace

std::string_view to_string(NexmarkStream stream) noexcept {
  switch (stream) {
    case NexmarkStream::persons: return "persons";
    case NexmarkStream::auctions: return "auctions";
    case NexmarkStream::bids: return "bids";
    case NexmarkStream::events: return "events";
  }
  return "?";
}

std::optional<NexmarkStream> nexmark_stream(std::string_view name) noexcept {
  for (auto s : {NexmarkStream::persons, NexmarkStream::auctions, NexmarkStream::bids,
                 NexmarkStream::events}) {
    if (name == to_string(s)) return s;
  }
  return std::nullopt;
}

const Schema& nexmark_schema(NexmarkStream stream, bool stamped) {
  static const std::array<Schema, 8> schemas = [] {
    const std::array<const char*, 4> texts = {kPersonsText, kAuctionsText, kBidsText, kEventsText};
    std::array<std::optional<Schema>, 8> made;
    for (std::size_t i = 0; i < 4; ++i) {
      made[i] = Schema::parse(texts[i]).value();
      made[4 + i] = Schema::parse(std::string(texts[i]) + ",ts:timestamp").value();
    }
    return std::array<Schema, 8>{*made[0], *made[1], *made[2], *made[3],
                                 *made[4], *made[5], *made[6], *made[7]};
  }();
  return schemas[static_cast<std::size_t>(stream) + (stamped ? 4 : 0)];
}

std::vector<Error> NexmarkParams::validate() const {
  std::vector<Error> errors;
  if (gap_us < 1 || gap_us > 1'000'000) {
    errors.push_back({"must be 1 .. 1000000 µs, got " + std::to_string(gap_us), "params.gap_us"});
  }
  if (max_delay_ms > 1'000'000) {
    errors.push_back({"must be at most 1000000 ms, got " + std::to_string(max_delay_ms),
                      "params.max_delay_ms"});
  }
  if (events == 0) errors.push_back({"must be at least 1", "params.events"});
  // Event times must stay well inside int64 nanoseconds (about year 2262).
  constexpr std::uint64_t kMaxIds = std::uint64_t{1} << 52;
  const std::uint64_t last =
      events == NexmarkParams::kEndless ? first_event : first_event + std::min(events, kMaxIds);
  if (first_event >= kMaxIds || last > kMaxIds) {
    errors.push_back({"event ids must stay below 2^52", "params.first_event"});
  }
  return errors;
}

std::int64_t NexmarkGenerator::event_time_ms(std::uint64_t id, std::uint32_t gap_us) noexcept {
  return kBaseTimeMs + static_cast<std::int64_t>(id * gap_us / 1000);
}

Result<NexmarkGenerator> NexmarkGenerator::make(const NexmarkParams& params) {
  if (auto errors = params.validate(); !errors.empty()) return fail(describe(errors));
  NexmarkGenerator gen;
  gen.stream_ = params.stream;
  gen.schema_ = &nexmark_schema(params.stream, params.stamp);
  gen.next_ = params.first_event;
  gen.end_ = params.events == NexmarkParams::kEndless ? NexmarkParams::kEndless
                                                       : params.first_event + params.events;
  gen.gap_us_ = params.gap_us;
  gen.max_delay_ms_ = params.max_delay_ms;
  const Schema& s = *gen.schema_;
  auto at = [&s](std::string_view name) { return offset_of(s, name); };
  const bool all = params.stream == NexmarkStream::events;
  if (all || params.stream == NexmarkStream::persons) {
    gen.person_ = {at("id"), at("name"), at("email"), at("credit_card"), at("city"), at("state"),
                   at("date_time")};
  }
  if (all || params.stream == NexmarkStream::auctions) {
    gen.auction_ = {at("id"),      at("item_name"), at("description"), at("initial_bid"),
                    at("reserve"), at("date_time"), at("expires"),     at("seller"),
                    at("category")};
  }
  if (all || params.stream == NexmarkStream::bids) {
    gen.bid_ = {at("auction"), at("bidder"), at("price"), at("date_time")};
  }
  if (all) gen.kind_at_ = at("kind");
  if (params.stamp) gen.stamp_at_ = at("ts");
  gen.first_event_ = params.first_event;
  gen.stamp_start_ns_ = params.stamp_start_ns;
  gen.stamp_ns_per_event_ = params.stamp_ns_per_event;
  return gen;
}

std::int64_t NexmarkGenerator::date_time_ns(std::uint64_t id) const noexcept {
  std::int64_t ms = event_time_ms(id, gap_us_);
  if (max_delay_ms_ > 0) {
    Draws delay(id ^ kDelaySeed);
    ms -= static_cast<std::int64_t>(delay.below64(std::uint64_t{max_delay_ms_} + 1));
  }
  return ms * 1'000'000;
}

void NexmarkGenerator::write_person(std::byte* row, std::uint64_t id) const noexcept {
  Draws d(id ^ kSeed);
  put_i64(row, person_.id, kIdOffset + last_person(id));
  // name = FIRST[int(11)] + " " + LAST[int(9)]
  const std::string_view first = kFirst[d.below32(kFirst.size())];
  const std::string_view last = kLast[d.below32(kLast.size())];
  char* name = chars(row, person_.name);
  std::memcpy(name, first.data(), first.size());
  name[first.size()] = ' ';
  std::memcpy(name + first.size() + 1, last.data(), last.size());
  // email = string(7) + "@" + string(5) + ".com" (at most 6 + 1 + 4 + 4 = 15 bytes)
  char* email = chars(row, person_.email);
  std::size_t n = d.text(7, email);
  email[n++] = '@';
  n += d.text(5, email + n);
  std::memcpy(email + n, ".com", 4);
  // credit_card = four groups of int(10000), 4 digits each, joined by spaces
  char* card = chars(row, person_.credit_card);
  for (int group = 0; group < 4; ++group) {
    std::uint64_t v = d.below32(10000);
    char* digits = card + group * 5;
    for (int i = 3; i >= 0; --i) {
      digits[i] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
    if (group < 3) digits[4] = ' ';
  }
  put_text(row, person_.city, kCities[d.below32(kCities.size())]);
  put_text(row, person_.state, kStates[d.below32(kStates.size())]);
  put_i64(row, person_.date_time, date_time_ns(id));
}

void NexmarkGenerator::write_auction(std::byte* row, std::uint64_t id) const noexcept {
  Draws d(id ^ kSeed);
  put_i64(row, auction_.id, kIdOffset + last_auction(id));
  // seller: the hot seller 3 times in 4, else a random active person
  const std::int64_t seller =
      d.below32(4) > 0 ? (last_person(id) / 100) * 100 : random_person(id, d);
  put_i64(row, auction_.seller, kIdOffset + seller);
  put_i64(row, auction_.category, 10 + static_cast<std::int64_t>(d.below32(5)));
  const std::int64_t initial_bid = d.price();
  put_i64(row, auction_.initial_bid, initial_bid);
  // expires = date_time + 1 + long(max(2 * horizon, 1)), horizon = time(id + 1666) - time(id),
  // from the event's undelayed time
  const std::int64_t time_ms = event_time_ms(id, gap_us_);
  const std::int64_t horizon = event_time_ms(id + 1666, gap_us_) - time_ms;
  const std::int64_t expires =
      time_ms + 1 +
      static_cast<std::int64_t>(
          d.below64(static_cast<std::uint64_t>(std::max<std::int64_t>(2 * horizon, 1))));
  put_i64(row, auction_.expires, expires * 1'000'000);
  d.text(20, chars(row, auction_.item_name));
  d.text(100, chars(row, auction_.description));
  put_i64(row, auction_.reserve, initial_bid + d.price());
  put_i64(row, auction_.date_time, date_time_ns(id));
}

void NexmarkGenerator::write_bid(std::byte* row, std::uint64_t id) const noexcept {
  Draws d(id ^ kSeed);
  // auction: the hot auction 1 time in 2, else a random recent auction
  const std::int64_t auction =
      d.below32(2) > 0 ? (last_auction(id) / 100) * 100 : random_auction(id, d);
  // bidder: the hot bidder 3 times in 4, else a random active person
  const std::int64_t bidder =
      d.below32(4) > 0 ? (last_person(id) / 100) * 100 + 1 : random_person(id, d);
  put_i64(row, bid_.auction, kIdOffset + auction);
  put_i64(row, bid_.bidder, kIdOffset + bidder);
  put_i64(row, bid_.price, d.price());
  put_i64(row, bid_.date_time, date_time_ns(id));
}

std::size_t NexmarkGenerator::fill(Batch& out, std::size_t max_rows, std::uint64_t end_event) {
  const std::uint64_t stop = std::min(end_, end_event);
  std::size_t rows = 0;
  const std::size_t room = std::min(max_rows, out.capacity_rows() - out.size());
  next_ = std::min(next_carried(stream_, next_), std::max(next_, stop));
  while (rows < room && next_ < stop) {
    const std::uint64_t id = next_;
    next_ = std::min(next_carried(stream_, id + 1), std::max(id + 1, stop));
    std::byte* row = out.append().data();
    ++rows;
    const Kind kind = kind_of(id);
    if (kind_at_ >= 0) {
      const auto k = static_cast<std::int32_t>(kind);
      std::memcpy(row + kind_at_, &k, 4);
    }
    switch (kind) {
      case Kind::person: write_person(row, id); break;
      case Kind::auction: write_auction(row, id); break;
      case Kind::bid: write_bid(row, id); break;
    }
    if (stamp_at_ >= 0) {
      put_i64(row, static_cast<std::uint32_t>(stamp_at_),
              stamp_start_ns_ + static_cast<std::int64_t>(
                                    static_cast<double>(id - first_event_) * stamp_ns_per_event_));
    }
  }
  return rows;
}

std::uint64_t NexmarkGenerator::event_after_rows(std::uint64_t rows) const noexcept {
  if (rows == 0 || next_ >= end_) return std::min(next_, end_);
  const std::uint64_t per = per_block(stream_);
  std::uint64_t block = next_ / kProportion;
  std::uint64_t offset = next_ % kProportion;
  // Rows left in the current block, then whole blocks, then the rest in the last block.
  std::uint64_t here = 0;
  for (std::uint64_t o = offset; o < kProportion; ++o) here += carries(stream_, o) ? 1 : 0;
  if (rows > here) {
    rows -= here;
    const std::uint64_t whole = (rows - 1) / per;
    block += 1 + whole;
    rows -= whole * per;
    offset = 0;
  }
  for (std::uint64_t o = offset; o < kProportion; ++o) {
    if (carries(stream_, o) && --rows == 0) {
      const std::uint64_t id = block * kProportion + o;
      return id >= end_ ? end_ : id + 1;
    }
  }
  return end_;  // not reached: the block holds the row
}

}  // namespace boreal::ops
