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

import functools
import os
import sys
import time
import types
import weakref

from . import _STATE
from ._batch import count_samples, default_device, to_device
from ._knobs import cast
from ._track import _drain

_perf = time.perf_counter

# Knob names in SATURATE_KNOBS, each with the aliases tune accepts for its role; the first is the reported name.
KNOB_ALIASES = {
    "workers": ("workers", "num_workers"),
    "batch_size": ("batch_size", "batch", "bs"),
    "pin_memory": ("pin_memory",),
    "prefetch_factor": ("prefetch_factor",),
    "persistent_workers": ("persistent_workers",),
    "amp": ("amp", "precision", "mixed_precision"),
}
LOADER_KNOBS = ("workers", "batch_size", "pin_memory", "prefetch_factor", "persistent_workers")
# How many distinct modules the first step records when looking for the model (the model is called before its
# children, so it is among the first).
_MAX_MODULES_SEEN = 64

_AUTO = None  # the one Auto of this process, once installed
_COMPILED_WHY = "the model is compiled (torch.compile), and counting would keep it from compiling"


def install(torch):
    """Patches `torch` (already imported) for this process. Idempotent."""
    global _AUTO, _TORCH_DIR
    if _AUTO is not None:
        return
    _TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
    _AUTO = Auto(_STATE, torch, os.environ)
    _AUTO.patch()
    from . import _flags

    _flags.install()  # the script's argparse options, so tune can hand back its own flags
    if hasattr(os, "register_at_fork"):
        # A forked child may be a rank (start_method="fork", Lightning's ddp_fork) or a DataLoader worker: it
        # starts afresh, and a worker is silenced by what it is (its worker loop starts), not by the fork.
        os.register_at_fork(after_in_child=_AUTO.after_fork_in_child)


def _knob_request(knobs, name):
    """The value SATURATE_KNOBS gives knob `name` under any of its aliases, or None."""
    for alias in KNOB_ALIASES[name]:
        if alias in knobs:
            return knobs[alias]
    return None


class LoaderInfo:
    """What the instrumentation knows of one DataLoader. Lives as the loader's `_saturate_info` attribute."""

    __slots__ = ("key", "site", "script", "injected", "errors", "settings", "pending_wait", "pending_samples",
                 "stamp", "yielded", "loader", "__weakref__")

    def __init__(self, key, site):
        self.key = key
        self.site = site
        self.script = {}  # the script's own value of each loader knob
        self.injected = {}  # knob -> the value saturate set
        self.errors = {}  # knob -> why a requested value was not set
        self.settings = {}  # the loader's settings as built (for the loader message)
        self.pending_wait = 0.0  # in the step numbered `stamp`
        self.pending_samples = 0
        self.stamp = -1
        self.yielded = 0  # batches this process took from it
        self.loader = None  # weakref to the loader, set at iter()


