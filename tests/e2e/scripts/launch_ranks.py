"""A stand-in for torchrun's elastic agent (Debian's torch 1.13 torchrun fails on Python 3.11 before any rank
starts): starts one `python SCRIPT ARGS...` per rank with the environment torchrun sets (RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID), waits for them, and exits with the
first failure. Usage: launch_ranks.py --nproc N SCRIPT [ARGS...]. It never imports torch itself."""

import os
import signal
import socket
import subprocess
import sys


def main():
    args = sys.argv[1:]
    nproc = 2
    if args[:1] == ["--nproc"]:
        nproc, args = int(args[1]), args[2:]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    children = []
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(nproc),
                   LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   TORCHELASTIC_RUN_ID="saturate-test")
        children.append(subprocess.Popen([sys.executable, *args], env=env))

    def forward(signum, frame):
        for c in children:
            if c.poll() is None:
                c.send_signal(signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    codes = [c.wait() for c in children]
    sys.exit(next((c for c in codes if c != 0), 0))


if __name__ == "__main__":
    main()
