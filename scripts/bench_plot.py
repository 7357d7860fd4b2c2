#!/usr/bin/env python3
"""Plots of a `boreal bench` sweep (media x wait modes x offered rates x sizes x streams).

Input: the CSV `boreal bench --csv FILE` writes: '#' metadata lines (machine, commit, date,
command), a header, one row per grid point. Numbers are medians over repeats, `X_min`/`X_max`
their spread; an empty cell means "not applicable". `rate_label` is idle, 1%, 10%, 50%, 90%,
max (fractions of `max_rate`) or an absolute rate. Rows with ok_repeats == 0 are skipped.

Output in --out DIR, each path printed on its own line; one subplot per (medium [+provider],
tuple size, batch size, streams), one line per wait mode, the metadata as every figure's footer:
  cpu_per_tuple.png        machine CPU-us per tuple against offered rate (max point at its
                           achieved rate; idle left out)
  p99_latency.png          p99 latency against offered rate, dashed line at the budget
  throughput_vs_cores.png  achieved tuples/s against cores used; idle marked on the x axis
and, when the sweep ran several stream counts (`streams` column, `boreal bench --streams`),
  cpu_per_tuple_vs_streams.png  machine CPU-us per tuple against streams into one node, one
                           subplot per (medium, sizes, rate)

    python3 scripts/bench_plot.py bench.csv --out plots [--title "vm1, quick"]

With --soak SOAK_CSV instead of the sweep's CSV: the CSV `boreal bench --soak` writes ('#'
metadata lines, a header, one row per second per node: elapsed_s, node, rss_kb, occupancy
columns, tuples_per_s, lost, duplicated, out_of_order, p99_us) becomes
  soak.png                 RSS, send buffers in use, p99 latency and tuples/s against time,
                           one line per node (p99: nodes with a sink only)

    python3 scripts/bench_plot.py --soak soak.csv --out plots

A bad input prints one line naming the file (and line) to stderr and exits 2. Needs matplotlib
(Debian's python3-matplotlib, i.e. /usr/bin/python3).
"""
import argparse
import csv
import math
import os
import re
import sys
import textwrap

TEXT = {"medium", "provider", "wait", "rate_label"}  # every other column is a number
REQUIRED = ["medium", "provider", "wait", "tuple_bytes", "batch_bytes", "rate_label",
            "offered_rate", "ok_repeats", "tuples_per_s", "tuples_per_s_min", "tuples_per_s_max",
            "cpu_us_per_tuple", "cpu_us_per_tuple_min", "cpu_us_per_tuple_max", "cores",
            "cores_min", "cores_max", "p99_us", "p99_us_min", "p99_us_max", "latency_budget_us"]
MEDIA = ["tcp", "fabric-msg", "fabric-rma"]
# A wait mode keeps its colour and marker in every figure; adaptive is the one to watch.
WAIT_STYLE = {"busy": ("tab:red", "o", 1.2), "block": ("tab:blue", "s", 1.2),
              "sleep": ("tab:green", "^", 1.2), "backoff": ("tab:orange", "D", 1.2),
              "adaptive": ("tab:purple", "P", 2.6)}
SPARE_COLOURS = ["tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"]
DPI = 150
WIDTH_IN = 9.0  # 1350 px at 150 dpi: shrunk to ~900 px in a README, 7-pt text stays legible


class PlotError(Exception):
    """A problem with the input or output, already phrased for the user."""


