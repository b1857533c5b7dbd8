#!/usr/bin/env python3
"""A small model trained for a fixed number of steps, knowing nothing of saturate: the runs of the GPU checks' sweep
and out-of-memory parts (bench/gpu_checks.sh). A torchvision ResNet-18 (or, for the CPU rehearsal, a tiny convnet)
on synthetic square images behind a plain DataLoader, SGD with momentum.

Its own count, which saturate never reads, every --print-every steps (after reading the loss, a GPU sync):
    step N t=<time.monotonic()> samples=S
and at the end `peak_device_mib=M` (what the CUDA caching allocator reserved at most) and `done i=I steps=N`; with
--done-file it appends I to that file once it has finished, so a sweep's every run can be counted.

Memory: --memory-limit-mib caps this process's device memory (torch.cuda.set_per_process_memory_fraction: beyond
it, PyTorch's own CUDA out-of-memory error); --hold-fraction keeps that share of the device's memory for the whole
run (a dataset kept on the device; "0.3,0.3,0.3,0.75": run 4 holds more than the others). Without CUDA, where the NVML stand-in's process folder is set (the CPU
rehearsal), the same flags act on the stand-in's memory through fake_device.py.

    python3 bench/gpu/small_model.py --batch-size 128 --steps 1500 [--memory-limit-mib 2048] [--hold-fraction 0.3]
"""

import argparse
import contextlib
import os
import time

import torch

import fake_device


def build_model(name, classes=10):
    if name == "tiny":
        return torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                   torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
                                   torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, classes))
    import torchvision
    return torchvision.models.resnet18(num_classes=classes)


def synthetic(n, size, classes=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.utils.data.TensorDataset(torch.randn(n, 3, size, size, generator=g),
                                          torch.randint(0, classes, (n,), generator=g))


def add_loop_flags(parser, batch_size=128, steps=1000):
    """The flags every training loop of the GPU checks takes (this one and the stacks')."""
    parser.add_argument("--batch-size", type=int, default=batch_size)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--model", choices=("resnet18", "tiny"), default="resnet18")
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--print-every", type=int, default=10)


def train_step(model, optimizer, x, y, forward_context=None):
    """One SGD step on a batch; the forward pass inside forward_context when given. Returns the loss (not read)."""
    with forward_context or contextlib.nullcontext():
        loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


class Memory:
    """This process's device memory: the cap, the held share, the peak, on a GPU or on the stand-in."""

    def __init__(self, device, limit_mib, hold_fraction):
        self.fake = fake_device.FakeDevice(limit_mib * fake_device.MIB if limit_mib else None) if (
            device.type == "cpu" and fake_device.available()) else None
        self.held_bytes = 0
        self.keep = None
        if device.type == "cuda":
            total = torch.cuda.get_device_properties(device).total_memory
            if limit_mib:
                torch.cuda.set_per_process_memory_fraction(min(1.0, limit_mib * fake_device.MIB / total), device)
            if hold_fraction:
                self.keep = torch.empty(int(hold_fraction * total), dtype=torch.uint8, device=device)
        elif self.fake is not None and hold_fraction:
            self.held_bytes = int(hold_fraction * self.fake.memory().total)
            self.fake.hold(self.held_bytes)

    def step(self, model, x):
        """A context for the forward pass of a step on x (the stand-in counts what autograd saves)."""
        if self.fake is None:
            return contextlib.nullcontext()
        return fake_device.saved_for_backward(self.fake, self.held_bytes + fake_device.state_bytes(model) +
                                              x.numel() * x.element_size())

    def peak_mib(self, device):
        if device.type == "cuda":
            return torch.cuda.max_memory_reserved(device) / fake_device.MIB
        return self.fake.held / fake_device.MIB if self.fake else None

    def close(self):
        if self.fake:
            self.fake.close()


def main():
    p = argparse.ArgumentParser()
    add_loop_flags(p)
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--seconds", type=float, default=0.0,
                   help="stop this long after the first step instead, whatever --steps says (0: by --steps)")
    p.add_argument("--amp", choices=("off", "bf16"), default="off")
    p.add_argument("--memory-limit-mib", type=int, default=0)
    p.add_argument("--hold-fraction", default="0",
                   help="F, or F1,F2,...: the share run --i I holds (the I-th, the last repeating)")
    p.add_argument("--threads", type=int, default=0, help="torch's CPU threads (0: torch's default)")
    p.add_argument("--i", type=int, default=0, help="the run's number, for --done-file")
    p.add_argument("--done-file", default="")
    args = p.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.i)
    shares = [float(v) for v in args.hold_fraction.split(",")]
    memory = Memory(device, args.memory_limit_mib, shares[min(max(args.i, 1), len(shares)) - 1])
    try:
        # Four batches of distinct images, cycled: enough for a loader to index and collate, few enough to stay small.
        loader = torch.utils.data.DataLoader(synthetic(4 * args.batch_size, args.image_size, seed=args.i),
                                             batch_size=args.batch_size, shuffle=True, drop_last=True,
                                             num_workers=args.workers, pin_memory=device.type == "cuda")
        model = build_model(args.model).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        dtype = torch.bfloat16 if args.amp == "bf16" else None
        step = samples = 0
        first_step_end = None

        def finished():
            if args.seconds:
                return first_step_end is not None and time.monotonic() - first_step_end >= args.seconds
            return step >= args.steps

        while not finished():
            for x, y in loader:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                forward = contextlib.ExitStack()
                forward.enter_context(memory.step(model, x))
                forward.enter_context(torch.autocast(device.type, dtype=dtype, enabled=dtype is not None))
                loss = train_step(model, optimizer, x, y, forward)
                step += 1
                samples += x.shape[0]
                if step % args.print_every == 0 or finished():
                    loss_value = loss.item()
                    print(f"step {step} t={time.monotonic():.4f} samples={samples} loss={loss_value:.3f}", flush=True)
                if first_step_end is None:
                    loss.item()
                    first_step_end = time.monotonic()
                if finished():
                    break
        peak = memory.peak_mib(device)
        print("peak_device_mib=" + ("n/a" if peak is None else f"{peak:.0f}"), flush=True)
        print(f"done i={args.i} steps={step}", flush=True)
        if args.done_file:
            with open(args.done_file, "a") as f:
                f.write(f"{args.i}\n")
    finally:
        memory.close()


if __name__ == "__main__":
    main()
