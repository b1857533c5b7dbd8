"""The instrumentation's per-step paths in instructions, each against torch's own function on the same objects:
run by `auto_overhead.py --hooks` under callgrind, which counts only between the client requests around each loop
(bench/callgrind_start.c), so the figures are the paths' alone, to a few hundred instructions a step.

Loops, each of N steps on an empty optimizer and a one-element weight, so that torch's own work is as small as it
gets:
  off   torch's DataLoader __next__, backward() and the optimizer's step, unwrapped
  next  saturate's __next__ wrapper, torch's step
  all   saturate's __next__ and step wrappers (backward() is torch's in both: the wrapper comes off after the first step)
`next - off` is the batch path, `all - next` the step path. Rounds alternate (off, next, all) x rounds.

Run (from auto_overhead.py): python3 hook_instructions.py N ROUNDS tuple|dict, with saturate's sitecustomize on
PYTHONPATH and SATURATE_AUTO=1.
"""
import ctypes
import gc
import sys

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset
from torch.utils.data import dataloader as torch_dataloader

steps, rounds, layout = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
torch.set_num_threads(1)
bench = ctypes.CDLL(None)


class Dicts(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        x, y = self.rows[i]
        return {"x": x, "y": y}


rows = TensorDataset(torch.randn(steps * 4 + 64, 8), torch.zeros(steps * 4 + 64, dtype=torch.long))
loader = DataLoader(Dicts(rows) if layout == "dict" else rows, batch_size=4)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
# A few real steps name the training loader and the model, as in a script.
for i, batch in enumerate(loader):
    x, y = (batch["x"], batch["y"]) if layout == "dict" else batch
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    if i == 3:
        break

auto = sys.modules["saturate._auto"]._AUTO
wrapped_next = torch_dataloader._BaseDataLoaderIter.__next__
wrapped_step = type(opt).step
backward = torch.autograd.backward
assert not hasattr(backward, "__wrapped__"), "the backward() wrapper should be off after the first step"
PATHS = {"off": (wrapped_next.__wrapped__, wrapped_step.__wrapped__),
         "next": (wrapped_next, wrapped_step.__wrapped__),
         "all": (wrapped_next, wrapped_step)}
empty = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
w = torch.ones(1, requires_grad=True)


def loop(which, n):
    next_batch, step = PATHS[which]
    it = iter(loader)
    for _ in range(n):
        next_batch(it)
        backward((w * 2).sum())
        step(empty)


for which in PATHS:
    loop(which, 20)
gc.disable()  # a collection falls in one loop or another by chance
bench.saturate_bench_callgrind_start()
for _ in range(rounds):
    for which in PATHS:
        gc.collect()
        bench.saturate_bench_callgrind_zero()
        loop(which, steps)
        bench.saturate_bench_callgrind_dump(which.encode())
if auto.failed:
    sys.exit("the instrumentation turned itself off: %s" % auto.failed)
if auto.state.steps < rounds * steps:
    sys.exit("the instrumentation counted %d steps of the %d it was timed on" % (auto.state.steps, rounds * steps))