def read_bench(path):
    """Returns (metadata lines without '# ', rows); each row maps column -> str or float/None
    and carries its file line number under 'line'."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise PlotError(f"{path}: cannot read: {reason}") from None
    start = 0
    while start < len(lines) and (lines[start].startswith("#") or not lines[start].strip()):
        start += 1
    meta = [l.lstrip("#").strip() for l in lines[:start] if l.startswith("#")]
    if start == len(lines):
        raise PlotError(f"{path}: no header line")
    reader = csv.reader(lines[start:])
    header = next(reader)
    for name in REQUIRED:
        if name not in header:
            raise PlotError(f"{path}:{start + 1}: missing column '{name}'")
    rows = []
    for cells in reader:
        line = start + reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise PlotError(f"{path}:{line}: {len(cells)} cells but the header has {len(header)}")
        row = {"line": line}
        for name, cell in zip(header, cells):
            row[name] = cell.strip()
            if name not in TEXT:
                try:
                    row[name] = float(cell) if cell.strip() else None
                except ValueError:
                    raise PlotError(f"{path}:{line}: column '{name}' is not a number: "
                                    f"'{cell}'") from None
        rows.append(row)
    if not rows:
        raise PlotError(f"{path}: no data rows")
    return meta, rows


def usable_rows(path, rows, warn):
    """Drops the rows no repeat succeeded for, telling `warn` about each."""
    for row in (r for r in rows if r["ok_repeats"] == 0):
        warn(f"{path}:{row['line']}: skipping {facet_title(facet_key(row))}, {row['wait']}, "
             f"rate {row['rate_label']}: ok_repeats is 0")
    kept = [r for r in rows if r["ok_repeats"] != 0]
    if not kept:
        raise PlotError(f"{path}: no data rows with ok_repeats > 0")
    return kept


def parse_metadata(meta):
    """key=value pairs of the metadata lines (values may be quoted)."""
    pairs = re.findall(r'(\w+)=("[^"]*"|\S+)', "\n".join(meta))
    return {key: value.strip('"') for key, value in pairs}


def streams_of(row):
    """Streams into the receiving node (--streams); 1 in CSVs written before the column."""
    return int(row.get("streams") or 1)


def facet_key(row):
    medium = row["medium"] + (f" ({row['provider']})" if row["provider"] else "")
    return (medium, int(row["tuple_bytes"] or 0), int(row["batch_bytes"] or 0), streams_of(row))


def format_bytes(n):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def facet_title(key):
    medium, tuple_bytes, batch_bytes, streams = key[:4]
    title = f"{medium}, {format_bytes(tuple_bytes)} tuples, {format_bytes(batch_bytes)} frames"
    title += f", {streams} streams" if streams != 1 else ""
    return title + (f", {key[4]}" if len(key) > 4 else "")


def group_facets(rows):
    """facet key -> rows, in a stable order: tcp, fabric-msg, fabric-rma, others; then sizes."""
    groups = {}
    for row in rows:
        groups.setdefault(facet_key(row), []).append(row)
    rank = {medium: i for i, medium in enumerate(MEDIA)}
    return {k: groups[k] for k in sorted(groups, key=lambda k: (rank.get(k[0].split()[0], 9), k))}


def rate_x(row):
    """Where a row sits on an offered-rate axis: the max point at the rate it achieved, idle
    nowhere (None)."""
    if row["rate_label"] == "idle":
        return None
    return row["tuples_per_s"] if row["rate_label"] == "max" else row["offered_rate"]


def rate_order(row):
    if row["rate_label"] == "idle":
        return -1.0
    return math.inf if row["rate_label"] == "max" else (row["offered_rate"] or 0.0)


def wait_modes(rows):
    seen = {row["wait"] for row in rows}
    return [w for w in WAIT_STYLE if w in seen] + sorted(seen - set(WAIT_STYLE))


def style(wait, modes):
    """A wait mode outside WAIT_STYLE gets a spare colour, fixed by its place in `modes`."""
    spare = SPARE_COLOURS[modes.index(wait) % len(SPARE_COLOURS)]
    return WAIT_STYLE.get(wait, (spare, "v", 1.2))


def spread(points, key):
    """Error-bar half-lengths (below, above) from KEY_min / KEY_max; 0 where unknown."""
    def bound(p, end):
        return p[key] if p[key + end] is None else p[key + end]
    return [[max(0.0, p[key] - bound(p, "_min")) for p in points],
            [max(0.0, bound(p, "_max") - p[key]) for p in points]]


def pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotError(f"matplotlib is not installed for {sys.executable} (Debian: apt install "
                        "python3-matplotlib, then use /usr/bin/python3)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def draw_lines(ax, rows, modes, x_of, y_key, x_key=None):
    """One line with error bars per wait mode through the rows' (x_of(row), row[y_key])."""
    for wait in modes:
        points = sorted((r for r in rows if r["wait"] == wait and x_of(r) and r[y_key]),
                        key=rate_order)
        if points:
            colour, marker, width = style(wait, modes)
            ax.errorbar([x_of(p) for p in points], [p[y_key] for p in points],
                        yerr=spread(points, y_key), xerr=spread(points, x_key) if x_key else None,
                        color=colour, marker=marker, lw=width, ms=4, capsize=2, elinewidth=0.8)


