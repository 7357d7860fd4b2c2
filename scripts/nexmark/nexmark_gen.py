#!/usr/bin/env python3
"""Reference generator of boreal's NEXMark event stream (docs/nexmark.md).

Event number `id` (0, 1, 2, ...) alone determines the event: its kind (id % 50), its ids, its
event time and its random fields, drawn from a splitmix64 sequence seeded by the id. Any range
of ids can therefore be generated on its own and gives the same events as a longer run. This
script writes the events of one range as three CSV files, one per kind, in the byte format that
boreal's C++ generator writes too:

    DIR/persons.csv   id,name,email,credit_card,city,state,date_time
    DIR/auctions.csv  id,item_name,description,initial_bid,reserve,date_time,expires,seller,category
    DIR/bids.csv      auction,bidder,price,date_time

Times (date_time, expires) are Unix nanoseconds. With --max-delay-ms D > 0 every event's
date_time is moved earlier by 0..D ms, drawn from a second splitmix64 sequence so that the
event's own draws do not change (docs/nexmark.md, "Out-of-order event times").

    python3 scripts/nexmark/nexmark_gen.py --events 100000 --out /tmp/nx

Written from the specification alone; it shares no code with boreal's C++ generator.
"""
import argparse
import math
import os
import sys
import time

MASK64 = (1 << 64) - 1
SEED = 0x6E65786D61726B          # "nexmark" in ASCII
GOLDEN_GAMMA = 0x9E3779B97F4A7C15  # splitmix64's increment
OUT_OF_ORDER_SALT = 0x6F75746F666F7264  # "outoford" in ASCII
TWO_POW_MINUS_53 = 1.0 / (1 << 53)

BASE_TIME_MS = 1_700_000_000_000
NS_PER_MS = 1_000_000
PROPORTION = 50          # ids per person/auction/bid cycle: 1 person, 3 auctions, 46 bids
HOT_RATIO = 100          # the hot seller/auction/bidder is the latest multiple of this
ACTIVE_PEOPLE = 1000     # a random person is one of the latest this many
AUCTION_WINDOW = 100     # a random auction is one of the latest this many (plus one)
SLACK = 10               # random picks may reach this many ids past the latest
ID_OFFSET = 1000         # person and auction ids are numbered from here
FIRST_CATEGORY = 10
CATEGORIES = 5
HORIZON_EVENTS = 1666    # 100 * 50 / 3 with integer division: how far ahead an auction expires

FIRST_NAMES = ("Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah",
               "Deiter", "Walter")
LAST_NAMES = ("Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones",
              "Noris")
CITIES = ("Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond",
          "Seattle", "Kent", "Cheyenne")
STATES = ("AZ", "CA", "ID", "OR", "WA", "WY")

# string(m) draws v = int(338) per character: a space if v < 26, else 'a' + v % 26.
STRING_ALPHABET = "".join(" " if v < 26 else chr(ord("a") + v % 26) for v in range(338))

PERSON_HEADER = "id,name,email,credit_card,city,state,date_time\n"
AUCTION_HEADER = ("id,item_name,description,initial_bid,reserve,date_time,expires,seller,"
                  "category\n")
BID_HEADER = "auction,bidder,price,date_time\n"


def mix(z):
    """splitmix64's finaliser on an unsigned 64-bit value."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


class EventRandom:
    """The random-number procedure of one event: state s = mix(id ^ SEED), then draw() adds
    the golden gamma to s and returns mix(s). The other methods each consume one draw(),
    except string(m), which consumes 1 + len draws."""

    __slots__ = ("s",)

    def __init__(self, event_id, salt=SEED):
        self.s = mix(event_id ^ salt)

    def draw(self):
        """One unsigned 64-bit draw."""
        self.s = (self.s + GOLDEN_GAMMA) & MASK64
        return mix(self.s)

    def int_below(self, n):
        """The spec's int(n): ((draw >> 32) * n) >> 32, uniform in [0, n) for n < 2^32."""
        return ((self.draw() >> 32) * n) >> 32

    def long_below(self, n):
        """The spec's long(n): (draw >> 1) % n."""
        return (self.draw() >> 1) % n

    def double(self):
        """The spec's double(): (draw >> 11) * 2^-53, in [0, 1)."""
        return (self.draw() >> 11) * TWO_POW_MINUS_53

    def price(self):
        """The spec's price(): round half up of 10^(6 * double()) * 100, in [100, 10^8]."""
        return math.floor(10.0 ** (6.0 * self.double()) * 100.0 + 0.5)

    def string(self, max_length):
        """The spec's string(m): 3 + int(m - 3) characters, each a space or a letter, with
        leading and trailing spaces stripped (so it may come out empty)."""
        length = 3 + self.int_below(max_length - 3)
        s = self.s
        chars = []
        for _ in range(length):
            s = (s + GOLDEN_GAMMA) & MASK64
            z = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
            z ^= z >> 31
            chars.append(STRING_ALPHABET[((z >> 32) * 338) >> 32])
        self.s = s
        return "".join(chars).strip(" ")


