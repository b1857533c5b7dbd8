// The trial cache: an SQLite file of every measured trial, keyed by the command, the trial's mode and knob
// values, and the machine (host, CPUs, memory, GPU), so a second `saturate tune` of the same command resumes
// instead of measuring again.
//
// Only finished measurements go in (interrupted trials never do). A later measurement of the same key replaces
// the earlier one. Several saturate processes may share the file: SQLite's locking keeps each write whole, and a
// busy file is waited on for up to 10 s. Not thread-safe: one owner.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/cache_home.h"
#include "tune/command_identity.h"
#include "tune/trial.h"
#include "util/result.h"
#include "util/sqlite.h"

namespace sat::tune {

// How trials are measured besides the command and the request, where it changes the numbers.
struct MeasureSetup {
  bool auto_instrument = true;             // the automatic instrumentation (off: --no-auto)
  std::optional<double> samples_per_step;  // --samples-per-step
  std::optional<double> parse_batch_size;  // --batch-size, for --parse patterns that give steps
};

// What makes two trials the same measurement: the command as given (placeholders unfilled) and what else decides
// its result (the folder, the script's contents, the torch version: tune/command_identity.h), how it runs and is
// measured, the request's mode, knobs and repeat, and the version of the trial format (trials stored by an
// older saturate lack what comparisons need, so they are measured again). A canonical JSON text, with the argv
// redacted (util/redact.h RedactCommand): a secret in the command is never written to the cache.
std::string TrialKey(const std::vector<std::string>& argv, bool shell, const std::string& parse,
                     const TrialRequest& request, const MeasureSetup& setup = {},
                     const CommandIdentity& identity = {});

// tune.db in the user's saturate cache folder (util/cache_home.h: $XDG_CACHE_HOME/saturate, an absolute one, else
// ~/.cache/saturate with ~ from $HOME, else from the password database). Never a shared folder such as /tmp, which another user could plant: with none
// of them, an error that says so (tune then runs without a cache).
Result<std::string> CachePathFrom(const CacheHomes& homes);
Result<std::string> DefaultCachePath();  // CachePathFrom this process's environment and user

class TrialCache {
 public:
  // Opens or creates the file (and its folder). The cache holds commands (redacted, but with their paths and
  // values), so it is kept private: missing folders are made 0700, the file is made 0600 (an older one's bits are
  // narrowed), and its folder must belong to this user and be writable by no one else; a file at the path that is
  // a symbolic link, or another user's, is refused. Error when it cannot be opened, is refused, or is not a tune
  // cache.
  static Result<std::unique_ptr<TrialCache>> Open(const std::string& path);
  ~TrialCache();
  TrialCache(const TrialCache&) = delete;
  TrialCache& operator=(const TrialCache&) = delete;

  // The stored trial for this key on this machine, marked cached; nullopt when there is none.
  Result<std::optional<Trial>> Find(const std::string& key, const std::string& machine);
  // Stores (or replaces) a trial. `command` is for people reading the file.
  Status Put(const std::string& key, const std::string& machine, const std::string& command, const Trial& trial);
  // Number of trials stored for this machine.
  Result<int> Count(const std::string& machine);

  const std::string& path() const { return db_.path(); }

 private:
  TrialCache() = default;

  sqlite::Database db_;
};

}  // namespace sat::tune
