"""Hand-written training with no DataLoader and no optimizer: slices of an in-memory tensor, manual SGD.
Knows nothing of saturate and prints nothing per step. Samples per step: 64 (the model's input)."""
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
torch.manual_seed(0)
X, Y = torch.randn(4096, 256), torch.randn(4096, 1)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 1))
for step in range(steps):
    i = (step * 64) % 4096
    loss = ((model(X[i:i + 64]) - Y[i:i + 64]) ** 2).mean()
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 1e-3 * p.grad
    time.sleep(0.002)
print("trained", steps, "steps")
