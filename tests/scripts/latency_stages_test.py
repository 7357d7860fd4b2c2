#!/usr/bin/env python3
"""Tests of scripts/latency_stages.py on a made-up bench.jsonl: medians per point and stage,
discarded runs left out, stages a medium does not time left out, and a bad file named."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "latency_stages.py")


def run_line(medium, committed, arrived, pickup, sink, e2e, discarded=False):
    bench = {"medium": medium, "wait": "busy", "rate_label": "10000"}
    if discarded:
        bench["discarded"] = "contaminated"
    stages = [{"node": "src", "box": "gen", "stage": "due_to_committed",
               "latency_us": {"p50": committed, "p99": committed * 10,
                                              "p999": committed * 100}}]
    if arrived is not None:
        for name, value in (("due_to_arrived", arrived), ("arrived_to_read", pickup),
                            ("read_to_sink", sink)):
            stages.append({"node": "dst", "box": "check", "stage": name,
                           "latency_us": {"p50": value, "p99": value * 10,
                                          "p999": value * 100}})
    return json.dumps({"kind": "run", "bench": bench, "latency_stages": stages,
                       "latency_us": {"p50": e2e, "p99": e2e * 10, "p999": e2e * 100}})


class LatencyStages(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="latency_stages_test.")
        self.addCleanup(shutil.rmtree, self.dir)

    def run_script(self, lines):
        path = os.path.join(self.dir, "bench.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True,
                              check=False)

    def test_medians_per_point_and_stage(self):
        out = self.run_script([
            json.dumps({"kind": "bench"}),
            run_line("tcp", 1.0, 3.0, 2.0, 0.2, 6.0),
            run_line("tcp", 1.2, 3.4, 3.0, 0.4, 7.0),
            run_line("tcp", 1.1, 3.2, 2.5, 0.3, 6.5),
            run_line("tcp", 90.0, 90.0, 90.0, 90.0, 99.0, discarded=True),
            run_line("fabric-msg", 1.0, None, None, None, 9.0),
        ])
        self.assertEqual(out.returncode, 0, out.stderr)
        rows = [line.split() for line in out.stdout.splitlines()]
        self.assertEqual(rows[0], ["medium", "wait", "rate", "stage", "p50", "us", "p99", "us",
                                   "p99.9", "us", "runs"])
        self.assertEqual(rows[1:], [
            ["tcp", "busy", "10000", "due_to_committed", "1.1", "11.0", "110.0", "3"],
            ["tcp", "busy", "10000", "due_to_arrived", "3.2", "32.0", "320.0", "3"],
            ["tcp", "busy", "10000", "arrived_to_read", "2.5", "25.0", "250.0", "3"],
            ["tcp", "busy", "10000", "read_to_sink", "0.3", "3.0", "30.0", "3"],
            ["tcp", "busy", "10000", "end_to_end", "6.5", "65.0", "650.0", "3"],
            ["fabric-msg", "busy", "10000", "due_to_committed", "1.0", "10.0", "100.0", "1"],
            ["fabric-msg", "busy", "10000", "end_to_end", "9.0", "90.0", "900.0", "1"],
        ])

    def test_a_file_that_is_not_a_bench_jsonl_is_named(self):
        out = self.run_script(["not json"])
        self.assertEqual(out.returncode, 2)
        self.assertIn("bench.jsonl: not a readable bench.jsonl", out.stderr)
        self.assertEqual(out.stdout, "")


if __name__ == "__main__":
    unittest.main()
