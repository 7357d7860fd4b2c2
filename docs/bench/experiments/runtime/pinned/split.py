# Pinned demo at 100 k tuples/s: user and system CPU of each node (wait4 rusage), old and new
# binaries interleaved. usage: python3 split.py OLD NEW [mode] [reps]   (from any directory)
import os, subprocess, sys, time, statistics
OLD, NEW = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else "adaptive"
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 5
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 5))
res = {"old": [], "new": []}
def one(b):
    d = subprocess.Popen(["taskset","-c","1",b,"run","apps/examples/demo.yaml","--node","dst","--wait",mode],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    s = subprocess.Popen(["taskset","-c","0",b,"run","apps/examples/demo.yaml","--node","src","--wait",mode],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
    _, st, rs = os.wait4(s.pid, 0)
    _, dt, rd = os.wait4(d.pid, 0)
    return (rs.ru_utime, rs.ru_stime, rd.ru_utime, rd.ru_stime)
for i in range(reps):
    for label, b in (("old", OLD), ("new", NEW)):
        r = one(b); res[label].append(r)
        print(label, " ".join(f"{x:.3f}" for x in r), flush=True)
for label in res:
    cols = list(zip(*res[label]))
    print(label, "median src user %.3f sys %.3f  dst user %.3f sys %.3f" % tuple(statistics.median(c) for c in cols))
