"""Which data files a run reads, seen as the process opens them (docs/helper-protocol.md, the `files` message).

A DataLoader opens each sample's file for a moment, so scanning /proc/PID/fd from outside sees almost none of
them; Python's audit hook (sys.addaudithook, event "open") sees every open() and os.open() of the process. The
hook keeps a small sample of the paths opened for reading: the first FIRST distinct ones as they come, then a
uniform reservoir of RESERVOIR among every later open, and counts the opens. Each of the first AT_ONCE distinct
paths is sent at its open (a short-lived worker, such as a spawn Pool's that is terminated and runs no atexit, still
names what it read, and the burst of a DataLoader's workers starting together stays within the receiving queue);
the rest goes at most once per SEND_EVERY_S, from inside an open.
A process that opens no data file sends nothing and pays one string comparison per audit event.

Left out: write opens, descriptors, paths under system folders (/dev, /proc, /sys, /etc, /usr, /lib*, /bin,
/sbin), Python's own files (*.py, *.pyc, shared libraries, site-packages, dist-packages, __pycache__), the
script itself, paths that are not UTF-8, and at send time anything that is not a regular file (a temporary file
already gone). Memory-mapped datasets are not opened through Python on every sample; saturate reads those from
/proc/PID/maps itself.

Workers: a DataLoader worker started by fork inherits the hook (audit hooks cannot be removed) and this sample,
whose counters restart in the child, so it reports its own opens without repeating its parent's paths; a worker
started by spawn or forkserver runs sitecustomize, which installs a fresh hook. Nothing here may break an open: any
failure inside the hook is swallowed, and the open proceeds as it would have.

sitecustomize loads this file by its path, without importing the saturate package (whose import costs tens of
milliseconds in every Python process); the package is imported at the first send, for its channel.
"""

import os
import sys
import time

FIRST = 32
RESERVOIR = 32
AT_ONCE = 8  # the first distinct paths sent as they are opened, unthrottled
WRITES = 16  # distinct paths opened for writing (checkpoints, logs): where the run writes
SEND_EVERY_S = 1.0
# Paths per datagram are limited by the 4 KiB datagram (see _channel.MAX_DATAGRAM_BYTES): room for the header.
_PAYLOAD_BYTES = 3600

_SYSTEM_PREFIXES = ("/dev/", "/proc/", "/sys/", "/etc/", "/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/",
                    "/bin/", "/sbin/")
_CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyd", ".so")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def is_code_or_system(path):
    """True for files that are the interpreter's, a library's or the system's, never training data (the same rule
    as saturate's /proc scans: src/core/data_location.cc IsCodeOrSystemFile). Written out, not looped: it runs on
    every open."""
    if path.startswith(_SYSTEM_PREFIXES) or path.endswith(_CODE_SUFFIXES):
        return True
    if "-packages/" in path and ("/site-packages/" in path or "/dist-packages/" in path):
        return True
    if "/__pycache__/" in path or "/lib/python3." in path:
        return True
    return ".so." in path[path.rfind("/") + 1:]


def _opened_for_reading(mode, flags):
    if isinstance(mode, str):
        return not any(c in mode for c in "wax+")
    if isinstance(flags, int):
        return not flags & _WRITE_FLAGS
    return True


