#!/usr/bin/env python3
"""Expected results of the NEXMark queries Q0-Q8, computed with SQLite (docs/nexmark.md).

Loads DIR/persons.csv, DIR/auctions.csv and DIR/bids.csv (as nexmark_gen.py or boreal's
generator writes them) into an in-memory SQLite database and runs one SQL query per NEXMark
query. Each query's logic, windows included, is in the SQL text below; Python only loads the
CSV files and writes the results.

    python3 scripts/nexmark/oracle.py --events DIR --query q5 --out q5.csv
    python3 scripts/nexmark/oracle.py --events DIR --query all --out-dir expected/

Conventions (docs/nexmark.md, "Query semantics"):
- times are Unix nanoseconds; windows are aligned to multiples of their slide from time 0,
  start inclusive and end exclusive. Event times are positive, so SQL's integer division,
  which truncates, is the floor that aligns them.
- bids.csv lists bids in event-id order, so a bid's line number orders bids by event id
  (Q4's tie between equal prices goes to the lowest event id).
- "the event time of the stream's last event" (Q4, Q6) is --last-time NS if given, else the
  largest date_time in the three files, which is the last event's when no out-of-order delay
  was applied.
- rows come out sorted for readability; no query's result has a defined order, so compare
  them as multisets.
"""
import argparse
import csv
import os
import sqlite3
import sys

from csvinput import InputError, open_csv
import time

SCHEMAS = {
    # table: (file, [(column, SQL type)]); the CSV header must list exactly these columns.
    "persons": ("persons.csv", [("id", "INTEGER"), ("name", "TEXT"), ("email", "TEXT"),
                                ("credit_card", "TEXT"), ("city", "TEXT"), ("state", "TEXT"),
                                ("date_time", "INTEGER")]),
    "auctions": ("auctions.csv", [("id", "INTEGER"), ("item_name", "TEXT"),
                                  ("description", "TEXT"), ("initial_bid", "INTEGER"),
                                  ("reserve", "INTEGER"), ("date_time", "INTEGER"),
                                  ("expires", "INTEGER"), ("seller", "INTEGER"),
                                  ("category", "INTEGER")]),
    "bids": ("bids.csv", [("auction", "INTEGER"), ("bidder", "INTEGER"), ("price", "INTEGER"),
                          ("date_time", "INTEGER")]),
}

# Views shared by Q4 and Q6. stream_end holds the one value "event time of the last event".
SHARED_VIEWS = """
-- Q4: an auction is closed when it expires at or before the last event's time.
CREATE TEMP VIEW closed_auctions AS
SELECT a.*
FROM auctions AS a
WHERE a.expires <= (SELECT last_time FROM stream_end);

-- Q4: the winning bid of a closed auction: the highest price among its bids with date_time in
-- [auction date_time, expires) and price >= reserve; equal prices go to the lowest event id,
-- i.e. the bid's earliest line in bids.csv (seq). Closed auctions without such a bid have no
-- row here.
CREATE TEMP VIEW winning_bids AS
SELECT auction, seller, category, expires, price
FROM (
    SELECT a.id AS auction, a.seller, a.category, a.expires, b.price,
           ROW_NUMBER() OVER (PARTITION BY a.id ORDER BY b.price DESC, b.seq ASC) AS rank
    FROM closed_auctions AS a
    JOIN bids AS b
      ON b.auction = a.id
     AND b.date_time >= a.date_time
     AND b.date_time < a.expires
     AND b.price >= a.reserve
)
WHERE rank = 1;
"""

