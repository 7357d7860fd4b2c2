#!/usr/bin/env python3
"""Live metrics of a running network, scraped over real HTTP while it streams.

`boreal launch --metrics-port` starts a sending and a receiving node as processes; each
serves Prometheus text at /metrics (docs/metrics.md). While the tuples flow, this scrapes
both with urllib and checks the content type, that the link's tuple counter is above zero
and grows between two scrapes, 404 for another path, and afterwards that the node reports
carry the ports. A second launch gives a fixed base port: node i must serve on base + i.

    python3 tests/scripts/metrics_scrape_test.py BOREAL_BINARY [unittest args]

Every launch is bounded in time; the launcher (and, if it will not stop, the nodes it
started) are stopped by PID whatever happens.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

from ports import free_port  # tests/scripts/ports.py

BOREAL = None  # set from argv in main

NETWORK = """\
name: scrape
schemas:
  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]
nodes:
  - {name: src, address: "tcp://127.0.0.1:7501"}
  - {name: dst, address: "tcp://127.0.0.1:7502"}
transport: {medium: tcp, wait: block}
boxes:
  - {name: gen, type: source, node: src, out: ticks, schema: tick, params: {rate: 20000, duration_s: %s, seed: 5}}
  - {name: check, type: sink, node: dst, in: ticks, schema: tick, params: {kind: check}}
"""

ANNOUNCE = re.compile(r"node '(\w+)': metrics on (http://\S+/metrics)")
SERIES = re.compile(r"^(\w+)\{(.*)\} (\S+)$")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
LAUNCH_LIMIT_S = 60


def scrape(url):
    """(content type, text) of one GET."""
    with urllib.request.urlopen(url, timeout=5) as reply:
        return reply.headers.get("Content-Type"), reply.read().decode()


def series(text, name, **labels):
    """The value of the series `name` whose labels include `labels`, or None."""
    for line in text.splitlines():
        match = SERIES.match(line)
        if not match or match.group(1) != name:
            continue
        have = dict(LABEL.findall(match.group(2)))
        if all(have.get(k) == v for k, v in labels.items()):
            return float(match.group(3))
    return None


def children_of(pid):
    """The PIDs of `pid`'s children (the nodes a launcher started), where /proc tells."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


class Launch:
    """`boreal launch` of NETWORK in `where`, its stderr read on a thread for the metrics URLs."""

    def __init__(self, where, duration_s, metrics_port):
        self.path = os.path.join(where, "scrape.yaml")
        with open(self.path, "w") as f:
            f.write(NETWORK % duration_s)
        self.jsonl = os.path.join(where, "run.jsonl")
        self.stdout = open(os.path.join(where, "stdout.txt"), "w")
        self.lines = []
        self.urls = {}
        self.proc = subprocess.Popen(
            [BOREAL, "launch", self.path, "--free-ports", "--quiet", "--timeout", str(LAUNCH_LIMIT_S),
             "--metrics-port", str(metrics_port), "--json", self.jsonl],
            stdout=self.stdout, stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            match = ANNOUNCE.search(line)
            if match:
                self.urls[match.group(1)] = match.group(2)

    def wait_for_urls(self, nodes, limit_s=20):
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and not all(n in self.urls for n in nodes):
            time.sleep(0.05)
        return all(n in self.urls for n in nodes)

    def finish(self, limit_s=LAUNCH_LIMIT_S + 15):
        """Waits for the launcher; returns its exit status."""
        status = self.proc.wait(timeout=limit_s)
        self.reader.join(timeout=5)
        return status

    def stop(self):
        """Stops whatever is still running, by PID: the launcher stops its nodes on SIGTERM;
        if it does not, the nodes and the launcher are killed."""
        if self.proc.poll() is None:
            nodes = children_of(self.proc.pid)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                for pid in nodes:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.proc.kill()
                self.proc.wait()
        self.stdout.close()
        self.proc.stderr.close()

    def node_reports(self):
        reports = {}
        with open(self.jsonl) as f:
            for line in f:
                entry = json.loads(line)
                if entry.get("kind") == "node":
                    reports[entry["node"]] = entry
        return reports


def port_of(url):
    return int(re.search(r":(\d+)/metrics$", url).group(1))


class MetricsScrape(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="boreal-metrics-")
        self.launch = None

    def tearDown(self):
        if self.launch is not None:
            self.launch.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_link_counters_grow_between_scrapes_while_the_network_runs(self):
        self.launch = Launch(self.dir, duration_s=8, metrics_port=0)
        self.assertTrue(self.launch.wait_for_urls(["src", "dst"]), "".join(self.launch.lines))
        dst = self.launch.urls["dst"]
        src = self.launch.urls["src"]

        # The first scrape that sees tuples, then one a second later.
        first = None
        deadline = time.monotonic() + 15
        while first is None and time.monotonic() < deadline:
            content_type, text = scrape(dst)
            value = series(text, "boreal_link_tuples_total", node="dst", direction="recv", stream="ticks")
            if value is not None and value > 0:
                first = value
            else:
                time.sleep(0.1)
        self.assertIsNotNone(first, "no tuples seen on dst's link:\n" + text)
        self.assertEqual(content_type, "text/plain; version=0.0.4")
        self.assertIn("# TYPE boreal_link_tuples_total counter", text)
        time.sleep(1.0)
        _, text = scrape(dst)
        second = series(text, "boreal_link_tuples_total", node="dst", direction="recv", stream="ticks")
        self.assertIsNotNone(second, text)
        self.assertGreater(second, first, "the counter did not grow while the network ran")
        self.assertEqual(series(text, "boreal_link_tuples_total", link="src->dst:ticks"), second)
        self.assertGreater(series(text, "boreal_process_resident_memory_bytes", node="dst"), 0)

        _, text = scrape(src)
        self.assertGreater(series(text, "boreal_link_tuples_total", node="src", direction="send"), 0)
        self.assertGreater(series(text, "boreal_node_tuples_sent_total", node="src"), 0)
        with self.assertRaises(urllib.error.HTTPError) as missing:
            scrape(dst.replace("/metrics", "/nope"))
        self.assertEqual(missing.exception.code, 404)

        self.assertEqual(self.launch.finish(), 0, "".join(self.launch.lines))
        reports = self.launch.node_reports()
        self.assertEqual(reports["dst"].get("metrics_port"), port_of(dst))
        self.assertEqual(reports["src"].get("metrics_port"), port_of(src))
        # The servers went with their nodes.
        with self.assertRaises(OSError):
            scrape(dst)

    def test_a_base_port_gives_node_i_the_port_base_plus_i(self):
        base = free_port(2)  # nodes src and dst serve on base and base + 1
        self.launch = Launch(self.dir, duration_s=1, metrics_port=base)
        self.assertTrue(self.launch.wait_for_urls(["src", "dst"]), "".join(self.launch.lines))
        self.assertEqual(port_of(self.launch.urls["src"]), base)      # node 0 of the file
        self.assertEqual(port_of(self.launch.urls["dst"]), base + 1)  # node 1
        self.assertEqual(self.launch.finish(), 0, "".join(self.launch.lines))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: metrics_scrape_test.py BOREAL_BINARY [unittest args]")
    BOREAL = sys.argv.pop(1)
    unittest.main()
