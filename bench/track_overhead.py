#!/usr/bin/env python3
"""What saturate.track() costs per step: a plain loop, the pass-through (no SATURATE_CHANNEL) and the reporting
loop (a real bound datagram socket, read by a child process as saturate would), side by side.

    python3 bench/track_overhead.py [--steps N] [--work N] [--tries N]

Each step does `--work` iterations of a Python loop (about 50 ns each) so the loops look like a training loop
with tiny steps. Prints the best rate of each over `--tries` alternating runs.
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

import saturate  # noqa: E402

# Drains the socket passed as fd 0 until killed, like saturate's receiver.
_RECEIVER = "import socket\ns = socket.socket(fileno=0)\nwhile True:\n    s.recv(65536)\n"


def _step(work):
    total = 0
    for i in range(work):
        total += i
    return total


def _rate(iterable, steps, work):
    start = time.perf_counter()
    for _ in iterable:
        _step(work)
    return steps / (time.perf_counter() - start)


def _configure(channel):
    for name in [k for k in os.environ if k.startswith("SATURATE_")]:
        del os.environ[name]
    if channel:
        os.environ["SATURATE_CHANNEL"] = channel
    saturate._reset()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--work", type=int, default=2000, help="loop iterations per step")
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "channel.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        receiver = subprocess.Popen([sys.executable, "-c", _RECEIVER], stdin=sock.fileno())
        try:
            items = [[0] * 4] * args.steps
            best = {"plain": 0.0, "pass-through": 0.0, "reporting": 0.0}
            for _ in range(args.tries):
                best["plain"] = max(best["plain"], _rate(items, args.steps, args.work))
                _configure(None)
                best["pass-through"] = max(best["pass-through"], _rate(saturate.track(items), args.steps, args.work))
                _configure(path)
                best["reporting"] = max(best["reporting"], _rate(saturate.track(items), args.steps, args.work))
        finally:
            receiver.kill()
            receiver.wait()
            sock.close()

    plain = best["plain"]
    print("%-13s %12s %10s %14s" % ("loop", "steps/s", "overhead", "us/step extra"))
    for name, rate in best.items():
        print("%-13s %12.1f %9.2f%% %14.2f" % (name, rate, 100 * (plain / rate - 1), 1e6 * (1 / rate - 1 / plain)))


if __name__ == "__main__":
    main()
