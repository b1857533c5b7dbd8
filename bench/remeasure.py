#!/usr/bin/env python3
"""Measures training commands again outside saturate, by the example trainer's own "done: ... samples/s" line.

    bench/remeasure.py ROUNDS NAME=COMMAND [NAME=COMMAND ...]

Each COMMAND is a shell line of examples/train_images.py (a tune's recommended_command, say); it runs with
"--steps S --log-every 0" appended, S = SAMPLES (default 24000) over its --batch-size (64 when it has none), so
every command trains on the same number of samples. The commands take turns within each round, and the order
turns round by round, so that a machine that drifts does not favour one of them. Prints one JSON object:
{NAME: [samples/s per round, ...]}. Used by bench/tune_vs_grid.sh and bench/tune_repeat.sh.
"""

import json
import os
import re
import subprocess
import sys


def batch_of(cmd):
    m = re.search(r"--batch-size[ =](\d+)", cmd)
    return int(m.group(1)) if m else 64


def run(cmd, samples):
    steps = max(20, samples // batch_of(cmd))
    p = subprocess.run(["bash", "-c", "%s --steps %d --log-every 0" % (cmd, steps)], capture_output=True, text=True)
    m = re.search(r"done: \d+ steps, \d+ samples, ([0-9.]+) samples/s", p.stdout)
    if not m:
        sys.exit("no rate from: %s\n%s" % (cmd, p.stderr[-2000:]))
    return float(m.group(1))


def main(argv):
    if len(argv) < 3 or not argv[1].isdigit() or any("=" not in a for a in argv[2:]):
        sys.exit(__doc__)
    rounds = int(argv[1])
    samples = int(os.environ.get("SAMPLES", "24000"))
    commands = [a.split("=", 1) for a in argv[2:]]
    rates = {name: [] for name, _ in commands}
    for r in range(rounds):
        order = commands if r % 2 == 0 else commands[::-1]
        for name, cmd in order:
            rates[name].append(run(cmd, samples))
    print(json.dumps(rates))


if __name__ == "__main__":
    main(sys.argv)
