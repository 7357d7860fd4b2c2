"""Machine CPU-us per tuple of the demo per wait mode, pooled over every pinned demo run in
the given output directories (demo.sh), old against new: median over all runs of each.
usage: python3 pooled.py OUT [OUT ...]"""
import glob, json, os, statistics, sys


def node(path):
    for line in open(path):
        j = json.loads(line)
        if j.get('kind') == 'node':
            return j


for mode in ['busy', 'block', 'sleep', 'backoff', 'adaptive']:
    med = {}
    for binary in ['old', 'new']:
        xs = []
        for out in sys.argv[1:]:
            for dst in glob.glob(os.path.join(out, f'{binary}_{mode}_dst_*.jsonl')):
                r = node(dst)
                xs.append(r['machine']['busy_cpu_s'] * 1e6 / r['tuples_received_measured'])
        med[binary] = (len(xs), statistics.median(xs))
    print(f"{mode:9} old {med['old'][1]:7.3f} ({med['old'][0]} runs)  new {med['new'][1]:7.3f} "
          f"({med['new'][0]} runs)  new/old {med['new'][1] / med['old'][1]:.3f}")
