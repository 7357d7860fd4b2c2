"""Medians of the pinned runs in OUT (max.sh, demo.sh): per-tuple CPU from the node reports.
usage: python3 medians.py OUT"""
import json, statistics, sys, glob, os

out = sys.argv[1]

def node(path):
    for line in open(path):
        j = json.loads(line)
        if j.get('kind') == 'node':
            return j

def runs(prefix):
    rows = []
    for dst in sorted(glob.glob(os.path.join(out, prefix + '_dst_*.jsonl'))):
        src = dst.replace('_dst_', '_src_')
        r, s = node(dst), node(src)
        n = r['tuples_received_measured']
        rows.append({'rate': n / r['window_s'], 'send': s['process_cpu_s'] * 1e6 / n,
                     'recv': r['process_cpu_s'] * 1e6 / n,
                     'machine': r['machine']['busy_cpu_s'] * 1e6 / n,
                     'p99': r['latency_us']['p99'], 'bad': r['lost'] + r['duplicated'] + r['out_of_order']})
    return rows

def line(label, rows):
    med = lambda k: statistics.median(x[k] for x in rows)
    return (f"{label:18} {len(rows):2} {med('rate') / 1e6:9.2f} M ({min(x['rate'] for x in rows) / 1e6:.1f}.."
            f"{max(x['rate'] for x in rows) / 1e6:.1f}) send {med('send'):.4f} recv {med('recv'):.4f} "
            f"machine {med('machine'):.4f} p99 {med('p99'):.0f} us, lost+dup+ooo {sum(x['bad'] for x in rows)}")

print("maximum, 20 M tuples (tuples/s, CPU-us per tuple):")
for label in ('old', 'new', 'filter'):
    if glob.glob(os.path.join(out, label + '_dst_*.jsonl')):
        print(line(label, runs(label)))
print("demo network, 100 k tuples/s, 3 s:")
for mode in ('busy', 'block', 'sleep', 'backoff', 'adaptive'):
    for label in ('old', 'new'):
        rows = runs(f'{label}_{mode}')
        if rows:
            print(line(f'{mode} {label}', rows))
