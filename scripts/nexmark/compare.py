#!/usr/bin/env python3
"""Compare two CSV query results: an expected one (oracle.py) and an actual one (boreal).

    python3 scripts/nexmark/compare.py expected.csv actual.csv [--ordered] [--float-tolerance T]

Both files start with a header line; the headers must name the same columns in the same
order. The rows are then compared as multisets (any order, duplicates counted), or line by line
with --ordered. Each column is compared by its kind, decided over the values of both files:

- integer: every value is an integer literal; compared as integers (so "007" equals "7");
- float: every value is a number and some are not integer literals (they hold '.', an
  exponent, inf or nan); compared with a relative tolerance T (default 1e-9): a and b match
  when a == b, when both are nan, or when both are finite and |a - b| <= T * max(|a|, |b|);
- text: anything else (names, e-mails, empty values); compared exactly.

Exit status: 0 and "match: N rows" when the files agree; 1 and a report (row counts, the first
rows only in expected and only in actual, with their line numbers) when they do not; 2 and a
one-line error naming the file and line for bad input (missing file, no header, different
headers, a row with the wrong number of fields).

In multiset mode, rows that are equal in their integer and text columns are grouped, and
within a group the float parts are matched in sorted order (exact for one float column).
"""
import argparse
import collections
import csv
import math
import re
import sys

from csvinput import InputError, open_csv

REPORT_ROWS = 5
INT_RE = re.compile(r"[+-]?[0-9]+")
FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                      r"|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
INTEGER, FLOAT, TEXT = "integer", "float", "text"


def rows_of(path, expected_header=None, header_source=None):
    """Yield (line number, fields) for each data row of a CSV file after checking its header
    (against expected_header, read from header_source, when given) and each row's width. The
    first item yielded is (1, header)."""
    f = open_csv(path)
    with f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError("%s line 1: empty file, expected a header line" % path)
            if expected_header is not None and header != expected_header:
                raise InputError("%s line 1: header %s differs from %s's header %s"
                                 % (path, ",".join(header), header_source,
                                    ",".join(expected_header)))
            yield 1, header
            width = len(header)
            for row in reader:
                if len(row) != width:
                    if not row and width == 1:
                        row = [""]
                    else:
                        raise InputError("%s line %d: %s, the header has %d"
                                         % (path, reader.line_num,
                                            plural(len(row), "field"), width))
                yield reader.line_num, row
        except csv.Error as e:
            raise InputError("%s line %d: %s" % (path, reader.line_num, e))
        except UnicodeDecodeError as e:
            raise InputError("%s line %d: not UTF-8 text: %s" % (path, reader.line_num + 1, e))


def value_kind(value):
    """INTEGER, FLOAT or TEXT for one value, as the column rules above read it."""
    if INT_RE.fullmatch(value):
        return INTEGER
    if FLOAT_RE.fullmatch(value):
        return FLOAT
    return TEXT


def data_rows(path):
    """(line number, fields) of the rows after the header of an already validated file."""
    rows = rows_of(path)
    next(rows)
    return rows


def scan(path, expected_header=None, header_source=None):
    """Pass 1 over a file: validate it; return (header, row count, kind of each column)."""
    rows = rows_of(path, expected_header, header_source)
    _, header = next(rows)
    kinds = [INTEGER] * len(header)
    count = 0
    for _, row in rows:
        count += 1
        for i, value in enumerate(row):
            kind = kinds[i]
            if kind is TEXT or (value.isdigit() and value.isascii()):
                continue
            found = value_kind(value)
            if found is TEXT or (found is FLOAT and kind is INTEGER):
                kinds[i] = found
    return header, count, kinds


def merge_kinds(a, b):
    """A column's kind over both files: text if either is text, else float if either is."""
    return [TEXT if TEXT in (x, y) else FLOAT if FLOAT in (x, y) else INTEGER
            for x, y in zip(a, b)]


def canonical_int(value):
    """An integer literal in canonical decimal form."""
    if value.isdigit() and value.isascii() and (value[0] != "0" or len(value) == 1):
        return value
    return str(int(value))


def floats_close(a, b, tolerance):
    """The float rule: equal, both nan, or both finite and within the relative tolerance."""
    if a == b:
        return True
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return False
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def float_order(values):
    """A sort key for a tuple of floats that places nan after every number."""
    return tuple((1, 0.0) if math.isnan(v) else (0, v) for v in values)


