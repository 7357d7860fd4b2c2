#!/usr/bin/env python3
"""Tests of scripts/bench_plot.py: the script run as a subprocess on a fixture CSV (outputs and
every error text) and its pure functions imported directly.

    python3 tests/scripts/bench_plot_test.py            # needs matplotlib for this python3
    python3 tests/scripts/bench_plot_test.py --keep DIR # also leaves the fixture's PNGs in DIR
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "bench_plot.py")
HEADER = ("medium,provider,wait,tuple_bytes,batch_bytes,rate_label,offered_rate,max_rate,"
          "repeats,ok_repeats,tuples_per_s,tuples_per_s_min,tuples_per_s_max,cpu_us_per_tuple,"
          "cpu_us_per_tuple_min,cpu_us_per_tuple_max,sender_cpu_us_per_tuple,"
          "receiver_cpu_us_per_tuple,cores,cores_min,cores_max,p50_us,p99_us,p99_us_min,"
          "p99_us_max,p999_us,latency_budget_us,syscalls_per_tuple")
META = ['# boreal bench: host=vm1 cpus=2 kernel=6.18.0 cpu="AMD EPYC 7B13" commit=7a7dcf7abc12 '
        'date=2026-11-23T16:00:00Z', "# command: boreal bench --quick --csv bench.csv"]
LABELS = [("idle", 0.0), ("1%", 0.01), ("10%", 0.1), ("50%", 0.5), ("90%", 0.9), ("max", 1.0)]
# Cores used at fraction f of the maximum rate, and p99 at f, per wait mode: made-up but shaped
# like the real thing (busy burns both cores whatever the load; block is cheap but slow to wake).
CORES = {"busy": lambda f: 2.0, "block": lambda f: 0.01 + 1.9 * f,
         "adaptive": lambda f: 0.03 + 1.85 * f}
P99 = {"busy": lambda f: 40 + 300 * f ** 4, "block": lambda f: 150 + 900 * f ** 4,
       "adaptive": lambda f: 60 + 400 * f ** 4}


def fixture_rows():
    """2 media x 3 wait modes x 6 rate labels, as CSV lines."""
    rows = []
    for medium, provider, max_rate in (("tcp", "", 17e6), ("fabric-msg", "tcp;ofi_rxm", 9e6)):
        for wait in ("busy", "block", "adaptive"):
            for label, f in LABELS:
                rate = max_rate * f
                cores = CORES[wait](f)
                offered = "" if label == "max" else f"{rate:.0f}"
                if label == "idle":
                    cpu = ["", "", "", "", ""]
                    lat = ["", "", "", "", ""]
                else:
                    us = cores * 1e6 / rate
                    cpu = [f"{us:.4g}", f"{us * 0.95:.4g}", f"{us * 1.08:.4g}",
                           f"{us * 0.5:.4g}", f"{us * 0.45:.4g}"]
                    p99 = P99[wait](f)
                    lat = [f"{p99 * 0.4:.0f}", f"{p99:.0f}", f"{p99 * 0.9:.0f}",
                           f"{p99 * 1.2:.0f}", f"{p99 * 2:.0f}"]
                rows.append(",".join([
                    medium, provider, wait, "64", "32768", label, offered, f"{max_rate:.0f}",
                    "3", "3", f"{rate:.0f}", f"{rate * 0.97:.0f}", f"{rate * 1.02:.0f}", *cpu[:5],
                    f"{cores:.3g}", f"{cores * 0.97:.3g}", f"{min(2.0, cores * 1.03):.3g}",
                    *lat[:2], lat[2], lat[3], lat[4], "200", "" if label == "idle" else "0.1"]))
    return rows


FAILED_ROW = ("tcp,,block,64,32768,100000,100000,17000000,3,0,,,,,,,,,,,,,,,,,200,")


def write(directory, name, lines):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          timeout=100)


def load_module():
    spec = importlib.util.spec_from_file_location("bench_plot", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class PlotsFromFixture(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="bench_plot_test.")
        self.addCleanup(shutil.rmtree, self.dir)

    def test_writes_three_pngs_and_prints_their_paths(self):
        csv_path = write(self.dir, "bench.csv", META + [HEADER] + fixture_rows() + [FAILED_ROW])
        out = os.path.join(self.dir, "plots")
        result = run(csv_path, "--out", out, "--title", "fixture")
        self.assertEqual(result.returncode, 0, result.stderr)
        names = ["cpu_per_tuple.png", "p99_latency.png", "throughput_vs_cores.png"]
        self.assertEqual(result.stdout, "".join(os.path.join(out, n) + "\n" for n in names))
        self.assertEqual(result.stderr,
                         f"bench_plot: warning: {csv_path}:40: skipping tcp, 64 B tuples, "
                         "32 KiB frames, block, rate 100000: ok_repeats is 0\n")
        for name in names:
            with open(os.path.join(out, name), "rb") as f:
                data = f.read()
            self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n", name)
            self.assertGreater(len(data), 10_000, name)
            # IHDR: 9 in wide at 150 dpi, whatever the facets
            self.assertEqual(int.from_bytes(data[16:20], "big"), 1350, name)
        if KEEP_DIR:
            os.makedirs(KEEP_DIR, exist_ok=True)
            for name in names:
                shutil.copy(os.path.join(out, name), KEEP_DIR)

    def test_several_stream_counts_add_cpu_against_streams(self):
        # The tcp rows once per stream count, with a `streams` column (boreal bench --streams):
        # each count is its own facet in the rate plots, and a fourth figure has one subplot
        # per rate with CPU per tuple against streams.
        tcp = [r for r in fixture_rows() if r.startswith("tcp,")]
        rows = [f"{r},{n}" for n in (1, 16, 64) for r in tcp]
        csv_path = write(self.dir, "bench.csv", META + [HEADER + ",streams"] + rows)
        out = os.path.join(self.dir, "plots")
        result = run(csv_path, "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        names = ["cpu_per_tuple.png", "p99_latency.png", "throughput_vs_cores.png",
                 "cpu_per_tuple_vs_streams.png"]
        self.assertEqual(result.stdout, "".join(os.path.join(out, n) + "\n" for n in names))
        with open(os.path.join(out, names[-1]), "rb") as f:
            self.assertEqual(f.read()[:8], b"\x89PNG\r\n\x1a\n")
        bp = load_module()
        _, parsed = bp.read_bench(csv_path)
        facets = bp.stream_facets(parsed)
        self.assertEqual(list(facets)[0], ("tcp", 64, 32768, 1, "1%"))
        self.assertEqual(len(facets), 5)  # every rate but idle
        self.assertEqual(sorted({bp.streams_of(r) for r in facets[("tcp", 64, 32768, 1, "max")]}),
                         [1, 16, 64])
        self.assertEqual(bp.facet_title(("tcp", 64, 32768, 16)), "tcp, 64 B tuples, 32 KiB frames, 16 streams")

    def expect_error(self, csv_path, message):
        result = run(csv_path, "--out", os.path.join(self.dir, "plots"))
        self.assertEqual((result.returncode, result.stdout, result.stderr),
                         (2, "", f"bench_plot: {message}\n"))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "plots")))

    def test_missing_file(self):
        path = os.path.join(self.dir, "absent.csv")
        self.expect_error(path, f"{path}: cannot read: No such file or directory")

    def test_no_header(self):
        path = write(self.dir, "meta_only.csv", META)
        self.expect_error(path, f"{path}: no header line")
        empty = write(self.dir, "empty.csv", [])
        self.expect_error(empty, f"{empty}: no header line")

    def test_missing_column(self):
        path = write(self.dir, "b.csv", META + [HEADER.replace(",p99_us,", ",")] + ["x"])
        self.expect_error(path, f"{path}:3: missing column 'p99_us'")

    def test_non_numeric_value(self):
        rows = fixture_rows()
        rows[1] = rows[1].replace(",3,3,", ",3,three,", 1)
        path = write(self.dir, "b.csv", META + [HEADER] + rows)
        self.expect_error(path, f"{path}:5: column 'ok_repeats' is not a number: 'three'")

    def test_no_data_rows(self):
        path = write(self.dir, "b.csv", META + [HEADER])
        self.expect_error(path, f"{path}: no data rows")
        failed = write(self.dir, "failed.csv", META + [HEADER, FAILED_ROW])
        result = run(failed, "--out", os.path.join(self.dir, "plots"))
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.splitlines()[-1],
                         f"bench_plot: {failed}: no data rows with ok_repeats > 0")

    def test_row_with_wrong_cell_count(self):
        path = write(self.dir, "b.csv", META + [HEADER, fixture_rows()[0] + ",1"])
        self.expect_error(path, f"{path}:4: 29 cells but the header has 28")


SOAK_HEADER = ("elapsed_s,node,rss_kb,frames_unacknowledged,buffers_in_use,buffers,backlog_bytes,"
               "tuples_per_s,lost,duplicated,out_of_order,p99_us")


def soak_rows(seconds=20):
    rows = []
    for t in range(1, seconds + 1):
        rows.append(f"{t},src,10240,{t % 5},{t % 7},64,0,1e+06,0,0,0,0")
        rows.append(f"{t},dst,20480,0,0,0,0,1e+06,0,0,0,{140 + t % 3}")
    return rows


class SoakPlot(unittest.TestCase):
    """--soak: the soak.csv of `boreal bench --soak` into soak.png."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="bench_plot_test.")
        self.addCleanup(shutil.rmtree, self.dir)

    def test_writes_soak_png_and_prints_its_path(self):
        csv_path = write(self.dir, "soak.csv", ["# boreal bench --soak: host=h cpus=2",
                                                "# tcp, wait sleep, maximum 1.25e+06 tuples/s, "
                                                "offered 1e+06 tuples/s", SOAK_HEADER] + soak_rows())
        out = os.path.join(self.dir, "plots")
        result = run("--soak", csv_path, "--out", out)
        self.assertEqual((result.returncode, result.stderr), (0, ""))
        self.assertEqual(result.stdout, os.path.join(out, "soak.png") + "\n")
        with open(os.path.join(out, "soak.png"), "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(int.from_bytes(data[16:20], "big"), 1350)

    def test_bad_soak_csvs_are_named(self):
        out = os.path.join(self.dir, "plots")
        missing = write(self.dir, "a.csv", [SOAK_HEADER.replace(",p99_us", "")] + soak_rows())
        result = run("--soak", missing, "--out", out)
        self.assertEqual((result.returncode, result.stderr),
                         (2, f"bench_plot: {missing}: line 1: missing columns: p99_us\n"))
        bad = write(self.dir, "b.csv", [SOAK_HEADER, "1,src,lots,0,0,64,0,1,0,0,0,0"])
        result = run("--soak", bad, "--out", out)
        self.assertEqual((result.returncode, result.stderr),
                         (2, f"bench_plot: {bad}: line 2: rss_kb is not a number\n"))
        self.assertFalse(os.path.exists(out))
        both = run(missing, "--soak", missing, "--out", out)
        self.assertEqual(both.returncode, 2)


class PureFunctions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bp = load_module()
        cls.dir = tempfile.mkdtemp(prefix="bench_plot_test.")
        path = write(cls.dir, "bench.csv", META + [HEADER] + fixture_rows())
        cls.meta, cls.rows = cls.bp.read_bench(path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_parse_keeps_metadata_and_types_cells(self):
        self.assertEqual(self.meta, [META[0][2:], META[1][2:]])
        self.assertEqual(len(self.rows), 36)
        first = self.rows[0]
        self.assertEqual((first["line"], first["medium"], first["provider"], first["wait"],
                          first["rate_label"], first["offered_rate"], first["cpu_us_per_tuple"],
                          first["cores"]), (4, "tcp", "", "busy", "idle", 0.0, None, 2.0))
        self.assertEqual(self.rows[5]["offered_rate"], None)  # max: not applicable
        self.assertEqual(self.rows[-1]["provider"], "tcp;ofi_rxm")

    def test_metadata_pairs_with_quoted_values(self):
        pairs = self.bp.parse_metadata(self.meta)
        self.assertEqual((pairs["cpus"], pairs["cpu"], pairs["commit"]),
                         ("2", "AMD EPYC 7B13", "7a7dcf7abc12"))

    def test_facets_group_by_medium_provider_and_sizes(self):
        rows = self.rows + [dict(self.rows[0], batch_bytes=65536.0, line=99)]
        facets = self.bp.group_facets(rows)
        self.assertEqual(list(facets), [("tcp", 64, 32768, 1), ("tcp", 64, 65536, 1),
                                        ("fabric-msg (tcp;ofi_rxm)", 64, 32768, 1)])
        self.assertEqual([len(v) for v in facets.values()], [18, 1, 18])
        self.assertEqual([self.bp.facet_title(k) for k in facets],
                         ["tcp, 64 B tuples, 32 KiB frames", "tcp, 64 B tuples, 64 KiB frames",
                          "fabric-msg (tcp;ofi_rxm), 64 B tuples, 32 KiB frames"])

    def test_max_point_sits_at_achieved_rate_and_idle_nowhere(self):
        by_label = {r["rate_label"]: r for r in self.rows[:6]}
        self.assertEqual(self.bp.rate_x(by_label["max"]), 17e6)
        self.assertEqual(self.bp.rate_x(by_label["50%"]), 8.5e6)
        self.assertIsNone(self.bp.rate_x(by_label["idle"]))
        order = sorted(self.rows[:6], key=self.bp.rate_order)
        self.assertEqual([r["rate_label"] for r in order],
                         ["idle", "1%", "10%", "50%", "90%", "max"])

    def test_byte_sizes(self):
        self.assertEqual([self.bp.format_bytes(n) for n in (64, 1000, 32768, 1 << 20, 1536)],
                         ["64 B", "1000 B", "32 KiB", "1 MiB", "1536 B"])


KEEP_DIR = None
if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--keep":
        KEEP_DIR = sys.argv[2]
        del sys.argv[1:3]
    unittest.main()
