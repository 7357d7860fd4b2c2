#!/usr/bin/env python3
"""Faults: a receiving node killed and restarted, its connection reset, or its network link
taken down and up, loses and repeats nothing.

    python3 tests/scripts/faults_test.py BOREAL_BINARY [unittest args]

Two nodes over tcp: `src` generates numbered tuples, `dst` (which keeps a checkpoint,
docs/faults.md) maps them and writes them with a `check` sink, which also counts loss,
duplicates and disorder by sequence number and takes the CRC-32C of everything it receives.

The reference is a run without faults (`boreal launch`). The fault runs start each node with
`boreal run FILE --node NAME`, SIGKILL `dst` once its checkpoint exists and its CSV has grown,
start it again, and let both finish: the CSV must equal the reference byte for byte, the sink
must report nothing lost, duplicated or out of order, its checksum must equal the source's,
and the sending link must have reconnected. Every process is bounded by a timeout and killed
by its PID if it outlives it.
"""

import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from ports import free_port  # tests/scripts/ports.py

BOREAL = None  # set from argv in main
TUPLES = 150_000
RATE = 50_000  # tuples/s: the run takes three seconds
RUN_TIMEOUT_S = 60

NETWORK = """\
name: restart
schemas:
  tick: [{{seq: i64}}, {{key: i64}}, {{value: f64}}, {{pad: str16}}]
nodes:
  - {{name: src, address: "tcp://127.0.0.1:{src_port}"}}
  - {{name: dst, address: "tcp://127.0.0.1:{dst_port}", checkpoint: "{checkpoint}"}}
transport: {{medium: tcp, wait: block, latency_budget_us: 2000}}
boxes:
  - name: gen
    type: source
    node: src
    out: ticks
    schema: tick
    params: {{rate: {rate}, tuples: {tuples}, seed: 5, keys: 10,
              values: [{{field: value, min: 0, max: 1000}}]}}
  - name: twice
    type: map
    node: dst
    in: ticks
    out: doubled
    params:
      fields:
        - {{name: seq, expression: seq}}
        - {{name: key, expression: key}}
        - {{name: value, expression: value * 2}}
  - name: out
    type: sink
    node: dst
    in: doubled
    params: {{kind: check, output: "{output}"}}
"""


# Three nodes: the middle one, which keeps a checkpoint, runs the map and is the one killed;
# the receiving one keeps none.
NETWORK3 = NETWORK.replace(
    """  - {{name: dst, address: "tcp://127.0.0.1:{dst_port}", checkpoint: "{checkpoint}"}}\n""",
    """  - {{name: mid, address: "tcp://127.0.0.1:{mid_port}", checkpoint: "{checkpoint}"}}\n"""
    """  - {{name: dst, address: "tcp://127.0.0.1:{dst_port}"}}\n""").replace(
    "    node: dst\n    in: ticks\n", "    node: mid\n    in: ticks\n").replace(
    "name: restart\n", "name: relay\n")

# The middle node runs a stateful box: a sliding count window per key, whose state the
# checkpoint saves (ops::Box::save_state).
NETWORK3_AGGREGATE = NETWORK3.replace("""\
  - name: out
    type: sink
    node: dst
    in: doubled
    params: {{kind: check, output: "{output}"}}
""", """\
  - name: per_key
    type: aggregate
    node: mid
    in: doubled
    out: stats
    params:
      group_by: key
      window: {{kind: count, size: 400, slide: 100}}
      aggregates:
        - {{function: count, as: n}}
        - {{function: sum, field: value, as: total}}
        - {{function: max, field: seq, as: last_seq}}
  - name: out
    type: sink
    node: dst
    in: stats
    params: {{kind: csv, output: "{output}"}}
""")

# The middle node runs a join of the even and the odd tuples of its input (split by a filter):
# each even seq meets the odd ones of its key up to 20 away. The checkpoint saves the tuples
# each side of the join holds.
NETWORK3_JOIN = NETWORK3.replace("""\
  - name: out
    type: sink
    node: dst
    in: doubled
    params: {{kind: check, output: "{output}"}}
""", """\
  - name: halves
    type: filter
    node: mid
    in: doubled
    out: [evens, odds]
    params: {{predicate: "seq % 2 == 0", emit_rejected: true}}
  - name: pairs
    type: join
    node: mid
    in: [evens, odds]
    out: paired
    params: {{left_time: seq, right_time: seq, window: 20, equal: [{{left: key, right: key}}]}}
  - name: out
    type: sink
    node: dst
    in: paired
    params: {{kind: csv, output: "{output}"}}
""")


