#!/usr/bin/env python3
"""An unmodified torchvision ResNet-50 training loop (no `import saturate`), for measuring probe, tune, MFU and
energy on a GPU (bench/mfu_resnet50.sh, bench/gpu_checks.sh). Synthetic 224x224 images held in memory and served by
a plain DataLoader over a TensorDataset (per-sample indexing and collation, as a real dataset's loader does).

Every --print-every steps it prints its own count, which saturate never reads, so a run can be checked against
something saturate did not produce:
    step N t=<time.monotonic() after the step's loss was read> samples=<samples since start>

    python3 bench/mfu_resnet50.py --amp bf16 --batch-size 128 [--compile] [--workers 4]
"""

import argparse
import time

import torch
import torchvision


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--amp", choices=("off", "bf16", "fp16"), default="off")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (torch >= 2)")
    p.add_argument("--steps", type=int, default=100000)
    p.add_argument("--print-every", type=int, default=10)
    args = p.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    images = torch.randn(16 * args.batch_size, 3, 224, 224)
    labels = torch.randint(0, 1000, (16 * args.batch_size,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels),
                                         batch_size=args.batch_size, shuffle=True, drop_last=True,
                                         num_workers=args.workers, pin_memory=device.type == "cuda")
    model = torchvision.models.resnet50(num_classes=1000).to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    dtype = {"off": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.amp]
    scaler = torch.cuda.amp.GradScaler() if args.amp == "fp16" else None
    step = samples = 0
    while step < args.steps:
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            step += 1
            samples += x.shape[0]
            if step % args.print_every == 0:
                loss_value = loss.item()  # waits for the GPU, so the time below is the step's end
                print(f"step {step} t={time.monotonic():.4f} samples={samples} loss={loss_value:.3f}", flush=True)
            if step >= args.steps:
                break


if __name__ == "__main__":
    main()
