"""Automatic instrumentation of an unmodified PyTorch script (docs/helper-protocol.md, "Automatic
instrumentation"). sitecustomize calls install(torch) right after the script imports torch.

What it patches, and why each:
  DataLoader.__init__               the loader's key (where it was built) and knob injection into its arguments;
  DataLoader.__iter__               loader and compute modes take the training loader over; tags the iterator;
  _BaseDataLoaderIter.__next__      each batch's wait and samples, per loader;
  Optimizer.step (post hook)        the end of a training step (torch 2: the global step hooks; 1.13: a wrapper
                                    on each optimizer class, the way torch's own profiler hook wraps it);
  torch.autograd.backward           the end of a step in a process that never built an optimizer;
  GradScaler.__init__, autocast     whether fp16 may be injected, and whether the script runs autocast itself;
  a global forward pre-hook         during the first step only: which module is the model (samples from its
                                    input, autocast injection), removed once the first step has ended; its first
                                    call with gradients starts the step's FLOP count (_extras, _flops);
  torch.compile, Module.compile     a compiled model never meets the two above: torch.compile runs a frame whose
                                    first call sees global module hooks or a TorchDispatchMode uncompiled, for
                                    good (an H100 with torch 2.11 ran ResNet-50's eager kernels), so compiling
                                    removes the hook at once, takes the compiled module as the model and skips
                                    the FLOP count, saying why.

The first step is start-up, so counting its FLOPs costs the measurement nothing. With SATURATE_TRACE, the profiler
starts when it ends, and the steps it profiles are left out of the counters (their time goes to excluded_s).
The counters are the explicit helper's (_state.State), reported with the same messages. Threads: the training
loop's thread drives everything; nothing here starts a thread. After the first step a batch costs two clock reads
and a sample count, a step one call; no module call is hooked.
"""

import os
import sys

from . import _STATE, _auto_loaders
from ._auto_loaders import Loaders, _knob_request
from ._auto_model import Model
from ._auto_patches import _COMPILED_WHY, Patches
from ._auto_steps import Steps

_AUTO = None  # the one Auto of this process, once installed


def install(torch):
    """Patches `torch` (already imported) for this process. Idempotent."""
    global _AUTO
    if _AUTO is not None:
        return
    _auto_loaders._TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
    _AUTO = Auto(_STATE, torch, os.environ)
    _AUTO.patch()
    from . import _flags

    _flags.install()  # the script's argparse options, so tune can hand back its own flags
    if hasattr(os, "register_at_fork"):
        # A forked child may be a rank (start_method="fork", Lightning's ddp_fork) or a DataLoader worker: it
        # starts afresh, and a worker is silenced by what it is (its worker loop starts), not by the fork.
        os.register_at_fork(after_in_child=_AUTO.after_fork_in_child)