class RowSplitter:
    """Splits a row into its exact key (integer and text columns, normalised, joined) and the
    tuple of its float values."""

    def __init__(self, kinds):
        self.exact = [(i, k) for i, k in enumerate(kinds) if k is not FLOAT]
        self.floats = [i for i, k in enumerate(kinds) if k is FLOAT]

    def key(self, row):
        return "\x1f".join(canonical_int(row[i]) if k is INTEGER else row[i]
                           for i, k in self.exact)

    def float_values(self, row):
        return tuple(float(row[i]) for i in self.floats)


def compare_multiset_exact(expected, actual, splitter):
    """Multiset comparison when no column is float: a Counter of exact keys. Returns
    (only_expected, only_actual), each a list of the first (line, text) rows and a total."""
    surplus = collections.Counter()
    for _, row in data_rows(expected):
        surplus[splitter.key(row)] += 1
    missing = collections.Counter()  # in actual but not (or not as often) in expected
    for _, row in data_rows(actual):
        key = splitter.key(row)
        if surplus[key] > 0:
            surplus[key] -= 1
        else:
            missing[key] += 1
    surplus = +surplus
    return (first_rows(expected, splitter, surplus), sum(surplus.values()),
            first_rows(actual, splitter, missing), sum(missing.values()))


def first_rows(path, splitter, leftover):
    """The first REPORT_ROWS rows of path (line, text) whose key has leftover occurrences;
    the LAST occurrences of a key are the ones reported as unmatched."""
    if not leftover:
        return []
    totals = collections.Counter()
    for _, row in data_rows(path):
        totals[splitter.key(row)] += 1
    skip = {k: totals[k] - n for k, n in leftover.items()}
    found = []
    for line, row in data_rows(path):
        key = splitter.key(row)
        if key in skip:
            if skip[key] > 0:
                skip[key] -= 1
            else:
                found.append((line, ",".join(row)))
                if len(found) == REPORT_ROWS:
                    break
    return found


def compare_multiset_floats(expected, actual, splitter, tolerance):
    """Multiset comparison with float columns: rows grouped by exact key, float tuples
    matched within a group in sorted order."""
    groups = collections.defaultdict(lambda: ([], []))
    for side, path in ((0, expected), (1, actual)):
        for line, row in data_rows(path):
            values = splitter.float_values(row)
            groups[splitter.key(row)][side].append(
                (float_order(values), values, line, ",".join(row)))
    only_expected, only_actual = [], []
    for exp_rows, act_rows in groups.values():
        exp_rows.sort(key=lambda r: r[0])
        act_rows.sort(key=lambda r: r[0])
        i = j = 0
        while i < len(exp_rows) and j < len(act_rows):
            e, a = exp_rows[i], act_rows[j]
            if all(floats_close(x, y, tolerance) for x, y in zip(e[1], a[1])):
                i += 1
                j += 1
            elif e[0] < a[0]:
                only_expected.append(e)
                i += 1
            else:
                only_actual.append(a)
                j += 1
        only_expected.extend(exp_rows[i:])
        only_actual.extend(act_rows[j:])
    only_expected.sort(key=lambda r: r[2])
    only_actual.sort(key=lambda r: r[2])
    return ([(r[2], r[3]) for r in only_expected[:REPORT_ROWS]], len(only_expected),
            [(r[2], r[3]) for r in only_actual[:REPORT_ROWS]], len(only_actual))


def rows_equal(kinds, a, b, tolerance):
    """Ordered mode: one expected row against one actual row, column by column."""
    for kind, x, y in zip(kinds, a, b):
        if kind is INTEGER:
            if x != y and int(x) != int(y):
                return False
        elif kind is FLOAT:
            if x != y and not floats_close(float(x), float(y), tolerance):
                return False
        elif x != y:
            return False
    return True


def compare_ordered(expected, actual, kinds, tolerance):
    """Line i of expected against line i of actual. Returns the first differing positions
    [(line, expected text, actual text)], their total, and the rows past the shorter file."""
    exp_rows, act_rows = data_rows(expected), data_rows(actual)
    differing, n_differing = [], 0
    extra_expected, extra_actual = [], []
    n_extra_expected = n_extra_actual = 0
    for e, a in _zip_longest(exp_rows, act_rows):
        if e is None:
            n_extra_actual += 1
            if len(extra_actual) < REPORT_ROWS:
                extra_actual.append((a[0], ",".join(a[1])))
        elif a is None:
            n_extra_expected += 1
            if len(extra_expected) < REPORT_ROWS:
                extra_expected.append((e[0], ",".join(e[1])))
        elif not rows_equal(kinds, e[1], a[1], tolerance):
            n_differing += 1
            if len(differing) < REPORT_ROWS:
                differing.append((e[0], ",".join(e[1]), ",".join(a[1])))
    return differing, n_differing, extra_expected, n_extra_expected, extra_actual, n_extra_actual


