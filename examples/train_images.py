#!/usr/bin/env python3
"""A real PyTorch image-classification trainer over an on-disk JPEG dataset, for trying saturate on.

The dataset (10 classes of synthetic gratings, learnable but not trivial) is generated on first use into --data
(default ~/.cache/saturate/images-<n>-<size>). Every sample is decoded from JPEG with PIL and augmented with
torchvision transforms, so loading costs what it costs in real training; --transform-cost adds more on purpose.

    python3 examples/train_images.py --model tiny --workers 2 --steps 200
    python3 examples/train_images.py --model resnet18 --preload on --amp bf16 --steps 50

It prints "step N loss L samples/s R step_s S data_s D" every --log-every steps (step_s: wall seconds per step,
data_s: seconds per step spent waiting for the DataLoader) and finally "done: N steps, S samples, X samples/s".
Runs on torch 1.13 and 2.x, CPU or CUDA. Uses `import saturate` when available (see docs/helper-protocol.md).
"""

import argparse
import contextlib
import fcntl
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from PIL import Image

from support import StepLog, load_helper

CLASSES = 10
HELDOUT_EVERY = 10  # one image in 10 of each class is held out for evaluation
MEAN, STD = (0.5, 0.5, 0.5), (0.25, 0.25, 0.25)


# ---- dataset generation ---------------------------------------------------------------------------------------

def _grating(index, size, seed):
    """Image `index` as a uint8 HxWx3 array. Its class (index % 10) sets the grating's orientation (horizontal
    or vertical, both unchanged by a horizontal flip) and spatial frequency band; colours, phase, exact
    frequency, a distracting blob and noise are random per image."""
    label = index % CLASSES
    rng = np.random.default_rng([seed, index])
    cycles = (2.0, 3.5, 5.5, 8.0, 12.0)[label % 5] * rng.uniform(0.92, 1.08)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / size
    along = x if label < 5 else y
    wave = 0.5 + 0.5 * np.sin(2 * math.pi * cycles * along + rng.uniform(0, 2 * math.pi))
    low, high = rng.uniform(0, 0.45, 3), rng.uniform(0.55, 1.0, 3)
    image = low + wave[..., None] * (high - low)
    cy, cx, r = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8), rng.uniform(0.08, 0.2)
    blob = np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (2 * r * r))[..., None]
    image = image * (1 - 0.6 * blob) + 0.6 * blob * rng.uniform(0, 1, 3)
    image += rng.normal(0, 0.06, image.shape)
    return (np.clip(image, 0, 1) * 255).astype(np.uint8), label


def _write_dataset(root, count, size, seed):
    for label in range(CLASSES):
        os.makedirs(os.path.join(root, "%d" % label))
    for index in range(count):
        pixels, label = _grating(index, size, seed)
        Image.fromarray(pixels).save(os.path.join(root, "%d" % label, "%06d.jpg" % index), quality=90)


