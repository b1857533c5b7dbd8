#include "datastore/record.h"

#include <gtest/gtest.h>

#include "util/test_mutations.h"

namespace sat::datastore {
namespace {

Manifest Sample() {
  Manifest m;
  m.source = "/nfs/d\xe9j\xe0-vu";  // Latin-1: not UTF-8
  m.mode = 0750;
  m.entries = {{"a\nb.bin", Entry::Type::kFile, 5, 1700000000123456789, "", 0600},
               {"sub", Entry::Type::kDir, 0, 0, "", 0755},
               {"sub/\xff.bin", Entry::Type::kFile, 7, 42, "", 0644},
               {"sub/link", Entry::Type::kLink, 0, 0, "\xff.bin", 0}};
  m.total_bytes = 12;
  m.file_count = 2;
  return m;
}

TEST(StoreRecord, RoundTripsNamesThatAreNotUtf8Exactly) {
  Record r;
  r.manifest = Sample();
  r.xxh3 = {0x0123456789abcdefull, std::nullopt, 7, std::nullopt};
  r.copy_s = 1.5;
  r.made_unix = 1700000000;
  const std::string text = RecordText(r);
  EXPECT_NE(text.find("\"source_hex\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"rel\": \"sub\""), std::string::npos) << "a UTF-8 name stays readable: " << text;
  auto back = ParseRecord(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->manifest, r.manifest);
  EXPECT_EQ(back->manifest.Key(), r.manifest.Key());
  EXPECT_EQ(back->xxh3, r.xxh3);
  EXPECT_EQ(back->made_unix, 1700000000);
}

TEST(StoreRecord, WhatIsNotARecordIsAnErrorNeverAThrow) {
  for (const char* text : {"", "{", "[]", "5", "{\"manifest\": 5}", "{\"manifest\": {\"total_bytes\": \"x\"}}",
                           "{\"manifest\": {\"source\": \"/a\", \"single_file\": false, \"total_bytes\": 1, "
                           "\"file_count\": 1, \"entries\": \"x\"}}",
                           "{\"manifest\": {\"source\": \"/a\", \"single_file\": false, \"total_bytes\": 1, "
                           "\"file_count\": 1, \"entries\": [{\"rel\": \"../../etc/passwd\", \"type\": \"file\", "
                           "\"size\": 1, \"mtime_ns\": 1}]}}",
                           "{\"manifest\": {\"source_hex\": \"f\", \"single_file\": false, \"total_bytes\": 1, "
                           "\"file_count\": 0, \"entries\": []}}"}) {
    auto r = ParseRecord(text);
    EXPECT_FALSE(r) << text;
  }
  Record r;
  r.manifest = Sample();
  r.xxh3 = {1, std::nullopt};  // fewer checksums than entries
  auto short_sums = ParseRecord(RecordText(r));
  ASSERT_FALSE(short_sums);
  EXPECT_NE(short_sums.error().message.find("2 checksums for 4 entries"), std::string::npos);
}

TEST(StoreRecord, ARecordOfAnOlderSaturateReadsWithoutModesOrChecksums) {
  auto r = ParseRecord(R"({"manifest": {"source": "/nfs/ds", "single_file": false, "total_bytes": 3,
    "file_count": 1, "entries": [{"rel": "a", "type": "file", "size": 3, "mtime_ns": 9}]}, "copy_s": 0.1})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->xxh3.empty());
  EXPECT_EQ(r->manifest.entries.at(0).mode, 0u);
}

TEST(PartialLog, NamesWithNewlinesAndTornLinesReadBackAsWritten) {
  std::string text = PartialLogHeader("ds-0123456789abcdef");
  text += PartialLogLine("a\nb 100%.bin", {5, 17, 0xabc});
  text += PartialLogLine("sub/\xff", {7, -3, 1});
  // A forged line inside a name cannot claim another file is whole: the newline is escaped.
  text += PartialLogLine("x\n9 9 0000000000000000 sub/other", {1, 1, 1});
  text += "12 34 00000000000000ff torn-without-newline";
  const PartialLog log = ParsePartialLog(text);
  EXPECT_EQ(log.key, "ds-0123456789abcdef");
  ASSERT_EQ(log.files.size(), 3u);
  EXPECT_EQ(log.files.at("a\nb 100%.bin").xxh3, 0xabcu);
  EXPECT_EQ(log.files.at("sub/\xff").mtime_ns, -3);
  EXPECT_EQ(log.files.count("sub/other"), 0u);
  EXPECT_EQ(log.files.count("torn-without-newline"), 0u);
  EXPECT_EQ(ParsePartialLog("5 6 0000000000000007 a\n").key, "") << "a log without its header is no store's";
}

TEST(StoreRecord, SeededRandomRecordsAndLogs) {
  for (const std::string& text : SeededMutations(SATURATE_SOURCE_DIR "/fuzz/corpus/store_record", 3000, 19)) {
    auto r = ParseRecord(text);
    if (r) {
      auto again = ParseRecord(RecordText(*r));
      ASSERT_TRUE(again) << again.error().message;
      EXPECT_EQ(again->manifest, r->manifest);
    }
    (void)ParsePartialLog(text);
  }
}

}  // namespace
}  // namespace sat::datastore
