#!/usr/bin/env python3
"""A Lightning Trainer on a small module (bench/gpu/small_model.py's ResNet-18 on synthetic 32-px images), knowing
nothing of saturate: the GPU checks' stacks part (bench/gpu_checks.sh). Written against lightning 2.6
(`import lightning as L`; Trainer(max_steps, accelerator, devices, logger, enable_checkpointing, ...)).

Its own count, from a Callback, every --print-every optimizer steps (after a device sync):
    step N t=<time.monotonic()> samples=S

SmallModule is also what bench/gpu/batch_finders.py gives Lightning's BatchSizeFinder: its DataLoader is built
from `self.batch_size`, as the finder requires.

    python3 bench/gpu/stack_lightning.py --batch-size 128 --steps 600
"""

import argparse
import tempfile
import time

import lightning as L
import torch

import small_model


class Pool(torch.utils.data.Dataset):
    """`length` samples that cycle through a pool of 1,024 synthetic images: as long as a finder needs (Lightning
    stops growing a batch at the dataset's length), small in memory."""

    def __init__(self, length, image_size):
        self.length = length
        self.pool = small_model.synthetic(1024, image_size)

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        return self.pool[i % len(self.pool)]


class SmallModule(L.LightningModule):
    def __init__(self, batch_size, model="resnet18", image_size=32, workers=0, memory_limit_mib=0, length=1 << 22):
        super().__init__()
        self.batch_size = batch_size
        self.image_size = image_size
        self.workers = workers
        self.length = length
        self.model = small_model.build_model(model)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.memory = small_model.Memory(device, memory_limit_mib, 0.0)
        self.tried = []  # every batch size a step started with, in order (a finder's trials)

    def training_step(self, batch, batch_idx):
        x, y = batch
        if not self.tried or self.tried[-1] != x.shape[0]:
            self.tried.append(x.shape[0])
        with self.memory.step(self.model, x):
            return torch.nn.functional.cross_entropy(self.model(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)

    def train_dataloader(self):
        return torch.utils.data.DataLoader(Pool(self.length, self.image_size), batch_size=self.batch_size,
                                           shuffle=True, drop_last=True, num_workers=self.workers,
                                           pin_memory=torch.cuda.is_available())


class StepLines(L.Callback):
    def __init__(self, every):
        self.every = every

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        step = trainer.global_step
        if step and step % self.every == 0:
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            print(f"step {step} t={time.monotonic():.4f} samples={step * pl_module.batch_size}", flush=True)


def main():
    p = argparse.ArgumentParser()
    small_model.add_loop_flags(p, steps=600)
    args = p.parse_args()

    # Sixty-four batches an epoch; Lightning starts epochs until max_steps.
    module = SmallModule(args.batch_size, args.model, workers=args.workers, length=64 * args.batch_size)
    with tempfile.TemporaryDirectory() as root:
        trainer = L.Trainer(max_steps=args.steps, accelerator="auto", devices=1, logger=False,
                            enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                            callbacks=[StepLines(args.print_every)], default_root_dir=root)
        trainer.fit(module)
    module.memory.close()


if __name__ == "__main__":
    main()