def _zip_longest(a, b):
    """Pairs from two iterators, None for the side that ran out."""
    sentinel = object()
    while True:
        x, y = next(a, sentinel), next(b, sentinel)
        if x is sentinel and y is sentinel:
            return
        yield (None if x is sentinel else x), (None if y is sentinel else y)


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def print_rows(title, rows, total):
    if total:
        print("%s (%s):" % (title, "all" if total <= len(rows) else "first %d" % len(rows)))
        for line, text in rows:
            print("  line %d: %s" % (line, text))


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Compare two CSV files with header lines, as multisets of rows (default) "
                    "or line by line (--ordered). Integer columns compare exactly, float "
                    "columns (values with '.', an exponent, inf or nan) with a relative "
                    "tolerance, other columns as text.",
        epilog="Exit status: 0 match, 1 mismatch (with a report), 2 bad input.")
    parser.add_argument("expected", help="the expected result, e.g. oracle.py's")
    parser.add_argument("actual", help="the result to check")
    parser.add_argument("--ordered", action="store_true",
                        help="row i of one file must match row i of the other")
    parser.add_argument("--float-tolerance", type=float, default=1e-9, metavar="T",
                        help="relative tolerance for float columns: |a-b| <= T*max(|a|,|b|) "
                             "(default 1e-9)")
    args = parser.parse_args(argv)
    if not args.float_tolerance >= 0:
        parser.error("--float-tolerance must be >= 0, got %r" % args.float_tolerance)
    return args


def main(argv=None):
    args = parse_args(argv)
    expected, actual, tolerance = args.expected, args.actual, args.float_tolerance
    try:
        header, n_expected, kinds_e = scan(expected)
        _, n_actual, kinds_a = scan(actual, header, expected)
        kinds = merge_kinds(kinds_e, kinds_a)
        splitter = RowSplitter(kinds)
        if args.ordered:
            result = compare_ordered(expected, actual, kinds, tolerance)
        elif splitter.floats:
            result = compare_multiset_floats(expected, actual, splitter, tolerance)
        else:
            result = compare_multiset_exact(expected, actual, splitter)
    except InputError as e:
        print("compare.py: error: %s" % e, file=sys.stderr)
        return 2
    float_columns = [header[i] for i in splitter.floats]
    if args.ordered:
        differing, n_differing, extra_e, n_extra_e, extra_a, n_extra_a = result
        if not (n_differing or n_extra_e or n_extra_a):
            print("match: %s" % plural(n_expected, "row"))
            return 0
        print("mismatch (ordered): %s has %s, %s has %s"
              % (expected, plural(n_expected, "row"), actual, plural(n_actual, "row")))
        if n_differing:
            print("%s differ (%s):" % (plural(n_differing, "line"),
                                       "all" if n_differing <= len(differing)
                                       else "first %d" % len(differing)))
            for line, e, a in differing:
                print("  line %d: expected %s" % (line, e))
                print("  line %d: actual   %s" % (line, a))
        print_rows("%s only in %s" % (plural(n_extra_e, "row"), expected), extra_e, n_extra_e)
        print_rows("%s only in %s" % (plural(n_extra_a, "row"), actual), extra_a, n_extra_a)
    else:
        only_e, n_only_e, only_a, n_only_a = result
        if not (n_only_e or n_only_a):
            print("match: %s" % plural(n_expected, "row"))
            return 0
        print("mismatch: %s has %s, %s has %s"
              % (expected, plural(n_expected, "row"), actual, plural(n_actual, "row")))
        print_rows("%s only in %s" % (plural(n_only_e, "row"), expected), only_e, n_only_e)
        print_rows("%s only in %s" % (plural(n_only_a, "row"), actual), only_a, n_only_a)
    if float_columns:
        print("float columns %s compared with relative tolerance %r"
              % (",".join(float_columns), tolerance))
    return 1


if __name__ == "__main__":
    sys.exit(main())
