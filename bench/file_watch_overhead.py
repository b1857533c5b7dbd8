#!/usr/bin/env python3
"""What the helper's data-file watch (python/saturate/_files.py, an audit hook) costs: a child /usr/bin/python3 opens
and reads one small file --opens times (cycling over --files files, as a loader does), once without saturate's folder
on PYTHONPATH and once with it and a live channel (a bound datagram socket drained by another child, as saturate's
receiver), alternating for --tries rounds. Prints the best and median microseconds per open of each, and the
difference; and how many `files` messages and paths arrived.

    /usr/bin/python3 bench/file_watch_overhead.py [--opens N] [--files N] [--tries N]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"

CHILD = """
import os, sys, time
folder, n = sys.argv[1], int(sys.argv[2])
names = [os.path.join(folder, f) for f in sorted(os.listdir(folder))]
start = time.perf_counter()
for i in range(n):
    with open(names[i % len(names)], "rb") as f:
        f.read()
print((time.perf_counter() - start) / n * 1e6)
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--opens", type=int, default=200000)
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--tries", type=int, default=5)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        os.makedirs(data)
        for i in range(a.files):
            with open(os.path.join(data, "s%06d.bin" % i), "wb") as f:
                f.write(b"x" * 4096)
        channel = os.path.join(tmp, "channel.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(channel)
        got = []

        def drain():
            while True:
                d = sock.recv(65536)
                if not d:
                    return
                got.append(json.loads(d))

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        plain_env = {k: v for k, v in os.environ.items() if not k.startswith("SATURATE_") and k != "PYTHONPATH"}
        watched_env = dict(plain_env, PYTHONPATH=os.path.join(ROOT, "python"), SATURATE_CHANNEL=channel)
        plain, watched = [], []
        for _ in range(a.tries):
            for env, out in ((plain_env, plain), (watched_env, watched)):
                r = subprocess.run([PY, "-c", CHILD, data, str(a.opens)], env=env, capture_output=True, text=True,
                                   check=True)
                out.append(float(r.stdout))
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(b"", channel)
        reader.join(5)
        files = [m for m in got if m.get("type") == "files"]
        print("opens per round: %d over %d files; rounds: %d" % (a.opens, a.files, a.tries))
        print("without the watch: best %.2f us, median %.2f us per open" % (min(plain), statistics.median(plain)))
        print("with the watch:    best %.2f us, median %.2f us per open" % (min(watched), statistics.median(watched)))
        print("extra per open: best %.2f us, median %.2f us" % (min(watched) - min(plain),
                                                                statistics.median(watched) - statistics.median(plain)))
        print("files messages: %d (%.1f per round), paths sent: %d" % (
            len(files), len(files) / a.tries, sum(len(m["paths"]) for m in files)))


if __name__ == "__main__":
    sys.exit(main())