class Auto:
    """The instrumentation's state machine for one process. Methods named on_* are called from the patches."""

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

    # ---- patching ---------------------------------------------------------------------------------------

    def patch(self):
        torch = self.torch
        from torch.utils.data import dataloader as dl

        self._patch_loader(dl.DataLoader, dl._BaseDataLoaderIter)
        self._patch_optimizer(torch.optim.Optimizer)
        self._patch_backward(torch.autograd)
        for scaler in _grad_scaler_classes(torch):
            self._patch_scaler(scaler)
        autocast = getattr(torch, "autocast", None)
        if isinstance(autocast, type):
            self._patch_autocast(autocast)
        self._patch_worker_loop(getattr(getattr(dl, "_utils", None), "worker", None))
        self._patch_compile(torch)
        self._register_module_hook()

    def _register_module_hook(self):
        if self.compiled:
            return
        register = getattr(self.torch.nn.modules.module, "register_module_forward_pre_hook", None)
        if register is not None:
            self.module_hook = register(self._on_module_call)

    def _patch_compile(self, torch):
        """torch.compile (torch 2) and Module.compile (2.2): see on_compile."""
        auto = self

        def wrap(original, where, target_of):
            @functools.wraps(original)
            def compile(*args, **kwargs):
                try:
                    auto.on_compile(target_of(args, kwargs))
                except Exception as e:
                    auto.fail(where, e)
                return original(*args, **kwargs)

            return compile

        original = getattr(torch, "compile", None)
        if callable(original):
            torch.compile = wrap(original, "torch.compile", lambda a, k: a[0] if a else k.get("model"))
        module_compile = getattr(torch.nn.Module, "compile", None)
        if callable(module_compile):
            torch.nn.Module.compile = wrap(module_compile, "Module.compile", lambda a, k: a[0] if a else None)

    def on_compile(self, target):
        """The script compiles a model or function: from now on no global module hook and no FLOP count (they
        would make torch.compile leave the model uncompiled); a compiled module is the model."""
        self.compiled = True
        if self.module_hook is not None:
            self.module_hook.remove()
            self.module_hook = None
        self.state.extras.skip_count(_COMPILED_WHY)
        if isinstance(target, self.torch.nn.Module):
            self.compiled_model = weakref.ref(target)

    def _patch_worker_loop(self, worker_module):
        """DataLoader workers are told apart by what they run: torch's worker loop (fork, spawn or forkserver)."""
        original = getattr(worker_module, "_worker_loop", None)
        if original is None:
            return
        auto = self

        @functools.wraps(original)
        def _worker_loop(*args, **kwargs):
            auto.in_worker()
            return original(*args, **kwargs)

        worker_module._worker_loop = _worker_loop

    def _patch_loader(self, loader_cls, iter_cls):
        auto = self
        original_init = loader_cls.__init__
        original_iter = loader_cls.__iter__
        original_next = iter_cls.__next__
        self.original_iter = original_iter

        @functools.wraps(original_init)
        def __init__(loader, *args, **kwargs):
            if getattr(loader, "_saturate_info", None) is not None or not auto.active:
                return original_init(loader, *args, **kwargs)
            try:
                info, new_args, new_kwargs = auto.on_loader_built(loader, original_init, args, kwargs)
            except Exception as e:
                auto.fail("DataLoader.__init__", e)
                return original_init(loader, *args, **kwargs)
            original_init(loader, *new_args, **new_kwargs)
            try:
                object.__setattr__(loader, "_saturate_info", info)
                info.settings = _loader_settings(loader)
            except Exception as e:
                auto.fail("DataLoader.__init__", e)
            return None

        @functools.wraps(original_iter)
        def __iter__(loader):
            info = getattr(loader, "_saturate_info", None)
            if info is None or auto.bypass or auto.silent():
                return original_iter(loader)
            try:
                info.loader = weakref.ref(loader)
                taken = auto.on_iter(loader, info)
            except Exception as e:
                auto.fail("DataLoader.__iter__", e)
                return original_iter(loader)
            if taken is not None:
                return taken
            it = original_iter(loader)
            if isinstance(it, iter_cls):
                it._saturate_info = info
            return it

        @functools.wraps(original_next)
        def __next__(it):
            # The per-batch path: kept to a few attribute reads besides the two clock reads.
            info = getattr(it, "_saturate_info", None)
            if info is None or auto.bypass or not auto.active or auto.state.explicit:
                return original_next(it)
            try:
                t0 = auto.on_request(info)
                taken = auto.on_request_takeover(it, info) if auto.takes_over and info is auto.train else None
            except StopIteration:  # compute mode ends a pass over the repeated batch
                raise
            except Exception as e:
                auto.fail("DataLoader.__next__", e)
                return original_next(it)
            batch = taken if taken is not None else original_next(it)
            try:
                auto.on_batch(info, t0, batch)
            except Exception as e:
                auto.fail("DataLoader.__next__", e)
            return batch

        loader_cls.__init__ = __init__
        loader_cls.__iter__ = __iter__
        iter_cls.__next__ = __next__

    def _patch_optimizer(self, optimizer_cls):
        auto = self
        original_init = optimizer_cls.__init__
        opt_module = sys.modules.get(optimizer_cls.__module__)
        pre = getattr(opt_module, "register_optimizer_step_pre_hook", None)
        post = getattr(opt_module, "register_optimizer_step_post_hook", None)
        global_hooks = pre is not None and post is not None
        if global_hooks:
            pre(lambda opt, args, kwargs: auto.on_step_begin())
            post(lambda opt, args, kwargs: auto.guarded_step_end("optimizer"))

        @functools.wraps(original_init)
        def __init__(opt, *args, **kwargs):
            original_init(opt, *args, **kwargs)
            try:
                auto.optimizers += 1
                auto.latest_optimizer = weakref.ref(opt)
                if not global_hooks:
                    _wrap_step(type(opt), auto)
            except Exception as e:
                auto.fail("Optimizer.__init__", e)

        optimizer_cls.__init__ = __init__

    def _patch_backward(self, autograd):
        auto = self
        original = autograd.backward

        @functools.wraps(original)
        def backward(*args, **kwargs):
            # Where the step reaches its gradient sync (DDP all-reduces during backward): a rank others wait for
            # arrives here last.
            auto.backward_at = _perf()
            result = original(*args, **kwargs)
            if auto.optimizers == 0:
                auto.guarded_step_end("backward")
            return result

        autograd.backward = backward

    def _patch_scaler(self, scaler_cls):
        auto = self
        original_init = scaler_cls.__init__

        @functools.wraps(original_init)
        def __init__(scaler, *args, **kwargs):
            original_init(scaler, *args, **kwargs)
            auto.scaler = True  # an attribute store cannot fail

        scaler_cls.__init__ = __init__

    def _patch_autocast(self, autocast_cls):
        auto = self
        original_enter = autocast_cls.__enter__

        @functools.wraps(original_enter)
        def __enter__(ctx):
            try:
                if not auto.inside_our_autocast and auto.script_amp is None and getattr(ctx, "_enabled", True):
                    auto.script_amp = _dtype_name(getattr(ctx, "fast_dtype", None))
            except Exception as e:
                auto.fail("autocast.__enter__", e)
            return original_enter(ctx)

        autocast_cls.__enter__ = __enter__

    # ---- loaders ----------------------------------------------------------------------------------------

    def on_loader_built(self, loader, original_init, args, kwargs):
        """Names the loader and, when it is the knobs' target, rewrites its constructor arguments. Returns
        (info, args, kwargs) for the original __init__."""
        site = _call_site(loader)
        n = self.site_counts.get(site, 0)
        self.site_counts[site] = n + 1
        self.loaders_built += 1
        info = LoaderInfo("%s#%d" % (site, n), site)
        try:
            bound = _bind(original_init, loader, args, kwargs)
        except TypeError:  # the original will raise its own error for these arguments
            return info, args, kwargs
        info.script = _script_values(bound, _parameter_defaults(original_init))
        if self._is_target(info, bound):
            self.inject_untargeted = False
            bound = self._inject(info, bound, original_init)
        return info, (), bound

    def _is_target(self, info, bound):
        if not any(_knob_request(self.state.knobs, k) is not None for k in LOADER_KNOBS):
            return False
        if self.target is not None:
            return info.key == self.target
        shuffled = bound.get("shuffle") or type(bound.get("sampler")).__name__ in ("RandomSampler",
                                                                                    "DistributedSampler")
        return self.inject_untargeted and bool(shuffled)

    def _inject(self, info, bound, original_init):
        """Sets the requested loader knobs in `bound` (the constructor's arguments by name), dropping options
        that would conflict with the result. Records what was set and why anything was not."""
        defaults = _parameter_defaults(original_init)
        knobs = self.state.knobs
        for name in LOADER_KNOBS:
            raw = _knob_request(knobs, name)
            if raw is None:
                continue
            script = info.script.get(name)
            try:
                value = cast(raw, script if script is not None else (0 if name != "pin_memory" else False))
            except ValueError as e:
                info.errors[name] = "%r: %s" % (raw, e)
                continue
            if name == "batch_size" and bound.get("batch_sampler") is not None:
                info.errors[name] = "the loader has a batch_sampler, so no batch size to set"
                continue
            if name == "batch_size" and script is None:
                info.errors[name] = "the loader takes ready batches from its dataset (batch_size=None)"
                continue
            bound["num_workers" if name == "workers" else name] = value
            info.injected[name] = value
        workers = bound.get("num_workers", defaults.get("num_workers", 0)) or 0
        if workers == 0:
            # Options only valid with worker processes go back to their defaults.
            for option in ("prefetch_factor", "persistent_workers", "multiprocessing_context"):
                if option in bound and bound[option] != defaults.get(option):
                    if option in info.injected:
                        info.errors[option] = "needs workers > 0"
                        del info.injected[option]
                    bound[option] = defaults.get(option)
        return bound

    def on_iter(self, loader, info):
        """Loader and compute modes take over the target loader at its first iter(). Returns an iterator to use
        instead of the loader's own, or None."""
        if self.mode == "loader" and self.target is not None and info.key == self.target:
            self._drain(loader, info, None)
        if self.mode == "compute":
            if self.compute_batch is not None and info is self.train:
                return self._repeat(loader, info)
            if self.target is not None and info.key == self.target and self.compute_batch is None:
                self.bypass = True
                try:
                    source = self.original_iter(loader)
                    first = next(source, None)
                    del source  # its workers stop now instead of loading batches nobody reads
                finally:
                    self.bypass = False
                if first is None:
                    return iter(())
                self.train = info
                self.compute_batch = to_device(first, self._device())
                return self._repeat(loader, info)
        return None

    def on_request(self, info):
        """A batch is asked of `info`'s loader. Returns the time of asking."""
        now = _perf()
        if not self.identified:
            return now
        if info is self.train:
            if self.excluding_since is not None:
                self.excluded += now - self.excluding_since
                self.excluding_since = None
            elif self.step_ended:
                self.after_step += now - self.t_end
        elif self.excluding_since is None:
            if self.step_ended:
                self.after_step += now - self.t_end
            self.excluding_since = now
        self.step_ended = False
        return now

    def on_request_takeover(self, it, info):
        """Compute mode without a target: once the first step named the training loader, its open iterator
        hands over the cached device batch for the rest of the pass. Loader mode: that iterator is drained."""
        if info is not self.train or not self.identified:
            return None
        if self.mode == "loader":
            self._drain(None, info, it)
        if self.mode == "compute":
            if self.compute_batch is None:
                self.compute_batch = to_device(self.last_batch, self._device())
                self.last_batch = None
            n = getattr(it, "_saturate_n", None)
            n = getattr(it, "_num_yielded", 0) if n is None else n
            total = _len_or_none(it)
            if total is not None and n >= total:
                raise StopIteration
            it._saturate_n = n + 1
            return self.compute_batch
        return None

    def on_batch(self, info, t0, batch):
        now = _perf()
        info.yielded += 1
        self.current = info
        if info.stamp != self.step_no:  # the first batch this loader hands over in this step
            info.stamp = self.step_no
            info.pending_wait = 0.0
            info.pending_samples = 0
        info.pending_wait += now - t0
        info.pending_samples += count_samples(batch)
        if not self.identified:
            self.last_batch = batch

    def _repeat(self, loader, info):
        """Compute mode: the device batch, as many times as a pass over `loader` has batches (forever without a
        length), each handed over through the same accounting as a real batch."""
        total = _len_or_none(loader)
        n = 0
        while total is None or n < total:
            t0 = self.on_request(info)
            self.on_batch(info, t0, self.compute_batch)
            n += 1
            yield self.compute_batch

    def _drain(self, loader, info, first):
        """Loader mode: the training loader alone, pass after pass, then exit 0 (never returns)."""
        self.begin_reporting(info)
        self.bypass = True
        if loader is None:
            loader = info.loader() if info.loader is not None else None
        _drain(self.state, loader, count_samples, first=first, passes=self.original_iter)

    def _device(self):
        """Where the model lives: the model's parameters, else the latest optimizer's, else the helper's
        default (SATURATE_DEVICE, cuda when available, else cpu)."""
        for source in (self.model, self.latest_optimizer):
            obj = source() if source is not None else None
            param = _first_parameter(obj)
            if param is not None:
                return param.device
        return default_device(self.state.device_request)

    # ---- steps --------------------------------------------------------------------------------------------

    def on_step_begin(self):
        self.step_depth += 1

    def guarded_step_end(self, at):
        try:
            self.on_step_end(at)
        except Exception as e:
            self.fail("the end of a training step (%s)" % at, e)

    def on_step_end(self, at):
        if at == "optimizer":
            depth = self.step_depth - 1
            self.step_depth = depth if depth > 0 else 0
            if depth > 0:
                return
        state = self.state
        if not self.active or state.explicit:
            return
        now = _perf()
        if not self.identified:
            self._first_step(now, at)
            return
        # The loader that handed over this step's batches is the training loader (it may be a new one: a loader
        # rebuilt every epoch); its batches are the step's samples, and its time was not another loader's.
        current = self.current
        if current is not None and current is not self.train and current.stamp == self.step_no:
            self.train = current
            self.excluded = 0.0
            self.excluding_since = None
        if self.excluding_since is not None:
            self.excluded += now - self.excluding_since
            self.excluding_since = None
        train = self.train
        fresh = train is not None and train.stamp == self.step_no
        if train is not None and not fresh and self.step_ended:
            # No batch was asked for since the last step ended: another optimizer stepped on the same batch (a
            # GAN's generator after its discriminator). One training step per batch; this time is part of it.
            self._continue_step(now)
            return
        wait = train.pending_wait if fresh else 0.0
        excluded = self.excluded
        loop = now - self.t_end - excluded - wait
        if state.extras.profiled:
            # The step ran under the profiler: slower than the others, so left out like a validation pass.
            state.excluded_s += now - self.t_end
        else:
            state.steps += 1
            state.samples += self._step_samples()
            state.wait_s += wait
            if loop > 0:
                state.step_s += loop
            if excluded:
                state.excluded_s += excluded
            backward_at = self.backward_at
            if backward_at is not None and backward_at > self.t_end:
                state.before_backward_s += min(max(0.0, backward_at - self.t_end - excluded), loop + wait)
            if self.after_step:
                state.phases["after_step"] = state.phases.get("after_step", 0.0) + self.after_step
        self._reset_step(now)
        if now >= state.next_report:
            state.progress(now)
        self._extras_step_end(now, 0)

    def _continue_step(self, now):
        """The time since the previous step end joins that step (a second optimizer on the same batch)."""
        state = self.state
        if state.steps and not state.extras.profiled:
            state.step_s += now - self.t_end
        elif state.extras.profiled:
            state.excluded_s += now - self.t_end
        self.t_end = now

    def _step_samples(self):
        train = self.train
        if train is not None and train.stamp == self.step_no and train.pending_samples:
            return train.pending_samples
        if self.model_samples:
            return self.model_samples
        if self.samples_flag is not None:
            return self.samples_flag
        return 1

    def _reset_step(self, now):
        self.step_no += 1  # every loader's pending batches now belong to a past step
        self.model_samples = 0
        self.after_step = 0.0
        self.excluded = 0.0
        self.backward_at = None
        self.t_end = now
        self.step_ended = True

    def _extras_step_end(self, now, samples):
        """The FLOP count ends after the first step, the profiler advances after every step (_extras); their own
        time is left out of the measurement (excluded_s), and the next step is timed from when they are done."""
        extras = self.state.extras
        if not extras.pending:
            return
        extras.step_end(samples)
        after = _perf()
        self.state.excluded_s += after - now
        self.t_end = after

    def _first_step(self, now, at):
        """The first training step ended: name the training loader and the model, report what was found, start
        the counters from here (the first step is start-up), and let loader/compute modes take over."""
        self.identified = True
        self.step_at = at
        current = self.current
        self.train = current if current is not None and current.stamp == self.step_no else None
        self._find_model()
        if self.train is not None:
            self.samples_from = "loader"
        elif self.model_samples:
            self.samples_from = "model_input"
        elif self.samples_flag is not None:
            self.samples_from = "flag"
        else:
            self.samples_from = "steps"
        self.begin_reporting(self.train)
        samples = self._step_samples()
        self._reset_step(now)
        self.state.progress(now)
        self._extras_step_end(now, samples)
        if self.mode in ("loader", "compute") and self.train is None:
            self.state.done("no-loader")
            raise SystemExit(0)

    def begin_reporting(self, train):
        """hello, the loader message and the knob messages, once."""
        state = self.state
        if state.tracking:
            return
        state.auto = True
        state.begin_tracking()
        send = state.channel.send
        others = sum(self.site_counts.values()) - (1 if train is not None else 0)
        fields = {"key": None, "site": None, "others": max(0, others),
                  "samples_from": getattr(self, "samples_from", "loader"), "step_at": getattr(self, "step_at", None)}
        if train is not None:
            fields.update(train.settings)
            fields.update({"key": train.key, "site": train.site, "injected": dict(train.injected)})
        fields["batchnorm"] = self.model_batchnorm
        if state.rank is not None:
            fields.update(state.rank)
        send("loader", fields, patient=True)
        for name, fields in self._knob_messages(train):
            send("knob", fields, patient=True)

    def _knob_messages(self, train):
        knobs = self.state.knobs
        messages = []
        if train is not None:
            for name in LOADER_KNOBS:
                script = train.script.get(name)
                value = train.settings.get("num_workers" if name == "workers" else name)
                if value is None:  # prefetch_factor without workers: unused, the script's value stands
                    value = script
                fields = {"name": name, "value": value, "default": script, "auto": True,
                          "source": "saturate" if name in train.injected else "default"}
                if name in train.errors:
                    fields["error"] = train.errors[name]
                elif _knob_request(knobs, name) is not None and name not in train.injected:
                    fields["error"] = "the training loader (%s) was not the one built for the knobs%s" % (
                        train.key, " (target %s)" % self.target if self.target else "")
                messages.append((name, fields))
        amp = {"name": "amp", "value": self.amp_in_effect(), "default": self.script_amp or "off", "auto": True,
               "source": "saturate" if self.amp_applied else "default"}
        if self.amp_error:
            amp["error"] = self.amp_error
        messages.append(("amp", amp))
        return messages

    # ---- the model: samples from its input, autocast ------------------------------------------------------

    amp_applied = False
    amp_error = None
    model_batchnorm = None  # the model has BatchNorm layers (None: no model found)

    def amp_in_effect(self):
        if self.amp_applied:
            return self.amp_applied
        return self.script_amp or "off"

    def _on_module_call(self, module, args):
        """Global forward pre-hook, first step only: records the modules called with gradients enabled."""
        try:
            self._record_module_call(module, args)
        except Exception as e:
            self.fail("the first step's module hook", e)
        return None

    def _record_module_call(self, module, args):
        if not self.torch.is_grad_enabled():
            return None
        extras = self.state.extras
        if extras.pending and not extras.count_begun and not self.silent():
            extras.begin_count()  # the first training step's forward starts: count its FLOPs
        if len(self.modules_seen) >= _MAX_MODULES_SEEN:
            return None
        for seen, _ in self.modules_seen:
            if seen is module:
                return None
        self.modules_seen.append((module, _first_dim(args)))
        return None

    def _find_model(self):
        """The model is the module with the most parameters among those the first step called (loss modules
        and other helpers have few or none). Ends the global hook; keeps a hook on the model only if its input
        counts the samples or autocast must be injected."""
        if self.module_hook is not None:
            self.module_hook.remove()
            self.module_hook = None
        best, best_n, best_dim = None, -1, None
        compiled = self.compiled_model() if self.compiled_model is not None else None
        if compiled is not None:
            # Its calls were not seen (no hook may touch a compiled module); it is the model the script chose.
            best, best_n = compiled, sum(p.numel() for p in compiled.parameters())
        for module, dim in self.modules_seen:
            n = sum(p.numel() for p in module.parameters())
            if n > best_n:
                best, best_n, best_dim = module, n, dim
        self.modules_seen = []
        if best is None:
            if self.amp_request is not None:
                self.amp_error = "no model was called with gradients in the first step"
            return
        self.model = weakref.ref(best)
        batchnorm = getattr(getattr(self.torch.nn.modules, "batchnorm", None), "_BatchNorm", None)
        self.model_batchnorm = batchnorm is not None and any(isinstance(m, batchnorm) for m in best.modules())
        if self.current is None and best_dim:
            self.model_samples = best_dim
            best.register_forward_pre_hook(self._on_model_call)
        self._inject_amp(best)

    def _on_model_call(self, module, args):
        try:
            if self.torch.is_grad_enabled():
                self.model_samples += _first_dim(args) or 0
        except Exception as e:
            self.fail("the model's forward hook", e)

    def _inject_amp(self, model):
        """Runs the model's forward under torch.autocast when the amp knob asks for it."""
        raw = self.amp_request
        if raw is None:
            return
        choice = str(raw).strip().lower()
        if choice in ("off", "false", "no", "0", "fp32", "none"):
            return
        dtype = {"bf16": "bfloat16", "on": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16",
                 "float16": "float16", "16": "float16"}.get(choice)
        if dtype is None:
            self.amp_error = "%r is not off, bf16 or fp16" % (raw,)
            return
        if dtype == "float16" and not self.scaler:
            self.amp_error = "fp16 needs the script's own GradScaler to stay correct; not injected"
            return
        param = _first_parameter(model)
        device_type = param.device.type if param is not None else "cpu"
        auto = self
        torch = self.torch
        forward = model.forward

        @functools.wraps(forward)
        def autocast_forward(*args, **kwargs):
            if not auto.active:
                return forward(*args, **kwargs)
            # Entering autocast is saturate's doing: if it fails, the forward runs as the script wrote it. What the
            # forward itself raises is the script's, and goes through.
            try:
                context = torch.autocast(device_type, dtype=getattr(torch, dtype))
                context.__enter__()
            except Exception as e:
                auto.fail("the injected autocast", e)
                return forward(*args, **kwargs)
            auto.inside_our_autocast = True
            try:
                return forward(*args, **kwargs)
            finally:
                auto.inside_our_autocast = False
                context.__exit__(None, None, None)

        model.forward = autocast_forward
        self.amp_applied = "bf16" if dtype == "bfloat16" else "fp16"


