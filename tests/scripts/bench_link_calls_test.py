#!/usr/bin/env python3
"""Tests of scripts/bench_link_calls.py on a made-up bench.jsonl: medians per point, discarded
runs left out, and a bad file named."""

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "bench_link_calls.py")


def run_line(wait, rate, streams, frames, reads, empty, writes, calls, discarded=False,
             rss_kb=(0, 0), medium="tcp"):
    """One run of `streams` links, each delivering 100 tuples in `frames` frames; its sending
    and receiving nodes peaked at `rss_kb` (a third node sent nothing and received nothing)."""
    bench = {"wait": wait, "rate_label": rate}
    if discarded:
        bench["discarded"] = "contaminated"
    links = []
    for _ in range(streams):
        links.append({"direction": "send", "stats": {"tuples": 100, "frames": frames,
                                                     "read_calls": 0, "would_block": 0,
                                                     "write_calls": writes}})
        links.append({"direction": "recv", "stats": {"tuples": 100, "frames": frames,
                                                     "read_calls": reads, "would_block": empty,
                                                     "write_calls": 0}})
    boxes = [{"type": "source"}] * streams + [{"type": "sink"}] * streams
    nodes = [{"node": "src", "tuples_sent": 100 * streams, "tuples_received": 0,
              "max_rss_kb": rss_kb[0]},
             {"node": "dst", "tuples_sent": 0, "tuples_received": 100 * streams,
              "max_rss_kb": rss_kb[1]},
             {"node": "idle", "tuples_sent": 0, "tuples_received": 0, "max_rss_kb": 999999}]
    return json.dumps({"kind": "run", "medium": medium, "bench": bench, "links": links,
                       "boxes": boxes, "nodes": nodes,
                       "syscalls_per_tuple": {"sender": calls, "receiver": calls}})


class LinkCalls(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="bench_link_calls_test.")
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, lines):
        path = os.path.join(self.dir, "bench.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                              timeout=60)

    def test_medians_per_point_without_discarded_runs(self):
        path = self.write([
            json.dumps({"kind": "bench"}),
            run_line("block", "100000", 1, 10, 20, 10, 10, 0.5, rss_kb=(10240, 20480)),
            run_line("block", "100000", 1, 20, 40, 30, 20, 1.5, rss_kb=(11264, 21504)),
            # the median of three
            run_line("block", "100000", 1, 50, 900, 900, 50, 9.0, rss_kb=(99999, 99999)),
            run_line("block", "100000", 1, 1, 1, 1, 1, 99.0, discarded=True),
            run_line("block", "100000", 4, 100, 500, 400, 100, 2.0, rss_kb=(1536, 2560)),
            run_line("block", "max", 4, 25, 30, 5, 25, 0.25),
            # Another medium at a point tcp has too: a row of its own.
            run_line("block", "100000", 4, 50, 100, 0, 50, 1.0, medium="fabric-msg",
                     rss_kb=(4096, 5120)),
        ])
        result = self.run_script(path, "--rate", "100000")
        self.assertEqual((result.returncode, result.stderr), (0, ""))
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 4)
        self.assertEqual(lines[1].split(), ["4", "fabric-msg", "block", "100000", "2.000",
                                            "1.000", "0.000", "0.500", "2.000", "4.0", "5.0"])
        self.assertEqual(lines[2].split(), ["1", "tcp", "block", "100000", "5.000", "0.400",
                                            "0.300", "0.200", "3.000", "11.0", "21.0"])
        self.assertEqual(lines[3].split(), ["4", "tcp", "block", "100000", "1.000", "5.000",
                                            "4.000", "1.000", "4.000", "1.5", "2.5"])
        every = self.run_script(path)
        self.assertEqual(len(every.stdout.splitlines()), 5)
        # The same from a gzip of the file.
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as z:
            z.write(f.read())
        self.assertEqual(self.run_script(path + ".gz").stdout, every.stdout)

    def test_a_file_that_is_not_a_bench_jsonl_is_named(self):
        path = self.write(["not json"])
        result = self.run_script(path)
        self.assertEqual(result.returncode, 2)
        self.assertTrue(result.stderr.startswith(f"bench_link_calls: {path}: not a readable "
                                                 "bench.jsonl"), result.stderr)
        empty = self.write([json.dumps({"kind": "bench"})])
        result = self.run_script(empty)
        self.assertEqual((result.returncode, result.stderr),
                         (2, f"bench_link_calls: {empty}: no runs with tuples\n"))


if __name__ == "__main__":
    unittest.main()