def kind_of(event_id):
    """'person' for id % 50 == 0, 'auction' for 1..3, 'bid' for 4..49."""
    offset = event_id % PROPORTION
    if offset == 0:
        return "person"
    return "auction" if offset < 4 else "bid"


def last_person(event_id):
    """Index (without the 1000 offset) of the newest person at or before this event."""
    return event_id // PROPORTION


def last_auction(event_id):
    """Index (without the 1000 offset) of the newest auction at or before this event;
    -1 before the first auction (event 0)."""
    epoch, offset = divmod(event_id, PROPORTION)
    if offset < 1:
        return 3 * epoch - 1
    if offset >= 4:
        return 3 * epoch + 2
    return 3 * epoch + offset - 1


def event_time_ms(event_id, gap_us):
    """Event time in Unix ms before any out-of-order delay."""
    return BASE_TIME_MS + event_id * gap_us // 1000


def out_of_order_delay_ms(event_id, max_delay_ms):
    """How many ms this event's date_time is moved earlier: long(D + 1) drawn from the second
    sequence s2 = mix(id ^ "outoford"), so 0..D; always 0 for D = 0."""
    if max_delay_ms <= 0:
        return 0
    return EventRandom(event_id, OUT_OF_ORDER_SALT).long_below(max_delay_ms + 1)


def random_person(event_id, rng):
    """A random active person index: one of the latest 1000 persons, or up to 10 past the
    newest."""
    n = last_person(event_id) + 1
    active = min(n, ACTIVE_PEOPLE)
    return n - active + rng.long_below(active + SLACK)


def random_auction(event_id, rng):
    """A random auction index: one of the latest 101 auctions, or up to 10 past the newest."""
    last = last_auction(event_id)
    first = max(last - AUCTION_WINDOW, 0)
    return first + rng.long_below(last - first + 1 + SLACK)


def make_person(event_id, rng, date_time_ns):
    """(id, name, email, credit_card, city, state, date_time); draws in field order."""
    name = FIRST_NAMES[rng.int_below(11)] + " " + LAST_NAMES[rng.int_below(9)]
    email = rng.string(7) + "@" + rng.string(5) + ".com"
    card = " ".join("%04d" % rng.int_below(10000) for _ in range(4))
    city = CITIES[rng.int_below(10)]
    state = STATES[rng.int_below(6)]
    return (ID_OFFSET + last_person(event_id), name, email, card, city, state, date_time_ns)