def ensure_dataset(root, count, size, seed):
    """Generates the dataset at `root` unless it exists. Safe with concurrent runs: one generates under a lock
    into a temporary directory beside `root` and renames it into place, so `root` is complete or absent."""
    if os.path.isdir(root):
        return
    parent = os.path.dirname(os.path.abspath(root))
    os.makedirs(parent, exist_ok=True)
    with open(os.path.join(parent, ".%s.lock" % os.path.basename(root)), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isdir(root):  # another run generated it while we waited
            return
        print("generating %d images of %dx%d in %s" % (count, size, size, root), file=sys.stderr, flush=True)
        tmp = tempfile.mkdtemp(prefix=".%s.tmp-" % os.path.basename(root), dir=parent)
        try:
            _write_dataset(tmp, count, size, seed)
            os.rename(tmp, root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def list_dataset(root):
    """(train, heldout): lists of (path, label), split by image index."""
    train, heldout = [], []
    for label in range(CLASSES):
        folder = os.path.join(root, "%d" % label)
        for name in sorted(os.listdir(folder)):
            index = int(os.path.splitext(name)[0])
            held = (index // CLASSES) % HELDOUT_EVERY == HELDOUT_EVERY - 1  # index % CLASSES is the label
            (heldout if held else train).append(
                (os.path.join(folder, name), label))
    return train, heldout


# ---- loading ---------------------------------------------------------------------------------------------------

def decode(path):
    with Image.open(path) as image:
        return image.convert("RGB")  # convert() forces the full JPEG decode


class JpegDataset(torch.utils.data.Dataset):
    """Decodes the JPEG on every __getitem__ (or once up front with preload) and applies `transform`. With
    `read_latency_s`, each read of a file first waits that long, as on a slow disk or a network filesystem."""

    def __init__(self, items, transform, preload, read_latency_s=0.0):
        self.paths = [path for path, _ in items]
        self.labels = [label for _, label in items]
        self.transform = transform
        self.read_latency_s = read_latency_s
        self.images = [decode(path) for path in self.paths] if preload else None

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        if self.images is None and self.read_latency_s:
            time.sleep(self.read_latency_s)
        image = self.images[i] if self.images is not None else decode(self.paths[i])
        return self.transform(image), self.labels[i]


def train_transform(image_size, extra_cost):
    """Random crop and flip, then `extra_cost` real 3x3 Gaussian blurs (mild: the gratings survive them)."""
    steps = [T.RandomResizedCrop(image_size, scale=(0.6, 1.0)), T.RandomHorizontalFlip()]
    steps += [T.GaussianBlur(3, sigma=0.5) for _ in range(extra_cost)]
    steps += [T.ToTensor(), T.Normalize(MEAN, STD)]
    return T.Compose(steps)


def heldout_tensors(items, image_size, device):
    """The held-out images decoded once, resized, normalised and stacked on `device`."""
    transform = T.Compose([T.Resize(image_size), T.CenterCrop(image_size), T.ToTensor(), T.Normalize(MEAN, STD)])
    images = torch.stack([transform(decode(path)) for path, _ in items])
    labels = torch.tensor([label for _, label in items])
    return images.to(device), labels.to(device)


# ---- model and training ----------------------------------------------------------------------------------------

def tiny_cnn():
    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    return nn.Sequential(*block(3, 8, 2), *block(8, 16, 2), *block(16, 32, 2), *block(32, 64, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, CLASSES))


def build_model(name):
    if name == "tiny":
        return tiny_cnn()
    factory = getattr(torchvision.models, name)
    try:
        return factory(weights=None, num_classes=CLASSES)
    except TypeError:  # torchvision before 0.13 has no weights= argument
        return factory(pretrained=False, num_classes=CLASSES)


def grad_scaler():
    """A GradScaler for fp16 on CUDA: torch.amp.GradScaler("cuda") where it exists (torch 2.3+, where the
    torch.cuda.amp one is deprecated), else torch.cuda.amp.GradScaler."""
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def cpu_bf16_works():
    """Whether a bf16 matrix product runs on this CPU. Some torch builds die on it with SIGILL (Debian's torch
    1.13 on some AVX-512 CPUs), so it is tried in a child process, once, before training."""
    probe = "import torch; a = torch.ones(64, 64, dtype=torch.bfloat16); (a @ a).sum().item()"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def autocast(device, dtype):
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def evaluate(model, images, labels, device, dtype):
    """Accuracy and the full confusion matrix over the held-out set. Per step, this is the needless metric that
    --metric-every-step adds (it also synchronises the device through .item())."""
    was_training = model.training
    model.eval()
    with torch.no_grad(), autocast(device, dtype):
        predicted = model(images).argmax(1)
    model.train(was_training)
    confusion = torch.bincount(labels * CLASSES + predicted, minlength=CLASSES * CLASSES).view(CLASSES, CLASSES)
    return confusion.diag().sum().item() / len(labels), confusion


def parse_args(argv):
    p = argparse.ArgumentParser(description="Train an image classifier on generated JPEGs.")
    p.add_argument("--data", help="dataset folder (default ~/.cache/saturate/images-<n>-<size>)")
    p.add_argument("--images", type=int, default=2000, help="images to generate (default 2000)")
    p.add_argument("--source-size", type=int, default=96, help="generated image side in pixels (default 96)")
    p.add_argument("--image-size", type=int, default=96, help="training crop side in pixels (default 96)")
    p.add_argument("--model", choices=("tiny", "resnet18", "resnet50"), default="tiny")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--amp", choices=("off", "fp16", "bf16"), default="off")
    p.add_argument("--pin-memory", choices=("off", "on"), nargs="?", const="on", default="off")
    p.add_argument("--preload", choices=("off", "on"), nargs="?", const="on", default="off",
                   help="decode every image into RAM once before training")
    p.add_argument("--transform-cost", type=int, default=0, metavar="N",
                   help="extra real image operations per sample, to make loading expensive on purpose")
    p.add_argument("--read-latency-ms", type=float, default=0, metavar="MS",
                   help="wait this long before reading each image file, as on a slow disk or network filesystem")
    p.add_argument("--steps", type=int, default=0, help="stop after N steps (0: run --epochs)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--metric-every-step", action="store_true",
                   help="needlessly compute held-out accuracy and a confusion matrix every step")
    p.add_argument("--log-every", type=int, default=20, metavar="N", help="print a progress line every N steps")
    p.add_argument("--no-helper", action="store_true", help="do not import saturate even if available")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.epochs < 1 or min(args.steps, args.transform_cost, args.log_every, args.read_latency_ms) < 0:
        p.error("--epochs must be positive; --steps, --transform-cost, --log-every and --read-latency-ms not "
                "negative")
    return args


def resolve_settings(args, helper):
    """The knobs saturate may set (the command line gives their defaults) and the device, checked together."""
    knobs = argparse.Namespace(
        batch_size=helper.knob("batch_size", args.batch_size, flag="--batch-size"),
        workers=helper.knob("workers", args.workers, flag="--workers"),
        amp=helper.knob("amp", args.amp, flag="--amp"),
        pin_memory=helper.knob("pin_memory", args.pin_memory == "on", flag="--pin-memory"),
        preload=helper.knob("preload", args.preload == "on", flag="--preload"))
    if knobs.amp not in ("off", "fp16", "bf16"):
        sys.exit("train_images.py: amp must be off, fp16 or bf16, not %r" % knobs.amp)
    if knobs.batch_size < 1 or knobs.workers < 0:
        sys.exit("train_images.py: batch_size must be positive and workers not negative")

    if args.device == "auto":
        knobs.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    elif args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("train_images.py: --device cuda but torch sees no GPU")
    else:
        knobs.device = torch.device(args.device)
    if knobs.amp == "fp16" and knobs.device.type != "cuda":
        sys.exit("train_images.py: --amp fp16 needs CUDA (use bf16 on CPU)")
    if knobs.amp == "bf16" and knobs.device.type == "cpu" and not cpu_bf16_works():
        sys.exit("train_images.py: --amp bf16 crashes this torch build on this CPU (bf16 matmul: illegal "
                 "instruction); use --amp off")
    knobs.amp_dtype = {"off": None, "fp16": torch.float16, "bf16": torch.bfloat16}[knobs.amp]
    knobs.pin_memory = knobs.pin_memory and knobs.device.type == "cuda"  # pinning only helps host-to-GPU copies
    return knobs


def train(args, run, helper, loader, model, heldout):
    """The training loop: --steps steps, or --epochs passes. Returns (the last loss tensor or None, StepLog)."""
    device, dtype, non_blocking = run.device, run.amp_dtype, run.pin_memory
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    criterion = nn.CrossEntropyLoss()
    scaler = grad_scaler() if run.amp == "fp16" else None
    log = StepLog(args.log_every, helper)
    loss = None
    tracked = helper.track(loader)
    for _ in range(args.epochs if args.steps == 0 else sys.maxsize):
        ready = time.perf_counter()
        for images, labels in tracked:
            log.waited(time.perf_counter() - ready)
            images = images.to(device, non_blocking=non_blocking)
            labels = labels.to(device, non_blocking=non_blocking)
            with autocast(device, dtype):
                loss = criterion(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            if args.metric_every_step:
                with log.phase("metrics"):
                    evaluate(model, *heldout, device, dtype)
            log.step(len(labels), loss.item)
            if args.steps and log.steps >= args.steps:
                break
            ready = time.perf_counter()
        if args.steps and log.steps >= args.steps:
            break
    if device.type == "cuda":
        torch.cuda.synchronize()
    log.stop()
    return loss, log


def main(argv=None):
    args = parse_args(argv)
    helper, helper_name = load_helper(args.no_helper)
    run = resolve_settings(args, helper)

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    root = args.data or os.path.expanduser("~/.cache/saturate/images-%d-%d" % (args.images, args.source_size))
    ensure_dataset(root, args.images, args.source_size, args.seed)
    train_items, heldout_items = list_dataset(root)
    dataset = JpegDataset(train_items, train_transform(args.image_size, args.transform_cost), run.preload,
                          args.read_latency_ms / 1000)
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=run.batch_size, shuffle=True, drop_last=True, num_workers=run.workers,
        pin_memory=run.pin_memory, persistent_workers=run.workers > 0,
        generator=torch.Generator().manual_seed(args.seed))
    if len(loader) == 0:
        sys.exit("train_images.py: batch size %d is larger than the %d training images" % (
            run.batch_size, len(dataset)))
    heldout = heldout_tensors(heldout_items, args.image_size, run.device)
    model = build_model(args.model).to(run.device)
    print("config: model=%s batch_size=%d workers=%d amp=%s pin_memory=%s preload=%s transform_cost=%d device=%s "
          "image_size=%d metric_every_step=%s helper=%s" % (
              args.model, run.batch_size, run.workers, run.amp, "on" if run.pin_memory else "off",
              "on" if run.preload else "off", args.transform_cost, run.device, args.image_size,
              "on" if args.metric_every_step else "off", helper_name), flush=True)

    loss, log = train(args, run, helper, loader, model, heldout)

    accuracy, _ = evaluate(model, *heldout, run.device, run.amp_dtype)
    final_loss = loss.item() if loss is not None else float("nan")
    helper.report(loss=final_loss, accuracy=accuracy)
    print("heldout accuracy %.3f (%d images), final loss %.4f" % (accuracy, len(heldout[1]), final_loss))
    log.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
