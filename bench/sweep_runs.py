#!/usr/bin/python3
"""Each run's start and end in a kept sweep bench folder (KEEP_WORK=1 bash bench/sweep_bench.sh): GNU parallel's
joblogs (jJ.joblog) and saturate's journals side by side, to tell a slower run from a later start.

Usage: bench/sweep_runs.py WORK
Prints per schedule the makespan, each kind's mean run time [min-max], and the starts and ends in seconds from
the schedule's first start."""
import glob
import os
import sqlite3
import statistics
import sys


def show(name, rows):
    """rows: (kind, start_unix, end_unix) of every run of one schedule."""
    rows = [r for r in rows if r[1] is not None and r[2] is not None]
    if not rows:
        print(f"{name}: no finished run")
        return
    t0 = min(r[1] for r in rows)
    by_kind = {}
    for kind, start, end in rows:
        by_kind.setdefault(kind, []).append(end - start)
    kinds = "; ".join(f"{k} mean {statistics.mean(v):.1f} s [{min(v):.1f}-{max(v):.1f}]" for k, v in sorted(by_kind.items()))
    print(f"{name}: makespan {max(r[2] for r in rows) - t0:.1f} s; {kinds}")
    print("   starts:", " ".join(f"{s - t0:.1f}" for _, s, _ in sorted(rows, key=lambda r: r[1])))
    print("   ends:  ", " ".join(f"{e - t0:.1f}" for _, _, e in sorted(rows, key=lambda r: r[2])))


def main(work):
    for path in sorted(glob.glob(os.path.join(work, "*.joblog"))):
        rows = []
        for line in open(path).read().splitlines()[1:]:
            fields = line.split("\t")
            start, runtime, command = float(fields[2]), float(fields[3]), fields[8]
            rows.append(("cpu" if "--kind cpu" in command else "io", start, start + runtime))
        show(os.path.basename(path), rows)
    for path in sorted(glob.glob(os.path.join(work, "*.journal"))):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = [("cpu" if '"cpu"' in params else "io", start, end) for params, start, end in db.execute(
            "SELECT r.params_json, a.started_unix, a.ended_unix FROM attempts a JOIN runs r ON r.key = a.run_key")]
        show(os.path.basename(path), rows)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: bench/sweep_runs.py WORK (a folder kept by KEEP_WORK=1 bash bench/sweep_bench.sh)")
    main(sys.argv[1])