def _wrap_step(cls, auto):
    """torch 1.13: wraps `cls.step` once per class so that the end of every step is seen. A class-level function
    (not an instance attribute) keeps LR schedulers' `optimizer.step.__func__` working."""
    step = cls.__dict__.get("step") or getattr(cls, "step", None)
    if step is None or getattr(step, "_saturate", False):
        return

    @functools.wraps(step)
    def counted_step(opt, *args, **kwargs):
        auto.step_depth += 1
        try:
            return step(opt, *args, **kwargs)
        finally:
            auto.guarded_step_end("optimizer")

    counted_step._saturate = True
    cls.step = counted_step


def _grad_scaler_classes(torch):
    found = []
    for path in (("cuda", "amp", "GradScaler"), ("amp", "GradScaler"), ("cpu", "amp", "GradScaler")):
        obj = torch
        for part in path:
            obj = getattr(obj, part, None)
        if isinstance(obj, type) and obj not in found:
            found.append(obj)
    # A subclass's __init__ calls its base's: patch only the bases, or one GradScaler would count twice.
    return [c for c in found if not any(other is not c and issubclass(c, other) for other in found)]


def _call_site(loader):
    """"file:line" of the code that built `loader`: the first frame outside torch and saturate that is not a
    DataLoader subclass's own __init__. The file is relative to the working directory when inside it."""
    skip = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), _TORCH_DIR)
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        path = os.path.abspath(filename)
        inside = any(d and path.startswith(d + os.sep) for d in skip)
        own_init = frame.f_code.co_name == "__init__" and frame.f_locals.get("self") is loader
        if not inside and not own_init:
            cwd = os.getcwd()
            shown = os.path.relpath(path, cwd) if path.startswith(cwd + os.sep) else path
            return "%s:%d" % (shown, frame.f_lineno)
        frame = frame.f_back
    return "?"