def node_report(path):
    """The {"kind": "node"} object of a JSON-lines file."""
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                obj = json.loads(line)
                if obj.get("kind") == "node":
                    return obj
    raise AssertionError("no node report in " + path)


class Node:
    """A `boreal run` process, killed by its PID if it outlives the test."""

    def __init__(self, network, name, json_path, log_path):
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen([BOREAL, "run", network, "--node", name, "--json", json_path],
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def wait(self, timeout=RUN_TIMEOUT_S):
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.stop()

    def kill(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if not self.log.closed:
            self.log.close()


class FaultRun(unittest.TestCase):
    """What the fault tests share: a scratch directory, the network, the reference run."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="boreal-faults-")
        self.nodes = []

    def tearDown(self):
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    template = NETWORK

    def network(self, tag):
        """Writes the network file for one run; returns (file, csv output, checkpoint)."""
        output = os.path.join(self.dir, tag + ".csv")
        checkpoint = os.path.join(self.dir, tag + ".checkpoint")
        path = os.path.join(self.dir, tag + ".yaml")
        with open(path, "w") as f:
            f.write(self.template.format(src_port=free_port(), mid_port=free_port(),
                                         dst_port=free_port(), checkpoint=checkpoint,
                                         output=output, rate=RATE, tuples=TUPLES))
        return path, output, checkpoint

    def start(self, network, name, tag):
        node = Node(network, name, os.path.join(self.dir, tag + ".json"),
                    os.path.join(self.dir, tag + ".log"))
        self.nodes.append(node)
        return node

    def log_of(self, tag):
        with open(os.path.join(self.dir, tag + ".log")) as f:
            return f.read()

    def all_logs(self):
        """The end of every node's log, for a failure message."""
        text = ""
        for name in sorted(f for f in os.listdir(self.dir) if f.endswith(".log")):
            text += "---- %s\n%s\n" % (name, self.log_of(name[:-4])[-4000:])
        return text

    def reference(self):
        """The CSV and the receiver's report of a run without faults."""
        network, output, checkpoint = self.network("reference")
        reports = os.path.join(self.dir, "reference.json")
        done = subprocess.run([BOREAL, "launch", network, "--quiet", "--json", reports],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=RUN_TIMEOUT_S)
        self.assertEqual(done.returncode, 0, done.stdout)
        self.assertFalse(os.path.exists(checkpoint), "a finished run leaves no checkpoint")
        with open(output, "rb") as f:
            csv = f.read()
        with open(reports) as f:
            [receiver] = [r for r in map(json.loads, f)
                          if r.get("kind") == "node" and r["node"] == "dst"]
        return csv, receiver

    def canonical(self, csv):
        """The CSV as compared with the reference: as written, unless a test says otherwise."""
        return csv

    def kill_and_restart(self, tag, nodes, victim, expected):
        """Starts `nodes` (receivers first) with `boreal run`, SIGKILLs `victim` a third of
        the way through once its checkpoint exists, starts it again as VICTIM2, and waits for
        every node to finish; checks the CSV against `expected` (both canonical()) and that no
        checkpoint is left. Returns the paths of the CSV output and of the checkpoint."""
        network, output, checkpoint = self.network(tag)
        running = {name: self.start(network, name, name + ("1" if name == victim else ""))
                   for name in nodes}
        self.wait_until("a checkpoint and a third of the output",
                        lambda: os.path.exists(checkpoint)
                        and os.path.exists(output)
                        and os.path.getsize(output) > len(expected) // 3)
        running[victim].kill()
        time.sleep(0.3)
        running[victim] = self.start(network, victim, victim + "2")
        for name, node in running.items():
            tag_of = name + ("2" if name == victim else "")
            try:
                status = node.wait()
            except subprocess.TimeoutExpired:
                self.fail("node '%s' had not finished after %d s; the nodes' logs:\n%s"
                          % (tag_of, RUN_TIMEOUT_S, self.all_logs()))
            self.assertEqual(status, 0, self.log_of(tag_of))
        self.assertIn("node '%s': resuming from checkpoint %s (" % (victim, checkpoint),
                      self.log_of(victim + "2"))
        with open(output, "rb") as f:
            got = f.read()
        self.assertEqual(len(got.splitlines()), len(expected.splitlines()))
        self.assertTrue(self.canonical(got) == self.canonical(expected),
                        "the CSV differs from the run without faults")
        self.assertEqual([f for f in os.listdir(self.dir) if f.startswith(tag + ".checkpoint")],
                         [], "a finished run leaves no checkpoint")
        return output, checkpoint

    def assert_received_everything(self, receiver, reference):
        self.assertEqual(receiver["errors"], [])
        self.assertEqual((receiver["lost"], receiver["duplicated"], receiver["out_of_order"]),
                         (0, 0, 0))
        self.assertEqual(receiver["tuples_received"], reference["tuples_received"])
        # The sink's checksum of everything it received runs on across a restart.
        self.assertEqual(receiver["checksum_received"], reference["checksum_received"])

    def wait_until(self, what, condition, timeout=20):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                self.fail("timed out waiting for " + what)
            time.sleep(0.02)


class ReceiverRestart(FaultRun):
    def test_killed_receiver_resumes_from_its_checkpoint(self):
        expected, reference = self.reference()
        self.kill_and_restart("fault", ["dst", "src"], "dst", expected)
        self.assertIn("(ticks after frame ", self.log_of("dst2"))
        receiver = node_report(os.path.join(self.dir, "dst2.json"))
        self.assert_received_everything(receiver, reference)
        sender = node_report(os.path.join(self.dir, "src.json"))
        self.assertEqual(sender["errors"], [])
        [link] = [l for l in sender["links"] if l["direction"] == "send"]
        self.assertEqual(link["state"], "finished")
        self.assertEqual(link["stats"]["reconnects"], 1)
        self.assertEqual(link["stats"]["tuples"], TUPLES)


class MiddleRestart(FaultRun):
    """The middle node of three, which keeps a checkpoint, is killed and started again: it
    resumes its input after the checkpoint, and its output (held until a checkpoint holds it,
    docs/faults.md) carries on where the receiver's acknowledgements say."""

    template = NETWORK3

    def test_killed_middle_node_resumes_from_its_checkpoint(self):
        expected, reference = self.reference()
        self.kill_and_restart("middle", ["dst", "mid", "src"], "mid", expected)
        receiver = node_report(os.path.join(self.dir, "dst.json"))
        self.assert_received_everything(receiver, reference)
        [link] = [l for l in receiver["links"] if l["direction"] == "recv"]
        self.assertEqual(link["stats"]["reconnects"], 1)
        self.assertEqual(node_report(os.path.join(self.dir, "mid2.json"))["errors"], [])


class MiddleRestartWithState(FaultRun):
    """As MiddleRestart, with a windowed aggregate on the middle node: its windows survive."""

    template = NETWORK3_AGGREGATE

    def test_killed_aggregating_node_resumes_its_windows(self):
        expected, reference = self.reference()
        self.assertGreater(len(expected.splitlines()), 1000)
        self.kill_and_restart("aggregate", ["dst", "mid", "src"], "mid", expected)
        receiver = node_report(os.path.join(self.dir, "dst.json"))
        self.assertEqual(receiver["errors"], [])
        self.assertEqual(receiver["tuples_received"], reference["tuples_received"])


class MiddleRestartWithJoin(FaultRun):
    """As MiddleRestart, with a join on the middle node: the tuples it holds survive.

    A join emits a pair when the second of its tuples arrives, so its output order follows how
    its two inputs interleave, and that follows how the source's frames were cut (by time, not
    by count): the filter hands each frame's evens and odds to the join as two batches. Two
    runs, with or without a fault, cut them differently. The set of rows does not depend on it
    (ops/join.hpp), so the rows are compared sorted, the header first."""

    template = NETWORK3_JOIN

    def canonical(self, csv):
        header, _, rows = csv.partition(b"\n")
        return header + b"\n" + b"".join(sorted(rows.splitlines(keepends=True)))

    def test_killed_joining_node_resumes_its_stored_tuples(self):
        expected, reference = self.reference()
        self.assertGreater(len(expected.splitlines()), TUPLES // 2)
        output, _ = self.kill_and_restart("join", ["dst", "mid", "src"], "mid", expected)
        with open(output, "rb") as f:
            got = collections.Counter(f.read().splitlines())
        want = collections.Counter(expected.splitlines())
        lost, duplicated = want - got, got - want
        self.assertEqual((sum(lost.values()), sum(duplicated.values())), (0, 0),
                         "lost %s, duplicated %s" % (list(lost)[:3], list(duplicated)[:3]))
        receiver = node_report(os.path.join(self.dir, "dst.json"))
        self.assertEqual(receiver["errors"], [])
        self.assertEqual(receiver["tuples_received"], reference["tuples_received"])
        self.assertEqual(node_report(os.path.join(self.dir, "mid2.json"))["errors"], [])


def over(medium, template):
    """`template` with its streams over a libfabric medium (the tcp;ofi_rxm provider)."""
    return template.replace("transport: {{medium: tcp,",
                            'transport: {{medium: %s, provider: "tcp;ofi_rxm",' % medium)


class ReceiverRestartOverFabricRma(ReceiverRestart):
    """ReceiverRestart with the stream over fabric-rma: the sender notices the lost receiver
    (silence or a failed write), opens a new endpoint and replays into the restarted node's
    ring from where its checkpoint resumes."""

    template = over("fabric-rma", NETWORK)


class MiddleRestartOverFabricMsg(MiddleRestart):
    """MiddleRestart with both streams over fabric-msg: the restarted middle node's output,
    with its old sender id, is taken back by the receiving node, which drops what it had."""

    template = over("fabric-msg", NETWORK3)


class ConnectionResets(FaultRun):
    """`ss -K` aborts the link's connection under load (the kernel resets it) four times."""

    def test_reset_connections_lose_and_repeat_nothing(self):
        if os.geteuid() != 0 or shutil.which("ss") is None:
            self.skipTest("needs root and ss (iproute2) to reset connections")
        expected, reference = self.reference()
        network, output, checkpoint = self.network("resets")
        with open(network) as f:
            dst_port = f.read().split("tcp://127.0.0.1:")[2].split('"')[0]
        reports = os.path.join(self.dir, "resets.json")
        log = open(os.path.join(self.dir, "resets.log"), "w")
        launch = subprocess.Popen([BOREAL, "launch", network, "--quiet", "--json", reports],
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            self.wait_until("output", lambda: os.path.exists(output)
                            and os.path.getsize(output) > len(expected) // 5)
            kills = 0
            for _ in range(4):
                done = subprocess.run(["ss", "-K", "dport", "=", ":" + dst_port],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                kills += done.stdout.count("ESTAB")
                time.sleep(0.4)
            self.assertEqual(launch.wait(timeout=RUN_TIMEOUT_S), 0, self.log_of("resets"))
        finally:
            if launch.poll() is None:
                os.kill(launch.pid, signal.SIGKILL)
                launch.wait()
            log.close()
        self.assertGreaterEqual(kills, 1)
        with open(output, "rb") as f:
            self.assertTrue(f.read() == expected, "the CSV differs from the run without faults")
        with open(reports) as f:
            nodes = {r["node"]: r for r in map(json.loads, f) if r.get("kind") == "node"}
        receiver, sender = nodes["dst"], nodes["src"]
        self.assert_received_everything(receiver, reference)
        self.assertEqual(sender["errors"], [])
        [link] = [l for l in sender["links"] if l["direction"] == "send"]
        self.assertEqual(link["stats"]["reconnects"], kills)


class LinkDownUp(FaultRun):
    """With every node in a network namespace (`boreal launch --netns`), the receiving node's
    veth goes down for 1.5 s under load and comes back."""

    def test_link_down_and_up_loses_and_repeats_nothing(self):
        if os.geteuid() != 0 or shutil.which("ip") is None:
            self.skipTest("needs root and ip (iproute2) for network namespaces")
        expected, reference = self.reference()
        network, output, checkpoint = self.network("netns")
        reports = os.path.join(self.dir, "netns.json")
        log = open(os.path.join(self.dir, "netns.log"), "w")
        launch = subprocess.Popen([BOREAL, "launch", network, "--netns", "--quiet", "--json",
                                   reports], stdout=log, stderr=subprocess.STDOUT)
        # The launcher names node i's namespace boreal-<its pid>-n<i> (apps/src/launch/netns.cpp).
        namespace = "boreal-%d-n1" % launch.pid
        try:
            self.wait_until("output", lambda: os.path.exists(output)
                            and os.path.getsize(output) > len(expected) // 5)
            for state in ("down", "up"):
                subprocess.run(["ip", "-n", namespace, "link", "set", "eth0", state], check=True)
                if state == "down":
                    time.sleep(1.5)
            self.assertEqual(launch.wait(timeout=RUN_TIMEOUT_S), 0, self.log_of("netns"))
        finally:
            if launch.poll() is None:
                os.kill(launch.pid, signal.SIGKILL)
                launch.wait()
            log.close()
        with open(output, "rb") as f:
            self.assertTrue(f.read() == expected, "the CSV differs from the run without faults")
        with open(reports) as f:
            nodes = {r["node"]: r for r in map(json.loads, f) if r.get("kind") == "node"}
        self.assert_received_everything(nodes["dst"], reference)
        self.assertFalse(os.path.exists(checkpoint))


def main():
    global BOREAL
    if len(sys.argv) < 2:
        sys.exit("usage: faults_test.py BOREAL_BINARY [unittest args]")
    BOREAL = os.path.abspath(sys.argv.pop(1))
    unittest.main()


if __name__ == "__main__":
    main()
