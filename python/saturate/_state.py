"""The helper's process-wide state: configuration from the environment, cumulative counters, and the messages
built from them (docs/helper-protocol.md).

Threads: the counters are updated by the thread iterating track(); phases may be timed from any thread (each
thread nests its own). Sends are safe from any thread.
"""

import os
import platform
import sys
import threading
import time

from ._batch import default_device
from ._channel import Channel, finite_or_none
from ._extras import StepExtras
from ._knobs import parse_knobs

MODES = ("train", "loader", "compute")
# Left out of progress and done, in this order, when the datagram would exceed 4 KiB: the counters must get through.
_OPTIONAL_FIELDS = ("metrics", "phases")
DEFAULT_REPORT_INTERVAL_S = 0.1


def _seconds(text, default):
    """A non-negative number of seconds from an environment variable; `default` when absent or malformed."""
    if text is None or not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        return default
    return value if value >= 0 and value == value else default


def _metric_value(name, value):
    """A reported metric as a float (None for NaN and infinities). Tensors and numpy scalars go through item()."""
    item = getattr(value, "item", None)
    if callable(item):
        value = item()
    if not isinstance(value, (str, bytes)):
        try:
            return finite_or_none(float(value))
        except (TypeError, ValueError):
            pass
    raise TypeError("saturate.report(%s=%r): metrics must be numbers" % (name, value))