_TORCH_DIR = None


def _bind(function, loader, args, kwargs):
    import inspect

    bound = inspect.signature(function).bind(loader, *args, **kwargs)
    arguments = dict(bound.arguments)
    arguments.pop(next(iter(inspect.signature(function).parameters)))
    extra = arguments.pop("kwargs", None)
    if isinstance(extra, dict):
        arguments.update(extra)
    return arguments


def _parameter_defaults(function):
    import inspect

    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _script_values(bound, defaults):
    """The script's own value of each loader knob, from the constructor's arguments (defaults filled in)."""
    def get(name, fallback):
        return bound.get(name, defaults.get(name, fallback))

    return {"workers": get("num_workers", 0), "batch_size": get("batch_size", 1),
            "pin_memory": bool(get("pin_memory", False)), "prefetch_factor": get("prefetch_factor", None),
            "persistent_workers": bool(get("persistent_workers", False))}


def _loader_settings(loader):
    workers = getattr(loader, "num_workers", 0)
    dataset = getattr(loader, "dataset", None)
    iterable = any(c.__name__ == "IterableDataset" for c in type(dataset).__mro__)
    batch_size = getattr(loader, "batch_size", None)
    drop_last = bool(getattr(loader, "drop_last", False))
    return {"dataset": type(dataset).__name__, "iterable": bool(iterable), "num_workers": workers,
            "pin_memory": bool(getattr(loader, "pin_memory", False)),
            "batch_size": batch_size, "last_batch": _last_batch(loader, batch_size, drop_last, iterable),
            "epoch_samples": _epoch_samples(loader, batch_size, drop_last, iterable),
            "prefetch_factor": getattr(loader, "prefetch_factor", None) if workers else None,
            "persistent_workers": bool(getattr(loader, "persistent_workers", False)),
            "drop_last": bool(getattr(loader, "drop_last", False))}


