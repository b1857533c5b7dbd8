// Where a training run's data lives: which filesystem holds the files its process tree has open, and whether
// that filesystem is on the network (the first field guide: read training data from a local drive).
//
// The mount table is read from <proc_root>/self/mountinfo (or <proc_root>/mounts where mountinfo is missing),
// so tests point proc_root at a fixture tree. Parsing and lookup are pure functions.
//
// Network filesystems (IsNetworkFs): nfs, nfs4, cifs, smb3, smbfs, ncpfs, afs, ceph, lustre, gpfs, beegfs,
// glusterfs, orangefs, pvfs2, wekafs, davfs, and the FUSE clients of remote stores: fuse.sshfs, fuse.s3fs,
// fuse.gcsfuse, fuse.rclone, fuse.goofys, fuse.juicefs, fuse.glusterfs, fuse.ceph-fuse, fuse.blobfuse,
// fuse.blobfuse2, fuse.mountpoint-s3. Deliberately local: 9p and virtiofs (a virtual machine's share of its
// host's disk, no network hop), overlay, tmpfs, and block filesystems (ext4, xfs, btrfs, zfs ...), including a
// network block device mounted as ext4, which the mount table cannot tell apart from a local disk.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sat::core {

bool IsNetworkFs(std::string_view fs_type);

// A file that is the interpreter's, a library's or the system's, never training data: anything under /dev, /proc,
// /sys, /etc, /usr, /lib*, /bin, /sbin, and Python's own files (*.py, *.pyc, shared libraries, site-packages /
// dist-packages). The helper's file watch leaves out the same (python/saturate/_files.py).
bool IsCodeOrSystemFile(std::string_view path);

// The files of a run on one filesystem.
struct DataLocation {
  std::string path;         // one of the files (the first in sorted order), as an example
  size_t file_count = 0;    // how many of the given files live on this mount
  std::string mount_point;  // empty when the mount table could not be read
  std::string fs_type;      // empty when unknown
  std::string device;
  bool network = false;
};

// Groups absolute `paths` by the mount holding them, one DataLocation per mount, the mount with the most files
// first (then by mount point). Relative paths are ignored; duplicates count once. When the mount table cannot
// be read, every path lands in one entry with an empty mount point and fs_type.
std::vector<DataLocation> LocateFiles(const std::vector<std::string>& paths, std::string_view proc_root);

// Regular files process `pid` has open for reading (/proc/PID/fd links whose fdinfo flags are not write-only)
// or has mapped without execute permission (/proc/PID/maps: memory-mapped datasets such as Arrow or numpy
// memmaps), sorted and without duplicates. Left out: sockets, pipes, anonymous inodes, deleted files, anything
// under /dev, /proc, /sys, /run, /etc, /usr, /lib*, /bin, /sbin, and Python's own files (*.py, *.pyc, shared
// libraries, site-packages / dist-packages). Empty when the process is gone or not readable by us. Each link
// is checked with stat, so the result holds only what existed as a regular file at the time of the call.
std::vector<std::string> OpenRegularFiles(pid_t pid, std::string_view proc_root);

}  // namespace sat::core