QUERIES = {
    "q0": """
-- Q0: every bid, unchanged.
SELECT auction, bidder, price, date_time
FROM bids
ORDER BY seq
""",
    "q1": """
-- Q1: every bid with its price converted to euros, rounded half up: price * 0.908 in IEEE
-- double arithmetic, plus 0.5, truncated (prices are positive, so truncation is floor).
SELECT auction, bidder, CAST(price * 0.908 + 0.5 AS INTEGER) AS price, date_time
FROM bids
ORDER BY seq
""",
    "q2": """
-- Q2: the bids on auctions whose id is a multiple of 123.
SELECT auction, price
FROM bids
WHERE auction % 123 = 0
ORDER BY seq
""",
    "q3": """
-- Q3: auctions of category 10 with their seller, when the seller lives in OR, ID or CA; over
-- the whole stream (no window).
SELECT p.name, p.city, p.state, a.id
FROM auctions AS a
JOIN persons AS p ON p.id = a.seller
WHERE a.category = 10
  AND p.state IN ('OR', 'ID', 'CA')
ORDER BY a.id, p.id
""",
    "q4": """
-- Q4: per category, the average winning price of its closed auctions that have a winner.
SELECT category, AVG(price) AS avg_price
FROM winning_bids
GROUP BY category
ORDER BY category
""",
    "q5": """
-- Q5: hot items. Windows of 10 s (10,000,000,000 ns) sliding every 2 s (2,000,000,000 ns),
-- [start, start + 10 s) with start a multiple of 2 s. A bid at time t lies in the 5 windows
-- starting at floor(t / 2 s) * 2 s - k * 2 s for k = 0..4 (each of them ends after t).
WITH offsets(k) AS (VALUES (0), (1), (2), (3), (4)),
bid_windows AS (
    SELECT (b.date_time / 2000000000) * 2000000000 - o.k * 2000000000 AS window_start,
           b.auction
    FROM bids AS b CROSS JOIN offsets AS o
),
counts AS (
    SELECT window_start, auction, COUNT(*) AS n
    FROM bid_windows
    GROUP BY window_start, auction
),
ranked AS (
    SELECT window_start, auction, n, MAX(n) OVER (PARTITION BY window_start) AS top
    FROM counts
)
SELECT window_start + 10000000000 AS window_end, auction, n AS "count"
FROM ranked
WHERE n = top
ORDER BY window_end, auction
""",
    "q6": """
-- Q6: per seller, the average winning price over that seller's last 10 closed auctions with
-- a winner, "last" in the order (expires, auction id); one row per seller.
SELECT seller, AVG(price) AS avg_price
FROM (
    SELECT seller, price,
           ROW_NUMBER() OVER (PARTITION BY seller ORDER BY expires DESC, auction DESC) AS recent
    FROM winning_bids
)
WHERE recent <= 10
GROUP BY seller
ORDER BY seller
""",
    "q7": """
-- Q7: highest bid. Tumbling windows of 10 s (10,000,000,000 ns), start a multiple of 10 s;
-- every bid whose price equals the highest price of its window.
WITH windowed AS (
    SELECT seq, auction, bidder, price, date_time,
           MAX(price) OVER (PARTITION BY date_time / 10000000000) AS top
    FROM bids
)
SELECT auction, bidder, price, date_time
FROM windowed
WHERE price = top
ORDER BY seq
""",
    "q8": """
-- Q8: new persons who opened auctions: every (person, auction) pair with seller = person id
-- whose two events fall in the same 10 s (10,000,000,000 ns) tumbling window.
SELECT p.id, p.name, a.reserve, (p.date_time / 10000000000) * 10000000000 AS window_start
FROM persons AS p
JOIN auctions AS a
  ON a.seller = p.id
 AND a.date_time / 10000000000 = p.date_time / 10000000000
ORDER BY window_start, p.id, a.id
""",
}

# The columns each query must output, in order (checked against the SQL's result columns).
OUTPUT_COLUMNS = {
    "q0": ["auction", "bidder", "price", "date_time"],
    "q1": ["auction", "bidder", "price", "date_time"],
    "q2": ["auction", "price"],
    "q3": ["name", "city", "state", "id"],
    "q4": ["category", "avg_price"],
    "q5": ["window_end", "auction", "count"],
    "q6": ["seller", "avg_price"],
    "q7": ["auction", "bidder", "price", "date_time"],
    "q8": ["id", "name", "reserve", "window_start"],
}

DIAGNOSTICS = {
    # Printed on stderr after the query; each a SQL query returning one row.
    "q4": ("SELECT (SELECT COUNT(*) FROM winning_bids), (SELECT COUNT(*) FROM closed_auctions)",
           "q4: {0} of the {1} closed auctions have a winning bid"),
}


def read_rows(path, columns):
    """Yield the rows of one CSV file as tuples, INTEGER columns converted to int; check the
    header and every row's width."""
    names = [c for c, _ in columns]
    integer = [t == "INTEGER" for _, t in columns]
    f = open_csv(path)
    with f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise InputError("%s: line 1: empty file, expected the header %s"
                             % (path, ",".join(names)))
        if header != names:
            raise InputError("%s: line 1: header %s, expected %s"
                             % (path, ",".join(header), ",".join(names)))
        for row in reader:
            if len(row) != len(names):
                raise InputError("%s: line %d: %d fields, expected %d"
                                 % (path, reader.line_num, len(row), len(names)))
            try:
                yield tuple(int(v) if is_int else v for v, is_int in zip(row, integer))
            except ValueError:
                bad = next(n for n, v, i in zip(names, row, integer) if i and not is_integer(v))
                raise InputError("%s: line %d: %s %r is not an integer"
                                 % (path, reader.line_num, bad, row[names.index(bad)]))


def is_integer(text):
    """True if int(text) accepts it."""
    try:
        int(text)
        return True
    except ValueError:
        return False


