#!/usr/bin/env bash
# `saturate monitor -- CMD` watches a real process tree: a Python parent that starts two worker
# processes which burn CPU and read a file from disk (page cache dropped first, so the reads are real).
# The tree's CPU, RSS, process count and read bytes must show up in the CSV.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

data="$WORK/blob.bin"
head -c $((48 << 20)) /dev/urandom >"$data"
sync

cat >"$WORK/tree.py" <<'PY'
import multiprocessing as mp, os, sys, time

def worker(path, seconds):
    # Evict the file from the page cache so the read reaches the disk and /proc/PID/io counts it.
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    blob = bytearray(32 << 20)  # 32 MiB resident per worker
    for i in range(0, len(blob), 4096):
        blob[i] = 1
    while os.read(fd, 1 << 20):
        time.sleep(0.01)
    os.close(fd)
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        x += 1

if __name__ == "__main__":
    procs = [mp.Process(target=worker, args=(sys.argv[1], 1.5)) for _ in range(2)]
    for p in procs: p.start()
    for p in procs: p.join()
PY

out="$WORK/monitor.csv"
"$SATURATE" monitor --query-host=timestamp,proc.count,proc.cpu,proc.rss,proc.read,cpu.util,mem.used \
  --format=csv,nounits -lms 100 -f "$out" -- /usr/bin/python3 "$WORK/tree.py" "$data"

cat "$out"
header=$(head -n1 "$out")
expect_contains "$header" "proc.count"
expect_contains "$header" "proc.read"
# Column values across all samples: at least 3 processes (parent + 2 workers) at some point,
# a CPU share above 50% of a core, RSS above 60 MiB, and read rate above zero.
python3 - "$out" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), skipinitialspace=True))
head, rows = rows[0], rows[1:]
col = {name.split(" [")[0]: i for i, name in enumerate(head)}
def values(name):
    out = []
    for r in rows:
        v = r[col[name]]
        if v not in ("[N/A]", "N/A", ""):
            out.append(float(v))
    return out
assert len(rows) >= 10, f"only {len(rows)} samples"
assert max(values("proc.count")) >= 3, values("proc.count")
assert max(values("proc.cpu")) > 50, values("proc.cpu")
assert max(values("proc.rss")) > 60, values("proc.rss")
read_mib = sum(v * 0.1 for v in values("proc.read"))  # MiB/s over 100 ms samples
assert read_mib > 20, f"tree read only {read_mib:.1f} MiB of the 2 x 48 MiB"
print("ok: tree sampled", len(rows), "times; read", round(read_mib), "MiB")
PY
