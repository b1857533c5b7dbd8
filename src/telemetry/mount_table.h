// The mount table and the kernel's text conventions for it: which filesystem a path lives on (probe's data
// location) and where the cgroup v2 hierarchy is mounted (the runner's per-run cgroup).
//
// Pure functions over text: the caller reads <proc_root>/self/mountinfo (or <proc_root>/mounts). Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sat::telemetry {

// One line of a mount table, octal escapes (\040 for a space) decoded.
struct MountEntry {
  std::string mount_point;  // "/mnt/data"
  std::string fs_type;      // "nfs4", "ext4", "fuse.sshfs", "cgroup2"
  std::string device;       // the mount source: "server:/export", "/dev/nvme0n1p2"
  std::string root;         // mountinfo's root: the folder of the filesystem mounted there ("/" for all of it);
                            // "" from /proc/mounts, which does not say
};

// Parses /proc/PID/mountinfo text ("36 35 98:0 / /mnt rw - ext4 /dev/sda1 rw") or /proc/mounts text
// ("/dev/sda1 /mnt ext4 rw 0 0"), recognised per line by the " - " separator of mountinfo. Malformed lines are
// skipped. Entries keep the table's order: a later entry on the same mount point is mounted over an earlier one.
std::vector<MountEntry> ParseMountTable(std::string_view text);

// The entry whose mount point is the longest prefix of `path` on a component boundary (the last such entry when
// several are mounted on the same point). `path` must be absolute; nullopt otherwise or when nothing matches.
std::optional<MountEntry> FindMount(const std::vector<MountEntry>& mounts, std::string_view path);

// Whether `path` is `dir` or below it, on a component boundary ("/mnt/data" is under "/mnt", "/mntx" is not).
bool IsUnder(std::string_view path, std::string_view dir);

// The kernel writes space, tab, newline and backslash in mount points and map paths as \ooo octal escapes.
std::string UnescapeOctal(std::string_view s);

// Space- or tab-separated fields of one line of a /proc table.
std::vector<std::string_view> TableFields(std::string_view line);

}  // namespace sat::telemetry
