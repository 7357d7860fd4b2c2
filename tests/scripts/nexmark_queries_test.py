#!/usr/bin/env python3
"""NEXMark queries on boreal, checked against the SQLite oracle.

Each test launches a query network of apps/examples/nexmark/ with `boreal launch` (every
node a local process), and compares the sink's CSV with what scripts/nexmark/oracle.py
computes from the same events, dumped by `boreal nexmark` (docs/nexmark.md). The oracle
shares no code with boreal's operators: it reads the CSV dump and answers in SQL.

    python3 tests/scripts/nexmark_queries_test.py BOREAL_BINARY [unittest args]

Covered: every query over tcp; two queries over fabric-msg and fabric-rma, and (as root)
with every node in its own network namespace; and one query at other frame sizes, wait
modes and placements, which must give the same rows.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "apps", "examples", "nexmark")
ORACLE = os.path.join(ROOT, "scripts", "nexmark", "oracle.py")
COMPARE = os.path.join(ROOT, "scripts", "nexmark", "compare.py")
BOREAL = None  # set from argv in main

# Enough events for every query to have work in every window: 400,000 events span 4 s of
# event time (two Q7 windows' worth of bids would need 20 s; one partial window is enough to
# check the rule), 8,000 persons, 24,000 auctions.
EVENTS = 400_000
QUERIES = ["q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"]
LAUNCH_TIMEOUT_S = 120


def run(cmd, cwd=None, timeout=LAUNCH_TIMEOUT_S):
    """Runs a command; returns (status, stdout + stderr)."""
    done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)
    return done.returncode, done.stdout


class NexmarkQueries(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="boreal-nexmark-")
        events = os.path.join(cls.dir, "events")
        status, out = run([BOREAL, "nexmark", "--events", str(EVENTS), "--out", events])
        if status != 0:
            raise RuntimeError("boreal nexmark failed:\n" + out)
        cls.expected = os.path.join(cls.dir, "expected")
        status, out = run([sys.executable, ORACLE, "--events", events, "--query", "all",
                           "--out-dir", cls.expected], timeout=600)
        if status != 0:
            raise RuntimeError("oracle.py failed:\n" + out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def launch(self, query, *flags, network=None):
        """Launches the query's network (or `network`, a spec dict) in a fresh directory and
        returns the path of its sink's CSV."""
        where = tempfile.mkdtemp(dir=self.dir)
        path = os.path.join(EXAMPLES, query + ".yaml")
        if network is not None:
            path = os.path.join(where, query + ".yaml")
            with open(path, "w") as f:
                yaml.safe_dump(network, f)
        # Namespaced nodes each have their own ports; loopback ones move to free ports.
        ports = [] if "--netns" in flags else ["--free-ports"]
        status, out = run([BOREAL, "launch", path, *ports, "--quiet", "--tuples", str(EVENTS),
                           *flags], cwd=where)
        self.assertEqual(status, 0, f"{query} {' '.join(flags)} failed:\n{out}")
        return os.path.join(where, "nexmark_%s.csv" % query)

    def assert_matches_oracle(self, query, actual):
        expected = os.path.join(self.expected, query + ".csv")
        status, out = run([sys.executable, COMPARE, expected, actual])
        self.assertEqual(status, 0, f"{query}: the sink's rows differ from the oracle's:\n{out}")
        return out

    def test_every_query_over_tcp(self):
        for query in QUERIES:
            with self.subTest(query=query):
                self.assert_matches_oracle(query, self.launch(query, "--medium", "tcp"))

    def test_the_reference_counts_over_two_million_events(self):
        # docs/nexmark.md section 7: the row counts of every query over events 0..1,999,999.
        reference = {"q0": 1_840_000, "q1": 1_840_000, "q2": 14_532, "q3": 11_515, "q4": 5,
                     "q5": 14, "q6": 15_486, "q7": 2, "q8": 119_613}
        for query, rows in reference.items():
            with self.subTest(query=query):
                where = tempfile.mkdtemp(dir=self.dir)
                status, out = run([BOREAL, "launch", os.path.join(EXAMPLES, query + ".yaml"),
                                   "--free-ports", "--quiet", "--tuples", "2000000"], cwd=where)
                self.assertEqual(status, 0, out)
                with open(os.path.join(where, "nexmark_%s.csv" % query)) as f:
                    self.assertEqual(sum(1 for _ in f) - 1, rows)

    def test_two_queries_over_the_fabric_media(self):
        for medium in ["fabric-msg", "fabric-rma"]:
            for query in ["q3", "q5"]:
                with self.subTest(medium=medium, query=query):
                    self.assert_matches_oracle(query, self.launch(query, "--medium", medium))

    def test_frame_sizes_wait_modes_and_placements_give_the_same_rows(self):
        # Q8 joins two streams and Q5 aggregates then picks per window: both depend on how
        # batches interleave, which these change.
        for query in ["q5", "q8"]:
            for flags in [("--batch-bytes", "256"), ("--wait", "busy"), ("--wait", "sleep"),
                          ("--wait", "adaptive", "--window", "2")]:
                with self.subTest(query=query, flags=flags):
                    self.assert_matches_oracle(query, self.launch(query, *flags))
            with open(os.path.join(EXAMPLES, query + ".yaml")) as f:
                network = yaml.safe_load(f)
            nodes = [n["name"] for n in network["nodes"]]
            # Every operator box on the source's node, then every one on the sink's node.
            for node in (nodes[0], nodes[-1]):
                moved = yaml.safe_load(yaml.safe_dump(network))
                for box in moved["boxes"]:
                    if box["type"] not in ("source", "sink"):
                        box["node"] = node
                with self.subTest(query=query, placement=node):
                    self.assert_matches_oracle(query, self.launch(query, network=moved))

    def test_two_queries_in_network_namespaces(self):
        if os.geteuid() != 0:
            self.skipTest("--netns needs root")
        status, out = run([BOREAL, "launch", "--help"])
        if "--netns" not in out:
            self.skipTest("this boreal has no --netns")
        for query in ["q3", "q7"]:
            with self.subTest(query=query):
                self.assert_matches_oracle(query, self.launch(query, "--netns"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: nexmark_queries_test.py BOREAL_BINARY [unittest args]")
    BOREAL = os.path.abspath(sys.argv.pop(1))
    unittest.main()
