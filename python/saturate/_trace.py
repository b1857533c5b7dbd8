"""A torch.profiler Chrome trace of a few steady training steps, written where SATURATE_TRACE says
(docs/helper-protocol.md, the `trace` message).

The profiler starts at the end of the first training step (start-up is not steady) and follows torch's own
schedule: WAIT_STEPS steps unprofiled, WARMUP_STEPS with the profiler warming up, ACTIVE_STEPS recorded; then the
trace is exported and the profiler stops for good. Activities: the CPU, and CUDA when the script has initialised
it. The caller leaves the warm-up and recorded steps, and the export, out of its counters: a profiled step is
slower than a normal one.
"""

import os
import tempfile

WAIT_STEPS = 2
WARMUP_STEPS = 1
ACTIVE_STEPS = 3


class Tracer:
    """Drives one torch.profiler.profile over the steps the caller signals. Not thread-safe: the training thread
    calls start() once and step() at the end of every step until finished is True."""

    def __init__(self, torch, path, send):
        self.torch = torch
        self.path = os.path.abspath(path)
        self.send = send  # send(fields): the trace message
        self.prof = None
        self.finished = False
        self.exported = False
        self.error = None

    def start(self):
        """Starts the profiler's schedule at the step that begins now. Returns whether that step is profiled."""
        torch = self.torch
        try:
            profiler = torch.profiler
            activities = [profiler.ProfilerActivity.CPU]
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                activities.append(profiler.ProfilerActivity.CUDA)
            schedule = profiler.schedule(wait=WAIT_STEPS, warmup=WARMUP_STEPS, active=ACTIVE_STEPS, repeat=1)
            self.prof = profiler.profile(activities=activities, schedule=schedule, on_trace_ready=self._export)
            self.prof.start()
        except Exception as e:
            self._finish("cannot start torch.profiler: %s: %s" % (type(e).__name__, e))
            return False
        return self._profiled()

    def step(self):
        """The step under way ended. Returns whether the step that begins now is profiled."""
        if self.finished or self.prof is None:
            return False
        try:
            self.prof.step()
        except Exception as e:
            self._finish("torch.profiler failed: %s: %s" % (type(e).__name__, e))
            return False
        if self.exported or self.error:
            self._finish(self.error)
            return False
        return self._profiled()

    def _profiled(self):
        action = getattr(self.prof, "current_action", None)
        return action is not None and getattr(action, "name", "NONE") != "NONE"

    def _export(self, prof):
        # torch writes the trace with a plain open(), which follows a link planted at the name: it writes a file of
        # its own making (mkstemp: O_EXCL, mode 0600) in the same folder instead, which is then renamed over the
        # name (a rename replaces a link, never follows it).
        tmp = None
        try:
            folder = os.path.dirname(self.path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".trace.", suffix=".json", dir=folder or ".")
            os.close(fd)
            prof.export_chrome_trace(tmp)
            os.replace(tmp, self.path)
            tmp = None
            self.exported = True
        except Exception as e:
            self.error = "cannot write the trace to %s: %s: %s" % (self.path, type(e).__name__, e)
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def _finish(self, error):
        """Stops the profiler and reports where the trace is (or why there is none)."""
        self.finished = True
        prof, self.prof = self.prof, None
        if prof is not None:
            try:
                prof.stop()
            except Exception:
                pass
        fields = {"path": self.path if self.exported else None, "steps": ACTIVE_STEPS if self.exported else 0}
        if error:
            fields["error"] = error
        self.send(fields)
