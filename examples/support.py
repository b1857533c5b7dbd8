"""What the example trainers share: the optional saturate helper and their progress lines.

The lines are the contract with saturate's parser for unmodified scripts:
    step N loss L samples/s R step_s S data_s D [metrics_s M]   (every N steps; averages over those steps;
                                                                  metrics_s only when per-step metrics run)
    done: N steps, S samples, X samples/s            (once, at the end)
"""

import contextlib
import time


class NoHelper:
    """Stands in for the saturate module when it is not importable (or disabled): everything passes through."""

    @staticmethod
    def track(loader, samples=None):
        return loader

    @staticmethod
    def phase(name):
        return contextlib.nullcontext()

    @staticmethod
    def knob(name, default, flag=None):
        return default

    @staticmethod
    def report(**metrics):
        pass


def load_helper(disabled):
    """(the saturate module or a NoHelper, a word saying which for the config line)."""
    if disabled:
        return NoHelper(), "none (--no-helper)"
    try:
        import saturate
        return saturate, "saturate"
    except ImportError:
        return NoHelper(), "none (saturate not importable)"


class StepLog:
    """Counts steps and prints the progress lines. `every` 0 prints no step lines. Not thread-safe."""

    def __init__(self, every, helper):
        self.every = every
        self.helper = helper
        self.steps = self.samples = 0
        self.start = time.perf_counter()
        self._window_start = self.start
        self._window_steps = self._window_samples = 0
        self._window_data_s = 0.0
        self._window_phase_s = {}
        self._stopped = None

    def waited(self, seconds):
        """Adds time spent waiting for the loader in the current step."""
        self._window_data_s += seconds

    @contextlib.contextmanager
    def phase(self, name):
        """Times a named part of the step (printed as `<name>_s`), and passes it on to the helper's phase."""
        start = time.perf_counter()
        try:
            with self.helper.phase(name):
                yield
        finally:
            self._window_phase_s[name] = self._window_phase_s.get(name, 0.0) + time.perf_counter() - start

    def step(self, samples, loss):
        """Ends a step of `samples` samples. `loss` is a number, or a callable returning one that is called only
        on steps that print (e.g. a tensor's item, which synchronises the device, so that the printed timing
        includes all the work of its steps)."""
        self.steps += 1
        self.samples += samples
        self._window_steps += 1
        self._window_samples += samples
        if not self.every or self.steps % self.every:
            return
        loss_value = loss() if callable(loss) else loss
        now = time.perf_counter()
        elapsed = now - self._window_start
        phases = "".join(" %s_s %.4f" % (name, total / self._window_steps)
                         for name, total in sorted(self._window_phase_s.items()))
        print("step %d loss %.4f samples/s %.1f step_s %.4f data_s %.4f%s" % (
            self.steps, loss_value, self._window_samples / elapsed, elapsed / self._window_steps,
            self._window_data_s / self._window_steps, phases), flush=True)
        self.helper.report(loss=loss_value)
        self._window_start, self._window_steps, self._window_samples, self._window_data_s = now, 0, 0, 0.0
        self._window_phase_s = {}

    def stop(self):
        """Ends the timed part; done() reports the rate up to here (the first call to either)."""
        if self._stopped is None:
            self._stopped = time.perf_counter()

    def done(self):
        self.stop()
        elapsed = self._stopped - self.start
        print("done: %d steps, %d samples, %.1f samples/s" % (
            self.steps, self.samples, self.samples / elapsed if elapsed > 0 else 0.0), flush=True)
