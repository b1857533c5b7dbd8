"""saturate's in-script helper: `import saturate` in a training script to report progress to the saturate binary.

    import saturate
    batch_size = saturate.knob("batch_size", 64)
    for images, labels in saturate.track(loader):
        ...
        with saturate.phase("metrics"):
            ...
    saturate.report(loss=loss.item())

Standard library only; Python 3.9+. Uses torch only when the script already imported it. Without the
environment saturate sets (SATURATE_CHANNEL, ...), every function is a transparent pass-through. The wire
format is specified in docs/helper-protocol.md.
"""

import atexit
import functools
import os
import time

from . import _state
from ._batch import count_samples, sample_counter
from ._knobs import cast
from ._track import Tracked

__all__ = ["track", "phase", "knob", "mode", "report", "count_samples"]

_STATE = _state.State(os.environ)


def track(loader, samples=None):
    """Wraps `loader` (any iterable: a DataLoader, a list, a generator) for timing and reporting.

    Returns an iterable with the loader's len(). In SATURATE_MODE:
      train (default): yields the loader's batches unchanged;
      loader:  iterating it drains the loader pass after pass with no training at all, until saturate sends
               SIGINT or SATURATE_MAX_SECONDS passes, then exits the process with status 0;
      compute: yields the first batch, moved to SATURATE_DEVICE once, len(loader) times per pass (forever
               without a length), so the model runs with no loading or copying.
    `samples`: samples per batch, as an int or a callable taking the batch; by default the first dimension of
    the first tensor/array in the batch (see count_samples). Raises ValueError on an unknown SATURATE_MODE and
    TypeError on a bad `samples`.
    """
    return Tracked(_STATE, loader, sample_counter(samples))


class _Phase:
    """A timed block; see phase(). Re-entrant, so one instance may also be used as a decorator."""

    __slots__ = ("name", "_starts")

    def __init__(self, name):
        self.name = str(name)
        self._starts = []

    def __enter__(self):
        _STATE.enter_phase(self.name)
        self._starts.append(time.perf_counter())
        return self

    def __exit__(self, exc_type, exc, tb):
        _STATE.exit_phase(self.name, time.perf_counter() - self._starts.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return timed


def phase(name):
    """Adds the seconds spent inside `with saturate.phase(name):` (or in a function decorated with
    `@saturate.phase(name)`) to the cumulative phases[name] in progress reports. Phases of different names may
    nest (the inner time counts in both); a phase nested in itself counts once. Phase time is part of step_s
    when spent inside a tracked loop."""
    return _Phase(name)


def knob(name, default, flag=None):
    """The value saturate chose for knob `name` (from SATURATE_KNOBS), cast to type(default), else `default`.

    `flag` names the script's own command-line option that sets the same value ("--workers"), with `default`
    read from it: saturate then tunes the knob through that flag and recommends the script's own command line.

    Casting: bool accepts on/off, true/false, yes/no, 1/0; int accepts whole numbers and numeric strings; float
    and str convert numbers and strings; a None default returns the JSON value as is. A value that does not fit
    falls back to `default`, and the knob message says why. Every call tells saturate the knob exists."""
    value, source, error = default, "default", None
    if name in _STATE.knobs:
        try:
            value, source = cast(_STATE.knobs[name], default), "saturate"
        except ValueError as e:
            error = "%s=%r: %s" % (name, _STATE.knobs[name], e)
    elif _STATE.knobs_error:
        error = _STATE.knobs_error
    fields = {"name": name, "value": value, "default": default, "source": source}
    if error is not None:
        fields["error"] = error
    if flag is not None:
        fields["flag"] = str(flag)
    _STATE.hello()
    _STATE.channel.send("knob", fields, patient=True)
    return value


def mode():
    """The current mode: "train", "loader" or "compute". Raises ValueError on an unknown SATURATE_MODE."""
    return _STATE.mode()


def report(**metrics):
    """Sends the script's own metrics (e.g. report(loss=0.42, accuracy=0.91)) for sweeps to read. Values are
    numbers, strings, booleans or None; tensors and numpy scalars are converted with item() (which, for a CUDA
    tensor, waits for the GPU: call it where the script synchronises anyway)."""
    _STATE.add_metrics(metrics)


def _reset():
    """Rebuilds the state from os.environ. For tests; a script never needs it."""
    global _STATE
    _STATE.channel.close()
    _STATE = _state.State(os.environ)


def _forget_in_child():
    _STATE.forget()


def _at_exit():
    _STATE.at_exit()


class _ForkedProcess:
    """multiprocessing's fork start method ends a child with os._exit, which runs no atexit handler: a rank started
    that way (torch.multiprocessing.start_processes(start_method="fork")) sends its final report from
    multiprocessing's own exit hook instead, registered anew in each child (its registry is cleared at start)."""

    def after_fork(self):
        import multiprocessing.util

        multiprocessing.util.Finalize(None, _at_exit, exitpriority=10)


_FORKED = _ForkedProcess()
atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):  # POSIX only
    os.register_at_fork(after_in_child=_forget_in_child)
    import multiprocessing.util as _mp_util

    _mp_util.register_after_fork(_FORKED, _ForkedProcess.after_fork)
