"""An unmodified DataLoader script with num_workers=0 hard-coded and an expensive per-sample transform, so the
loader is the narrow pipe: tune must recommend more workers as an injected knob. Knows nothing of saturate."""
import math

import torch
from torch.utils.data import DataLoader, Dataset


class Expensive(Dataset):
    def __len__(self):
        return 2048

    def __getitem__(self, i):
        # Single-threaded CPU work per sample, like decoding and augmenting an image: only worker processes
        # can spread it over the cores.
        values = [math.sin(i * 0.001 + j) for j in range(6000)]
        return torch.tensor(values[:256]), i % 10


loader = DataLoader(Expensive(), batch_size=32, shuffle=True, num_workers=0)
model = torch.nn.Linear(256, 10)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100000):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
