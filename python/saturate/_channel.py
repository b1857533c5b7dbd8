"""The datagram channel to the saturate binary (docs/helper-protocol.md).

Every send is fire-and-forget: the socket is non-blocking, and any failure (no receiver, a full queue, an
oversized or unencodable message) drops the datagram and counts it in `Channel.dropped`. Nothing here raises.
"""

import json
import math
import os
import socket
import sys
import time

PROTOCOL_VERSION = 1
MAX_DATAGRAM_BYTES = 4096
# How long a patient send retries a full receiver queue, and how long it sleeps between tries.
PATIENCE_S = 0.05
RETRY_SLEEP_S = 0.0005


def in_dataloader_worker():
    """True inside a torch DataLoader worker process, where the helper must stay silent.

    Only looks at torch if the script already imported torch.utils.data; never imports it.
    """
    data = sys.modules.get("torch.utils.data")
    if data is None:
        return False
    try:
        return data.get_worker_info() is not None
    except Exception:  # a half-imported or unusual torch: treat as the main process
        return False


def _encode(message):
    """The message as compact UTF-8 JSON, or None when it cannot be encoded."""
    try:
        return json.dumps(message, separators=(",", ":"), allow_nan=False, default=_plain).encode("utf-8")
    except (TypeError, ValueError):
        return None


def _plain(value):
    """Turns what json cannot encode into something it can: tensors and numpy scalars via item(), else str."""
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return finite_or_none(item())
        except Exception:
            pass
    return str(value)


def finite_or_none(value):
    """NaN and infinities are not JSON; they travel as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class Channel:
    """Sends protocol messages to the socket bound at `path` (None: every send is a no-op).

    The socket is created lazily and again after a fork, so a child never shares its parent's descriptor.
    Safe to call from any thread: each send is one sendto() on a datagram socket.
    """

    def __init__(self, path, run_id):
        self.path = path or None
        self.run_id = run_id or ""
        self.dropped = 0
        self._sock = None
        self._sock_pid = None

    @property
    def enabled(self):
        return self.path is not None

    def send(self, kind, fields, patient=False, optional=(), worker_ok=False):
        """Sends one message of type `kind` with `fields` merged after the common header. Returns True if sent.

        In a DataLoader worker only a `worker_ok` send goes out (the `files` message: each worker reports the files
        it opens); everything else a worker would say is its parent's to say.

        `optional` names fields to leave out, in that order, while the datagram is over MAX_DATAGRAM_BYTES; a
        message still too big is dropped. The kernel queues only net.unix.max_dgram_qlen (default 10) datagrams
        per receiver: a `patient` send (for messages that are not cumulative: hello, knob, metrics, done, all
        outside the per-step path) retries a full queue for up to PATIENCE_S; any other send drops at once."""
        if self.path is None or (not worker_ok and in_dataloader_worker()):
            return False
        message = {"v": PROTOCOL_VERSION, "type": kind, "run": self.run_id, "pid": os.getpid(),
                   "t": time.monotonic()}
        message.update(fields)
        data = _encode(message)
        for name in optional:
            if data is None or len(data) <= MAX_DATAGRAM_BYTES:
                break
            message.pop(name, None)
            data = _encode(message)
        sent = data is not None and len(data) <= MAX_DATAGRAM_BYTES and self._sendto(data, patient)
        if not sent:
            self.dropped += 1
        return sent

    def _sendto(self, data, patient):
        sock = self._socket()
        if sock is None:
            return False
        give_up = time.monotonic() + PATIENCE_S if patient else 0.0
        while True:
            try:
                sock.sendto(data, self.path)
                return True
            except BlockingIOError:
                if time.monotonic() >= give_up:
                    return False
                time.sleep(RETRY_SLEEP_S)
            except OSError:  # no receiver (ENOENT, ECONNREFUSED) or anything else: drop
                return False

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._sock = None
        self._sock_pid = None

    def _socket(self):
        pid = os.getpid()
        if self._sock is not None and self._sock_pid == pid:
            return self._sock
        # After a fork the inherited socket is a copy of the parent's descriptor; closing it closes only ours.
        self.close()
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.setblocking(False)
        except OSError:
            return None
        self._sock = sock
        self._sock_pid = pid
        return sock
