"""DataLoaders as the automatic instrumentation sees them: which loader was built where (its key), the knobs
injected into its arguments, the training loader's take-over in loader and compute modes, and each batch's wait
and samples."""

import collections
import os
import sys
import time

from ._auto_model import _first_parameter
from ._batch import count_samples, default_device, to_device
from ._knobs import cast
from ._track import _drain

_perf = time.perf_counter
_TORCH_DIR = None  # torch's folder, set by _auto.install: calls from inside it are not the script's

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


def _knob_request(knobs, name):
    """The value SATURATE_KNOBS gives knob `name` under any of its aliases, or None."""
    for alias in KNOB_ALIASES[name]:
        if alias in knobs:
            return knobs[alias]
    return None


class LoaderInfo:
    """What the instrumentation knows of one DataLoader. Lives as the loader's `_saturate_info` attribute."""

    __slots__ = ("key", "site", "script", "injected", "errors", "settings", "pending_wait", "pending_samples",
                 "stamp", "loader", "userdict", "__weakref__")

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
        self.loader = None  # weakref to the loader, set at iter()
        self.userdict = None  # the UserDict type its batches come as (a tokenizer's output), once one came


class Loaders:
    """Loader identity, knob injection and batch accounting; mixed into _auto.Auto."""

    __slots__ = ()  # the attributes are Auto's (_auto.py)

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

    def on_next(self, it, info, fetch, takeover=True):
        """A batch asked of `info`'s loader through its iterator `it`, handed over by `fetch(it)` (torch's own
        __next__; compute mode's repeat passes its cached batch and no takeover). The time the asking took joins
        the step's data wait, the batch's samples its samples. What fetch raises is the program's and goes on
        unchanged (StopIteration ends the pass); an error of saturate's own turns the instrumentation off.
        The per-batch path: one call, two clock reads and a sample count."""
        taken = None
        try:
            t0 = _perf()
            if self.identified:
                if info is self.train:
                    if self.excluding_since is not None:
                        self.excluded += t0 - self.excluding_since
                        self.excluding_since = None
                    elif self.step_ended:
                        self.after_step += t0 - self.t_end
                elif self.excluding_since is None:
                    if self.step_ended:
                        self.after_step += t0 - self.t_end
                    self.excluding_since = t0
                self.step_ended = False
                if takeover and self.takes_over and info is self.train:
                    taken = self.on_request_takeover(it, info)
        except StopIteration:  # compute mode ends a pass over the repeated batch
            raise
        except Exception as e:
            self.fail("DataLoader.__next__", e)
            return fetch(it)
        batch = taken if taken is not None else fetch(it)
        try:
            now = _perf()
            self.current = info
            # count_samples(batch), with its fast paths here for the layouts this loader hands over: one call
            # less per batch, and a mapping type seen before skips the isinstance check. A first entry without a
            # usable first dimension (none, a scalar, a list of strings) takes the general rule.
            kind = type(batch)
            if kind is list or kind is tuple:
                first = batch[0] if batch else None
            elif kind is dict:
                first = None
                for first in batch.values():
                    break
            elif kind is info.userdict:
                first = None
                for first in batch.data.values():
                    break
            else:
                first = None
                if isinstance(batch, collections.UserDict):
                    info.userdict = kind
            try:
                samples = first.shape[0]
                if type(samples) is not int:
                    samples = int(samples)
            except Exception:
                samples = count_samples(batch)
            step_no = self.step_no
            if info.stamp != step_no:  # the first batch this loader hands over in this step
                info.stamp = step_no
                info.pending_wait = now - t0
                info.pending_samples = samples
            else:
                info.pending_wait += now - t0
                info.pending_samples += samples
            if not self.identified:
                self.last_batch = batch
        except Exception as e:
            self.fail("DataLoader.__next__", e)
        return batch

    def _repeat(self, loader, info):
        """Compute mode: the device batch, as many times as a pass over `loader` has batches (forever without a
        length), each handed over through the same accounting as a real batch."""
        total = _len_or_none(loader)
        n = 0
        cached = lambda _it: self.compute_batch  # noqa: E731
        while total is None or n < total:
            batch = self.on_next(None, info, cached, takeover=False)
            n += 1
            yield batch

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


def _len_or_none(obj):
    try:
        return len(obj)
    except TypeError:
        return None