def draw_against_rate(y_key, ylabel, budget=False):
    """A facet drawer: row[y_key] against offered rate, both log; budget: dashed budget line."""
    def draw(ax, rows, modes, _cpus):
        draw_lines(ax, rows, modes, rate_x, y_key)
        for value in sorted({r["latency_budget_us"] for r in rows} - {None}) if budget else []:
            ax.axhline(value, color="0.4", ls="--", lw=1)
        ax.set(xscale="log", yscale="log", xlabel="offered tuples/s (max: achieved)",
               ylabel=ylabel)
    return draw


def draw_cores(ax, rows, modes, cpus):
    draw_lines(ax, rows, modes, lambda r: r["cores"] if r["rate_label"] != "idle" else None,
               "tuples_per_s", x_key="cores")
    for row in rows:  # idle: 0 tuples/s has no place on a log axis, so mark the x axis
        if row["rate_label"] == "idle" and row["cores"] is not None:
            ax.plot([row["cores"]], [0], transform=ax.get_xaxis_transform(), clip_on=False,
                    ls="", marker="^", ms=8, color=style(row["wait"], modes)[0])
    ax.axvline(cpus, color="0.4", ls=":", lw=1)
    ax.set(yscale="log", xlim=(0, cpus * 1.05), xlabel="machine cores used",
           ylabel="achieved tuples/s")


def draw_against_streams(ax, rows, modes, _cpus):
    """CPU per tuple against the number of streams into the node, at one rate label."""
    for wait in modes:
        points = sorted((r for r in rows if r["wait"] == wait and r["cpu_us_per_tuple"]),
                        key=streams_of)
        if points:
            colour, marker, width = style(wait, modes)
            ax.errorbar([streams_of(p) for p in points], [p["cpu_us_per_tuple"] for p in points],
                        yerr=spread(points, "cpu_us_per_tuple"), color=colour, marker=marker,
                        lw=width, ms=4, capsize=2, elinewidth=0.8)
    ax.set(xscale="log", yscale="log", xlabel="streams into one node",
           ylabel="machine CPU-µs per tuple")


def stream_facets(rows):
    """For a sweep over several stream counts: (medium, sizes, 1, rate label) -> rows of every
    count at that rate; empty when the sweep had one count."""
    if len({streams_of(r) for r in rows}) < 2:
        return {}
    facets = {}
    for row in sorted(rows, key=rate_order):
        if row["rate_label"] == "idle":
            continue
        key = facet_key(row)[:3] + (1, row["rate_label"])
        facets.setdefault(key, []).append(row)
    return facets


STREAMS_FIGURE = ("cpu_per_tuple_vs_streams.png", "Machine CPU per tuple against streams into one node",
                  draw_against_streams, [])

# file name, title, how to draw one facet, legend entries beyond the wait modes
FIGURES = [
    ("cpu_per_tuple.png", "Machine CPU per tuple",
     draw_against_rate("cpu_us_per_tuple", "machine CPU-µs per tuple"), []),
    ("p99_latency.png", "p99 latency", draw_against_rate("p99_us", "p99 latency (µs)", True),
     [dict(color="0.4", ls="--", label="latency budget")]),
    ("throughput_vs_cores.png", "Throughput against cores used", draw_cores,
     [dict(color="0.4", ls="", marker="^", ms=8, label="idle: cores at 0 tuples/s (on x axis)"),
      dict(color="0.4", ls=":", label="all cores")]),
]