class FileWatch:
    """The audit hook's state for one process (and, reset by _after_fork, for each forked child)."""

    def __init__(self, channel_factory=None):
        self._channel_factory = channel_factory
        self._channel = None
        self.active = False     # the hook has seen an event: sys.addaudithook really added it
        self._busy = False
        self._script = None
        self._seen = set()      # distinct paths kept so far (first and reservoir), never sent twice
        self._firsts = set()    # the first FIRST distinct paths
        self._writes = []       # the first WRITES distinct paths opened for writing
        self._unsent_writes = []
        self._reservoir = []    # paths, RESERVOIR at most
        self._later = 0         # opens after the first FIRST distinct paths
        self._rng = (os.getpid() * 2654435761 + 1) & 0xFFFFFFFFFFFFFFFF
        self.opens = 0
        self._sent_opens = 0
        self._unsent = []
        self._next_send = 0.0
        self._first_unsent = False  # one of the first AT_ONCE distinct paths waits: sent at once, unthrottled

    def hook(self, event, args):
        if event != "open":
            if event == _CHECK_EVENT:
                self.active = True
            return
        if self._busy:
            return
        self._busy = True
        try:
            self._on_open(args)
        except Exception:  # never break the program's open()
            pass
        finally:
            self._busy = False

    def after_fork(self):
        """In a forked child: its own counters and an early first send; the paths its parent kept stay known."""
        self.opens = 0
        self._sent_opens = 0
        self._later = 0
        self._unsent = []
        self._unsent_writes = []
        self._next_send = 0.0
        self._rng = (os.getpid() * 2654435761 + 1) & 0xFFFFFFFFFFFFFFFF

    def _on_open(self, args):
        path, mode, flags = args if len(args) == 3 else (tuple(args) + (None, None, None))[:3]
        if type(path) is not str:  # noqa: E721 (the common case first: a str path)
            if isinstance(path, int):
                return
            path = os.fsdecode(os.fspath(path))
        if path[:1] != "/":
            path = os.path.join(os.getcwd(), path)
        if is_code_or_system(path) or path == self._script_path():
            return
        if not _opened_for_reading(mode, flags):
            if len(self._writes) < WRITES and path not in self._writes:
                self._writes.append(path)
                self._unsent_writes.append(path)
        else:
            self.opens += 1
            if path not in self._seen:
                self._keep(path)
        if self._first_unsent:
            self._first_unsent = False
            self.flush()
            return
        # The clock is read on news, and otherwise every 16th open (a count to update).
        if not (self._unsent or self._unsent_writes or self.opens & 15 == 0):
            return
        now = time.monotonic()
        if (self._unsent or self._unsent_writes or self.opens != self._sent_opens) and now >= self._next_send:
            self._next_send = now + SEND_EVERY_S
            self.flush()

    def _keep(self, path):
        if len(self._firsts) < FIRST:
            self._firsts.add(path)
            self._seen.add(path)
            self._unsent.append(path)
            # Only a path the send would carry is news worth a datagram now (a folder such as multiprocessing's
            # temporary one, opened as a worker exits, is left out at send time anyway).
            self._first_unsent = len(self._firsts) <= AT_ONCE and bool(_nameable([path]))
            return
        # Reservoir sampling (algorithm R) over the opens after the first FIRST distinct paths.
        self._later += 1
        if len(self._reservoir) < RESERVOIR:
            self._reservoir.append(path)
        else:
            self._rng = (self._rng * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
            j = (self._rng >> 33) % self._later
            if j >= RESERVOIR:
                return
            self._reservoir[j] = path
        self._seen.add(path)
        self._unsent.append(path)

    def _script_path(self):
        if self._script is None:
            argv0 = (getattr(sys, "argv", None) or [""])[0]
            self._script = os.path.abspath(argv0) if argv0 and argv0 != "-c" else ""
        return self._script

    def flush(self):
        """Sends the kept paths not sent yet that are regular files (a few datagrams when they do not fit one)."""
        if not self._unsent and not self._unsent_writes and self.opens == self._sent_opens:
            return
        batch, self._unsent = self._unsent, []
        # A file opened for writing exists only once its open has run (the hook runs before): one not there yet
        # waits for the next send.
        writes = _nameable(self._unsent_writes)
        self._unsent_writes = [p for p in self._unsent_writes if p not in writes and not os.path.exists(p)]
        # A reservoir entry replaced before this send is no longer in the sample: it is not sent.
        kept = set(self._reservoir)
        paths = _nameable(p for p in dict.fromkeys(batch) if p in kept or p in self._firsts)
        if not paths and not writes and self.opens == self._sent_opens:
            return
        channel = self._get_channel()
        if channel is None:
            return
        self._sent_opens = self.opens
        for i, chunk in enumerate(list(_chunks(paths)) or [[]]):
            fields = {"paths": chunk, "opens": self.opens}
            if i == 0 and writes:
                fields["writes"] = writes
            # Patient: its paths are new ones, not a cumulative count the next message would carry again.
            channel.send("files", fields, patient=True, worker_ok=True, optional=("writes",))

    def _get_channel(self):
        if self._channel is None and self._channel_factory is not None:
            self._channel = self._channel_factory()
        return self._channel


def _nameable(paths):
    """The regular files among `paths` whose names JSON can carry (UTF-8)."""
    out = []
    for p in paths:
        try:
            p.encode("utf-8")
            if os.path.isfile(p):
                out.append(p)
        except (UnicodeEncodeError, OSError, ValueError):
            pass
    return out


def _chunks(paths):
    """`paths` in lists that fit one datagram each; a path too long for any is left out."""
    chunk, size = [], 0
    for p in paths:
        cost = len(p) + 4  # quotes, comma, and room for escapes of a few characters
        if cost > _PAYLOAD_BYTES:
            continue
        if size + cost > _PAYLOAD_BYTES:
            yield chunk
            chunk, size = [], 0
        chunk.append(p)
        size += cost
    if chunk:
        yield chunk


def _default_channel():
    from saturate._channel import Channel

    return Channel(os.environ.get("SATURATE_CHANNEL"), os.environ.get("SATURATE_RUN_ID"))


_WATCH = None
# Raised once after adding the hook: seeing it proves the hook is in (an earlier hook that raises RuntimeError on
# "sys.addaudithook" makes Python skip the new one silently).
_CHECK_EVENT = "saturate.files.installed"


def install():
    """Adds the audit hook to this process (once). Raises when it could not be added (an earlier hook refused it, or
    raised); the caller says so on stderr and the run goes on without it."""
    global _WATCH
    if _WATCH is not None:
        return _WATCH
    watch = FileWatch(_default_channel)
    sys.addaudithook(watch.hook)
    sys.audit(_CHECK_EVENT)
    if not watch.active:
        raise RuntimeError("sys.addaudithook did not add it (an earlier audit hook refused new hooks)")
    _WATCH = watch
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=watch.after_fork)
    import atexit

    atexit.register(watch.flush)  # the last paths and count of a process that exits normally (workers do not)
    return watch