def _last_batch(loader, batch_size, drop_last, iterable):
    """Samples in an epoch's last batch in this process when it is smaller than the rest (a DistributedSampler's
    share of the dataset, not the whole), else None."""
    if drop_last or iterable or not batch_size:
        return None
    sampler = getattr(loader, "sampler", None)
    n = _len_or_none(sampler) if sampler is not None else None
    if not n:
        return None
    rest = n % batch_size
    return rest or None


def _epoch_samples(loader, batch_size, drop_last, iterable):
    """Samples one epoch of `loader` hands over in this process (a DistributedSampler's share), or None."""
    if iterable:
        return None
    n = _len_or_none(getattr(loader, "sampler", None))
    if n is None:
        return None
    if drop_last and batch_size:
        n -= n % batch_size
    return n


def _first_parameter(obj):
    if obj is None:
        return None
    try:
        if hasattr(obj, "parameters"):
            return next(iter(obj.parameters()), None)
        for group in getattr(obj, "param_groups", ()):
            for p in group.get("params", ()):
                return p
    except Exception:
        return None
    return None


def _first_dim(args):
    for arg in args:
        shape = getattr(arg, "shape", None)
        if shape is not None and len(shape) >= 1:
            return int(shape[0])
    return None


def _dtype_name(dtype):
    text = str(dtype)
    if "bfloat16" in text:
        return "bf16"
    if "float16" in text:
        return "fp16"
    return None


def _len_or_none(obj):
    try:
        return len(obj)
    except TypeError:
        return None


def _positive_float(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None