def load(events_dir, last_time=None):
    """An in-memory database holding the three files, their indexes, stream_end and the
    shared views. last_time: the last event's time in ns, or None for max(date_time)."""
    db = sqlite3.connect(":memory:")
    for table, (file_name, columns) in SCHEMAS.items():
        column_sql = ", ".join("%s %s" % (c, t) for c, t in columns)
        if table == "bids":
            column_sql = "seq INTEGER PRIMARY KEY, " + column_sql  # line order = event-id order
        db.execute("CREATE TABLE %s (%s)" % (table, column_sql))
        placeholders = ", ".join("?" for _ in columns)
        names = ", ".join(c for c, _ in columns)
        db.executemany("INSERT INTO %s (%s) VALUES (%s)" % (table, names, placeholders),
                       read_rows(os.path.join(events_dir, file_name), columns))
    db.execute("CREATE INDEX bids_by_auction ON bids (auction, date_time)")
    db.execute("CREATE INDEX auctions_by_seller ON auctions (seller)")
    db.execute("CREATE INDEX persons_by_id ON persons (id)")
    if last_time is None:
        last_time = db.execute(
            "SELECT MAX(t) FROM (SELECT MAX(date_time) AS t FROM persons"
            " UNION ALL SELECT MAX(date_time) FROM auctions"
            " UNION ALL SELECT MAX(date_time) FROM bids)").fetchone()[0]
    db.execute("CREATE TABLE stream_end (last_time INTEGER)")
    db.execute("INSERT INTO stream_end VALUES (?)", (last_time,))
    db.executescript(SHARED_VIEWS)
    db.commit()
    return db


def format_value(value):
    """CSV text of one result value: integers in decimal, floats as Python's repr, text as
    is, NULL as nothing."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def run_query(db, name, out_path):
    """Run one query, write its CSV (header + rows) to out_path; return the row count."""
    cursor = db.execute(QUERIES[name])
    columns = [d[0] for d in cursor.description]
    if columns != OUTPUT_COLUMNS[name]:
        raise AssertionError("%s's SQL returns %s, expected %s"
                             % (name, columns, OUTPUT_COLUMNS[name]))
    rows = 0
    with open(out_path, "w", encoding="utf-8", newline="") as out:
        out.write(",".join(columns) + "\n")
        while True:
            batch = cursor.fetchmany(10000)
            if not batch:
                break
            out.write("".join(",".join(format_value(v) for v in row) + "\n" for row in batch))
            rows += len(batch)
    return rows


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Compute the expected result of NEXMark queries q0..q8 from the CSV "
                    "files of a generated stream (docs/nexmark.md), with SQLite.",
        epilog="Row counts, the last event time used and Q4's closed/winner counts go to "
               "stderr. Results are multisets: compare them with compare.py.")
    parser.add_argument("--events", required=True, metavar="DIR",
                        help="directory holding persons.csv, auctions.csv and bids.csv")
    parser.add_argument("--query", required=True, choices=sorted(QUERIES) + ["all"],
                        help="the query to compute, or all of them")
    parser.add_argument("--out", metavar="FILE",
                        help="output CSV (with one --query qN)")
    parser.add_argument("--out-dir", metavar="D",
                        help="output directory for q0.csv .. q8.csv (with --query all)")
    parser.add_argument("--last-time", type=int, metavar="NS",
                        help="event time of the stream's last event (highest id), ns; Q4 and "
                             "Q6 close auctions that expire at or before it. Default: the "
                             "largest date_time in the files, right only without out-of-order "
                             "delay")
    args = parser.parse_args(argv)
    if args.query == "all":
        if not args.out_dir or args.out:
            parser.error("--query all writes q0.csv .. q8.csv: give --out-dir D, not --out")
    elif not args.out or args.out_dir:
        parser.error("--query %s writes one file: give --out FILE, not --out-dir"
                     % args.query)
    return args


def main(argv=None):
    args = parse_args(argv)
    started = time.monotonic()
    try:
        db = load(args.events, args.last_time)
    except InputError as e:
        print("oracle.py: %s" % e, file=sys.stderr)
        return 2
    last_time = db.execute("SELECT last_time FROM stream_end").fetchone()[0]
    print("oracle.py: loaded %s in %.1f s; last event time %s ns%s"
          % (args.events, time.monotonic() - started, last_time,
             "" if args.last_time is not None else " (max date_time)"), file=sys.stderr)
    if args.query == "all":
        os.makedirs(args.out_dir, exist_ok=True)
        targets = [(q, os.path.join(args.out_dir, q + ".csv")) for q in sorted(QUERIES)]
    else:
        targets = [(args.query, args.out)]
    for name, path in targets:
        t0 = time.monotonic()
        try:
            rows = run_query(db, name, path)
        except OSError as e:
            print("oracle.py: cannot write %s: %s" % (path, e.strerror), file=sys.stderr)
            return 2
        print("oracle.py: %s: %d rows in %.1f s -> %s"
              % (name, rows, time.monotonic() - t0, path), file=sys.stderr)
        if name in DIAGNOSTICS:
            sql, text = DIAGNOSTICS[name]
            print("oracle.py: " + text.format(*db.execute(sql).fetchone()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