def render(plt, figure, facets, modes, cpus, meta, args):
    """One figure: a subplot per facet, wait-mode legend on top, metadata footer; returns its
    path."""
    name, title, draw, extra = figure
    n = len(facets)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3
    nrows = math.ceil(n / ncols)
    footer = [part for line in meta + [f"source: {os.path.basename(args.csv)}"]
              for part in textwrap.wrap(line, 150)]  # ~150 7-pt characters fit in 9 in
    # Margins in inches: suptitle + legend above, facet title and x label around each subplot,
    # y label on its left, footer below.
    top_in, bottom_in = 1.0, 0.14 * len(footer) + 0.5
    left_in, right_in, gap_w, gap_h = 0.8, 0.2, 0.9, 0.9
    axes_w = (WIDTH_IN - left_in - right_in - (ncols - 1) * gap_w) / ncols
    axes_h = min(3.6, max(2.0, axes_w * 0.65))
    height = top_in + nrows * axes_h + (nrows - 1) * gap_h + bottom_in
    fig, axes = plt.subplots(nrows, ncols, figsize=(WIDTH_IN, height), squeeze=False)
    fig.subplots_adjust(left=left_in / WIDTH_IN, right=1 - right_in / WIDTH_IN,
                        top=1 - top_in / height, bottom=bottom_in / height,
                        wspace=gap_w / axes_w, hspace=gap_h / axes_h)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax, (key, rows) in zip(axes.flat, facets.items()):
        draw(ax, rows, modes, cpus)
        ax.set_title(facet_title(key), fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(f"{args.title}: {title}" if args.title else title, y=1 - 0.08 / height,
                 va="top", fontsize=12)
    handles = [plt.Line2D([], [], **style_args) for style_args in extra]
    for wait in modes:
        colour, marker, width = style(wait, modes)
        handles.append(plt.Line2D([], [], color=colour, marker=marker, lw=width, label=wait))
    fig.legend(handles=handles, loc="upper center", ncol=min(len(handles), 6), fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, 1 - 0.36 / height))
    fig.text(0.01, 0.08 / height, "\n".join(footer), fontsize=7, color="0.3", va="bottom")
    path = os.path.join(args.out, name)
    try:
        fig.savefig(path, dpi=DPI)
    except OSError as e:
        raise PlotError(f"{path}: cannot write: {e.strerror}") from None
    finally:
        plt.close(fig)
    return path


SOAK_COLUMNS = ["elapsed_s", "node", "rss_kb", "frames_unacknowledged", "buffers_in_use",
                "buffers", "backlog_bytes", "tuples_per_s", "lost", "duplicated", "out_of_order",
                "p99_us"]


