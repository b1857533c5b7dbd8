// What a staged dataset is made of: every file, folder and link under a source path, with the sizes and
// modification times that decide whether a copy of it is still the same data. A manifest's key names the copy in
// the store (datastore/store.h): the same path with the same files, sizes and mtimes gives the same key on every
// machine, so a later sweep of the same data finds the copy an earlier one made.
//
// Links inside the dataset are kept as links (made relative, so the copy's links point into the copy); a link
// whose target lies outside the dataset is refused, since copying it would either pull in files nobody asked for
// or leave the runs reading the network through the copy. Pure functions besides ScanSource, which reads the
// filesystem (lstat, readdir, readlink; no file contents).
//
// Names are bytes on Linux, not always UTF-8. The JSON form keeps them exactly: a name that is valid UTF-8 is a
// JSON string ("rel": "train/a.bin"); any other is its bytes in hex under the field's name with "_hex"
// ("rel_hex": "ff2e62696e"), so a manifest read back equals the one written and finds its copy again.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace sat::datastore {

struct Entry {
  enum class Type { kFile, kDir, kLink };
  std::string rel;  // path below the source, '/'-separated; "" for a source that is one file
  Type type = Type::kFile;
  uint64_t size = 0;     // bytes, files only
  int64_t mtime_ns = 0;  // files only
  std::string target;    // links only: relative to the link's folder, inside the dataset
  uint32_t mode = 0;     // permission bits (st_mode & 07777), files and folders; a copy keeps them, less write
  bool operator==(const Entry&) const = default;
};

struct Manifest {
  std::string source;  // the absolute, resolved source path
  bool single_file = false;
  uint32_t mode = 0;  // the source's own permission bits (the folder's, or the single file's)
  std::vector<Entry> entries;  // sorted by rel; folders before what they hold
  uint64_t total_bytes = 0;
  size_t file_count = 0;

  // "<basename>-<16 hex digits>": the hash of the source path and every entry (path, type, size, mtime, target).
  // The mode is not hashed: a source whose permissions changed is copied again under the same key.
  std::string Key() const;
  bool operator==(const Manifest&) const = default;
};

// Whether `name` has the form Key() gives (1 to 48 of [A-Za-z0-9._-], not starting with '.', then '-' and 16
// lowercase hex digits): a name the store may have made, with no '/' and no way out of the store folder.
bool IsKey(std::string_view name);

// Lists `path` (a file or a folder; a link given as the path itself is followed). Usage errors (exit 2) name the
// path as given: it does not exist, it or something under it cannot be read, a link points outside it, or an entry
// is neither a file, a folder nor a link (a socket, a device).
Result<Manifest> ScanSource(const std::string& path);

nlohmann::json ManifestToJson(const Manifest& m);
// Errors for JSON that ManifestToJson did not write (a store file edited or cut short); never throws. A manifest
// of an older saturate (no modes) reads with modes 0, so it matches no listing and its copy is made again.
Result<Manifest> ManifestFromJson(const nlohmann::json& j);

}  // namespace sat::datastore
