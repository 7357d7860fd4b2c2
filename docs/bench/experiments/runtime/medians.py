"""Medians of the run summaries (the JSON lines of kind "run") in the files named on the
command line, grouped by file-name prefix (old_max, new_max, filter_max) and, for demos, wait."""
import json, statistics, sys, collections
groups = collections.defaultdict(list)
for path in sys.argv[1:]:
    prefix = path.rsplit('_', 1)[0]
    for line in open(path):
        j = json.loads(line)
        if j.get('kind') != 'run':
            continue
        key = prefix if 'max' in prefix else f"{prefix}/{j['wait']}"
        groups[key].append(j)
print(f"{'group':22} {'n':>2} {'tuples/s':>12} {'send us/t':>10} {'recv us/t':>10} {'mach us/t':>10} {'p99 us':>8} errors")
for key in sorted(groups):
    runs = groups[key]
    med = lambda f: statistics.median(f(r) for r in runs)
    print(f"{key:22} {len(runs):>2} {med(lambda r: r['tuples_per_s']):>12.0f} "
          f"{med(lambda r: r['cpu_us_per_tuple']['sender']):>10.4f} "
          f"{med(lambda r: r['cpu_us_per_tuple']['receiver']):>10.4f} "
          f"{med(lambda r: r['cpu_us_per_tuple']['machine']):>10.4f} "
          f"{med(lambda r: r['latency_us']['p99']):>8.0f} "
          f"{min(r['tuples_per_s'] for r in runs):>10.0f}..{max(r['tuples_per_s'] for r in runs):<10.0f} "
          f"{sum(len(r['errors']) for r in runs)}")
