"""slowfs: a read-only FUSE passthrough of a folder that is slow on purpose, standing in for a dataset on a network
mount in tests and benchmarks. Every read() sleeps --delay-ms before it reads, every open() sleeps --open-delay-ms;
requests are served on many threads (the sleeps overlap, as a network's round trips do). Runs in the foreground
until unmounted (fusermount -u MNT) or sent SIGTERM/SIGINT; /proc/mounts lists it with type fuse.slowfs.

    /usr/bin/python3 slowfs.py SRC MNT [--delay-ms N] [--open-delay-ms N] [--direct-io]

The kernel's page cache: libfuse 2 (fusepy's) mounts without kernel_cache, so the kernel drops a file's cached pages
whenever it is opened again, and every open-and-read of a file pays the delay anew (a re-read through the same open
file may be served from the cache, as on NFS). A reader then waits for the page in state D, as on NFS or a disk.
With --direct-io (libfuse's direct_io option, as FUSE mounts of cloud buckets commonly run) there is no page cache:
every read() goes to the daemon as it is asked, and the reader waits in the FUSE request, an interruptible sleep
(state S, the state of a process waiting on a queue or a lock) with /proc/PID/wchan request_wait_answer. Exit status 3: libfuse could not mount (no /dev/fuse, no permission).
Needs Debian's python3-fusepy (the module is named fusepy, not fuse)."""
import argparse
import errno
import os
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations


class SlowFs(Operations):
    use_ns = True  # st_*time in nanoseconds (fusepy warns otherwise)

    def __init__(self, root, delay_s, open_delay_s):
        self.root = os.path.realpath(root)
        self.delay_s = delay_s
        self.open_delay_s = open_delay_s
        self.reads = 0
        self._reads_lock = threading.Lock()  # not "lock": fusepy would take it for the lock operation

    def _full(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def getattr(self, path, fh=None):
        st = os.lstat(self._full(path))
        attrs = {k: getattr(st, k) for k in ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size")}
        attrs.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
        return attrs

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._full(path))

    def readlink(self, path):
        return os.readlink(self._full(path))

    def statfs(self, path):
        sv = os.statvfs(self._full(path))
        keys = ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail",
                "f_flag", "f_namemax")
        return {k: getattr(sv, k) for k in keys}

    def open(self, path, flags):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC):
            raise FuseOSError(errno.EROFS)
        time.sleep(self.open_delay_s)
        return os.open(self._full(path), os.O_RDONLY)

    def read(self, path, size, offset, fh):
        time.sleep(self.delay_s)
        with self._reads_lock:
            self.reads += 1
        return os.pread(fh, size, offset)

    def release(self, path, fh):
        os.close(fh)
        return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("src")
    p.add_argument("mnt")
    p.add_argument("--delay-ms", type=float, default=0.0, help="sleep this long in every read()")
    p.add_argument("--open-delay-ms", type=float, default=0.0, help="sleep this long in every open()")
    p.add_argument("--direct-io", action="store_true", help="no page cache: readers wait in state S, not D")
    a = p.parse_args()
    if not os.path.isdir(a.src):
        sys.exit(f"slowfs: {a.src} is not a folder")
    fs = SlowFs(a.src, a.delay_ms / 1000, a.open_delay_ms / 1000)
    try:
        options = {"direct_io": True} if a.direct_io else {}
        FUSE(fs, a.mnt, foreground=True, nothreads=False, ro=True, fsname="slowfs", subtype="slowfs", **options)
    except RuntimeError as e:  # fuse_main returned non-zero: it printed why (e.g. "fuse: device not found")
        print(f"slowfs: could not mount {a.mnt} ({e})", file=sys.stderr)
        sys.exit(3)
    print(f"slowfs: unmounted {a.mnt} after {fs.reads} reads", file=sys.stderr)


if __name__ == "__main__":
    main()
