"""A training loop with a validation pass after every epoch, and a DataLoader whose per-batch cost is known:
each training sample sleeps 1 ms in __getitem__ (batch 16: >= 16 ms per batch, no workers), the model is tiny.
Validation batches sleep 5 ms per sample, so mixing them in would halve the figure. Knows nothing of saturate."""
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __init__(self, n, cost_s):
        self.n, self.cost_s = n, cost_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.cost_s)
        return torch.full((8,), float(i % 5)), i % 2


def loader(n, cost_s, shuffle):
    return DataLoader(Slow(n, cost_s), batch_size=16, shuffle=shuffle)


train, val = loader(320, 0.001, True), loader(160, 0.005, False)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(100000):
    for x, y in train:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        for x, y in val:
            model(x)
