"""A loader-bound trainer that reads one file per sample, as a dataset of many small files on a network mount is
read: each __getitem__ opens one file of --data, reads it whole (then, with --prep N, works on it on the CPU as a
decoder would) and folds its bytes into 64 features; a DataLoader
(batch 16, --workers processes) feeds a tiny Linear model. Trains --samples samples (the files in name order, again
from the first when they run out), then exits 0. No saturate in it: it runs the same alone.

Prints "data: <--data as given>" first, and at the end "read <N> samples in <S> s", S from its own clock
(time.monotonic, from the first batch asked for to the last step), then "loop cpu <C> s": the process's CPU time
over the same span (time.process_time; a rate per core it got on a shared machine).
With --speed-every N, every Nth sample also times a fixed piece of warm CPU work (the prep's own op, 150 rounds) and
prints "speed t=<monotonic s> ms=<CPU ms per round>": how fast the CPU ran then, for comparing runs on a machine
whose CPUs change speed (about 0.05 ms a sample at N=32).
With --make N it only writes N files of --file-kib KiB (random bytes, seeded) into --data and exits."""
import argparse
import os
import time

import torch
import torch.nn.functional as F

FEATURES = 64

p = argparse.ArgumentParser()
p.add_argument("--data", required=True, help="a folder of files, one sample each")
p.add_argument("--samples", type=int, default=1000, help="samples to train on in all")
p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
p.add_argument("--seed", type=int, default=0)
p.add_argument("--make", type=int, default=0, help="write this many files into --data and exit")
p.add_argument("--file-kib", type=int, default=4, help="size of each file --make writes")
p.add_argument("--speed-every", type=int, default=0, metavar="N", help="time a fixed CPU work every Nth sample")
p.add_argument("--prep", type=int, default=0, metavar="N",
               help="CPU work per sample after its read: N rounds of a small tensor op (decoding and transforms)")
a = p.parse_args()

if a.make:
    os.makedirs(a.data, exist_ok=True)
    g = torch.Generator().manual_seed(a.seed)
    for i in range(a.make):
        data = torch.randint(0, 256, (a.file_kib * 1024,), dtype=torch.uint8, generator=g)
        with open(os.path.join(a.data, f"f{i:06d}.bin"), "wb") as f:
            f.write(data.numpy().tobytes())
    print(f"made {a.make} files of {a.file_kib} KiB in {a.data}")
    raise SystemExit(0)


def print_speed():
    x = torch.full((4096,), 0.5)
    for _ in range(50):  # warm: the caches hold the op, as in a tight loop
        x = torch.sin(x * 1.0001)
    c0 = time.thread_time()
    for _ in range(150):
        x = torch.sin(x * 1.0001)
    print(f"speed t={time.monotonic():.3f} ms={(time.thread_time() - c0) * 1000 / 150:.5f}", flush=True)


class Files(torch.utils.data.Dataset):
    def __init__(self, folder, samples):
        self.paths = [os.path.join(folder, n) for n in sorted(os.listdir(folder))]
        if not self.paths:
            raise SystemExit(f"no files in {folder}")
        self.samples = samples

    def __len__(self):
        return self.samples

    def __getitem__(self, i):
        if a.speed_every and i % a.speed_every == 0:
            print_speed()
        with open(self.paths[i % len(self.paths)], "rb") as f:
            raw = f.read()
        x = torch.frombuffer(bytearray(raw), dtype=torch.uint8).float() / 255
        for _ in range(a.prep):
            x = torch.sin(x * 1.0001)
        x = F.pad(x, (0, -len(x) % FEATURES)).view(-1, FEATURES).mean(0)
        return x, int(sum(raw[:64])) % 2


print(f"data: {a.data}", flush=True)
torch.manual_seed(a.seed)
loader = torch.utils.data.DataLoader(Files(a.data, a.samples), batch_size=16, num_workers=a.workers)
model = torch.nn.Linear(FEATURES, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
start, start_cpu = time.monotonic(), time.process_time()
seen = 0
for x, y in loader:
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen += len(y)
print(f"read {seen} samples in {time.monotonic() - start:.2f} s", flush=True)
print(f"loop cpu {time.process_time() - start_cpu:.3f} s", flush=True)
