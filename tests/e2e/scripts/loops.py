"""Training loops as real code writes them, none of them aware of saturate. Each prints its own count every
--log-every training steps, `t=<monotonic s> steps=<n> samples=<cumulative>`, and at the end
`total steps=<n> samples=<m> first=<samples in the first step>`: the count tests compare saturate's with.

--case:
  plain        (inputs, targets) tuples, one optimizer
  dict         batches as dicts of tensors
  mapping      batches as a tokenizer-output-like mapping object (a UserDict subclass with attribute access)
  accum        gradient accumulation: 4 batches per optimizer step
  gan          two optimizers per batch (a discriminator step, then a generator step)
  closure      optimizer.step(closure), the closure doing forward and backward
  skip         every third batch steps no optimizer, as a GradScaler skips optimizer.step() on inf gradients
  trainer      a Trainer class that owns the loop and calls callbacks
  findspec     importlib.util.find_spec("torch") before `import torch` (transformers' is_torch_available)
  import_module  torch through importlib.import_module
  lazy         torch through importlib.util.LazyLoader (lazy-import libraries)
  finder       a meta path finder ahead of saturate's brings torch in, and a later import follows
  finder_only  the same with no later import: saturate never gets a chance to attach, and must say so
--step-ms sleeps that long in each step's model work, so that steps take a predictable time.
"""

import argparse
import collections
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--case", default="plain")
p.add_argument("--steps", type=int, default=200)
p.add_argument("--batch-size", type=int, default=16)
p.add_argument("--step-ms", type=float, default=2.0)
p.add_argument("--log-every", type=int, default=10)
args = p.parse_args()

if args.case == "findspec":
    import importlib.util

    assert importlib.util.find_spec("torch") is not None
    import torch
elif args.case == "import_module":
    import importlib

    torch = importlib.import_module("torch")
elif args.case == "lazy":
    import importlib.util

    spec = importlib.util.find_spec("torch")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    torch = importlib.util.module_from_spec(spec)
    sys.modules["torch"] = torch
    loader.exec_module(torch)
    torch.zeros(1)  # the first attribute access runs torch's __init__
elif args.case in ("finder", "finder_only"):
    import importlib.machinery

    class Ahead:
        """Finds torch before anything else on sys.meta_path, as some import hooks do."""

        def find_spec(self, name, path=None, target=None):
            if name == "torch":
                return importlib.machinery.PathFinder.find_spec(name, path)
            return None

    sys.meta_path.insert(0, Ahead())
    import torch
    if args.case == "finder":
        import colorsys  # noqa: F401  any later import: the first chance saturate has to attach
else:
    import torch

from torch.utils.data import DataLoader, Dataset  # noqa: E402

torch.manual_seed(0)
torch.set_num_threads(1)


class Encoding(collections.UserDict):
    """Like transformers' BatchEncoding: a mapping with attribute access."""

    def __getattr__(self, name):
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name)


class Samples(Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, i):
        x = torch.full((32,), float(i % 11) / 11)
        y = i % 4
        if args.case == "dict":
            return {"x": x, "label": y}
        return x, y


def collate_mapping(items):
    return Encoding(input_ids=torch.stack([x for x, _ in items]), labels=torch.tensor([y for _, y in items]))


loader = DataLoader(Samples(), batch_size=args.batch_size, shuffle=True,
                    collate_fn=collate_mapping if args.case == "mapping" else None)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
steps = 0
samples = 0
first = None
t_log = time.monotonic


def inputs(batch):
    if args.case == "dict":
        return batch["x"], batch["label"]
    if args.case == "mapping":
        return batch.input_ids, batch["labels"]
    return batch


def model_work(x, y):
    time.sleep(args.step_ms / 1000.0)
    return torch.nn.functional.cross_entropy(model(x), y)


def count(n):
    global steps, samples, first
    steps += 1
    samples += n
    if first is None:
        first = n
    if args.log_every and steps % args.log_every == 0:
        sys.stdout.write("t=%.6f steps=%d samples=%d\n" % (t_log(), steps, samples))
        sys.stdout.flush()


if args.case == "gan":
    gen = torch.nn.Linear(8, 32)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
    for batch in loader:
        x, y = batch
        # Discriminator step on real data and generated samples.
        d_loss = model_work(x, y) + model(gen(torch.randn(x.shape[0], 8)).detach()).mean()
        opt.zero_grad()
        d_loss.backward()
        opt.step()
        # Generator step on the same batch.
        g_loss = -model(gen(torch.randn(x.shape[0], 8))).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        count(x.shape[0])
        if steps >= args.steps:
            break
elif args.case == "accum":
    pending = 0
    for i, batch in enumerate(loader):
        x, y = batch
        (model_work(x, y) / 4).backward()
        pending += x.shape[0]
        if (i + 1) % 4 == 0:
            opt.step()
            opt.zero_grad()
            count(pending)
            pending = 0
            if steps >= args.steps:
                break
elif args.case == "skip":
    pending = 0
    for i, batch in enumerate(loader):
        x, y = batch
        loss = model_work(x, y)
        opt.zero_grad()
        loss.backward()
        pending += x.shape[0]
        if i % 3 != 1:
            opt.step()
            count(pending)
            pending = 0
            if steps >= args.steps:
                break
elif args.case == "closure":
    for batch in loader:
        x, y = batch

        def closure():
            opt.zero_grad()
            loss = model_work(x, y)
            loss.backward()
            return loss

        opt.step(closure)
        count(x.shape[0])
        if steps >= args.steps:
            break
elif args.case == "trainer":
    class Callback:
        def on_step_end(self, trainer):
            pass

    class Logger(Callback):
        def on_step_end(self, trainer):
            trainer.history.append(trainer.loss)

    class Trainer:
        """Owns the loop, as Hugging Face's Trainer or a home-grown one does."""

        def __init__(self, model, optimizer, data, callbacks):
            self.model, self.optimizer, self.data, self.callbacks = model, optimizer, data, callbacks
            self.history = []
            self.loss = None

        def training_step(self, batch):
            x, y = batch
            loss = model_work(x, y)
            loss.backward()
            return loss

        def fit(self, max_steps):
            for batch in self.data:
                self.optimizer.zero_grad()
                self.loss = self.training_step(batch).item()
                self.optimizer.step()
                for cb in self.callbacks:
                    cb.on_step_end(self)
                count(batch[0].shape[0])
                if steps >= max_steps:
                    return

    Trainer(model, opt, loader, [Logger()]).fit(args.steps)
else:
    for batch in loader:
        x, y = inputs(batch)
        loss = model_work(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        count(x.shape[0])
        if steps >= args.steps:
            break
print("total steps=%d samples=%d first=%d" % (steps, samples, first), flush=True)
