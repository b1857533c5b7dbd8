"""The automatic instrumentation's patches of torch (the table in _auto.py's docstring): each wraps one torch
entry point and calls the Auto's on_* method for it, catching its own errors."""

import functools
import sys
import time
import weakref

from ._auto_loaders import _loader_settings
from ._auto_model import _dtype_name

_perf = time.perf_counter
_COMPILED_WHY = "the model is compiled (torch.compile), and counting would keep it from compiling"


class Patches:
    """Installs the patches; mixed into _auto.Auto."""

    __slots__ = ()  # the attributes are Auto's (_auto.py)

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
            # The per-batch path: a few attribute reads and one call (on_next).
            info = it._saturate_info
            if info is None or auto.bypass or not auto.active or auto.state.explicit:
                return original_next(it)
            return auto.on_next(it, info, original_next)

        loader_cls.__init__ = __init__
        loader_cls.__iter__ = __iter__
        iter_cls.__next__ = __next__
        # A class default, so that __next__ reads the attribute directly (a getattr call costs more per batch).
        iter_cls._saturate_info = None

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
        self.backward_patch = (autograd, original, backward)

    def set_backward_patched(self, patched):
        """The backward() wrapper on or off. A single process whose steps end at an optimizer needs neither of
        its uses (a rank's time to its gradient sync, a step end without an optimizer), so the first step takes it
        off: one call less per step. A forked child puts it back (it may be a rank)."""
        if self.backward_patch is None:
            return
        autograd, original, wrapper = self.backward_patch
        current, wanted = (original, wrapper) if patched else (wrapper, original)
        if autograd.backward is current:  # anything else wrapped it since: leave it as it is
            autograd.backward = wanted

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
            try:
                auto.on_step_end("optimizer")
            except Exception as e:
                auto.fail("the end of a training step (optimizer)", e)

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
