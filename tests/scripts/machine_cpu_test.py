#!/usr/bin/env python3
"""The machine figure leaves other people's CPU out (docs/measurement.md §2).

`cpu_us_per_tuple.machine` is the machine's busy time less every user-space process that is
not part of the run; `machine_raw` keeps them. This launches the two-node demo at 200 k
tuples/s five times on a quiet machine and five times beside a CPU-burning process (a niced
busy loop on a CPU of its own, so that it takes idle CPU rather than the nodes'), the two
kinds alternating, and checks, on the medians:

- quiet runs are not contaminated; runs beside the burner are, with the burner named among
  `other_processes` and at least 0.8 of a core of other load;
- the corrected machine figure beside the burner is within 10 % of the quiet one, and the
  raw one is not (the burner's core is in it): the median, over the five pairs, of each run
  beside the burner against the quiet run just before it;
- an outside measurement agrees with the corrected figure within 5 %: this script samples
  /proc itself every 100 ms while the runs beside the burner stream, and over the steady
  middle of each run takes the machine's busy time (from /proc/stat's idle) less every
  user process but the launcher and its children (the nodes), in cores, against the
  summary's `cores_used.machine`. It also prints what the run's processes and the kernel's
  threads hold in their own counters: about 0.1 core less on the 2-vCPU VM this was written
  on, busy time that no process is charged with (interrupt work done while a CPU idled among
  it), which is why the figure is the machine's less others', not a sum of processes.

    python3 tests/scripts/machine_cpu_test.py BOREAL_BINARY [unittest args]

It measures CPU, so ctest runs it alone (RUN_SERIAL). Every launch is bounded (--timeout)
and the burner is stopped by PID whatever happens.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import unittest

BOREAL = None  # set from argv in main
DEMO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apps", "examples", "demo.yaml")
RATE = 200000
WARMUP_S = 1.0
DURATION_S = 4.0
REPEATS = 5
TICKS = os.sysconf("SC_CLK_TCK")
# The nodes (and the launcher) on the first CPU, the burner on the others, in every run: a
# (v)CPU that never idles makes the nodes' wake-ups on it cheaper: an earlier version of this
# test, with the burner unpinned, saw the machine figure fall beside it (the machine changed,
# not the measure). Pinned, the nodes' CPU idles alike in both kinds of run.
ALL_CPUS = sorted(os.sched_getaffinity(0))
NODE_CPUS = set(ALL_CPUS[:1])
BURNER_CPUS = set(ALL_CPUS[1:])
PF_KTHREAD = 0x00200000


def proc_stat():
    """(idle + iowait, irq + softirq) in ticks, from /proc/stat's aggregate line."""
    with open("/proc/stat", encoding="ascii") as f:
        cols = [int(x) for x in f.readline().split()[1:]] + [0] * 10
    return cols[3] + cols[4], cols[5] + cols[6]


