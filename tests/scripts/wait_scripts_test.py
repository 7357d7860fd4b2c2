#!/usr/bin/env python3
"""Tests of scripts/wait_counts.py and scripts/wakeup_cost.py on a made-up bench.jsonl: the
wait modes asked for, in file order, discarded runs left out, a gzip read like the file, and a
bad file named."""

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")


def run_line(wait, tuples_per_s, sender_blocks, receiver_sleeps, cores, discarded=False):
    """One run of 1 s warm-up + 2 s measured."""
    bench = {"wait": wait, "rate_label": "10000"}
    if discarded:
        bench["discarded"] = "contaminated"
    ends = {
        "sender": {"sleeps": 0, "blocks": sender_blocks, "wakeups": sender_blocks // 2,
                   "timeouts": sender_blocks - sender_blocks // 2, "polls": 3 * sender_blocks,
                   "switches": 0},
        "receiver": {"sleeps": receiver_sleeps, "blocks": 0, "wakeups": 0, "timeouts": 0,
                     "polls": 2 * receiver_sleeps, "switches": 1},
    }
    links = [{"direction": "send", "stats": {"frames": 100, "write_calls": 150, "read_calls": 0}},
             {"direction": "recv", "stats": {"frames": 100, "write_calls": 0, "read_calls": 250,
                                             "unannounced_frames": 7}}]
    return json.dumps({
        "kind": "run", "bench": bench, "medium": "tcp", "wait": wait, "flush_us": 100,
        "offered_rate": 10000.0, "tuples_per_s": tuples_per_s, "duration_s": 2.0,
        "warmup_s": 1.0, "wait_stats": ends, "cores_used": {"machine": cores},
        "cpu_us_per_tuple": {"machine": 12.5, "sender": 6.25, "receiver": 5.0},
        "latency_us": {"p99": 180.4}, "links": links})


class WaitScripts(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="wait_scripts_test.")
        self.addCleanup(shutil.rmtree, self.dir)
        self.path = os.path.join(self.dir, "bench.jsonl")
        lines = [
            json.dumps({"kind": "bench"}),
            run_line("block", 10000.0, 3000, 0, 0.25),
            run_line("busy", 10000.0, 0, 0, 2.0),
            run_line("sleep", 0.0, 30, 600, 0.125),  # idle: no tuples
            run_line("adaptive", 9999.0, 1500, 1500, 0.5),
            run_line("block", 10000.0, 1, 1, 1.0, discarded=True),
        ]
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    def run_script(self, script, *args):
        result = subprocess.run([sys.executable, os.path.join(SCRIPTS, script), *args],
                                capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout, result.stderr

    def test_wakeup_cost_lists_each_kept_run_of_the_modes_asked_for(self):
        code, out, err = self.run_script("wakeup_cost.py", self.path)
        self.assertEqual((code, err), (0, ""))
        lines = out.splitlines()
        self.assertEqual(lines[0].split()[:4], ["medium", "wait", "tuples/s", "flush_us"])
        # block: 3000 blocks in 3 s = 1000/s; 0.25 cores over 1000 wake-ups/s = 250 µs each.
        self.assertEqual([line.split() for line in lines[1:]], [
            ["tcp", "block", "10000", "100", "1000", "0", "0.250", "250.0"],
            ["tcp", "sleep", "0", "100", "10", "200", "0.125", "595.2"],
            ["tcp", "adaptive", "9999", "100", "500", "500", "0.500", "500.0"],
        ])
        code, out, _ = self.run_script("wakeup_cost.py", self.path, "--waits", "busy")
        self.assertEqual(code, 0)
        self.assertEqual([line.split()[1] for line in out.splitlines()[1:]], ["busy"])

    def test_wait_counts_leaves_out_runs_without_tuples(self):
        code, out, err = self.run_script("wait_counts.py", self.path)
        self.assertEqual((code, err), (0, ""))
        lines = out.splitlines()
        self.assertEqual([line.split()[0] for line in lines], ["block", "adaptive"])
        self.assertEqual(lines[0],
                         "block    10000.0 0.01M cpu 12.500 (snd 6.250 rcv 5.000) p99 180 "
                         "| S sl 0 bl 3000 wk 1500 to 1500 polls 9000 sw 0 "
                         "| R sl 0 bl 0 wk 0 to 0 polls 0 sw 1 "
                         "| send frames 100 calls/frame 1.50 unannounced 0 "
                         "| recv frames 100 calls/frame 2.50 unannounced 7")

    def test_a_gzip_reads_like_the_file(self):
        with open(self.path, "rb") as f, gzip.open(self.path + ".gz", "wb") as z:
            z.write(f.read())
        for script in ("wait_counts.py", "wakeup_cost.py"):
            self.assertEqual(self.run_script(script, self.path + ".gz"),
                             self.run_script(script, self.path), script)

    def test_a_bad_file_is_named(self):
        bad = os.path.join(self.dir, "bad.jsonl")
        with open(bad, "w", encoding="utf-8") as f:
            f.write("not json\n")
        for script, tool in (("wait_counts.py", "wait_counts"), ("wakeup_cost.py", "wakeup_cost")):
            code, out, err = self.run_script(script, bad)
            self.assertEqual((code, out), (2, ""), script)
            self.assertTrue(err.startswith(f"{tool}: {bad}: not a readable bench.jsonl ("), err)
            code, _, err = self.run_script(script, os.path.join(self.dir, "missing.jsonl"))
            self.assertEqual(code, 2)
            self.assertIn("missing.jsonl: not a readable bench.jsonl", err)


if __name__ == "__main__":
    unittest.main()