class Auto(Patches, Loaders, Steps, Model):
    """The instrumentation's state machine for one process. Methods named on_* are called from the patches; each
    concern lives in its own module (_auto_patches, _auto_loaders, _auto_steps, _auto_model)."""

    # Slots, not a __dict__: each attribute read on the per-batch and per-step paths is then a fixed offset (more
    # than 30 attributes would put a dict-backed instance off CPython 3.11's fast attribute paths). Every attribute
    # any mixin sets is listed here; tests/python/test_auto.py checks that none is missing.
    __slots__ = ("state", "torch", "active", "mode", "takes_over", "target", "samples_flag", "site_counts",
                 "loaders_built", "inject_untargeted", "optimizers", "latest_optimizer", "scaler", "script_amp",
                 "inside_our_autocast", "module_hook", "amp_request", "amp_applied", "amp_error", "compiled",
                 "compiled_model", "failed", "train", "current", "last_batch", "identified", "step_no", "t_end",
                 "step_ended", "after_step", "excluding_since", "excluded", "backward_at", "step_depth",
                 "modules_seen", "model", "model_samples", "model_batchnorm", "compute_batch", "bypass",
                 "original_iter", "step_at", "samples_from", "backward_patch")

    def __init__(self, state, torch, environ):
        self.state = state
        self.torch = torch
        self.active = True
        self.mode = state.requested_mode
        self.takes_over = self.mode in ("loader", "compute")
        self.target = environ.get("SATURATE_AUTO_TARGET") or None
        self.samples_flag = _positive_float(environ.get("SATURATE_SAMPLES_PER_STEP"))
        self.site_counts = {}
        self.loaders_built = 0
        self.inject_untargeted = True  # no target: the first shuffled loader gets the knobs
        self.optimizers = 0
        self.latest_optimizer = None  # weakref
        self.scaler = False  # the script built a GradScaler
        self.script_amp = None  # "bf16"/"fp16" when the script entered autocast itself
        self.inside_our_autocast = False
        self.module_hook = None  # the first step's global forward pre-hook handle
        self.amp_request = _knob_request(state.knobs, "amp")
        self.compiled = False  # the script called torch.compile or Module.compile
        self.compiled_model = None  # weakref to the module it compiled, when it compiled one
        self.failed = None  # why the instrumentation turned itself off, once it did
        self.amp_applied = False  # "bf16"/"fp16" once saturate injected autocast
        self.amp_error = None  # why a requested amp knob was not applied
        self.model_batchnorm = None  # the model has BatchNorm layers (None: no model found)
        self.step_at = None  # where the first step ended: "optimizer" or "backward"
        self.samples_from = "loader"  # what the first step counted its samples from
        self.original_iter = None  # DataLoader.__iter__ as torch defined it (patch() sets it)
        self.backward_patch = None  # (torch.autograd, its backward, our wrapper) once patched
        self._begin_process()

    def _begin_process(self):
        """The per-process part of the state: what a new process (a forked rank) must not inherit."""
        self.train = None  # LoaderInfo of the training loader, once a step named it
        self.current = None  # LoaderInfo of the loader that handed over the latest batch
        self.last_batch = None  # that batch (compute mode takes it over)
        self.identified = False  # the first step has ended
        self.step_no = 0  # steps ended so far, the first one included
        self.t_end = None  # perf time of the latest step end
        self.step_ended = False  # no batch requested since the latest step end
        self.after_step = 0.0  # this step's share of after-step time so far
        self.excluding_since = None  # perf time another loader's iteration began, while it lasts
        self.excluded = 0.0  # this step's excluded time so far
        self.backward_at = None  # perf time of this step's latest backward() call
        self.step_depth = 0  # nested optimizer steps (an optimizer wrapping another) count once
        self.modules_seen = []  # (module, first dimension of its input) in first-call order, first step only
        self.model = None  # weakref to the model, once known
        self.model_samples = 0  # samples in the model's input (grad-enabled calls) since the last step end
        self.compute_batch = None  # compute mode: the batch on the device, repeated
        self.bypass = False  # our own loader iteration (drain, compute) must not be counted by the patches

    def disable(self):
        self.active = False
        if self.module_hook is not None:
            self.module_hook.remove()
            self.module_hook = None

    def after_fork_in_child(self):
        """A forked process counts from nothing (the helper's State forgets its counters in the same hook), and
        looks for its own first step and model again."""
        if not self.active:
            return
        self._begin_process()
        self.set_backward_patched(True)
        if self.compiled:
            self.state.extras.skip_count(_COMPILED_WHY)  # the State's extras were made afresh for this process
        if self.module_hook is None:
            self._register_module_hook()

    def in_worker(self):
        """The DataLoader worker loop starts in this process: it loads data for a trainer, it never is one."""
        self.disable()

    def fail(self, where, error):
        """A patched path raised inside saturate's own code: stop instrumenting, say so once, and let the program
        run on unchanged (every patch calls the original whatever happens here)."""
        if self.failed is not None:
            return
        self.failed = "%s: %s: %s" % (where, type(error).__name__, error)
        self.disable()
        try:
            print("saturate: automatic instrumentation is off for this run: %s" % self.failed, file=sys.stderr)
        except Exception:
            pass

    def silent(self):
        """The explicit helper took over, or this process is not the trainer."""
        return not self.active or self.state.explicit


def _positive_float(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None