def read_soak(path):
    """(metadata lines, rows) of a soak CSV; every column but `node` a number."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise PlotError(f"{path}: cannot read: {reason}") from None
    meta = [l.lstrip("#").strip() for l in lines if l.startswith("#")]
    body = [(n, l) for n, l in enumerate(lines, 1) if l.strip() and not l.startswith("#")]
    if not body:
        raise PlotError(f"{path}: no header line")
    header = next(csv.reader([body[0][1]]))
    missing = [c for c in SOAK_COLUMNS if c not in header]
    if missing:
        raise PlotError(f"{path}: line {body[0][0]}: missing columns: {', '.join(missing)}")
    rows = []
    for number, line in body[1:]:
        cells = dict(zip(header, next(csv.reader([line]))))
        row = {"node": cells.get("node", "")}
        for column in SOAK_COLUMNS[2:] + ["elapsed_s"]:
            try:
                row[column] = float(cells[column])
            except (KeyError, ValueError):
                raise PlotError(f"{path}: line {number}: {column} is not a number") from None
        rows.append(row)
    if not rows:
        raise PlotError(f"{path}: no rows")
    return meta, rows


def render_soak(plt, meta, rows, args):
    """soak.png: four panels against elapsed seconds, one line per node; returns its path."""
    nodes = list(dict.fromkeys(r["node"] for r in rows))
    colours = {n: c for n, c in zip(nodes, ["tab:blue", "tab:orange"] + SPARE_COLOURS * 4)}
    # Latency in ms once it passes 10 ms: an overloaded soak's p99 climbs into seconds.
    p99_ms = max(r["p99_us"] for r in rows) >= 10_000
    panels = [("RSS (MiB)", lambda r: r["rss_kb"] / 1024, lambda n: True),
              ("send buffers in use", lambda r: r["buffers_in_use"],
               lambda n: any(r["buffers"] > 0 for r in rows if r["node"] == n)),
              (f"p99 over the second ({'ms' if p99_ms else 'µs'})",
               lambda r: r["p99_us"] / (1000 if p99_ms else 1),
               lambda n: any(r["p99_us"] > 0 for r in rows if r["node"] == n)),
              ("M tuples/s", lambda r: r["tuples_per_s"] / 1e6, lambda n: True)]
    footer = [part for line in meta + [f"source: {os.path.basename(args.soak)}"]
              for part in textwrap.wrap(line, 150)]
    height = 9.0 + 0.14 * len(footer)
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH_IN, height), sharex=True)
    fig.subplots_adjust(left=0.1, right=0.97, top=1 - 0.8 / height,
                        bottom=(0.14 * len(footer) + 0.7) / height, hspace=0.25)
    for ax, (label, value, shown) in zip(axes, panels):
        for node in nodes:
            if not shown(node):
                continue
            mine = [r for r in rows if r["node"] == node]
            ax.plot([r["elapsed_s"] for r in mine], [value(r) for r in mine],
                    color=colours[node], lw=1.2, label=node)
        ax.set_ylabel(label, fontsize=8)
        ax.set_ylim(bottom=0)
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="lower right", fontsize=8, frameon=False, ncol=len(nodes))
    buffers = max(r["buffers"] for r in rows)
    if buffers > 0:  # the pool's size, so that "full" is visible
        axes[1].axhline(buffers, color="0.4", ls="--", lw=1)
        axes[1].text(0.01, buffers, f" of {buffers:.0f}", transform=axes[1].get_yaxis_transform(),
                     va="bottom", fontsize=7, color="0.3")
        axes[1].set_ylim(0, buffers * 1.15)
    offered = next((float(m.group(1)) for line in meta
                    for m in [re.search(r"offered ([0-9.e+]+) tuples/s", line)] if m), None)
    if offered:  # the rate the sources were paced at
        axes[-1].axhline(offered / 1e6, color="0.4", ls="--", lw=1)
        axes[-1].text(0.01, offered / 1e6, " offered", transform=axes[-1].get_yaxis_transform(),
                      va="bottom", fontsize=7, color="0.3")
    axes[-1].set_xlabel("seconds since the soak began")
    lost = max(r["lost"] + r["duplicated"] for r in rows)
    title = f"Soak: {len(rows) // max(1, len(nodes))} s, lost + duplicated {lost:.0f}"
    fig.suptitle(f"{args.title}: {title}" if args.title else title, y=1 - 0.1 / height,
                 va="top", fontsize=12)
    fig.text(0.01, 0.08 / height, "\n".join(footer), fontsize=7, color="0.3", va="bottom")
    path = os.path.join(args.out, "soak.png")
    try:
        fig.savefig(path, dpi=DPI)
    except OSError as e:
        raise PlotError(f"{path}: cannot write: {e.strerror}") from None
    finally:
        plt.close(fig)
    return path


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv", nargs="?", help="the CSV that `boreal bench --csv` wrote")
    parser.add_argument("--soak", help="instead: the soak.csv of `boreal bench --soak`")
    parser.add_argument("--out", required=True, help="directory for the PNGs (created)")
    parser.add_argument("--title", default="", help="prefix of every figure's title")
    args = parser.parse_args(argv)
    if (args.csv is None) == (args.soak is None):
        parser.error("give either a sweep's CSV or --soak SOAK_CSV")
    try:
        if args.soak is not None:
            meta, rows = read_soak(args.soak)
            plt = pyplot()
            try:
                os.makedirs(args.out, exist_ok=True)
            except OSError as e:
                raise PlotError(f"{args.out}: cannot create: {e.strerror}") from None
            print(render_soak(plt, meta, rows, args), flush=True)
            return 0
        meta, rows = read_bench(args.csv)
        rows = usable_rows(args.csv, rows, lambda m: print(f"bench_plot: warning: {m}",
                                                           file=sys.stderr))
        facets, modes = group_facets(rows), wait_modes(rows)
        cpus = parse_metadata(meta).get("cpus", "")
        cpus = float(cpus) if cpus.isdigit() else math.ceil(max(r["cores"] or 0 for r in rows))
        plt = pyplot()
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise PlotError(f"{args.out}: cannot create: {e.strerror}") from None
        for figure in FIGURES:
            print(render(plt, figure, facets, modes, max(cpus, 1), meta, args), flush=True)
        if by_rate := stream_facets(rows):
            print(render(plt, STREAMS_FIGURE, by_rate, modes, max(cpus, 1), meta, args), flush=True)
    except PlotError as e:
        print(f"bench_plot: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
