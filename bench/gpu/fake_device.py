"""GPU memory for the CPU rehearsal of bench/gpu_checks.sh (--cpu), where training runs on CPU torch and the GPU is
the NVML stand-in (tests/fake_nvml): a process "uses" device memory by writing how much to FAKE_NVML_PROCS_DIR/PID,
which the stand-in reads at every query, so saturate sees the memory used, free memory and each process's share
move as they would on a GPU; and an allocation that does not fit raises the error PyTorch's CUDA allocator raises,
so saturate, Lightning and accelerate classify it as on a GPU.

What a training step needs is measured, not assumed: the parameters, their gradients and the optimizer's state,
plus every tensor autograd saves for the backward pass (saved_tensors_hooks), as the caching allocator would hold
them; like that allocator, a process keeps what it once held until it ends. Free memory is the stand-in's own answer
(nvmlDeviceGetMemoryInfo_v2 through SATURATE_NVML_LIBRARY), so runs sharing the device compete as they would.
"""

import contextlib
import ctypes
import fcntl
import os

import torch

MIB = 1 << 20


class _Memory(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong), ("reserved", ctypes.c_ulonglong),
                ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


def available():
    """True where this stands in for a GPU: no CUDA, and the stand-in's process folder named."""
    return not torch.cuda.is_available() and bool(os.environ.get("FAKE_NVML_PROCS_DIR"))


class FakeDevice:
    """Device 0 of the stand-in, as this process's allocator sees it. limit_bytes: a cap for this process (as
    torch.cuda.set_per_process_memory_fraction sets on a GPU); None: the device's free memory alone."""

    def __init__(self, limit_bytes=None):
        self.dir = os.environ["FAKE_NVML_PROCS_DIR"]
        self.path = os.path.join(self.dir, str(os.getpid()))
        self.limit = limit_bytes
        self.held = 0
        self.peak_request = 0
        self.lib = ctypes.CDLL(os.environ["SATURATE_NVML_LIBRARY"])
        if self.lib.nvmlInit_v2() != 0:
            raise RuntimeError("fake_device: the NVML stand-in did not start")
        self.handle = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.handle)) != 0:
            raise RuntimeError("fake_device: the NVML stand-in has no device 0")

    def memory(self):
        m = _Memory(version=ctypes.sizeof(_Memory) | (2 << 24))
        if self.lib.nvmlDeviceGetMemoryInfo_v2(self.handle, ctypes.byref(m)) != 0:
            raise RuntimeError("fake_device: nvmlDeviceGetMemoryInfo_v2 failed")
        return m

    def hold(self, nbytes):
        """Makes this process hold at least nbytes, or raises torch.cuda.OutOfMemoryError."""
        self.peak_request = max(self.peak_request, nbytes)
        if nbytes <= self.held:
            return
        # One process at a time reads free memory and takes its share, as the driver serialises allocations.
        with open(os.path.join(self.dir, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            m = self.memory()
            grow = nbytes - self.held
            if grow > m.free or (self.limit is not None and nbytes > self.limit):
                allowed = "" if self.limit is None else f" Of this process's {self.limit / MIB:.0f} MiB allowed,"
                raise torch.cuda.OutOfMemoryError(
                    f"CUDA out of memory. Tried to allocate {grow / MIB:.2f} MiB. GPU 0 has a total capacity of "
                    f"{m.total / MIB:.0f} MiB of which {m.free / MIB:.0f} MiB is free.{allowed} this process has "
                    f"{self.held / MIB:.0f} MiB memory in use. (CPU rehearsal: the NVML stand-in's memory)")
            tmp = f"{self.path}.tmp"
            with open(tmp, "w") as f:
                f.write(str(-(-nbytes // MIB)))
            os.replace(tmp, self.path)
            self.held = nbytes

    def close(self):
        with contextlib.suppress(OSError):
            os.remove(self.path)


def state_bytes(model, optimizer_slots=1):
    """Parameters, their gradients and `optimizer_slots` optimizer tensors per parameter (SGD momentum: 1)."""
    return sum(p.numel() * p.element_size() for p in model.parameters()) * (2 + optimizer_slots)


@contextlib.contextmanager
def saved_for_backward(device, base_bytes):
    """Inside it, every tensor autograd saves counts against the device on top of base_bytes (this step's inputs
    and the training state): the step runs out of memory where a GPU's would, in the forward pass."""
    total = [base_bytes]
    device.hold(base_bytes)

    def pack(t):
        total[0] += t.numel() * t.element_size()
        device.hold(total[0])
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        yield
