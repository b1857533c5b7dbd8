#!/usr/bin/env python3
"""An unmodified torchvision ResNet-50 training loop (no `import saturate`), for measuring MFU on a GPU with
bench/mfu_resnet50.sh. Synthetic 224x224 images already in memory, so the GPU, not the loader, is the limit.

    /usr/bin/python3 bench/mfu_resnet50.py --amp bf16 --batch-size 128
"""

import argparse

import torch
import torchvision


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--amp", choices=("off", "bf16", "fp16"), default="off")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--steps", type=int, default=100000)
    args = p.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    images = torch.randn(16 * args.batch_size, 3, 224, 224)
    labels = torch.randint(0, 1000, (16 * args.batch_size,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels),
                                         batch_size=args.batch_size, shuffle=True, drop_last=True, pin_memory=True)
    model = torchvision.models.resnet50(num_classes=1000).to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    dtype = {"off": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.amp]
    scaler = torch.cuda.amp.GradScaler() if args.amp == "fp16" else None
    step = 0
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
            if step >= args.steps:
                break


if __name__ == "__main__":
    main()
