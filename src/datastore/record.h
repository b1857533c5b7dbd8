// The store's own bookkeeping as text (datastore/store.h): a finished copy's record, `<key>.json`, and the log of a copy
// in progress, `<key>.partial.log`. Pure functions over strings, so that a fuzz target (fuzz/store_record.cc) can
// throw any bytes at them: every text reads as a value or an error, never an exception.
//
// A record is what lets the store trust, reuse and evict a copy: its manifest (datastore/manifest.h) must give the
// key its file is named by, and the copy on disk must match it (sizes, times, modes; checksums when asked).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "datastore/manifest.h"
#include "util/result.h"

namespace sat::datastore {

struct Record {
  Manifest manifest;
  // XXH3-64 of each file's bytes, one per manifest entry (nullopt for folders and links); empty in the records of
  // an older saturate, which had none.
  std::vector<std::optional<uint64_t>> xxh3;
  double copy_s = 0;
  int64_t made_unix = 0;
};

// The record's text (JSON, names kept exactly as manifest.h says).
std::string RecordText(const Record& r);
// Errors name what is wrong ("not JSON", "no manifest", "3 checksums for 4 entries"); never throws.
Result<Record> ParseRecord(std::string_view text);

// One file of a copy in progress that is whole: its size and mtime when copied, and the XXH3 of what was written.
struct LoggedFile {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t xxh3 = 0;
};
struct PartialLog {
  std::string key;  // from the header line; "" without one (not a log this store wrote)
  std::map<std::string, LoggedFile> files;  // by the entry's rel
};

// The first line of a partial log: it names the key, so eviction knows the partial copy is the store's own.
std::string PartialLogHeader(const std::string& key);
// "size mtime_ns xxh3 rel\n", the rel with '%', control bytes and DEL escaped as %XX (a name may hold a newline).
std::string PartialLogLine(const std::string& rel, const LoggedFile& f);
// Lines that do not parse, and a last line without its newline (a kill mid-write), are left out: those files are
// copied again.
PartialLog ParsePartialLog(std::string_view text);

}  // namespace sat::datastore
