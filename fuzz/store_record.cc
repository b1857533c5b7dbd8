// libFuzzer target: the staging store's own files read back (datastore/record.h): a copy's record (<key>.json, with its
// manifest) and a partial copy's log. Any bytes must give a value or an error, never a crash or a throw; a record
// that reads must be written and read again to the same manifest (names that are not UTF-8 included).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "datastore/record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto record = sat::datastore::ParseRecord(text);
  if (record) {
    (void)record->manifest.Key();
    auto again = sat::datastore::ParseRecord(sat::datastore::RecordText(*record));
    if (!again || !(again->manifest == record->manifest) || again->xxh3 != record->xxh3) std::abort();
  }
  const sat::datastore::PartialLog log = sat::datastore::ParsePartialLog(text);
  for (const auto& [rel, file] : log.files) {
    const sat::datastore::PartialLog back = sat::datastore::ParsePartialLog(sat::datastore::PartialLogLine(rel, file));
    if (back.files.size() != 1 || back.files.begin()->first != rel) std::abort();
  }
  return 0;
}
