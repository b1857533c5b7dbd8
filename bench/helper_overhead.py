#!/usr/bin/env python3
"""The helper's overhead in a real training loop: the example trainer with the helper reporting over a live channel
against the same trainer with --no-helper, alternating, side by side in one run. Prints a table for
docs/benchmarks.md (samples/s from the trainer's own `done:` line, which times the training loop only).

Run: /usr/bin/python3 bench/helper_overhead.py [rounds]
"""
import os, re, socket, subprocess, sys, tempfile, threading

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.environ.get("TMPDIR", "/tmp"), "saturate-e2e-images-600")
CMD = [sys.executable, os.path.join(HERE, "examples", "train_images.py"), "--data", DATA, "--images", "600",
       "--model", "tiny", "--preload", "on", "--workers", "0", "--batch-size", "16", "--steps", "600",
       "--log-every", "0"]


def run(with_helper, channel):
    env = dict(os.environ)
    args = list(CMD)
    if with_helper:
        env["PYTHONPATH"] = os.path.join(HERE, "python")
        env["SATURATE_CHANNEL"] = channel
        env["SATURATE_RUN_ID"] = "bench"
    else:
        args.append("--no-helper")
    return samples_per_s(subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout)


def open_sink():
    """A bound datagram socket read continuously by a thread, as saturate reads the channel. Returns (socket,
    path, [messages received])."""
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "channel")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    received = [0]

    def drain():
        while True:
            try:
                sock.recv(65536)
                received[0] += 1
            except OSError:
                return
    threading.Thread(target=drain, daemon=True).start()
    return sock, path, received


def samples_per_s(stdout):
    """The trainer's own figure from its `done:` line (the training loop only)."""
    return float(re.search(r"done: \d+ steps, \d+ samples, ([\d.]+) samples/s", stdout).group(1))


def alternate(run, rounds):
    """`run(False, channel)` and `run(True, channel)` alternating for `rounds` rounds after one warm-up run, over a
    live channel. Returns (off figures, on figures, messages received)."""
    sock, path, received = open_sink()
    run(False, path)  # warm the page cache and the dataset
    off, on = [], []
    for _ in range(rounds):
        off.append(run(False, path))
        on.append(run(True, path))
    sock.close()
    return off, on, received[0]


def median(xs):
    return sorted(xs)[len(xs) // 2]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    plain, helper, received = alternate(run, rounds)
    med = median
    print("| rounds | without helper (median samples/s) | with helper + channel | ratio | messages received |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    print(f"| {rounds} | {med(plain):.1f} | {med(helper):.1f} | {med(helper) / med(plain):.3f} | {received} |")
    print("per round without:", " ".join(f"{x:.1f}" for x in plain))
    print("per round with:   ", " ".join(f"{x:.1f}" for x in helper))


if __name__ == "__main__":
    main()