def _cuda_memory():
    """Allocator counters of the current CUDA device, or None without torch or before the script used CUDA.
    Reads host-side allocator statistics only: no device synchronisation, and never initialises CUDA."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if not torch.cuda.is_initialized():
            return None
        return {"allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(),
                "peak": torch.cuda.max_memory_allocated()}
    except Exception:
        return None


def _env_int(environ, *names):
    for name in names:
        text = environ.get(name)
        if text is not None and text.strip().lstrip("-").isdigit():
            return int(text)
    return None


def rank_of_process(environ=os.environ):
    """This process's place in a distributed job, or None for a single process: {"rank", "world_size",
    "local_rank"} from torch.distributed once the script initialised it (spawn, fork and any launcher), else from
    the variables launchers set (torchrun, accelerate and Lightning: RANK/WORLD_SIZE/LOCAL_RANK; srun:
    SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID; mpirun: OMPI_COMM_WORLD_*). Never initialises anything."""
    rank = world = None
    dist = getattr(sys.modules.get("torch"), "distributed", None)
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            rank, world = dist.get_rank(), dist.get_world_size()
    except Exception:
        rank = world = None
    if world is None:
        for r, w in (("RANK", "WORLD_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS"),
                     ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")):
            rank, world = _env_int(environ, r), _env_int(environ, w)
            if rank is not None and world is not None:
                break
    if world is None or rank is None or world <= 1:
        return None
    local = _env_int(environ, "LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK")
    return {"rank": rank, "world_size": world, "local_rank": rank if local is None else local}


class State:
    """Everything the helper knows in this process. `environ` is read once, at construction."""

    def __init__(self, environ):
        self.channel = Channel(environ.get("SATURATE_CHANNEL"), environ.get("SATURATE_RUN_ID"))
        self.requested_mode = environ.get("SATURATE_MODE") or "train"
        self.knobs, self.knobs_error = parse_knobs(environ.get("SATURATE_KNOBS"))
        self.report_interval_s = _seconds(environ.get("SATURATE_REPORT_INTERVAL"), DEFAULT_REPORT_INTERVAL_S)
        self.max_seconds = _seconds(environ.get("SATURATE_MAX_SECONDS"), None)
        self.device_request = environ.get("SATURATE_DEVICE") or None
        # The first training step's FLOP count (off with SATURATE_FLOPS=0) and a profiler trace (SATURATE_TRACE).
        self.count_flops = self.channel.enabled and environ.get("SATURATE_FLOPS", "1") != "0"
        self.trace_path = environ.get("SATURATE_TRACE") or None
        self._local = threading.local()
        self.forget()

    def forget(self):
        """Starts the counters afresh (at construction, and in a forked child, which must not repeat its
        parent's numbers)."""
        self.pid = os.getpid()
        self.steps = 0
        self.samples = 0
        self.wait_s = 0.0
        self.step_s = 0.0
        self.phases = {}
        # The automatic instrumentation's time between a step's end and the next batch request: phases'
        # "after_step", kept apart so that a step adds a float instead of a dict entry.
        self.after_step_s = 0.0
        self.metrics = {}  # latest value of each name given to report()
        self.tracking = False
        self.hello_sent = False
        self.next_report = 0.0  # time.perf_counter() value; 0 sends the first progress at the first batch
        self.last_done = None  # counters() as sent in the latest done, to skip a redundant one at exit
        self.compute_cache = None  # (loader, batch on the device) for compute mode
        self.auto = False  # the automatic instrumentation (_auto) reports for this process
        self.explicit = False  # the script iterates saturate.track(): the automatic layer stays silent
        # Time left out of the measurement: other loaders (validation) between training steps, profiled steps.
        self.excluded_s = 0.0
        # Automatic instrumentation: seconds from each step's start to its last backward() call (data wait
        # included), where a distributed step meets the other ranks; a straggler's is the longest.
        self.before_backward_s = 0.0
        self.rank = None  # rank_of_process(), once tracking began
        self.extras = StepExtras(self, self.count_flops, self.trace_path)

    def mode(self):
        """The validated mode. Raises ValueError on a SATURATE_MODE saturate never sets (a bug worth seeing,
        rather than measuring the wrong thing)."""
        if self.requested_mode not in MODES:
            raise ValueError("SATURATE_MODE must be one of %s, not %r" % (", ".join(MODES), self.requested_mode))
        return self.requested_mode

    def hello(self):
        """Sends hello once per process."""
        if self.hello_sent:
            return
        self.hello_sent = True
        torch = sys.modules.get("torch")
        fields = {"mode": self.requested_mode, "python": platform.python_version(),
                  "torch": getattr(torch, "__version__", None), "device": default_device(self.device_request)}
        if self.auto:
            fields["auto"] = True
        if self.rank is not None:
            fields.update(self.rank)
        self.channel.send("hello", fields, patient=True)

    def begin_tracking(self):
        self.rank = rank_of_process()
        self.hello()
        self.tracking = True

    def counters(self):
        """The fields progress and done carry; `metrics` (the latest value of each) once any were reported."""
        phases = dict(self.phases)
        if self.after_step_s:
            phases["after_step"] = phases.get("after_step", 0.0) + self.after_step_s
        fields = {"steps": self.steps, "samples": self.samples, "wait_s": self.wait_s, "step_s": self.step_s,
                  "phases": phases}
        if self.auto or self.excluded_s:
            fields["excluded_s"] = self.excluded_s
        if self.auto:
            fields["before_backward_s"] = self.before_backward_s
        if self.rank is not None:
            fields["rank"] = self.rank["rank"]
        if self.metrics:
            fields["metrics"] = dict(self.metrics)
        return fields

    def _counters_message(self):
        fields = self.counters()
        mem = _cuda_memory()
        if mem is not None:
            fields["mem"] = mem
        return fields

    def progress(self, now):
        """Sends progress and schedules the next one `report_interval_s` after `now` (perf_counter seconds)."""
        self.next_report = now + self.report_interval_s
        self.channel.send("progress", self._counters_message(), optional=_OPTIONAL_FIELDS)

    def done(self, reason):
        fields = self._counters_message()
        fields["reason"] = reason
        self.last_done = self.counters()
        self.next_report = time.perf_counter() + self.report_interval_s
        self.channel.send("done", fields, patient=True, optional=_OPTIONAL_FIELDS)

    def at_exit(self):
        """The final report at interpreter exit: a done with reason "exit", unless the latest done already
        carries the final numbers. Only a process that tracked itself sends it: a forked child starts with
        nothing tracked (forget()), and the pid check covers a fork that skipped Python's at-fork hooks."""
        if self.tracking and self.pid == os.getpid() and self.last_done != self.counters():
            self.done("exit")

    def add_metrics(self, metrics):
        """Sends a metrics message and remembers the values for later progress and done messages. Raises
        TypeError, before sending anything, for a value that is not a number."""
        values = {str(name): _metric_value(name, value) for name, value in metrics.items()}
        self.metrics.update(values)
        self.hello()
        self.channel.send("metrics", {"metrics": values, "steps": self.steps, "samples": self.samples},
                          patient=True)

    def enter_phase(self, name):
        depth = self._depths()
        depth[name] = depth.get(name, 0) + 1

    def exit_phase(self, name, elapsed_s):
        """Adds `elapsed_s` to phases[name] when the outermost block of that name (in this thread) ends, so a
        recursive phase is not counted twice."""
        depth = self._depths()
        depth[name] -= 1
        if depth[name] == 0:
            self.phases[name] = self.phases.get(name, 0.0) + elapsed_s

    def _depths(self):
        depths = getattr(self._local, "depths", None)
        if depths is None:
            depths = self._local.depths = {}
        return depths