def make_auction(event_id, rng, gap_us, date_time_ns):
    """(id, item_name, description, initial_bid, reserve, date_time, expires, seller,
    category). Draw order: seller, category, initial_bid, expires, item_name, description,
    reserve. expires is computed from the event time before any out-of-order delay."""
    if rng.int_below(4) > 0:
        seller = (last_person(event_id) // HOT_RATIO) * HOT_RATIO
    else:
        seller = random_person(event_id, rng)
    category = FIRST_CATEGORY + rng.int_below(CATEGORIES)
    initial_bid = rng.price()
    now_ms = event_time_ms(event_id, gap_us)
    horizon_ms = event_time_ms(event_id + HORIZON_EVENTS, gap_us) - now_ms
    expires_ms = now_ms + 1 + rng.long_below(max(2 * horizon_ms, 1))
    item_name = rng.string(20)
    description = rng.string(100)
    reserve = initial_bid + rng.price()
    return (ID_OFFSET + last_auction(event_id), item_name, description, initial_bid, reserve,
            date_time_ns, expires_ms * NS_PER_MS, ID_OFFSET + seller, category)


def make_bid(event_id, rng, date_time_ns):
    """(auction, bidder, price, date_time). Draw order: auction, bidder, price."""
    if rng.int_below(2) > 0:
        auction = (last_auction(event_id) // HOT_RATIO) * HOT_RATIO
    else:
        auction = random_auction(event_id, rng)
    if rng.int_below(4) > 0:
        bidder = (last_person(event_id) // HOT_RATIO) * HOT_RATIO + 1
    else:
        bidder = random_person(event_id, rng)
    price = rng.price()
    return (ID_OFFSET + auction, ID_OFFSET + bidder, price, date_time_ns)


def make_event(event_id, gap_us=10, max_delay_ms=0):
    """The event numbered event_id as (kind, fields), fields in CSV column order, times in ns."""
    rng = EventRandom(event_id)
    delay_ms = out_of_order_delay_ms(event_id, max_delay_ms)
    date_time_ns = (event_time_ms(event_id, gap_us) - delay_ms) * NS_PER_MS
    kind = kind_of(event_id)
    if kind == "person":
        return kind, make_person(event_id, rng, date_time_ns)
    if kind == "auction":
        return kind, make_auction(event_id, rng, gap_us, date_time_ns)
    return kind, make_bid(event_id, rng, date_time_ns)


def csv_line(fields):
    """One CSV line: fields joined by ',', no quoting (NEXMark strings hold no ',')."""
    return ",".join(str(f) for f in fields) + "\n"


def write_csvs(out_dir, first_event, count, gap_us=10, max_delay_ms=0, chunk=20000):
    """Generate events first_event .. first_event + count - 1 into out_dir/{persons,auctions,
    bids}.csv. Returns (persons, auctions, bids, last_date_time_ns or None)."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {k: os.path.join(out_dir, k + "s.csv") for k in ("person", "auction", "bid")}
    headers = {"person": PERSON_HEADER, "auction": AUCTION_HEADER, "bid": BID_HEADER}
    files = {k: open(p, "w", encoding="ascii", newline="") for k, p in paths.items()}
    counts = {k: 0 for k in paths}
    last_time = None
    try:
        buffers = {k: [headers[k]] for k in paths}
        for event_id in range(first_event, first_event + count):
            kind, fields = make_event(event_id, gap_us, max_delay_ms)
            buf = buffers[kind]
            buf.append(csv_line(fields))
            counts[kind] += 1
            last_time = fields[5] if kind == "auction" else fields[-1]
            if len(buf) >= chunk:
                files[kind].write("".join(buf))
                buf.clear()
        for kind, buf in buffers.items():
            files[kind].write("".join(buf))
    finally:
        for f in files.values():
            f.close()
    return counts["person"], counts["auction"], counts["bid"], last_time


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Write the NEXMark events first-event .. first-event + events - 1 of "
                    "boreal's deterministic stream (docs/nexmark.md) as DIR/persons.csv, "
                    "DIR/auctions.csv and DIR/bids.csv (times in Unix ns).",
        epilog="On stderr it reports the counts and the date_time of the last event, which "
               "oracle.py --last-time takes when --max-delay-ms > 0.")
    parser.add_argument("--events", type=int, required=True, metavar="N",
                        help="number of events to generate")
    parser.add_argument("--first-event", type=int, default=0, metavar="ID",
                        help="id of the first event (default 0)")
    parser.add_argument("--gap-us", type=int, default=10, metavar="US",
                        help="event-time gap between consecutive ids, µs (default 10)")
    parser.add_argument("--max-delay-ms", type=int, default=0, metavar="D",
                        help="move each date_time earlier by a pseudo-random 0..D ms "
                             "(default 0: events in time order)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="directory for the three CSV files (created if missing)")
    args = parser.parse_args(argv)
    if args.events < 0:
        parser.error("--events must be >= 0, got %d" % args.events)
    if args.first_event < 0:
        parser.error("--first-event must be >= 0, got %d" % args.first_event)
    if args.gap_us <= 0:
        parser.error("--gap-us must be > 0, got %d" % args.gap_us)
    if args.max_delay_ms < 0:
        parser.error("--max-delay-ms must be >= 0, got %d" % args.max_delay_ms)
    return args


def main(argv=None):
    args = parse_args(argv)
    started = time.monotonic()
    try:
        persons, auctions, bids, last_time = write_csvs(
            args.out, args.first_event, args.events, args.gap_us, args.max_delay_ms)
    except OSError as e:
        sys.exit("nexmark_gen.py: cannot write to %s: %s" % (args.out, e))
    elapsed = time.monotonic() - started
    print("nexmark_gen.py: events %d..%d: %d persons, %d auctions, %d bids in %.1f s"
          % (args.first_event, args.first_event + args.events - 1, persons, auctions, bids,
             elapsed), file=sys.stderr)
    if last_time is not None:
        print("nexmark_gen.py: last event (id %d) date_time %d ns"
              % (args.first_event + args.events - 1, last_time), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
