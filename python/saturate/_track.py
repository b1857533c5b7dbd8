"""track(): the loader wrapper and its three modes (train, loader, compute).

Timing uses time.perf_counter() (monotonic, highest resolution) for durations; message timestamps use
time.monotonic() (see _channel). Nothing here synchronises a device: a step's time is host time between
handing a batch over and being asked for the next, so asynchronous GPU work shows up wherever the script
synchronises (e.g. loss.item()).
"""

import itertools
import time

from ._batch import default_device, to_device
from ._channel import in_dataloader_worker

_perf = time.perf_counter


def _len_or_none(loader):
    try:
        return len(loader)
    except TypeError:
        return None


class Tracked:
    """What track() returns: iterate it (any number of times, e.g. once per epoch); len() is the loader's.

    Without a channel in train mode, and inside DataLoader workers, iterating it is iterating the loader itself,
    so the helper costs nothing per step.
    """

    def __init__(self, state, loader, count):
        self._state = state
        self._loader = loader
        self._count = count
        self._mode = state.mode()

    def __len__(self):
        return len(self._loader)

    def __iter__(self):
        state = self._state
        if in_dataloader_worker() or (self._mode == "train" and not state.channel.enabled):
            return iter(self._loader)
        state.explicit = True  # the script reports itself: the automatic layer steps aside
        if self._mode == "loader":
            _drain(state, self._loader, self._count)  # never returns
        if self._mode == "compute":
            return _timed(state, _compute_batches(state, self._loader), self._count)
        return _timed(state, iter(self._loader), self._count)


def _timed(state, batches, count):
    """Yields `batches` unchanged, adding the time spent in next(batches) to wait_s and the time the caller
    holds each batch to step_s (the two partition the wall time of the loop). Sends progress at most every
    report interval, done("exhausted") when `batches` ends, and a last progress if the loop is left early.

    The first step's FLOPs are counted while it runs (it stays in the counters: it is the loop's warm-up). With
    SATURATE_TRACE, the steps that run under the profiler are left out: their batches are not counted and their
    time, and the profiler's own, goes to excluded_s."""
    state.begin_tracking()
    extras = state.extras
    holding = False
    profiled = extras.profiled  # a pass may begin inside the profiler's window
    t = _perf()
    try:
        for batch in batches:
            now = _perf()
            if profiled:
                state.excluded_s += now - t
            else:
                state.wait_s += now - t
                state.steps += 1
                state.samples += count(batch)
            t = now
            if now >= state.next_report:
                state.progress(now)
            if extras.pending:
                extras.begin_count()
            holding = True
            yield batch
            holding = False
            now = _perf()
            if profiled:
                state.excluded_s += now - t
            else:
                state.step_s += now - t
            t = now
            if extras.pending:
                profiled = extras.step_end(count(batch))
                # The profiler's own time (its start, the export) is left out; ending the count is the step's.
                now = _perf()
                if extras.trace_path:
                    state.excluded_s += now - t
                else:
                    state.step_s += now - t
                t = now
        state.wait_s += _perf() - t
        t = None
        state.done("exhausted")
    finally:
        # Left early: a break in the caller's loop (GeneratorExit at the yield) or an exception from the loader.
        if t is not None:
            now = _perf()
            if profiled:
                state.excluded_s += now - t
            elif holding:
                state.step_s += now - t
            else:
                state.wait_s += now - t
            state.progress(now)


def _compute_batches(state, loader):
    """The first batch of `loader`, moved to the device once (and remembered for later passes over the same
    loader), repeated len(loader) times, or forever when the loader has no length."""
    cached = state.compute_cache
    if cached is not None and cached[0] is loader:
        batch = cached[1]
    else:
        source = iter(loader)
        try:
            first = next(source)
        except StopIteration:
            return
        # Drop the iterator now, so a DataLoader's workers stop instead of loading batches nobody reads.
        del source
        batch = to_device(first, default_device(state.device_request))
        state.compute_cache = (loader, batch)
    steps = _len_or_none(loader)
    if steps is None:
        yield from itertools.repeat(batch)
    else:
        yield from itertools.repeat(batch, steps)


def _drain(state, loader, count, first=None, passes=None):
    """Loader mode: iterates `loader` pass after pass without yielding, until SIGINT (KeyboardInterrupt), the
    SATURATE_MAX_SECONDS deadline, or a pass that yields nothing; then sends done("loader-drained") and raises
    SystemExit(0). `first`: an iterator already open on `loader`, finished before the fresh passes; `passes`: a
    function returning a fresh iterator over `loader` (default iter)."""
    state.begin_tracking()
    try:
        _drain_passes(state, loader, count, first, passes or iter)
    except KeyboardInterrupt:
        pass
    state.done("loader-drained")
    raise SystemExit(0)


def _drain_passes(state, loader, count, first, passes):
    deadline = None if state.max_seconds is None else _perf() + state.max_seconds
    while True:
        got = 0
        t = _perf()
        resumed = first is not None
        source, first = (first if resumed else passes(loader)), None
        for batch in source:
            now = _perf()
            state.wait_s += now - t
            t = now
            got += 1
            state.steps += 1
            state.samples += count(batch)
            if now >= state.next_report:
                state.progress(now)
            if deadline is not None and now >= deadline:
                return
        state.wait_s += _perf() - t
        # An empty pass means a one-shot iterable that is used up; another pass would spin forever.
        if got == 0 and not resumed:
            return
