#!/usr/bin/env python3
"""The batch-size searches saturate tune's is compared with, on the model and memory cap of bench/gpu/small_model.py
(the GPU checks' oom part, bench/gpu_checks.sh):
  lightning-power      Lightning's BatchSizeFinder(mode="power"): doubles until out of memory
  lightning-binsearch  BatchSizeFinder(mode="binsearch"): doubles, then bisects the boundary
  accelerate           accelerate's find_executable_batch_size: halves from --start until a step fits
Written against lightning 2.6 (BatchSizeFinder; its max_val passed where the installed version has it) and
accelerate 1.x.

Prints one line, `finder {json}`: the finder, the batch sizes it tried in order, the seconds it took from the
model's creation to its answer, and the batch it found.

    python3 bench/gpu/batch_finders.py lightning-power --start 64 --memory-limit-mib 2048
"""

import argparse
import inspect
import json
import tempfile
import time

import torch

import small_model


def lightning(mode, args):
    import lightning as L
    from lightning.pytorch.callbacks import BatchSizeFinder

    from stack_lightning import SmallModule

    module = SmallModule(args.start, args.model, memory_limit_mib=args.memory_limit_mib)
    # max_val (a cap on the batch, 8192 by default) is in the finders that have margin; where it is missing, no cap.
    cap = {"max_val": args.max} if "max_val" in inspect.signature(BatchSizeFinder.__init__).parameters else {}
    finder = BatchSizeFinder(mode=mode, steps_per_trial=args.steps_per_trial, init_val=args.start, max_trials=25,
                             **cap)
    # The finder runs when fitting starts (saving and restoring a checkpoint in default_root_dir); fitting then trains
    # a few steps with its answer, which is trained longer in a process of its own afterwards, as a user would.
    with tempfile.TemporaryDirectory() as root:
        trainer = L.Trainer(max_steps=args.steps_per_trial, accelerator="auto", devices=1, logger=False,
                            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                            callbacks=[finder], default_root_dir=root)
        trainer.fit(module)
    module.memory.close()
    return module.tried, finder.optimal_batch_size


def accelerate(args):
    from accelerate import Accelerator, find_executable_batch_size

    accelerator = Accelerator()
    device = accelerator.device
    memory = small_model.Memory(device, args.memory_limit_mib, 0.0)
    tried = []

    @find_executable_batch_size(starting_batch_size=args.start)
    def train(batch_size):
        tried.append(batch_size)
        accelerator.free_memory()
        model = small_model.build_model(args.model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        loader = torch.utils.data.DataLoader(small_model.synthetic(batch_size, 32), batch_size=batch_size)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for _ in range(args.steps_per_trial):
            for x, y in loader:
                with memory.step(model, x):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
        loss.item()
        return batch_size

    found = train()
    memory.close()
    return tried, found


def main():
    p = argparse.ArgumentParser()
    p.add_argument("finder", choices=("lightning-power", "lightning-binsearch", "accelerate"))
    p.add_argument("--start", type=int, default=64, help="the first batch tried")
    p.add_argument("--max", type=int, default=1 << 20, help="Lightning's max_val")
    p.add_argument("--model", choices=("resnet18", "tiny"), default="resnet18")
    p.add_argument("--memory-limit-mib", type=int, default=0)
    p.add_argument("--steps-per-trial", type=int, default=3)
    args = p.parse_args()

    t0 = time.monotonic()
    if args.finder == "accelerate":
        tried, found = accelerate(args)
    else:
        tried, found = lightning(args.finder.split("-")[1], args)
    print("finder " + json.dumps({"finder": args.finder, "tried": tried, "seconds": round(time.monotonic() - t0, 2),
                                  "found": found}), flush=True)


if __name__ == "__main__":
    main()
