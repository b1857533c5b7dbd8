// What sweeps learnt of their shapes on this machine, kept for the next sweep of the same command: the degree each
// shape settled on, its footprint, whether its runs are too short to measure or stop on the clock
// (sweep/packing.h RememberedShape). A second sweep of the same script and shape then starts at that degree and only
// verifies it, instead of paying one gain check per run of the ramp again.
//
// A small JSON file, packing.json in the user's saturate cache folder (util/cache_home.h), private to the user
// (0600 in a folder only they may write), written whole through a temporary file and a rename, read without
// following a link. Entries are keyed by the machine (host, CPUs, GPUs), the command template (the spec's program and
// command, not its parameter values) and the shape; the newest kMaxEntries are kept. A file that cannot be read or
// parsed is no error: the sweep starts afresh and says why. Not thread-safe: one owner.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sweep/packing.h"
#include "sweep/spec.h"
#include "util/result.h"

namespace sat::sweep {

inline constexpr size_t kMaxEntries = 500;

// The machine as a record key: "host|8 cores|gpu0 NVIDIA H100 80GB HBM3,gpu1 ..." (the devices the sweep packs).
std::string MachineKey(const std::string& hostname, unsigned cores, const std::vector<std::string>& devices);
// The command a sweep runs, without its values: the spec's program, command and style (JSON text).
std::string CommandKey(const Spec& spec);

class DegreeRecord {
 public:
  // Reads the record at `path`; a missing file is an empty record; one that cannot be used is an empty record
  // with `*problem` saying why ("packing.json is not JSON: ...").
  static DegreeRecord Load(const std::string& path, std::string* problem);

  std::optional<RememberedShape> Find(const std::string& machine, const std::string& command,
                                      const std::string& shape) const;
  void Put(const std::string& machine, const std::string& command, const std::string& shape,
           const RememberedShape& learnt, double now_unix);
  // Writes the record (its folder must be private to this user: util/cache_home.h PrivateFolderProblem).
  Status Save() const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    RememberedShape shape;
    double updated_unix = 0;
  };
  std::string path_;
  std::map<std::string, Entry> entries_;  // by the key's JSON text
};

// packing.json in the user's saturate cache folder; nullopt where there is none (no home: no record is kept).
std::optional<std::string> DefaultDegreeRecordPath();

}  // namespace sat::sweep
