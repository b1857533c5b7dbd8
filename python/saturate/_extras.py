"""Work done around training steps once per run, for the explicit helper (track) and the automatic
instrumentation alike: the FLOP count of the first training step (_flops), and the profiler trace of a few
steady steps when saturate asks for one (SATURATE_TRACE, _trace).

Protocol: the caller signals begin_count() when the first training step starts (its first batch, or the first
module called with gradients) and step_end() when any training step ends. Once both are done, `pending` is False
and the per-step cost is one attribute read.
"""

import sys

from ._flops import FlopCount
from ._trace import Tracer


class StepExtras:
    """Per process; lives in the helper's State. Threads: the training loop's thread only."""

    def __init__(self, state, count_flops, trace_path):
        self.state = state
        self.count_flops = count_flops
        self.trace_path = trace_path
        self.counting = None  # the FlopCount of the first step, while it runs
        self.tracer = None
        self.count_begun = False
        self.steps_ended = 0
        self.profiled = False  # the step under way runs under the profiler (kept across passes over a loader)
        self.skipped_why = None  # the count was asked for and will not be taken: sent at the first step end
        self.pending = bool(count_flops or trace_path)

    def skip_count(self, why):
        """No FLOP count in this process (the script compiled its model); a count under way is dropped. The first
        step end sends `why` in place of the count, when a count was asked for."""
        if not self.count_flops:
            return
        self.count_flops = False
        if self.counting is not None:
            counting, self.counting = self.counting, None
            try:
                counting.end(0)  # leaves FlopCounterMode and removes its hook; the partial count is dropped
            except Exception:
                pass
        if self.steps_ended == 0:
            self.skipped_why = why
            self.pending = True

    def begin_count(self):
        """The first training step starts: count its FLOPs (once per process; needs torch already imported)."""
        if self.count_begun or not self.count_flops:
            return
        self.count_begun = True
        torch = sys.modules.get("torch")
        if torch is None:
            return
        try:
            self.counting = FlopCount(torch)
            self.counting.begin()
        except Exception:
            self.counting = None

    def step_end(self, samples):
        """A training step ended; `samples` were in it. Ends the FLOP count after the first step and sends it,
        starts the profiler after the first step and advances it after the others. Returns whether the step that
        begins now runs under the profiler (the caller leaves it out of its counters)."""
        self.steps_ended += 1
        if self.skipped_why is not None:
            why, self.skipped_why = self.skipped_why, None
            self.state.channel.send("flops", {"skipped": why}, patient=True)
        if self.counting is not None:
            counting, self.counting = self.counting, None
            try:
                fields = counting.end(samples)
            except Exception:
                fields = None
            if fields is not None:
                self.state.channel.send("flops", fields, patient=True)
        profiled = False
        if self.trace_path:
            if self.tracer is None:
                torch = sys.modules.get("torch")
                if torch is not None:
                    self.tracer = Tracer(torch, self.trace_path, self._send_trace)
                    profiled = self.tracer.start()
                else:
                    self._send_trace({"path": None, "steps": 0, "error": "the script did not import torch"})
                    self.trace_path = None
            else:
                profiled = self.tracer.step()
        self.pending = self.counting is not None or (bool(self.trace_path) and not self._trace_finished())
        self.profiled = profiled
        return profiled

    def _trace_finished(self):
        return self.tracer is not None and self.tracer.finished

    def _send_trace(self, fields):
        self.state.channel.send("trace", fields, patient=True)