def processes():
    """pid -> (ppid, is_kernel_thread, utime + stime in ticks) for every process now."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue  # exited meanwhile
        fields = text[text.rfind(")") + 2:].split()  # from field 3, state
        out[int(name)] = (int(fields[1]), bool(int(fields[6]) & PF_KTHREAD),
                          int(fields[11]) + int(fields[12]))
    return out


class OutsideSampler(threading.Thread):
    """Samples /proc every 100 ms until stopped: (time, /proc/stat, processes)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples = []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            stat = proc_stat()
            self.samples.append((time.monotonic(), stat, processes()))
            self.done.wait(0.1)

    def run_cores(self, launcher_pid, start, end):
        """Between the samples nearest to start and end, in cores: the machine's busy time
        less every user process but the launcher and its children (the nodes), as this script
        sees it; and, for the record, what the run's processes and the kernel's threads hold
        in their own counters, and the irq + softirq columns."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2:
            return None
        (t0, stat0, before), (t1, stat1, after) = inside[0], inside[-1]
        wall = t1 - t0
        busy = os.cpu_count() - (stat1[0] - stat0[0]) / TICKS / wall
        others = processes_held = 0
        for pid, (ppid, kernel, ticks) in after.items():
            was = before.get(pid)
            used = (ticks - (was[2] if was and was[0] == ppid else 0)) / TICKS / wall
            if kernel or pid == launcher_pid or ppid == launcher_pid:
                processes_held += used
            else:
                others += used
        return {"run": busy - others, "busy": busy, "held_by_run_and_kernel_threads": processes_held,
                "irq_softirq": (stat1[1] - stat0[1]) / TICKS / wall}


def launch(where, label, sampler=None):
    path = os.path.join(where, f"{label}.jsonl")
    command = [BOREAL, "launch", DEMO, "--free-ports", "--quiet", "--rate", str(RATE),
               "--warmup", str(WARMUP_S), "--duration", str(DURATION_S), "--timeout", "40",
               "--json", path]
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, NODE_CPUS))
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        raise AssertionError(f"boreal launch did not end within 60 s\n{stderr}")
    if proc.returncode != 0:
        raise AssertionError(f"boreal launch exited {proc.returncode}\n{stdout}\n{stderr}")
    with open(path, encoding="utf-8") as f:
        runs = [json.loads(line) for line in f if '"kind":"run"' in line.replace(" ", "")]
    if len(runs) != 1:
        raise AssertionError(f"expected one run line in {path}, got {len(runs)}")
    run = runs[0]
    outside = None
    if sampler is not None:
        # The steady middle: after the warm-up (and the nodes' start-up), before the end.
        outside = sampler.run_cores(proc.pid, started + WARMUP_S + 0.8, started + WARMUP_S + DURATION_S - 0.2)
    return run, outside


class MachineCpu(unittest.TestCase):
    @unittest.skipIf(len(ALL_CPUS) < 2, "needs two CPUs: one for the nodes, one for the burner")
    def test_other_load_is_left_out_and_an_outside_sampler_agrees(self):
        with tempfile.TemporaryDirectory(prefix="boreal-machine-cpu-") as where:
            # Quiet runs and runs beside the burner alternate, so that the machine's own drift
            # (its speed wanders by 10 % from one half-minute to the next here) falls on both.
            quiet, beside, stray = [], [], []
            sampler = OutsideSampler()
            sampler.start()
            burner = None
            try:
                for i in range(REPEATS):
                    for attempt in range(3):  # a stray process on a shared host: run again
                        run, _ = launch(where, f"quiet{i}.{attempt}")
                        if not run["contaminated"]:
                            quiet.append(run)
                            break
                        stray.append(run["other_processes"])
                    burner = subprocess.Popen([sys.executable, "-c", "import os\nos.nice(19)\nwhile True: pass"],
                                              preexec_fn=lambda: os.sched_setaffinity(0, BURNER_CPUS))
                    time.sleep(0.3)
                    beside.append(launch(where, f"burner{i}", sampler) + (burner.pid,))
                    burner.terminate()
                    burner.wait(timeout=10)
            finally:
                sampler.done.set()
                if burner is not None and burner.poll() is None:
                    burner.kill()
                    burner.wait(timeout=10)
                sampler.join(timeout=10)
            self.assertEqual(len(quiet), REPEATS, "the machine was never quiet: " + json.dumps(stray))

            report = "\nquiet: " + json.dumps([(r["cpu_us_per_tuple"], r["cores_used"]) for r in quiet]) + \
                     "\nbeside the burner: " + json.dumps([(r["cpu_us_per_tuple"], r["cores_used"],
                                                            r["other_processes"], o) for r, o, _ in beside])
            for run, _, pid in beside:
                self.assertTrue(run["contaminated"], report)
                self.assertGreaterEqual(run["cores_used"]["other"], 0.8, report)
                self.assertTrue(run["other_processes"][0].startswith(f"python3 ({pid}) "), report)
                self.assertEqual(run["tuples_received"], run["tuples_sent"], report)

            def median(runs, key):
                return statistics.median(r["cpu_us_per_tuple"][key] for r in runs)

            quiet_machine = median(quiet, "machine")
            beside_machine = median([r for r, _, _ in beside], "machine")
            beside_raw = median([r for r, _, _ in beside], "machine_raw")
            # Each run beside the burner against the quiet run just before it: the machine's
            # speed drifts over the minute the test takes (a median of all quiet runs against
            # a median of all the others was once 14.6 % apart with nothing wrong), and a pair
            # of neighbours shares most of the drift. The medians of the pairs' ratios:
            def paired(key):
                return statistics.median(b["cpu_us_per_tuple"][key] / q["cpu_us_per_tuple"]["machine"]
                                         for q, (b, _, _) in zip(quiet, beside))
            corrected, raw = paired("machine"), paired("machine_raw")
            report += f"\npaired ratios to the quiet run before: corrected {corrected:.3f}, raw {raw:.3f}"
            self.assertLessEqual(abs(corrected - 1.0), 0.10, report)
            self.assertGreater(raw, 1.10, report)

            ratios = [outside["run"] / run["cores_used"]["machine"] for run, outside, _ in beside if outside]
            self.assertEqual(len(ratios), REPEATS, report)
            self.assertLessEqual(abs(statistics.median(ratios) - 1.0), 0.05, report + f"\nratios {ratios}")
            print(f"\nmachine CPU-us/tuple: quiet {quiet_machine:.3f}, beside a burner {beside_machine:.3f} "
                  f"(raw {beside_raw:.3f}; paired ratios {corrected:.3f}, raw {raw:.3f}); outside / inside cores: "
                  + ", ".join(f"{r:.3f}" for r in ratios) + "; outside, in cores: "
                  + json.dumps([o for _, o, _ in beside]), file=sys.stderr)


def main():
    global BOREAL
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    BOREAL = os.path.abspath(sys.argv[1])
    return 0 if unittest.main(argv=[sys.argv[0]] + sys.argv[2:], exit=False).result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
