"""Median items/s per benchmark, old and new, from run.sh's output. usage: python3 medians.py OUT"""
import glob, json, os, statistics, sys
from collections import defaultdict

rates = defaultdict(lambda: defaultdict(list))
for path in glob.glob(os.path.join(sys.argv[1], '*.json')):
    side = os.path.basename(path).split('_')[0]
    for b in json.load(open(path))['benchmarks']:
        rates[b['name']][side].append(b['items_per_second'])
print(f"{'benchmark':34} {'old M/s':>9} {'new M/s':>9} {'new/old':>8}  runs")
for name in sorted(rates):
    old, new = statistics.median(rates[name]['old']), statistics.median(rates[name]['new'])
    print(f"{name:34} {old / 1e6:9.1f} {new / 1e6:9.1f} {new / old:8.2f}  {len(rates[name]['new'])}")
